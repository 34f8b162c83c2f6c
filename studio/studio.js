// docgen studio: drop a template, see its tags and the data it expects, edit the data, see the pages.
// Plain ES module, no build step; it calls only the public API (/v1) with the credentials given, and draws
// the PDF the service renders with pdf.js (served by the service itself).
// @ts-check

import * as pdfjs from '/studio/vendor/pdf.min.mjs';

pdfjs.GlobalWorkerOptions.workerSrc = '/studio/vendor/pdf.worker.min.mjs';
/** One pdf.js worker for every preview: starting one per document cost more than drawing the page. */
let pdfWorker;

const API = `${location.origin}/v1`;
// An edit after a quiet second previews at once; edits in a burst (typing) wait for a 200 ms pause, and
// while a preview runs the next one waits for it (one in flight, one queued): typing does not turn into a
// generate per keystroke, which the service's per-subscription rate limit would refuse.
const DEBOUNCE_MS = 200;
const QUIET_MS = 1000;
const OUTPUTS = { docx: ['docx', 'pdf'], xlsx: ['xlsx', 'pdf', 'csv'], pptx: ['pptx', 'pdf'] };
const LOCALES = ['en-GB', 'en-US', 'fr-FR', 'de-DE', 'es-ES', 'it-IT', 'nl-NL', 'pt-BR', 'pl-PL', 'sv-SE', 'ja-JP', 'zh-CN'];

/** @param {string} id */
const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));
const input = (/** @type {string} */ id) => /** @type {HTMLInputElement} */ ($(id));
const dataBox = /** @type {HTMLTextAreaElement} */ ($('data'));
const localeBox = /** @type {HTMLSelectElement} */ ($('locale'));
const zoneBox = /** @type {HTMLSelectElement} */ ($('timezone'));
const accessibleBox = input('accessible');
const einvoiceBox = /** @type {HTMLSelectElement} */ ($('einvoice'));
const einvoiceDataBox = /** @type {HTMLInputElement} */ ($('einvoice-data'));

/**
 * @typedef {{ part: string, paragraph?: number, sheet?: string, cell?: string, where: string }} Loc
 * @typedef {{ kind: string, source: string, value: string, location: Loc }} Tag
 * @typedef {{ code: string, message: string, location?: Loc }} Problem
 * @typedef {{ fileName: string, format: 'docx'|'xlsx'|'pptx', tags: Tag[], problems: Problem[], schema: any, sample: unknown }} Inspection
 */

const state = {
  /** @type {File | undefined} */ file: undefined,
  /** @type {Inspection | undefined} */ inspection: undefined,
  previewSeq: 0,
  running: false,
  pending: false,
  /** @type {ReturnType<typeof setTimeout> | undefined} */ timer: undefined,
  lastEditAt: -Infinity,
  /** @type {{ code?: string, message: string, tag?: string, location?: Loc }[]} */ serverWarnings: [],
  lastPreviewMs: 0,
  /** @type {Record<string, number>} */ lastTimings: {},
};

// ---- the API ----

function auth() {
  return { authorization: `Bearer ${input('token').value.trim()}`, 'x-api-key': input('api-key').value.trim() };
}

/** A call to /v1; the error envelope's messages become the error's message, in plain words. */
async function api(method, route, { json, form } = /** @type {{ json?: unknown, form?: FormData }} */ ({})) {
  /** @type {Record<string, string>} */
  const headers = auth();
  let body;
  if (json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(json);
  } else if (form) body = form;
  const res = await fetch(`${API}${route}`, { method, headers, body });
  const text = await res.text();
  let parsed;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  if (!res.ok) {
    const inner = parsed?.error?.innerErrors ?? [];
    const msg = inner.length > 0 ? inner.map((e) => e.message).join('; ') : (parsed?.error?.message ?? `${res.status} ${res.statusText}`);
    const err = new Error(res.status === 401 ? `Not signed in: ${msg}` : msg);
    // The inner errors themselves, for the lists that show them one by one (the e-invoice's rules).
    /** @type {any} */ (err).innerErrors = inner;
    throw err;
  }
  return parsed;
}

async function upload(kind, blob, name) {
  const form = new FormData();
  form.append('file', blob, name);
  const r = await api('POST', `/documents/${kind}/upload`, { form });
  return /** @type {string} */ (r.result.data.files[0].id);
}

