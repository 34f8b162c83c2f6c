import { compiledInclude } from './include.ts';
import { carryRels, dropRefs } from './carry.ts';
import type { Rel } from './carry.ts';
import type { IncludeNode } from './compile.ts';
import type { Scopes } from './expression.ts';
import type { OpcPackage } from './package.ts';
import { relsOf } from './package.ts';
import { renderNodes } from './render.ts';
import type { RenderContext } from './render.ts';
import type { RenderSession } from './session.ts';
import { relativeTarget } from './session.ts';
import type { CompileOptions, CompiledTemplate } from './template.ts';
import type { SheetState } from './xlsx.ts';
import { decodeXml, escapeXml, getAttr } from './xml.ts';
import { rewriteRefs } from './xlsx-refs.ts';
import type { SheetMapper } from './xlsx-refs.ts';

/**
 * `{>name}` in a cell of a workbook: the sheets of the related workbook `name` are rendered with
 * the data in scope at the tag and inserted after the sheet holding the tag (the cell is left
 * empty). A sheet name already in use gets " (2)", " (3)"… as in Excel, and references to it in the
 * included sheets follow. Shared strings become inline strings, cell and conditional-format
 * styles are appended to the host's styles.xml (fonts, fills, borders, number formats), defined
 * names come along unless the host has the same name, and drawings, charts, pictures, tables and
 * comments come with their relationships and content types.
 */

const WORKSHEET_CT = 'application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml';
const REL_NS = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const WORKSHEET_REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet';

interface AddedSheet {
  /** Host sheet part the include tag was in (the new sheet goes after it). */
  after: string;
  name: string;
  part: string;
  xml: string;
  state: SheetState | undefined;
  /** Index into `sources` (styles to merge, defined names to copy). */
  source: number;
  visibility: string | undefined;
}

interface Source {
  compiled: CompiledTemplate;
  /** Source sheet index -> new sheet part (for sheet-local defined names). */
  sheetParts: string[];
  renames: Map<string, string>;
}

interface SheetRef {
  name: string;
  part: string;
  rid: string;
  /** `hidden` / `veryHidden`, kept on the included copy. */
  state: string | undefined;
}

function workbookSheets(pkg: OpcPackage, wbXml: string): SheetRef[] {
  const rels = relsOf(pkg, pkg.main);
  const out: SheetRef[] = [];
  for (const m of wbXml.matchAll(/<sheet\b[^>]*>/g)) {
    const rid = getAttr(m[0], 'r:id') ?? '';
    out.push({
      name: decodeXml(getAttr(m[0], 'name') ?? ''),
      part: rels.find((r) => r.id === rid)?.target ?? '',
      rid,
      state: getAttr(m[0], 'state'),
    });
  }
  return out;
}

function quoteSheet(name: string): string {
  return `'${name.replace(/'/g, "''")}'`;
}

/** Sheet-qualified references to renamed sheets, in formula text. */
function renameRefs(formula: string, renames: Map<string, string>): string {
  if (renames.size === 0 || formula.indexOf('!') < 0) return formula;
  return formula.replace(
    /'((?:[^']|'')+)'!|([A-Za-z_\u00C0-\uFFFF][\w.\u00C0-\uFFFF]*)!/g,
    (m, quoted: string | undefined, bare: string | undefined) => {
      const name = quoted === undefined ? (bare ?? '') : quoted.replace(/''/g, "'");
      const to = renames.get(name.toLowerCase());
      return to === undefined ? m : `${quoteSheet(to)}!`;
    },
  );
}

const FORMULAS = /(<(f|formula|formula1|formula2|xm:f|c:f)\b[^>]*>)([^<]*)(<\/\2>)/g;

function renameInXml(xml: string, renames: Map<string, string>): string {
  if (renames.size === 0) return xml;
  return xml.replace(
    FORMULAS,
    (_m, a: string, _n: string, f: string, b: string) => `${a}${escapeXml(renameRefs(decodeXml(f), renames))}${b}`,
  );
}

