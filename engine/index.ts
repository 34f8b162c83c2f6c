import { customPropsParts } from './docprops.ts';
import type { Embedded } from './docprops.ts';
import { ErrorBag, TemplateError } from './errors.ts';
import type { TemplateErrorEntry } from './errors.ts';
import { evaluate, ExpressionError, parseExpression } from './expression.ts';
import { FilterError, filterContextOf } from './filters.ts';
import type { FilterContext } from './filters.ts';
import type { ImageNode } from './compile.ts';
import type { Scopes } from './expression.ts';
import { docxDrawing, EMU_PER_PX, ImageError, loadImage, pptxPicture } from './images.ts';
import { DRAWING_REL, sheetDrawing, writeSheetImages } from './xlsx-images.ts';
import type { SheetImage } from './xlsx-images.ts';
import { prepareSvg, SvgNotReady } from './svg.ts';
import type { SheetState } from './xlsx.ts';
import { colToNum } from './xlsx-refs.ts';
import type { UrlResolver } from './images.ts';
import { evalTag, missing, renderNodes } from './render.ts';
import { truthy } from './expression.ts';
import { expandSlides } from './pptx.ts';
import { HYPERLINK_REL, linkAddress, unsafeScheme } from './links.ts';
import { htmlToBlocks, htmlToRuns, mergeProps, PPR_ORDER } from './html.ts';
import type { HtmlEnv } from './html.ts';
import type { HtmlHookData } from './compile.ts';
import { toText } from './filters.ts';
import type { LinkHookData } from './links.ts';
import { includeOutputs, numberingState, renderInclude } from './include.ts';
import type { IncludeEnv } from './include.ts';
import { RenderSession } from './session.ts';
import { openPackage, relsPathOf } from './package.ts';
import { SlideIncludes } from './include-slides.ts';
import { SheetIncludes } from './include-sheets.ts';
import type { SlideOut } from './pptx.ts';
import type { RenderContext } from './render.ts';
import type { TagInfo } from './lexer.ts';
import { getCompiled } from './template.ts';
import type { CompiledTemplate } from './template.ts';
import { readZip, writeZip } from './zip.ts';
import { limitError, resolveLimits } from './limits.ts';
import type { TemplateLimits } from './limits.ts';
import type { OutEntry } from './zip.ts';

export { describeLocation, TemplateError } from './errors.ts';
export type { ErrorLocation, TemplateErrorEntry } from './errors.ts';
export { inspect } from './inspect.ts';
export { wellFormedProblem } from './xml-template.ts';
export { renderXmlTemplate } from './xml-template.ts';
export type { XmlRenderReport, XmlTemplateOptions } from './xml-template.ts';
export { prepareSvg } from './svg.ts';
export type { InspectResult } from './inspect.ts';
export { inferSchema, sampleData } from './schema.ts';
export type { JsonSchema } from './schema.ts';
export { clearTemplateCache, templateCacheStats } from './template.ts';
export { DEFAULT_TEMPLATE_LIMITS, LIMIT_EXCEEDED, LIMIT_SETTINGS } from './limits.ts';
export type { TemplateLimits } from './limits.ts';

export interface TemplateVariable {
  name: string;
  value: unknown;
  /** `global`: value as is; `fieldExpression`: value is an expression computed against the data. */
  type: 'global' | 'fieldExpression' | (string & {});
}