/** Uploads the template and the data, generates `format` to Storage; the generate answer. */
async function generate(format, dataText, name = 'preview', timings = /** @type {Record<string, number>} */ ({})) {
  const file = state.file;
  const insp = state.inspection;
  if (!file || !insp) throw new Error('drop a template first');
  let t = performance.now();
  const [templateUrn, dataUrn] = await Promise.all([
    upload('template', file, file.name),
    upload('data', new Blob([dataText], { type: 'application/json' }), 'data.json'),
  ]);
  timings.uploads = performance.now() - t;
  t = performance.now();
  const answer = await api('POST', '/documents/document/generate', { json: generateBody(templateUrn, insp.format, dataUrn, format, name) });
  timings.generate = performance.now() - t;
  return answer;
}

function generateBody(templateUrn, templateFormat, dataUrn, format, name) {
  // An accessible pdf (docs/accessibility.md): tagged PDF/UA-1 from a docx or pptx template; its warnings
  // (pictures without alt text, tables without a header row) come back with the missing values.
  const accessible = accessibleBox.checked && format === 'pdf' && templateFormat !== 'xlsx';
  return {
    template: { urn: templateUrn, loadMethod: 'Storage', fileFormat: templateFormat },
    data: { urn: dataUrn, loadMethod: 'Storage' },
    document: {
      name,
      fileFormat: format,
      deliveryMethod: 'Storage',
      path: 'root',
      locale: localeBox.value,
      timezone: zoneBox.value,
      ...(accessible ? { options: { accessible: true } } : {}),
      ...(format === 'pdf' ? einvoiceOption() : {}),
    },
  };
}

/** document.einvoice as the pickers set it (docs/einvoice.md): a Factur-X profile and where the invoice is. */
function einvoiceOption() {
  if (!einvoiceBox.value) return {};
  const [standard, profile] = einvoiceBox.value.split('|');
  return { einvoice: { standard, profile, data: einvoiceDataBox.value.trim() } };
}

/** The e-invoice's rules, one line each: the failed ones (EINVOICE_INVALID) or the warnings (EINVOICE_RULE). */
function showEInvoice(/** @type {{ message?: string }[]} */ problems, /** @type {boolean} */ refused) {
  const ul = $('einvoice-problems');
  ul.replaceChildren();
  if (!einvoiceBox.value) ul.append(li('E-invoice off.', 'muted'));
  else if (problems.length === 0) ul.append(li('None: the e-invoice passes the EN 16931 checks.', 'ok'));
  for (const p of problems) ul.append(li(String(p.message)));
  document.body.dataset.einvoiceProblems = String(refused ? problems.length : 0);
}

async function download(urn) {
  const res = await fetch(`${API}/documents/storage/${encodeURIComponent(urn)}/content`, { headers: auth() });
  if (!res.ok) throw new Error(`download failed: ${res.status}`);
  return new Uint8Array(await res.arrayBuffer());
}

// ---- sign in ----

async function signIn() {
  const status = $('signin-status');
  status.textContent = 'Checking...';
  status.className = '';
  try {
    await api('GET', '/documents/template/list?top=1');
    status.textContent = 'Signed in.';
    document.body.dataset.signedIn = 'true';
    return true;
  } catch (err) {
    status.textContent = /** @type {Error} */ (err).message;
    status.className = 'error';
    delete document.body.dataset.signedIn;
    return false;
  }
}

async function prefillDevCredentials() {
  try {
    const res = await fetch('/studio/dev-credentials');
    if (!res.ok) return;
    const creds = await res.json();
    input('api-key').value = creds.apiKey;
    input('token').value = creds.accessToken;
    $('signin-status').textContent = 'Development credentials filled in (docgen start).';
    await signIn();
  } catch {
    // Not a development start: the user signs in.
  }
}

// ---- the template ----

async function openTemplate(/** @type {File} */ file) {
  const status = $('template-status');
  status.className = '';
  if (!/\.(docx|xlsx|pptx)$/i.test(file.name)) {
    status.textContent = `${file.name} is not a template: drop a .docx, .xlsx or .pptx file.`;
    status.className = 'error';
    return;
  }
  status.textContent = `Reading ${file.name}...`;
  const form = new FormData();
  form.append('file', file, file.name);
  try {
    const r = await api('POST', '/documents/template/inspect', { form });
    /** @type {Inspection} */
    const insp = r.result.data;
    state.file = file;
    state.inspection = insp;
    status.textContent = `${insp.fileName}: ${insp.format}, ${insp.tags.length} tags, ${insp.problems.length} problem(s).`;
    showProblems(insp.problems);
    showTags(insp.tags);
    $('schema').textContent = JSON.stringify(insp.schema, null, 2);
    dataBox.value = JSON.stringify(insp.sample, null, 2);
    input('record-name').value = insp.fileName.replace(/\.[^.]+$/, '');
    showDownloads(insp.format);
    document.body.dataset.template = insp.fileName;
    scheduleCheck(0);
  } catch (err) {
    status.textContent = /** @type {Error} */ (err).message;
    status.className = 'error';
  }
}