export class SheetIncludes {
  readonly added: AddedSheet[] = [];
  private readonly sources: Source[] = [];
  private readonly stack: string[] = [];
  private readonly names: Set<string>;
  private maxTableId = 0;
  private readonly tableNames = new Set<string>();
  private readonly related: Record<string, Uint8Array>;
  private readonly compile: CompileOptions;
  private readonly session: RenderSession;
  private readonly host: OpcPackage;

  constructor(related: Record<string, Uint8Array>, compile: CompileOptions, session: RenderSession, host: OpcPackage) {
    this.related = related;
    this.compile = compile;
    this.session = session;
    this.host = host;
    this.names = new Set(workbookSheets(host, host.text(host.main) ?? '').map((s) => s.name.toLowerCase()));
    for (const name of host.entries.keys()) {
      if (!/^xl\/tables\/[^/]+\.xml$/.test(name)) continue;
      const root = /<table\b[^>]*>/.exec(host.text(name) ?? '')?.[0] ?? '';
      this.maxTableId = Math.max(this.maxTableId, Number(getAttr(root, 'id') ?? 0));
      this.tableNames.add((getAttr(root, 'displayName') ?? '').toLowerCase());
    }
  }

  private freeName(name: string): string {
    let out = name;
    for (let n = 2; this.names.has(out.toLowerCase()); n++) {
      const suffix = ` (${n})`;
      out = `${name.slice(0, 31 - suffix.length)}${suffix}`;
    }
    this.names.add(out.toLowerCase());
    return out;
  }

  /** Tables need workbook-unique ids and names. */
  private table(xml: string): string {
    return xml.replace(/<table\b[^>]*>/, (root) => {
      let t = root.replace(/(\sid=")\d+(")/, `$1${++this.maxTableId}$2`);
      const display = getAttr(root, 'displayName') ?? '';
      if (this.tableNames.has(display.toLowerCase())) {
        const fresh = `${display}_${this.maxTableId}`;
        t = t.replace(/(\sdisplayName=")[^"]*(")/, `$1${escapeXml(fresh)}$2`).replace(/(\sname=")[^"]*(")/, `$1${escapeXml(fresh)}$2`);
        this.tableNames.add(fresh.toLowerCase());
      } else {
        this.tableNames.add(display.toLowerCase());
      }
      return t;
    });
  }