export interface RenderOptions {
  /** BCP 47 locale for number/date/currency filters (default en-US). */
  locale?: string;
  /** IANA time zone for date filters (default UTC). */
  timezone?: string;
  variables?: TemplateVariable[];
  /** Included templates by name, for `{>name}`. */
  relatedItems?: Record<string, Uint8Array>;
  /** Custom document properties written to docProps/custom.xml (object or JSON text). */
  embedded?: string | Record<string, unknown>;
  paragraphLoop?: boolean;
  linebreaks?: boolean;
  delimiters?: { start: string; end: string };
  /** When true, a tag whose value is missing is an error instead of rendering empty. */
  strict?: boolean;
  /** The SHA-256 of `template` (base64), when the caller computed it already (a merge thread, once per
   *  template): the compiled-template cache takes it instead of hashing the bytes again. It must be the
   *  bytes' own hash. */
  templateHash?: string;
  /**
   * Fetches an image given as an http(s) URL (`{%logo}` with a URL value). The engine never does I/O
   * itself: the host injects a fetcher that applies its own network policy. Without one, URL images are
   * an `image_url_unsupported` error. A rejected promise becomes an `image_fetch_failed` error at the tag.
   * Only `render` (async) uses it.
   */
  fetchImage?: (url: string) => Promise<Uint8Array>;
  /** Bounds on the work (engine/limits.ts); unset fields take the defaults. A limit that is hit is a
   *  `limit_exceeded` error naming the limit and its value. */
  limits?: Partial<TemplateLimits>;
}

/** Most distinct image URLs one render fetches. */
const MAX_IMAGE_URLS = 100;
/** How many image fetches run at once. */
const IMAGE_FETCH_CONCURRENCY = 4;

/** URL images of one render: the first pass collects the URLs, then they are fetched, then the final
 *  pass reads them from `fetched`. */
interface RemoteImages {
  collecting: boolean;
  wanted: Set<string>;
  fetched: Map<string, Uint8Array | Error>;
}

/** Thrown by the collecting resolver: the tag is skipped in the first pass. */
class PendingImage extends Error {}

interface Resolved {
  filter: FilterContext;
  paragraphLoop: boolean;
  linebreaks: boolean;
  delimiters: { start: string; end: string };
  strict: boolean;
  embedded: Embedded | undefined;
  related: Record<string, Uint8Array>;
  remote: RemoteImages | undefined;
  limits: TemplateLimits;
}

function optionError(message: string): TemplateError {
  return TemplateError.single('invalid_option', message);
}

function resolveOptions(o: RenderOptions | undefined): Resolved {
  const opts = o ?? {};
  if (typeof opts !== 'object') throw optionError('options must be an object');
  const { locale, timezone } = filterContextOf(opts.locale, opts.timezone);
  const d = opts.delimiters ?? { start: '{', end: '}' };
  // Identical start and end delimiters (`%name%`) are allowed, as in docxtemplater.
  if (typeof d.start !== 'string' || typeof d.end !== 'string' || d.start === '' || d.end === '') {
    throw optionError('delimiters need non-empty start and end strings');
  }
  let embedded: Embedded | undefined;
  if (typeof opts.embedded === 'string' && opts.embedded.trim() !== '') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(opts.embedded);
    } catch {
      throw TemplateError.single('invalid_embedded', 'embedded metadata is not valid JSON');
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
      throw TemplateError.single('invalid_embedded', 'embedded metadata must be a JSON object');
    embedded = parsed as Embedded;
  } else if (opts.embedded !== undefined && opts.embedded !== null && typeof opts.embedded === 'object') {
    embedded = opts.embedded;
  }
  return {
    filter: { locale, timezone },
    paragraphLoop: opts.paragraphLoop ?? true,
    linebreaks: opts.linebreaks ?? true,
    delimiters: { start: d.start, end: d.end },
    strict: opts.strict === true,
    embedded,
    related: relatedItems(opts.relatedItems),
    remote: undefined,
    limits: resolveLimits(opts.limits),
  };
}

function relatedItems(r: unknown): Record<string, Uint8Array> {
  const out = Object.create(null) as Record<string, Uint8Array>;
  if (r === undefined || r === null) return out;
  if (typeof r !== 'object') throw optionError('relatedItems must map names to template bytes');
  for (const [k, v] of Object.entries(r)) {
    if (!(v instanceof Uint8Array)) throw optionError(`relatedItems["${k}"] must be bytes (Uint8Array)`);
    out[k] = v;
  }
  return out;
}