function showProblems(/** @type {Problem[]} */ problems) {
  const ul = $('problems');
  ul.replaceChildren();
  if (problems.length === 0) {
    ul.append(li('No problems.', 'muted'));
    return;
  }
  for (const p of problems) {
    const item = document.createElement('li');
    const b = button(`${p.location?.where ?? 'template'}: ${p.message}`, () => focusTag(p.location));
    item.append(b);
    ul.append(item);
  }
}

function showTags(/** @type {Tag[]} */ tags) {
  const root = $('tags');
  root.replaceChildren();
  if (tags.length === 0) root.append(li('No tags: the template has nothing to fill.', 'muted'));
  /** @type {HTMLElement[]} */
  const stack = [root];
  tags.forEach((t, i) => {
    const parent = stack[stack.length - 1] ?? root;
    if (t.kind === 'close') {
      if (stack.length > 1) stack.pop();
      return;
    }
    const item = document.createElement('li');
    const kind = document.createElement('span');
    kind.className = 'kind';
    kind.textContent = KIND_NAMES[t.kind] ?? t.kind;
    const b = button(`{${t.source}}`, () => focusField(t));
    b.id = `tag-${i}`;
    b.dataset.part = t.location.part;
    b.dataset.where = t.location.where;
    const loc = document.createElement('span');
    loc.className = 'loc';
    loc.textContent = t.location.where;
    item.append(kind, b, loc);
    parent.append(item);
    if (t.kind === 'open' || t.kind === 'inverted' || t.kind === 'slide') {
      const ul = document.createElement('ul');
      item.append(ul);
      if (t.kind !== 'slide') stack.push(ul);
    }
  });
}

const KIND_NAMES = {
  field: 'field',
  open: 'loop/if',
  inverted: 'if not',
  raw: 'xml',
  image: 'image',
  include: 'include',
  slide: 'slides',
  html: 'html',
  htmlBlock: 'html',
};

/** A problem's location: the first tag there gets the focus. */
function focusTag(/** @type {Loc | undefined} */ loc) {
  if (!loc) return;
  const b = [...document.querySelectorAll('#tags button')].find((el) => /** @type {HTMLElement} */ (el).dataset.where === loc.where);
  if (b) /** @type {HTMLElement} */ (b).focus();
}

/** A tag's data: its last name is selected in the editor. */
function focusField(/** @type {Tag} */ t) {
  const names = t.value.match(/[\p{L}_$][\p{L}\p{N}_$]*/gu) ?? [];
  const name = names.find((n) => n !== '$index');
  if (!name) return;
  const at = dataBox.value.indexOf(`"${name}"`);
  dataBox.focus();
  if (at >= 0) dataBox.setSelectionRange(at + 1, at + 1 + name.length);
}

function showDownloads(/** @type {'docx'|'xlsx'|'pptx'} */ format) {
  const box = $('downloads');
  box.replaceChildren();
  for (const f of OUTPUTS[format]) {
    box.append(button(`Download ${f}`, () => void downloadAs(f), false));
  }
}

async function downloadAs(format) {
  const status = $('preview-status');
  try {
    const gen = await generate(format, dataBox.value, state.inspection?.fileName.replace(/\.[^.]+$/, '') ?? 'document');
    const doc = gen.result.data.document;
    const bytes = await download(doc.urn);
    const a = document.createElement('a');
    a.href = URL.createObjectURL(new Blob([bytes]));
    a.download = doc.name;
    a.click();
    setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
  } catch (err) {
    status.textContent = `Download failed: ${/** @type {Error} */ (err).message}`;
  }
}

// ---- the data: local check, then the preview ----

function scheduleCheck(delay = DEBOUNCE_MS) {
  clearTimeout(state.timer);
  const now = performance.now();
  const quiet = now - state.lastEditAt >= QUIET_MS && !state.running;
  state.lastEditAt = now;
  state.timer = setTimeout(() => void checkAndPreview(), quiet ? 0 : delay);
}