  include(node: IncludeNode, scopes: Scopes, ctx: RenderContext): void {
    const name = node.name;
    const compiled = compiledInclude(
      node,
      ctx,
      { related: this.related, stack: this.stack, compile: this.compile },
      'xlsx',
      'an Excel workbook (sheets are included into workbooks)',
    );
    if (!compiled) return;

    const src = compiled.pkg;
    const sheets = workbookSheets(src, src.text(src.main) ?? '').filter((s) => src.entries.has(s.part));
    const renames = new Map<string, string>();
    const plan = sheets.map((s) => {
      const newName = this.freeName(s.name);
      if (newName !== s.name) renames.set(s.name.toLowerCase(), newName);
      let part = '';
      for (let n = 1; part === '' || this.session.taken(part); n++) part = `xl/worksheets/sheet${n}.xml`;
      this.session.reserve(part);
      return { src: s, name: newName, part };
    });
    const source = this.sources.push({ compiled, sheetParts: plan.map((p) => p.part), renames }) - 1;

    // Relationships first: `{%img}` pictures of a sheet go into the drawing it carries.
    const key = `sheets:${name}:${source}`;
    // Threaded comments need the workbook's person list: their legacy notes (comments) come instead.
    const decide = (rel: Rel): { drop: true } | undefined =>
      /\/(pivotTable|threadedComment|person)$/.test(rel.type) ? { drop: true } : undefined;
    const transform = (_part: string, ct: string, xml: string): string =>
      renameInXml(ct.endsWith('.table+xml') ? this.table(xml) : xml, renames);
    const droppedBy = new Map<string, string[]>();
    for (const p of plan)
      droppedBy.set(p.part, carryRels(src, p.src.part, p.part, this.session, { key, shareKey: `sheets:${name}`, decide, transform }));

    // Render every templated sheet (in the host's context, with the included workbook's hooks).
    const states = new Map<string, unknown>();
    const rendered = new Map<string, string>();
    const hostHook = ctx.hook;
    const incHook = compiled.hook;
    const savedPart = ctx.partName;
    const savedState = ctx.state;
    this.stack.push(name);
    try {
      for (const p of plan) {
        const cp = compiled.parts.get(p.src.part);
        if (cp === undefined) continue;
        ctx.partName = p.part;
        ctx.state = cp.newState?.();
        ctx.hook = (n, s, o, c) => {
          if (n.k === 'hook' && n.name.startsWith('xlsx.') && incHook !== undefined) incHook(n, s, o, c);
          else hostHook?.(n, s, o, c);
        };
        const out: string[] = [];
        renderNodes(cp.nodes, scopes, out, ctx);
        let xml = out.join('');
        if (cp.repair !== undefined) xml = cp.repair(xml);
        if (cp.finish !== undefined) xml = cp.finish(xml, ctx.state);
        if (ctx.state !== undefined) states.set(p.src.part, ctx.state);
        rendered.set(p.src.part, xml);
      }
    } finally {
      this.stack.pop();
      ctx.hook = hostHook;
      ctx.partName = savedPart;
      ctx.state = savedState;
    }
    // References across the included sheets follow their row loops (charts too).
    const finalized = compiled.finalize?.(states, rendered) ?? new Map<string, string>();

    const sst = this.sharedStrings(src);
    for (const p of plan) {
      let xml = finalized.get(p.src.part) ?? rendered.get(p.src.part) ?? src.text(p.src.part) ?? '';
      xml = xml.replace(/<c\b([^>]*?)\st="s"([^>]*)>\s*<v>(\d+)<\/v>\s*<\/c>/g, (m, a: string, b: string, idx: string) => {
        const inner = sst[Number(idx)];
        return inner === undefined ? m : `<c${a}${b} t="inlineStr"><is>${inner}</is></c>`;
      });
      xml = renameInXml(xml, renames);
      // Only the host's own selected sheet stays selected (several would open grouped).
      xml = xml.replace(/(<sheetView\b[^>]*?)\stabSelected="(?:1|true)"/g, '$1');
      const dropped = droppedBy.get(p.part) ?? [];
      if (dropped.length > 0) xml = dropRefs(xml, dropped);
      this.session.addOverride(p.part, WORKSHEET_CT);
      const state = states.get(p.src.part) as SheetState | undefined;
      this.added.push({ after: savedPart, name: p.name, part: p.part, xml, state, source, visibility: p.src.state });
    }
    // Parts the row loops edited (chart series, table ranges) replace their carried copies.
    for (const [srcName, xml] of finalized) {
      if (sheets.some((x) => x.part === srcName)) continue;
      const carried = this.session.carried.get(`carry:${key}:${srcName}`);
      const before = carried === undefined ? undefined : this.session.texts.get(carried);
      if (carried === undefined || before === undefined) continue;
      let next = renameInXml(xml, renames);
      const root = /<table\b[^>]*>/.exec(before)?.[0];
      if (root !== undefined)
        next = next.replace(/<table\b[^>]*>/, (r) =>
          ['id', 'name', 'displayName'].reduce(
            (t, a) => t.replace(new RegExp(`(\\s${a}=")[^"]*(")`), `$1${escapeXml(getAttr(root, a) ?? '')}$2`),
            r,
          ),
        );
      this.session.texts.set(carried, next);
    }
  }

  private sharedStrings(src: OpcPackage): string[] {
    const rel = relsOf(src, src.main).find((r) => r.type.endsWith('/sharedStrings'));
    const xml = src.text(rel?.target ?? 'xl/sharedStrings.xml') ?? '';
    return [...xml.matchAll(/<si>([\s\S]*?)<\/si>|<si\/>/g)].map((m) => m[1] ?? '');
  }