/** Variables form the outermost scope: data names win, so a variable never hides real data. */
function variableScope(vars: TemplateVariable[] | undefined, data: unknown, filter: FilterContext): Record<string, unknown> {
  const scope: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  if (vars === undefined || vars === null) return scope;
  if (!Array.isArray(vars)) throw optionError('variables must be an array of {name, value, type}');
  const errors = new ErrorBag();
  for (const v of vars) {
    if (v === null || typeof v !== 'object' || typeof v.name !== 'string' || v.name === '') {
      errors.add('invalid_variable', 'each variable needs a name');
      continue;
    }
    if (v.type === 'fieldExpression') {
      if (typeof v.value !== 'string') {
        errors.add('invalid_variable', `variable "${v.name}": a fieldExpression value must be an expression string`);
        continue;
      }
      try {
        scope[v.name] = evaluate(parseExpression(v.value), [scope, data], filter);
      } catch (e) {
        if (e instanceof ExpressionError || e instanceof FilterError) errors.add('invalid_variable', `variable "${v.name}": ${e.message}`);
        else throw e;
      }
    } else {
      scope[v.name] = v.value;
    }
  }
  errors.throwIfAny();
  return scope;
}

const MEDIA_DIR: Record<CompiledTemplate['format'], string> = { docx: 'word/media', pptx: 'ppt/media', xlsx: 'xl/media' };

function urlResolver(remote: RemoteImages | undefined): UrlResolver | undefined {
  if (remote === undefined) return undefined;
  return (url) => {
    if (remote.collecting) {
      if (!remote.fetched.has(url)) {
        if (remote.wanted.size >= MAX_IMAGE_URLS && !remote.wanted.has(url)) {
          throw new ImageError('image_fetch_failed', `more than ${MAX_IMAGE_URLS} distinct image URLs in one document`);
        }
        remote.wanted.add(url);
      }
      throw new PendingImage(url);
    }
    const got = remote.fetched.get(url);
    if (got instanceof Uint8Array) return got;
    throw new ImageError('image_fetch_failed', `the image ${url} could not be fetched: ${got?.message ?? 'not fetched'}`);
  };
}