async function checkAndPreview() {
  const insp = state.inspection;
  if (!insp) return;
  const status = $('data-status');
  let data;
  try {
    data = JSON.parse(dataBox.value);
    status.textContent = '';
    status.className = '';
  } catch (err) {
    status.textContent = `The data is not valid JSON: ${/** @type {Error} */ (err).message}`;
    status.className = 'error';
    return;
  }
  showMissing(missingFields(insp.schema, data), []);
  if (insp.problems.length > 0) {
    // The service would refuse to render it (TEMPLATE_ERROR): say so here instead.
    $('preview-status').textContent =
      `No preview: the template has ${insp.problems.length} problem${insp.problems.length === 1 ? '' : 's'} (listed under Problems) to fix first.`;
    $('pages').replaceChildren();
    $('preview-text').textContent = '';
    return;
  }
  if (state.running) {
    state.pending = true;
    return;
  }
  state.running = true;
  try {
    await preview();
  } finally {
    state.running = false;
  }
  if (state.pending) {
    state.pending = false;
    void checkAndPreview();
  }
}

/**
 * The schema's properties the data lacks, with their tags: in a loop item, a name the item lacks counts as
 * present when an enclosing object has it (the engine looks names up outwards).
 * @returns {{ path: string, uses: string }[]}
 */
function missingFields(schema, data, path = '', scopes = /** @type {unknown[]} */ ([])) {
  /** @type {{ path: string, uses: string }[]} */
  const out = [];
  if (!schema || typeof schema !== 'object') return out;
  if (schema.type === 'object' && schema.properties && data && typeof data === 'object' && !Array.isArray(data)) {
    // `scopes`: the enclosing objects a loop item may read from (empty for a plain object's properties).
    const lookIn = [data, ...scopes.slice().reverse()];
    const required = schema.required ?? [];
    for (const [name, sub] of Object.entries(schema.properties)) {
      const here = lookIn.find((s) => s && typeof s === 'object' && Object.hasOwn(s, name) && s[name] !== undefined && s[name] !== null);
      const value = here ? here[name] : undefined;
      const p = path ? `${path}.${name}` : name;
      if (value === undefined) {
        // Behind a fallback (| default, ??) a name is optional; in a loop item every name is needed somewhere.
        if (required.includes(name) || scopes.length > 0) out.push({ path: p, uses: usesOf(sub) });
        continue;
      }
      out.push(...missingFields(sub, value, p, sub?.type === 'array' ? [...scopes, data] : []));
    }
  } else if (schema.type === 'array' && Array.isArray(data)) {
    data.forEach((item, i) => out.push(...missingFields(schema.items, item, `${path}[${i}]`, scopes)));
  }
  return out;
}

function usesOf(sub) {
  const m = /used by (.*)\.$/.exec(String(sub?.description ?? ''));
  return m ? m[1] : '';
}

function showMissing(local, server) {
  const ul = $('missing');
  ul.replaceChildren();
  // The service's warnings (MISSING_VALUE, when the generate answer carries them; with "Accessible pdf"
  // also IMAGE_WITHOUT_ALT_TEXT and TABLE_WITHOUT_HEADER_ROW, tag '') name the tag or picture and its
  // place; the local check names the field. One line per field.
  const tags = new Set();
  for (const w of server) {
    tags.add(String(w.tag ?? ''));
    ul.append(li(String(w.message ?? w.code)));
  }
  for (const m of local) {
    const field = m.path.replace(/\[\d+\]/g, '');
    if ([...tags].some((t) => t !== '' && (field === t || field.endsWith(`.${t}`)))) continue;
    ul.append(li(`${m.path} is missing${m.uses ? `: ${m.uses}` : ''}`));
  }
  if (ul.children.length === 0) ul.append(li('None: every tag has a value.', 'ok'));
  document.body.dataset.missing = String(ul.querySelectorAll('li:not(.ok)').length);
}