  /**
   * Writes the included sheets into the host: styles merged, sheets listed in the workbook after
   * the sheet that held their tag, relationships, defined names, recalculation on open.
   */
  apply(extra: Map<string, string>, rendered: Map<string, string>, read: (name: string) => string | undefined): void {
    if (this.added.length === 0) return;
    this.followIncludedRows(extra, rendered, read);
    const stylesName = relsOf(this.host, this.host.main).find((r) => r.type.endsWith('/styles'))?.target ?? 'xl/styles.xml';
    let styles = read(stylesName);
    const maps = this.sources.map((s) => {
      if (styles === undefined) return undefined;
      const inc = s.compiled.replacedText.get('xl/styles.xml') ?? s.compiled.pkg.text('xl/styles.xml');
      if (inc === undefined) return undefined;
      const merged = mergeStyles(styles, inc);
      styles = merged.xml;
      return merged;
    });
    if (styles !== undefined) extra.set(stylesName, styles);

    for (const a of this.added) {
      const m = maps[a.source];
      a.xml = m === undefined ? a.xml.replace(/(<c\b[^>]*?)\ss="\d+"/g, '$1') : restyle(a.xml, m.xf, m.dxf);
      extra.set(a.part, a.xml);
    }

    const wbName = this.host.main;
    let wb = read(wbName) ?? '';
    const wbRelsName = `${wbName.slice(0, wbName.lastIndexOf('/') + 1)}_rels/${wbName.slice(wbName.lastIndexOf('/') + 1)}.rels`;
    let wbRels = read(wbRelsName) ?? '';
    const before = workbookSheets(this.host, wb);
    let maxId = 0;
    for (const m of wb.matchAll(/<sheet\b[^>]*\ssheetId="(\d+)"/g)) maxId = Math.max(maxId, Number(m[1]));
    let relN = 1;
    // openpyxl declares the relationship namespace on each <sheet>, not on the workbook: the new ones
    // then declare it too.
    const rootTag = /<workbook\b[^>]*>/.exec(wb)?.[0] ?? '';
    const rNs = getAttr(rootTag, 'xmlns:r') === REL_NS ? '' : ` xmlns:r="${REL_NS}"`;
    // New sheet elements, after the sheet that held their tag (in include order).
    const order: Array<{ xml: string; part: string; old?: number }> = before.map((s, i) => ({ xml: '', part: s.part, old: i }));
    const sheetEls = [...wb.matchAll(/<sheet\b[^>]*?(?:\/>|>[\s\S]*?<\/sheet>)/g)].map((m) => m[0]);
    order.forEach((o, i) => (o.xml = sheetEls[i] ?? ''));
    for (const a of this.added) {
      while (wbRels.includes(`Id="rIdInc${relN}"`)) relN++;
      const rid = `rIdInc${relN++}`;
      wbRels = wbRels.replace(
        '</Relationships>',
        `<Relationship Id="${rid}" Type="${WORKSHEET_REL}" Target="${relativeTarget(wbName, a.part)}"/></Relationships>`,
      );
      const hidden = a.visibility === 'hidden' || a.visibility === 'veryHidden' ? ` state="${a.visibility}"` : '';
      const el = `<sheet${rNs} name="${escapeXml(a.name)}" sheetId="${++maxId}"${hidden} r:id="${rid}"/>`;
      let at = order.findIndex((o) => o.part === a.after);
      if (at < 0) at = order.length - 1;
      // After the host sheet and the sheets already included after it.
      let k = at + 1;
      while (k < order.length && order[k]?.old === undefined) k++;
      order.splice(k, 0, { xml: el, part: a.part });
    }
    wb = wb.replace(
      /(<sheets\b[^>]*>)[\s\S]*?(<\/sheets>)/,
      (_m, open: string, close: string) => `${open}${order.map((o) => o.xml).join('')}${close}`,
    );
    // Sheet-local defined names refer to sheets by position.
    const newIndex = new Map<number, number>();
    order.forEach((o, i) => {
      if (o.old !== undefined) newIndex.set(o.old, i);
    });
    wb = wb.replace(
      /(<definedName\b[^>]*\slocalSheetId=")(\d+)(")/g,
      (_m, x: string, n: string, y: string) => `${x}${newIndex.get(Number(n)) ?? n}${y}`,
    );
    wb = wb.replace(/<workbookView\b[^>]*>/g, (v) =>
      v.replace(
        /(\s(?:activeTab|firstSheet)=")(\d+)(")/g,
        (_m, x: string, n: string, y: string) => `${x}${newIndex.get(Number(n)) ?? n}${y}`,
      ),
    );
    wb = this.definedNames(
      wb,
      order.map((o) => o.part),
    );
    wb = /<calcPr\b/.test(wb)
      ? wb.replace(/<calcPr\b(?![^>]*fullCalcOnLoad)/, '<calcPr fullCalcOnLoad="1"')
      : wb.replace(/<\/workbook>/, '<calcPr fullCalcOnLoad="1"/></workbook>');
    extra.set(wbName, wb);
    extra.set(wbRelsName, wbRels);
  }