function renderImage(
  node: ImageNode,
  scopes: Scopes,
  out: string[],
  ctx: RenderContext,
  session: RenderSession,
  format: CompiledTemplate['format'],
  remote: RemoteImages | undefined,
): void {
  const v = evalTag(node.expr, node.tag, scopes, ctx);
  // `{%%img}`: a paragraph of its own, centred, keeping the tag paragraph's other properties.
  const center = node.center;
  const centred = (inner: string): string => {
    if (center === undefined) return inner;
    const props: Array<[string, string]> = [['jc', '<w:jc w:val="center"/>']];
    if (center.sectPr !== '') props.push(['sectPr', center.sectPr]);
    return `<w:p>${mergeProps('w:pPr', center.paraProps, props, PPR_ORDER)}${inner}</w:p>`;
  };
  if (v === undefined || v === null || v === '') {
    if (v === undefined) missing(node.tag, ctx);
    if (center !== undefined) out.push(centred(''));
    return;
  }
  try {
    const { image, box, svg, text } = loadImage(v, urlResolver(remote));
    if (format === 'xlsx') {
      const st = ctx.state as SheetState | undefined;
      const cell = /^([A-Z]{1,3})(\d+)$/.exec(node.tag.location.cell ?? '');
      if (st === undefined || cell === null) {
        ctx.errors.add('image_position', `tag "${node.tag.source.trim()}" must be in a cell of a sheet`, node.tag.location);
        return;
      }
      const pkg = session.pkgOf();
      st.images ??= pkg.entries.has(ctx.partName)
        ? sheetDrawing(pkg, ctx.partName)
        : sheetDrawing(pkg, ctx.partName, { relsXml: session.texts.get(relsPathOf(ctx.partName)), taken: (n) => session.taken(n) });
      if (!st.images.existing) session.reserve(st.images.part);
      const rId = session.addImage(st.images.part, image);
      // Inside row loops the picture goes to the row the cell was rendered to.
      const row = st.hasLoops && st.rows.curOut > 0 ? st.rows.curOut : Number(cell[2]);
      const pic: SheetImage = {
        col: colToNum(cell[1] ?? 'A'),
        row,
        rId,
        cx: box.widthPx * EMU_PER_PX,
        cy: box.heightPx * EMU_PER_PX,
        id: session.docPrId++,
        ...(text.alt !== undefined || text.decorative ? { text } : {}),
      };
      if (svg !== undefined) pic.svgRId = session.addImage(st.images.part, svg);
      st.images.images.push(pic);
      return;
    }
    const rId = session.addImage(ctx.partName, image);
    const svgRId = svg === undefined ? undefined : session.addImage(ctx.partName, svg);
    if (center !== undefined) out.push(centred(`<w:r>${docxDrawing(rId, session.docPrId++, box, svgRId, text)}</w:r>`));
    else if (node.frame !== undefined) out.push(pptxPicture(rId, session.docPrId++, image, node.frame, svgRId, text));
    else if (format === 'docx') out.push(`</w:t>${docxDrawing(rId, session.docPrId++, box, svgRId, text)}<w:t xml:space="preserve">`);
    else ctx.errors.add('image_position', `tag "${node.tag.source.trim()}" must be alone in a shape`, node.tag.location);
  } catch (e) {
    if (e instanceof PendingImage) return;
    if (e instanceof ImageError && e.damaged && !ctx.strict) imageWarning(node.tag, ctx, e.message);
    else if (e instanceof ImageError) ctx.errors.add(e.id, `tag "${node.tag.source.trim()}": ${e.message}`, node.tag.location);
    else throw e;
  }
}

/** A damaged image (a truncated PNG) left out of the document: a warning beside the missing values
 *  (`image_invalid`, located like them). */
function imageWarning(tag: TagInfo, ctx: RenderContext, why: string): void {
  const seen = (ctx.missing ??= new Map());
  const l = tag.location;
  const key = `image|${l.part}|${l.paragraph ?? ''}|${l.sheet ?? ''}|${l.cell ?? ''}|${l.offset ?? ''}|${tag.source}`;
  const source = tag.source.trim();
  if (!seen.has(key))
    seen.set(key, { id: 'image_invalid', message: `the image of tag "${source}" was left out: ${why}`, location: l, tag: source });
}

/** A rendered document, and what rendered empty for want of data (`missing_value`, with locations). */
export interface RenderReport {
  output: Uint8Array;
  warnings: TemplateErrorEntry[];
}

/** A rendered document's parts before they are zipped (renderParts), and its warnings. */
export interface PartsReport {
  parts: OutEntry[];
  warnings: TemplateErrorEntry[];
}