async function preview() {
  const insp = state.inspection;
  if (!insp) return;
  const seq = ++state.previewSeq;
  const status = $('preview-status');
  const started = performance.now();
  status.textContent = 'Rendering...';
  try {
    /** @type {Record<string, number>} */
    const timings = {};
    const gen = await generate('pdf', dataBox.value, 'preview', timings);
    const all = gen.result.data.warnings ?? [];
    const warnings = all.filter((/** @type {{ code: string }} */ w) => w.code !== 'EINVOICE_RULE');
    showEInvoice(
      all.filter((/** @type {{ code: string }} */ w) => w.code === 'EINVOICE_RULE'),
      false,
    );
    state.serverWarnings = warnings;
    const data = JSON.parse(dataBox.value);
    showMissing(missingFields(insp.schema, data), warnings);
    let t = performance.now();
    const bytes = await download(gen.result.data.document.urn);
    timings.download = performance.now() - t;
    t = performance.now();
    const pages = await draw(bytes);
    timings.draw = performance.now() - t;
    state.lastPreviewMs = Math.round(performance.now() - started);
    state.lastTimings = timings;
    status.textContent = `${pages} page${pages === 1 ? '' : 's'}, drawn in ${state.lastPreviewMs} ms (${localeBox.value}, ${zoneBox.value}).`;
    document.body.dataset.previewSeq = String(seq);
  } catch (err) {
    const inner = /** @type {{ code: string; message: string }[]} */ (/** @type {any} */ (err).innerErrors ?? []);
    const rules = inner.filter((e) => e.code === 'EINVOICE_INVALID');
    if (rules.length > 0) {
      showEInvoice(rules, true);
      status.textContent = `Preview failed: the e-invoice breaks ${rules.length} rule${rules.length === 1 ? '' : 's'} (listed under the data).`;
      document.body.dataset.previewError = String(seq);
      return;
    }
    status.textContent = `Preview failed: ${/** @type {Error} */ (err).message}`;
    document.body.dataset.previewError = String(seq);
  }
}

/** Draws every page of the PDF; the pages' text goes to a hidden region (screen readers, tests). */
async function draw(/** @type {Uint8Array} */ bytes) {
  pdfWorker ??= new pdfjs.PDFWorker();
  const task = pdfjs.getDocument({
    data: bytes,
    worker: pdfWorker,
    isEvalSupported: false,
    standardFontDataUrl: '/studio/vendor/standard_fonts/',
  });
  const doc = await task.promise;
  const box = $('pages');
  const width = Math.max(320, box.clientWidth - 16);
  /** @type {HTMLCanvasElement[]} */
  const canvases = [];
  const texts = [];
  for (let n = 1; n <= doc.numPages; n++) {
    const page = await doc.getPage(n);
    const base = page.getViewport({ scale: 1 });
    const scale = (width / base.width) * (window.devicePixelRatio || 1);
    const viewport = page.getViewport({ scale });
    const canvas = document.createElement('canvas');
    canvas.width = Math.floor(viewport.width);
    canvas.height = Math.floor(viewport.height);
    canvas.setAttribute('role', 'img');
    await page.render({ canvas, viewport }).promise;
    const content = await page.getTextContent();
    const text = content.items
      .map((it) => ('str' in it ? it.str : ''))
      .join(' ')
      .replace(/\s+/g, ' ')
      .trim();
    canvas.setAttribute('aria-label', `Page ${n} of ${doc.numPages}`);
    texts.push(text);
    canvases.push(canvas);
  }
  box.replaceChildren(...canvases);
  $('preview-text').textContent = texts.join('\n');
  await task.destroy();
  return canvases.length;
}

// ---- use it: a template record, and the same call with curl and the SDK ----

async function save() {
  const insp = state.inspection;
  const file = state.file;
  const status = $('save-status');
  if (!insp || !file) {
    status.textContent = 'Drop a template first.';
    return;
  }
  status.textContent = 'Saving...';
  try {
    const urn = await upload('template', file, file.name);
    const name = input('record-name').value.trim() || insp.fileName;
    const r = await api('POST', '/documents/template/create', {
      json: { documentTemplate: { name, urn, loadMethod: 'Storage', fileFormat: insp.format } },
    });
    const record = r.result.data.documentTemplate;
    status.textContent = `Saved as template record ${record.id} ("${record.name}").`;
    document.body.dataset.recordId = record.id;
    const body = generateBody(record.urn, insp.format, '__DATA__', 'pdf', name);
    /** @type {HTMLTextAreaElement} */ ($('curl')).value = curlOf(body, dataBox.value);
    /** @type {HTMLTextAreaElement} */ ($('sdk')).value = sdkOf(body, dataBox.value);
    $('calls').hidden = false;
  } catch (err) {
    status.textContent = `Saving failed: ${/** @type {Error} */ (err).message}`;
    status.className = 'error';
  }
}