  /**
   * The host's references to an included sheet (written against the included template, e.g.
   * `='Sales'!B3` for its total row) follow that sheet's row loops, like references between sheets.
   */
  private followIncludedRows(extra: Map<string, string>, rendered: Map<string, string>, read: (name: string) => string | undefined): void {
    const byName = new Map<string, NonNullable<SheetState['rows']>>();
    for (const a of this.added)
      if (a.state?.rows.changed === true && !byName.has(a.name.toLowerCase())) byName.set(a.name.toLowerCase(), a.state.rows);
    if (byName.size === 0) return;
    const sheets: SheetMapper = (name) => {
      const rows = byName.get(name.toLowerCase());
      return rows === undefined ? undefined : (r, w, single) => rows.mapLive(r, w, single ?? false);
    };
    const edit = (xml: string): string =>
      xml.replace(FORMULAS, (m, a: string, _n: string, f: string, b: string) => {
        if (f.indexOf('!') < 0) return m;
        const text = decodeXml(f);
        const next = rewriteRefs(text, null, sheets);
        return next === text ? m : `${a}${escapeXml(next)}${b}`;
      });
    const hostParts = workbookSheets(this.host, this.host.text(this.host.main) ?? '').map((s) => s.part);
    for (const name of this.host.entries.keys()) if (/^xl\/charts\/chart[^/]*\.xml$/.test(name)) hostParts.push(name);
    for (const part of hostParts) {
      const inRendered = rendered.has(part);
      const xml = inRendered ? rendered.get(part) : read(part);
      if (xml === undefined || xml.indexOf('!') < 0) continue;
      const next = edit(xml);
      if (next === xml) continue;
      if (inRendered) rendered.set(part, next);
      else extra.set(part, next);
    }
    const wb = read(this.host.main);
    if (wb !== undefined) {
      const next = wb.replace(/(<definedName\b[^>]*>)([^<]*)(<\/definedName>)/g, (m, a: string, body: string, b: string) => {
        const text = decodeXml(body);
        const r = rewriteRefs(text, null, sheets);
        return r === text ? m : `${a}${escapeXml(r)}${b}`;
      });
      if (next !== wb) extra.set(this.host.main, next);
    }
  }