function renderCompiled(compiled: CompiledTemplate, data: unknown, opts: Resolved, vars: Record<string, unknown>): PartsReport {
  const errors = new ErrorBag();
  const session = new RenderSession(compiled.pkg, MEDIA_DIR[compiled.format]);
  const includeEnv: IncludeEnv = {
    related: opts.related,
    compile: { delimiters: opts.delimiters, paragraphLoop: opts.paragraphLoop, limits: opts.limits },
    session,
    host: compiled.pkg,
    stack: [],
    styles: new Map(),
    numbering: compiled.format === 'docx' ? numberingState(compiled.pkg) : null,
  };
  const sheetIncludes = compiled.format === 'xlsx' ? new SheetIncludes(opts.related, includeEnv.compile, session, compiled.pkg) : undefined;
  const slides = compiled.format === 'pptx' ? new SlideIncludes(opts.related, includeEnv.compile, session, compiled.pkg) : undefined;
  const ctx: RenderContext = {
    filter: opts.filter,
    errors,
    strict: opts.strict,
    linebreaks: opts.linebreaks,
    budget: { nodes: 0, iterations: 0, maxIterations: opts.limits.maxLoopIterations },
    state: undefined,
    partName: '',
    hook: (node, scopes, out, c) => {
      if (node.k === 'image') {
        renderImage(node, scopes, out, c, session, compiled.format, opts.remote);
      } else if (node.k === 'include') {
        if (compiled.format === 'docx') renderInclude(node, scopes, out, c, includeEnv);
        else if (sheetIncludes !== undefined && c.state !== undefined) sheetIncludes.include(node, scopes, c);
        else if (slides?.onInclude(node, scopes) !== true) {
          errors.add(
            'include_position',
            `tag "${node.tag.source.trim()}": ${slides === undefined ? 'a workbook include must be in a cell of a sheet' : 'a presentation include must be on a slide'}`,
            node.tag.location,
          );
        }
      } else if (node.k === 'hook' && node.name === 'html') {
        const d = node.data as HtmlHookData;
        const v = evalTag(d.expr, d.tag, scopes, c);
        if (v === undefined) missing(d.tag, c);
        const env: HtmlEnv = {
          runProps: d.runProps,
          paraProps: d.paraProps,
          link: (href) => {
            const scheme = unsafeScheme(href);
            if (scheme !== undefined) {
              errors.add(
                'link_invalid',
                `tag "${d.tag.source.trim()}": the HTML link "${href.slice(0, 60)}" uses the scheme "${scheme}:"; only http, https, mailto, tel and ftp links are written`,
                d.tag.location,
              );
              return undefined;
            }
            return session.addRel(c.partName, HYPERLINK_REL, href.trim(), true);
          },
        };
        const html = toText(v);
        if (d.block) out.push(htmlToBlocks(html, env, d.sectPr));
        else if (html !== '') out.push(`</w:t></w:r>${htmlToRuns(html, env)}<w:r>${d.runProps}<w:t xml:space="preserve">`);
      } else if (node.k === 'hook' && node.name === 'link') {
        const d = node.data as LinkHookData;
        const url = linkAddress(d.link, scopes, c);
        // No address: the text stays, without a link.
        const id = url === undefined || url === '' ? undefined : session.addRel(c.partName, HYPERLINK_REL, url, true);
        out.push(d.text.replace(/\sr:id="[^"]*"/, id === undefined ? '' : ` r:id="${id}"`));
      } else if (compiled.hook !== undefined) {
        compiled.hook(node, scopes, out, c);
      }
    },
  };
  const scopes = [vars, data];
  const rendered = new Map<string, string>();
  const states = new Map<string, unknown>();
  const slideCopies = new Map<string, SlideOut[]>();
  const renderPart = (part: CompiledTemplate['parts'] extends Map<string, infer P> ? P : never, partScopes: Scopes): string => {
    const out: string[] = [];
    ctx.state = part.newState?.();
    ctx.partName = part.name;
    renderNodes(part.nodes, partScopes, out, ctx);
    let xml = out.join('');
    if (part.repair !== undefined) xml = part.repair(xml);
    if (part.finish !== undefined) xml = part.finish(xml, ctx.state);
    if (ctx.state !== undefined) states.set(part.name, ctx.state);
    return xml;
  };
  const isSlide = (name: string): boolean => slides !== undefined && /^ppt\/slides\/[^/]+\.xml$/.test(name);
  for (const part of compiled.parts.values()) {
    if (part.repeat !== undefined) {
      const v = evalTag(part.repeat.expr, part.repeat.tag, scopes, ctx);
      const items: unknown[] = !truthy(v) ? [] : Array.isArray(v) ? v : [v];
      const pushScope = Array.isArray(v) || typeof v === 'object';
      // Over a list, `{$index}` is the slide's 0-based position in it, as in a loop.
      const scopeOf = (item: unknown, i: number): Scopes =>
        !pushScope ? scopes : Array.isArray(v) ? [...scopes, { $index: i }, item] : [...scopes, item];
      slideCopies.set(
        part.name,
        items.flatMap((item, i) =>
          slides === undefined
            ? [{ xml: renderPart(part, scopeOf(item, i)) }]
            : slides.render(() => renderPart(part, scopeOf(item, i)), ctx),
        ),
      );
      continue;
    }
    if (slides !== undefined && isSlide(part.name)) {
      const outs = slides.render(() => renderPart(part, scopes), ctx);
      const only = outs[0];
      if (outs.length === 1 && only !== undefined && only.name === undefined) rendered.set(part.name, only.xml);
      else slideCopies.set(part.name, outs);
      continue;
    }
    rendered.set(part.name, renderPart(part, scopes));
  }
  errors.throwIfAny();
  const removed = new Set(compiled.removed);
  const newFiles = new Map<string, string>();

  const extra = new Map<string, string>();
  const read = (name: string): string | undefined =>
    extra.get(name) ?? session.texts.get(name) ?? compiled.replacedText.get(name) ?? compiled.pkg.text(name);
  if (compiled.finalize !== undefined) {
    for (const [name, xml] of compiled.finalize(states, rendered)) {
      if (rendered.has(name)) rendered.set(name, xml);
      else extra.set(name, xml);
    }
  }

  if (opts.embedded !== undefined && Object.keys(opts.embedded).length > 0) {
    addCustomProps(read, rendered, extra, opts.embedded);
  }

  if (sheetIncludes !== undefined) {
    sheetIncludes.apply(extra, rendered, read);
    for (const a of sheetIncludes.added) if (a.state !== undefined) states.set(a.part, a.state);
  }
  if (compiled.format === 'xlsx') {
    for (const [part, st] of states as Map<string, SheetState>) {
      const imgs = st.images;
      if (imgs === undefined || imgs.images.length === 0) continue;
      const relId = imgs.existing ? undefined : session.addRel(part, DRAWING_REL, imgs.part);
      const w = writeSheetImages(rendered.get(part) ?? read(part) ?? '', imgs, read(imgs.part), relId, read('[Content_Types].xml') ?? '');
      if (extra.has(part)) extra.set(part, w.sheet);
      else rendered.set(part, w.sheet);
      extra.set(imgs.part, w.drawing);
      extra.set('[Content_Types].xml', w.contentTypes);
    }
  }
  includeOutputs(includeEnv, extra);
  session.apply(extra, read);
  expandSlides(compiled.pkg, slideCopies, rendered, extra, newFiles, removed, slides?.counter ?? { n: 0 });

  const entries: OutEntry[] = [];
  for (const [name, xml] of newFiles) extra.set(name, xml);
  relsContentType(extra, read);
  for (const e of compiled.order) {
    if (removed.has(e.name)) continue;
    const xml = rendered.get(e.name) ?? extra.get(e.name);
    if (xml !== undefined) {
      entries.push({ name: e.name, data: Buffer.from(xml, 'utf8'), level: xml.length > 256 * 1024 ? 1 : 6 });
      extra.delete(e.name);
    } else {
      entries.push({ name: e.name, entry: compiled.replaced.get(e.name) ?? e });
    }
  }
  for (const [name, xml] of extra) if (!removed.has(name)) entries.push({ name, data: Buffer.from(xml, 'utf8') });
  // Media are already compressed; storing them avoids burning CPU for nothing.
  for (const [name, bytes] of session.files) entries.push({ name, data: bytes, level: 0 });
  return { parts: entries, warnings: [...(ctx.missing?.values() ?? [])] };
}

/** A render's parts as the package they make, held to the maxOutputBytes limit. */
export function zipParts(parts: OutEntry[], limits?: Partial<TemplateLimits>): Uint8Array {
  const output = writeZip(parts);
  const max = resolveLimits(limits).maxOutputBytes;
  if (output.length > max) throw limitError('maxOutputBytes', `the merged document is ${output.length} bytes`, max);
  return output;
}

const RELS_CT = 'application/vnd.openxmlformats-package.relationships+xml';

/**
 * New relationship parts (of repeated slides, included parts, new images) need a content type. Office
 * writes a `rels` Default; some writers list every `.rels` part by Override instead, and then the new ones
 * would have none (PowerPoint calls the file corrupt): the Default is added when some new `.rels` part has
 * neither.
 */
function relsContentType(extra: Map<string, string>, read: (name: string) => string | undefined): void {
  const ct = extra.get('[Content_Types].xml') ?? read('[Content_Types].xml');
  if (ct === undefined || /<Default\b[^>]*\sExtension="rels"/i.test(ct)) return;
  const listed = (name: string): boolean => ct.includes(`PartName="/${name}"`) || ct.includes(`PartName="/${encodeURI(name)}"`);
  const unlisted = [...extra.keys()].some((name) => name.endsWith('.rels') && !listed(name));
  if (unlisted)
    extra.set(
      '[Content_Types].xml',
      ct.replace(/<Types\b[^>]*>/, (open) => `${open}<Default Extension="rels" ContentType="${RELS_CT}"/>`),
    );
}

function addCustomProps(
  read: (name: string) => string | undefined,
  rendered: Map<string, string>,
  extra: Map<string, string>,
  props: Embedded,
): void {
  // The rendered text of a part wins over the template's (custom.xml may hold tags).
  const parts = customPropsParts((name) => rendered.get(name) ?? read(name), props);
  for (const [name, xml] of parts) {
    if (rendered.has(name)) rendered.set(name, xml);
    else extra.set(name, xml);
  }
}

/**
 * The package limits a template can be checked against without inflating anything (part count,
 * declared inflated sizes, compression ratios): a few microseconds per part, so an upload can be
 * refused at once. Returns the limit error, or null when the package is within the limits or is not
 * a zip package at all (the merge reports that).
 */
export function checkPackageLimits(template: Uint8Array, limits?: Partial<TemplateLimits>): TemplateError | null {
  try {
    readZip(template, resolveLimits(limits));
    return null;
  } catch (e) {
    if (e instanceof TemplateError && e.errors.some((x) => x.id === 'limit_exceeded')) return e;
    return null;
  }
}

/**
 * The kind of Office package the bytes are (from the package's main part, whatever the file is called),
 * or undefined when they are not a Word, Excel or PowerPoint package at all. Reads the zip directory and
 * `[Content_Types].xml` only.
 */
export function templateFormat(template: Uint8Array, limits?: Partial<TemplateLimits>): 'docx' | 'xlsx' | 'pptx' | undefined {
  const r = templateKind(template, limits);
  return r instanceof TemplateError ? undefined : r;
}

/**
 * `templateFormat`, or the engine's reason when the bytes are not a Word, Excel or PowerPoint package
 * (not a zip, no `[Content_Types].xml`, no Office main part, macro code…), as a TemplateError.
 */
export function templateKind(template: Uint8Array, limits?: Partial<TemplateLimits>): 'docx' | 'xlsx' | 'pptx' | TemplateError {
  try {
    return openPackage(template, resolveLimits(limits)).format;
  } catch (e) {
    if (e instanceof TemplateError) return e;
    throw e;
  }
}

/**
 * Renders a docx/pptx/xlsx template with data. Every problem caused by the input (package, tags,
 * expressions, options) is reported as one TemplateError listing all of them.
 */
export async function render(template: Uint8Array, data: unknown, options?: RenderOptions): Promise<Uint8Array> {
  return (await renderWithWarnings(template, data, options)).output;
}

/**
 * `render`, also returning every tag that rendered empty because the data has no value for it
 * (`missing_value` entries located like template errors and `inspect`'s tags: part and paragraph, or
 * sheet and cell), each tag once. With `strict: true` they are errors instead.
 */
export async function renderWithWarnings(template: Uint8Array, data: unknown, options?: RenderOptions): Promise<RenderReport> {
  const { parts, warnings } = await renderParts(template, data, options);
  return { output: zipParts(parts, options?.limits), warnings };
}

/** renderWithWarnings's document as its parts, before they are zipped (zipParts): rendered parts in hand,
 *  the template's others as its compressed entries. What reads the document next (the merge's sanitizer and
 *  cost estimate) reads them without a zip round trip. */
export async function renderParts(template: Uint8Array, data: unknown, options?: RenderOptions): Promise<PartsReport> {
  await Promise.resolve();
  try {
    return await renderAsync(template, data, options);
  } catch (e) {
    // The first SVG image loads the SVG renderer; the render then runs again.
    if (!(e instanceof SvgNotReady)) throw e;
    await prepareSvg();
    return renderAsync(template, data, options);
  }
}

async function renderAsync(template: Uint8Array, data: unknown, options?: RenderOptions): Promise<PartsReport> {
  const fetchImage = options?.fetchImage;
  if (typeof fetchImage !== 'function') return renderWith(template, data, options, undefined);
  // Rendering is synchronous; image URLs are only known once their tags are evaluated. So: a first pass
  // collects the URLs (and is the result when there are none), the images are fetched, a second pass
  // renders with them. A fetch failure is a template error at its tag, never a crash.
  const remote: RemoteImages = { collecting: true, wanted: new Set(), fetched: new Map() };
  const first = renderWith(template, data, options, remote);
  if (remote.wanted.size === 0) return first;
  const queue = [...remote.wanted];
  const worker = async () => {
    for (let url = queue.shift(); url !== undefined; url = queue.shift()) {
      try {
        const bytes = await fetchImage(url);
        remote.fetched.set(url, bytes instanceof Uint8Array ? bytes : new Error('the fetcher returned no bytes'));
      } catch (e) {
        remote.fetched.set(url, e instanceof Error ? e : new Error(String(e)));
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(IMAGE_FETCH_CONCURRENCY, queue.length) }, worker));
  remote.collecting = false;
  return renderWith(template, data, options, remote);
}

/** Synchronous render. SVG images need the SVG renderer loaded first (`await prepareSvg()`). */
export function renderSync(template: Uint8Array, data: unknown, options?: RenderOptions): Uint8Array {
  try {
    return zipParts(renderWith(template, data, options, undefined).parts, options?.limits);
  } catch (e) {
    if (e instanceof SvgNotReady)
      throw TemplateError.single(
        'image_invalid',
        'SVG images need the SVG renderer: use render(), or await prepareSvg() before renderSync()',
      );
    throw e;
  }
}

function renderWith(
  template: Uint8Array,
  data: unknown,
  options: RenderOptions | undefined,
  remote: RemoteImages | undefined,
): PartsReport {
  const opts = resolveOptions(options);
  opts.remote = remote;
  const compiled = getCompiled(template, {
    delimiters: opts.delimiters,
    paragraphLoop: opts.paragraphLoop,
    limits: opts.limits,
    ...(options?.templateHash ? { hash: options.templateHash } : {}),
  });
  if (compiled.errors.length > 0) throw new TemplateError(compiled.errors.slice());
  const vars = variableScope(options?.variables, data, opts.filter);
  try {
    return renderCompiled(compiled, data, opts, vars);
  } catch (e) {
    // Stack exhaustion from pathological nesting or cyclic data is an input problem, not a crash.
    if (e instanceof RangeError)
      throw TemplateError.single('render_limit', `the template and data are too deeply nested to render (${e.message})`);
    throw e;
  }
}