const shq = (/** @type {string} */ s) => `'${s.replace(/'/g, `'\\''`)}'`;

function curlOf(body, dataText) {
  const data = JSON.stringify(JSON.parse(dataText));
  const json = JSON.stringify(body).replace(/'/g, `'\\''`).replace('"__DATA__"', `"'"$DATA"'"`);
  return [
    'AUTH=(-H "Authorization: Bearer $DOCGEN_TOKEN" -H "X-Api-Key: $DOCGEN_API_KEY")',
    `DATA=$(printf '%s' ${shq(data)} | curl -fsS "\${AUTH[@]}" -F 'file=@-;filename=data.json;type=application/json' ${API}/documents/data/upload \\`,
    `  | node -p 'JSON.parse(require("fs").readFileSync(0, "utf8")).result.data.files[0].id')`,
    `URN=$(curl -fsS "\${AUTH[@]}" -H 'content-type: application/json' ${API}/documents/document/generate -d '${json}' \\`,
    `  | node -p 'JSON.parse(require("fs").readFileSync(0, "utf8")).result.data.document.urn')`,
    `curl -fsS "\${AUTH[@]}" -o ${shq(`${body.document.name}.pdf`)} ${API}/documents/storage/$URN/content`,
  ].join('\n');
}

function sdkOf(body, dataText) {
  const request = JSON.stringify(body, null, 2).replace('"__DATA__"', 'data!.id').replace(/\n/g, '\n');
  return [
    "import { DocgenClient } from '@docgen/client';",
    '',
    `const docgen = new DocgenClient({ baseUrl: '${location.origin}', apiKey: process.env.DOCGEN_API_KEY!, accessToken: process.env.DOCGEN_TOKEN! });`,
    `const [data] = await docgen.uploads.data([{ name: 'data.json', content: JSON.stringify(${JSON.stringify(JSON.parse(dataText))}) }]);`,
    `const res = await docgen.generation.generate(${request});`,
    'const { bytes } = await docgen.storage.download(res.result.data.document.urn);',
  ].join('\n');
}

// ---- small helpers, wiring ----

function li(text, className = '') {
  const el = document.createElement('li');
  el.textContent = text;
  if (className) el.className = className;
  return el;
}

function button(text, onClick, link = true) {
  const b = document.createElement('button');
  b.type = 'button';
  b.textContent = text;
  if (link) b.className = 'link';
  b.addEventListener('click', onClick);
  return b;
}

function fillPickers() {
  const here = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  const zones =
    typeof Intl.supportedValuesOf === 'function'
      ? Intl.supportedValuesOf('timeZone')
      : [here, 'UTC', 'Europe/London', 'Europe/Paris', 'America/New_York'];
  if (!zones.includes('UTC')) zones.unshift('UTC');
  for (const z of zones) zoneBox.append(new Option(z, z, false, z === here));
  const lang = LOCALES.includes(navigator.language) ? navigator.language : 'en-GB';
  for (const l of LOCALES) localeBox.append(new Option(l, l, false, l === lang));
}

function wire() {
  fillPickers();
  $('signin').addEventListener('submit', (e) => {
    e.preventDefault();
    void signIn();
  });
  input('file').addEventListener('change', () => {
    const f = input('file').files?.[0];
    if (f) void openTemplate(f);
  });
  const drop = $('drop');
  drop.addEventListener('dragover', (e) => {
    e.preventDefault();
    drop.classList.add('over');
  });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', (e) => {
    e.preventDefault();
    drop.classList.remove('over');
    const f = e.dataTransfer?.files?.[0];
    if (f) void openTemplate(f);
  });
  dataBox.addEventListener('input', () => scheduleCheck());
  localeBox.addEventListener('change', () => scheduleCheck(0));
  zoneBox.addEventListener('change', () => scheduleCheck(0));
  accessibleBox.addEventListener('change', () => scheduleCheck(0));
  einvoiceBox.addEventListener('change', () => scheduleCheck(0));
  einvoiceDataBox.addEventListener('input', () => scheduleCheck());
  $('save').addEventListener('submit', (e) => {
    e.preventDefault();
    void save();
  });
  for (const [btn, box] of [
    ['copy-curl', 'curl'],
    ['copy-sdk', 'sdk'],
  ]) {
    $(btn).addEventListener('click', () => {
      const text = /** @type {HTMLTextAreaElement} */ ($(box)).value;
      navigator.clipboard?.writeText(text).catch(() => /** @type {HTMLTextAreaElement} */ ($(box)).select());
    });
  }
  void prefillDevCredentials();
}

// For the benchmark (bench/studio-preview.ts): the last preview's time and where it went.
Object.defineProperty(window, 'studio', {
  value: {
    get lastPreviewMs() {
      return state.lastPreviewMs;
    },
    get lastTimings() {
      return state.lastTimings;
    },
  },
});

wire();