  /** Defined names of the included workbooks, unless the host already has the name (in that scope). */
  private definedNames(wb: string, parts: string[]): string {
    const have = new Set(
      [...wb.matchAll(/<definedName\b[^>]*>/g)].map(
        (m) => `${(getAttr(m[0], 'name') ?? '').toLowerCase()}|${getAttr(m[0], 'localSheetId') ?? ''}`,
      ),
    );
    const add: string[] = [];
    for (const s of this.sources) {
      const srcWb = s.compiled.pkg.text(s.compiled.pkg.main) ?? '';
      for (const m of srcWb.matchAll(/<definedName\b([^>]*)>([^<]*)<\/definedName>/g)) {
        const attrs = m[1] ?? '';
        const local = getAttr(`<x${attrs}>`, 'localSheetId');
        let scope = '';
        if (local !== undefined) {
          const part = s.sheetParts[Number(local)];
          const idx = part === undefined ? -1 : parts.indexOf(part);
          if (idx < 0) continue;
          scope = String(idx);
        }
        const key = `${(getAttr(`<x${attrs}>`, 'name') ?? '').toLowerCase()}|${scope}`;
        if (have.has(key)) continue;
        have.add(key);
        const a = local === undefined ? attrs : attrs.replace(/(\slocalSheetId=")\d+(")/, `$1${scope}$2`);
        add.push(`<definedName${a}>${escapeXml(renameRefs(decodeXml(m[2] ?? ''), s.renames))}</definedName>`);
      }
    }
    if (add.length === 0) return wb;
    if (/<definedNames\b[^>]*>/.test(wb)) return wb.replace('</definedNames>', `${add.join('')}</definedNames>`);
    if (/<definedNames\/>/.test(wb)) return wb.replace('<definedNames/>', `<definedNames>${add.join('')}</definedNames>`);
    // definedNames follows sheets (and externalReferences) in CT_Workbook.
    const after = /<\/externalReferences>/.test(wb) ? '</externalReferences>' : '</sheets>';
    return wb.replace(after, `${after}<definedNames>${add.join('')}</definedNames>`);
  }
}

// ---- styles ----

/** Sections of a stylesheet in schema order. */
const SECTIONS = [
  'numFmts',
  'fonts',
  'fills',
  'borders',
  'cellStyleXfs',
  'cellXfs',
  'cellStyles',
  'dxfs',
  'tableStyles',
  'colors',
  'extLst',
];

function items(xml: string, section: string, item: string): string[] {
  const body = new RegExp(`<${section}\\b[^>]*>([\\s\\S]*?)</${section}>`).exec(xml)?.[1];
  if (body === undefined) return [];
  return [...body.matchAll(new RegExp(`<${item}\\b[^>]*?/>|<${item}\\b[^>]*>[\\s\\S]*?</${item}>`, 'g'))].map((m) => m[0]);
}

function appendItems(xml: string, section: string, add: string[], total: number): string {
  if (add.length === 0) return xml;
  const open = new RegExp(`<${section}\\b[^>]*>`).exec(xml);
  if (open !== null && !open[0].endsWith('/>')) {
    const o = /\scount="/.test(open[0]) ? open[0].replace(/\scount="\d+"/, ` count="${total}"`) : open[0];
    const closeAt = xml.indexOf(`</${section}>`, open.index);
    return `${xml.slice(0, open.index)}${o}${xml.slice(open.index + open[0].length, closeAt)}${add.join('')}${xml.slice(closeAt)}`;
  }
  const el = `<${section} count="${total}">${add.join('')}</${section}>`;
  if (open !== null) return xml.replace(open[0], el);
  // Missing section: before the first section that follows it in schema order.
  const later = SECTIONS.slice(SECTIONS.indexOf(section) + 1);
  for (const s of later) {
    const at = xml.search(new RegExp(`<${s}\\b`));
    if (at >= 0) return `${xml.slice(0, at)}${el}${xml.slice(at)}`;
  }
  return xml.replace('</styleSheet>', `${el}</styleSheet>`);
}

interface StyleMerge {
  xml: string;
  xf: number;
  dxf: number;
}

/** Appends the included stylesheet's formats to the host's; returns the offsets of cell and differential formats. */
function mergeStyles(host: string, inc: string): StyleMerge {
  const offsets = {
    fonts: items(host, 'fonts', 'font').length,
    fills: items(host, 'fills', 'fill').length,
    borders: items(host, 'borders', 'border').length,
    cellStyleXfs: items(host, 'cellStyleXfs', 'xf').length,
    cellXfs: items(host, 'cellXfs', 'xf').length,
    dxfs: items(host, 'dxfs', 'dxf').length,
  };
  // Custom number formats get ids the host does not use.
  const hostFmts = items(host, 'numFmts', 'numFmt');
  let nextFmt = Math.max(163, ...hostFmts.map((f) => Number(getAttr(f, 'numFmtId') ?? 0))) + 1;
  const fmtMap = new Map<string, string>();
  const newFmts: string[] = [];
  for (const f of items(inc, 'numFmts', 'numFmt')) {
    const id = getAttr(f, 'numFmtId') ?? '';
    const code = getAttr(f, 'formatCode') ?? '';
    const same = hostFmts.find((h) => getAttr(h, 'formatCode') === code);
    if (same !== undefined) {
      fmtMap.set(id, getAttr(same, 'numFmtId') ?? id);
      continue;
    }
    const nid = String(nextFmt++);
    fmtMap.set(id, nid);
    newFmts.push(f.replace(/(\snumFmtId=")\d+(")/, `$1${nid}$2`));
  }
  const remap = (xf: string, styleXf: boolean): string =>
    xf
      .replace(/(\sfontId=")(\d+)(")/, (_m, a: string, n: string, b: string) => `${a}${Number(n) + offsets.fonts}${b}`)
      .replace(/(\sfillId=")(\d+)(")/, (_m, a: string, n: string, b: string) => `${a}${Number(n) + offsets.fills}${b}`)
      .replace(/(\sborderId=")(\d+)(")/, (_m, a: string, n: string, b: string) => `${a}${Number(n) + offsets.borders}${b}`)
      .replace(/(\snumFmtId=")(\d+)(")/, (_m, a: string, n: string, b: string) => `${a}${fmtMap.get(n) ?? n}${b}`)
      .replace(/(\sxfId=")(\d+)(")/, (_m, a: string, n: string, b: string) =>
        styleXf ? `${a}${n}${b}` : `${a}${Number(n) + offsets.cellStyleXfs}${b}`,
      );
  const dxfs = items(inc, 'dxfs', 'dxf').map((d) =>
    d.replace(/(<numFmt\b[^>]*\snumFmtId=")(\d+)(")/, (_m, a: string, n: string, b: string) => `${a}${fmtMap.get(n) ?? n}${b}`),
  );
  const incFonts = items(inc, 'fonts', 'font');
  const incFills = items(inc, 'fills', 'fill');
  const incBorders = items(inc, 'borders', 'border');
  const incStyleXfs = items(inc, 'cellStyleXfs', 'xf').map((x) => remap(x, true));
  const incXfs = items(inc, 'cellXfs', 'xf').map((x) => remap(x, false));
  let xml = host;
  xml = appendItems(xml, 'numFmts', newFmts, hostFmts.length + newFmts.length);
  xml = appendItems(xml, 'fonts', incFonts, offsets.fonts + incFonts.length);
  xml = appendItems(xml, 'fills', incFills, offsets.fills + incFills.length);
  xml = appendItems(xml, 'borders', incBorders, offsets.borders + incBorders.length);
  xml = appendItems(xml, 'cellStyleXfs', incStyleXfs, offsets.cellStyleXfs + incStyleXfs.length);
  xml = appendItems(xml, 'cellXfs', incXfs, offsets.cellXfs + incXfs.length);
  xml = appendItems(xml, 'dxfs', dxfs, offsets.dxfs + dxfs.length);
  return { xml, xf: offsets.cellXfs, dxf: offsets.dxfs };
}

/** Cell, row and column styles and conditional-format styles of an included sheet, moved by the offsets. */
function restyle(xml: string, xf: number, dxf: number): string {
  if (xf === 0 && dxf === 0) return xml;
  return xml
    .replace(/<(c|row)\b[^>]*>/g, (tag) =>
      tag.replace(/(\ss=")(\d+)(")/, (_m, a: string, n: string, b: string) => `${a}${Number(n) + xf}${b}`),
    )
    .replace(/<col\b[^>]*>/g, (tag) =>
      tag.replace(/(\sstyle=")(\d+)(")/, (_m, a: string, n: string, b: string) => `${a}${Number(n) + xf}${b}`),
    )
    .replace(/<(?:cfRule|x14:cfRule)\b[^>]*>/g, (tag) =>
      tag.replace(/(\sdxfId=")(\d+)(")/, (_m, a: string, n: string, b: string) => `${a}${Number(n) + dxf}${b}`),
    );
}
