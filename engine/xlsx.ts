import type { CompileSpec, HookNode, LoopNode, Node } from './compile.ts';
import { emitItems, tagNode } from './compile.ts';
import type { ErrorBag } from './errors.ts';
import type { Expr, Scopes } from './expression.ts';
import { toDate, toText } from './filters.ts';
import type { Item, LexOptions, TagInfo } from './lexer.ts';
import type { OpcPackage } from './package.ts';
import { relsOf } from './package.ts';
import { evalTag, missing } from './render.ts';
import type { RenderContext } from './render.ts';
import { colToNum, expandRange, numToCol, rewriteRefs, rewriteSqref, unshareFormulas } from './xlsx-refs.ts';
import type { RowMap, SheetMapper } from './xlsx-refs.ts';
import { decodeXml, escapeXml, getAttr } from './xml.ts';
import type { SheetImages } from './xlsx-images.ts';

/**
 * SpreadsheetML specifics. Tagged shared strings are inlined into their cells at compile time, so
 * a sheet is templated like any other part; a cell holding a single tag is written as a typed
 * cell (number, boolean, date) instead of text; row loops renumber rows and move references.
 */

export interface SheetInfo {
  name: string;
  part: string;
}

export interface XlsxWorkbook {
  sheets: SheetInfo[];
  /** Prepared sheet XML (tagged shared strings inlined), for sheets that carry tags. */
  prepared: Map<string, string>;
  styles: StyleInfo;
  /** The delimiter pairs the workbook uses (the option's, then those `{=<% %>=}` switches to). */
  delimiters: Array<{ start: string; end: string }>;
  /** Shared strings as text (chart caches are refreshed from the cells). */
  strings: string[];
}

interface StyleInfo {
  /** Style index -> whether its number format is a date/time format. */
  isDate: boolean[];
  xfs: string[];
  numFmts: Map<number, string>;
  /** Style index -> index of a date (or date-time) variant, appended at compile time. */
  dateVariant: Map<number, number>;
  dateTimeVariant: Map<number, number>;
  /** New styles.xml when variants were added. */
  replacement?: string;
}

const MAIN_NS_SI = /<si>([\s\S]*?)<\/si>|<si\/>/g;

export function xlsxWorkbook(pkg: OpcPackage, start: string, end: string): XlsxWorkbook {
  const wb = pkg.text(pkg.main) ?? '';
  const rels = relsOf(pkg, pkg.main);
  const sheets: SheetInfo[] = [];
  for (const m of wb.matchAll(/<sheet\b[^>]*>/g)) {
    const id = getAttr(m[0], 'r:id') ?? '';
    const target = rels.find((r) => r.id === id)?.target;
    if (target !== undefined && pkg.entries.has(target)) sheets.push({ name: getAttr(m[0], 'name') ?? '', part: target });
  }
  const sstPart = rels.find((r) => r.type.endsWith('/sharedStrings'))?.target ?? 'xl/sharedStrings.xml';
  const sst = pkg.text(sstPart) ?? '';
  const shared: Array<{ inner: string; text: string; tagged: boolean }> = [];
  for (const m of sst.matchAll(MAIN_NS_SI)) {
    const inner = m[1] ?? '';
    const text = decodeXml(inner.replace(/<rPh\b[\s\S]*?<\/rPh>/g, '').replace(/<[^>]+>/g, ''));
    shared.push({ inner, text, tagged: false });
  }
  // `{=<% %>=}` switches delimiters for the rest of a sheet: cells written with any delimiters
  // the workbook switches to are tags too (a string inlined for nothing renders the same).
  const delimiters = delimiterPairs({ start, end }, shared.map((x) => x.text).join('\n'));
  for (const x of shared) x.tagged = delimiters.some((d) => x.text.includes(d.start) || x.text.includes(d.end));
  const prepared = new Map<string, string>();
  for (const sheet of sheets) {
    const xml = pkg.text(sheet.part);
    if (xml === undefined) continue;
    let tagged = false;
    // A pivot table's cells are its cache's items (the template's tags, before the refresh on load).
    const pivots = pivotRanges(pkg, sheet.part);
    const inlined = xml.replace(/<c\b([^>]*?)>\s*<v>(\d+)<\/v>\s*<\/c>/g, (m, attrs: string, idx: string) => {
      if (!/\st="s"/.test(attrs)) return m;
      if (pivots.length > 0 && inRanges(getAttr(`<c${attrs}>`, 'r'), pivots)) return m;
      const s = shared[Number(idx)];
      if (s === undefined || !s.tagged) return m;
      tagged = true;
      return `<c${attrs.replace(/\st="s"/, ' t="inlineStr"')}><is>${s.inner}</is></c>`;
    });
    if (tagged || /<is>[\s\S]*?<\/is>/.test(xml)) prepared.set(sheet.part, inlined);
  }
  return { sheets, prepared, styles: readStyles(pkg), delimiters, strings: shared.map((x) => x.text) };
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The delimiters in use: the given pair and every pair a `{=<% %>=}` tag in `text` switches to. */
export function delimiterPairs(first: { start: string; end: string }, text: string): Array<{ start: string; end: string }> {
  const pairs = [first];
  for (let k = 0; k < pairs.length && pairs.length < 16; k++) {
    const d = pairs[k];
    if (d === undefined) break;
    const re = new RegExp(`${escapeRe(d.start)}\\s*=\\s*([^\\s=]+)\\s+([^\\s=]+)\\s*=\\s*${escapeRe(d.end)}`, 'g');
    for (const m of text.matchAll(re)) {
      const next = { start: m[1] ?? '', end: m[2] ?? '' };
      if (!pairs.some((p) => p.start === next.start && p.end === next.end)) pairs.push(next);
    }
  }
  return pairs;
}

// ---- styles ----

const BUILTIN_DATE_FMTS = new Set([14, 15, 16, 17, 18, 19, 20, 21, 22, 45, 46, 47]);

function isDateFormatCode(code: string): boolean {
  const bare = code.replace(/"[^"]*"|\[[^\]]*\]|\\./g, '');
  return /[dmyhs]/i.test(bare) && !/^general$/i.test(bare.trim());
}

function readStyles(pkg: OpcPackage): StyleInfo {
  const xml = pkg.text('xl/styles.xml') ?? '';
  const numFmts = new Map<number, string>();
  for (const m of xml.matchAll(/<numFmt\b[^>]*>/g)) numFmts.set(Number(getAttr(m[0], 'numFmtId')), getAttr(m[0], 'formatCode') ?? '');
  const cellXfs = /<cellXfs\b[^>]*>([\s\S]*?)<\/cellXfs>/.exec(xml)?.[1] ?? '';
  const xfs = [...cellXfs.matchAll(/<xf\b[^>]*?\/>|<xf\b[^>]*>[\s\S]*?<\/xf>/g)].map((m) => m[0]);
  const isDate = xfs.map((xf) => {
    const id = Number(getAttr(xf, 'numFmtId') ?? 0);
    return BUILTIN_DATE_FMTS.has(id) || isDateFormatCode(numFmts.get(id) ?? '');
  });
  return { isDate, xfs, numFmts, dateVariant: new Map(), dateTimeVariant: new Map() };
}

/** Adds date and date-time variants of the given styles, so typed date cells display as dates. */
export function addDateStyles(pkg: OpcPackage, styles: StyleInfo, used: Set<number>): void {
  const xml = pkg.text('xl/styles.xml');
  if (xml === undefined || styles.xfs.length === 0) return;
  const added: string[] = [];
  const variant = (xf: string, fmt: number): string => {
    let v = /\snumFmtId="/.test(xf) ? xf.replace(/\snumFmtId="\d+"/, ` numFmtId="${fmt}"`) : xf.replace(/^<xf\b/, `<xf numFmtId="${fmt}"`);
    v = /\sapplyNumberFormat="/.test(v)
      ? v.replace(/\sapplyNumberFormat="[^"]*"/, ' applyNumberFormat="1"')
      : v.replace(/^<xf\b/, '<xf applyNumberFormat="1"');
    return v;
  };
  for (const s of [...used].sort((a, b) => a - b)) {
    const xf = styles.xfs[s];
    if (xf === undefined || styles.isDate[s] === true) continue;
    styles.dateVariant.set(s, styles.xfs.length + added.length);
    added.push(variant(xf, 14));
    styles.dateTimeVariant.set(s, styles.xfs.length + added.length);
    added.push(variant(xf, 22));
  }
  if (added.length === 0) return;
  const total = styles.xfs.length + added.length;
  styles.replacement = xml.replace(/(<cellXfs\b[^>]*>)([\s\S]*?)(<\/cellXfs>)/, (_m, open: string, body: string, close: string) => {
    const o = /\scount="/.test(open) ? open.replace(/\scount="\d+"/, ` count="${total}"`) : open;
    return `${o}${body}${added.join('')}${close}`;
  });
}

// ---- compile ----

export function xlsxLex(part: string, start: string, end: string, sheet: string | undefined): LexOptions {
  const lex: LexOptions = { part, textTags: new Set(['t']), paragraphTag: '\0', runTag: 'r', runPropsTag: 'rPr', start, end, cellTag: 'c' };
  if (sheet !== undefined) lex.sheet = sheet;
  return lex;
}

interface RowHook {
  before: string;
  after: string;
  orig: number;
}
interface CellHook {
  before: string;
  col: string;
  orig: number;
  after: string;
}
interface TypedHook {
  col: string;
  orig: number;
  attrs: string;
  style: number | undefined;
  expr: Expr;
  tag: TagInfo;
}

function splitRef(text: string): { before: string; ref: string; after: string } | null {
  const m = /(\sr=")([^"]*)(")/.exec(text);
  if (!m) return null;
  const at = m.index + (m[1] ?? '').length;
  return { before: text.slice(0, at), ref: m[2] ?? '', after: text.slice(at + (m[2] ?? '').length) };
}

export function xlsxSpec(hasLoops: boolean, typedStyles: Set<number>): CompileSpec {
  const spec: CompileSpec = {
    paragraph: '\0',
    row: 'row',
    cell: 'c',
    rawExpand: '',
    paragraphLoop: false,
    lineBreak: () => null,
    emit: (items, errors) => emitSheet(items, errors, spec, hasLoops, typedStyles),
    decorateLoop: (loop: LoopNode, inner: Item[]) => {
      if (loop.unit !== 'row') return;
      let first = Infinity;
      let last = -Infinity;
      for (const it of inner) {
        if (it.k === 'open' && it.name === 'row') {
          const r = Number(getAttr(it.text, 'r'));
          if (Number.isFinite(r)) {
            first = Math.min(first, r);
            last = Math.max(last, r);
          }
        }
      }
      if (first === Infinity) return;
      loop.onEmpty = { k: 'hook', name: 'xlsx.removed', data: [first, last] };
      loop.onIteration = { k: 'hook', name: 'xlsx.group', data: [first, last] };
    },
  };
  return spec;
}

function emitSheet(items: Item[], errors: ErrorBag, spec: CompileSpec, hasLoops: boolean, typedStyles: Set<number>): Node[] {
  const out: Node[] = [];
  let inFormula = false;
  for (let i = 0; i < items.length; i++) {
    const it = items[i];
    if (it === undefined) continue;
    if (it.k === 'open' && it.name === 'c' && !it.self) {
      const typed = typedCell(items, i, errors);
      if (typed !== null) {
        out.push(typed.node);
        if (typed.style !== undefined) typedStyles.add(typed.style);
        else typedStyles.add(0);
        i += 6;
        continue;
      }
    }
    if (it.k === 'open' && it.name === 'c' && !it.self) {
      // A cell left with no text once its loop tags are taken out (`{/items}` alone) is written as
      // an empty cell, not an empty text cell that COUNTA and friends would count.
      const close = emptyInlineCell(items, i);
      if (close > 0) {
        const text = it.text.replace(/\st="inlineStr"/, '').replace(/>$/, '/>');
        const parts = hasLoops ? splitRef(text) : null;
        const m = parts === null ? null : /^([A-Z]{1,3})(\d+)$/.exec(parts.ref);
        if (parts !== null && m)
          out.push({
            k: 'hook',
            name: 'xlsx.cell',
            data: { before: parts.before, col: m[1] ?? '', orig: Number(m[2]), after: parts.after } satisfies CellHook,
          });
        else out.push(text);
        // `{>name}` alone in a cell: the included sheets come after this one; the cell stays empty.
        for (let k = i + 1; k < close; k++) {
          const t = items[k];
          if (t?.k === 'tag') out.push(...tagNode(t.tag, spec, errors));
        }
        i = close;
        continue;
      }
    }
    if (hasLoops && it.k === 'open' && (it.name === 'row' || it.name === 'c')) {
      const parts = splitRef(it.text);
      if (parts !== null) {
        const m = /^([A-Z]{1,3})(\d+)$/.exec(parts.ref);
        if (it.name === 'row' && /^\d+$/.test(parts.ref)) {
          const data: RowHook = { before: parts.before, after: parts.after, orig: Number(parts.ref) };
          out.push({ k: 'hook', name: 'xlsx.row', data });
          continue;
        }
        if (it.name === 'c' && m) {
          const data: CellHook = { before: parts.before, col: m[1] ?? '', orig: Number(m[2]), after: parts.after };
          out.push({ k: 'hook', name: 'xlsx.cell', data });
          continue;
        }
      }
    }
    if (it.k === 'open' && it.name === 'f') inFormula = !it.self;
    else if (it.k === 'close' && it.name === 'f') inFormula = false;
    else if (hasLoops && inFormula && it.k === 'raw') {
      out.push({ k: 'hook', name: 'xlsx.formula', data: it.text });
      continue;
    }
    if (it.k === 'tag') out.push(...tagNode(it.tag, spec, errors));
    else emitItems([it], spec, errors, out);
  }
  return out;
}

const INLINE_MARKUP = new Set(['is', 'r', 't', 'rPr']);

/** Index of the `</c>` of an inline-string cell at `i` that holds no text at all, or -1. */
function emptyInlineCell(items: Item[], i: number): number {
  let inRPr = 0;
  let sawIs = false;
  for (let k = i + 1; k < items.length; k++) {
    const it = items[k];
    if (it === undefined) continue;
    if (it.k === 'close' && it.name === 'c') return sawIs ? k : -1;
    if (it.k === 'tag' && it.tag.kind === 'include') continue;
    if (it.k === 'text' || it.k === 'tag') return -1;
    if (it.k === 'raw') {
      if (it.text.trim() !== '') return -1;
      continue;
    }
    if (it.name === 'is') sawIs = true;
    if (it.name === 'rPr' && it.k === 'open' && !it.self) inRPr++;
    else if (it.name === 'rPr' && it.k === 'close') inRPr--;
    else if (inRPr === 0 && !INLINE_MARKUP.has(it.name)) return -1;
  }
  return -1;
}

/** `<c ...><is><t>{expr}</t></is></c>`: a cell whose whole content is one field. */
function typedCell(items: Item[], i: number, errors: ErrorBag): { node: HookNode; style: number | undefined } | null {
  const [c, is, t, tag, tc, isc, cc] = items.slice(i, i + 7);
  if (c?.k !== 'open' || is?.k !== 'open' || is.name !== 'is' || t?.k !== 'open' || t.name !== 't' || tag?.k !== 'tag') return null;
  if (tc?.k !== 'close' || tc.name !== 't' || isc?.k !== 'close' || isc.name !== 'is' || cc?.k !== 'close' || cc.name !== 'c') return null;
  if (tag.tag.kind !== 'field') return null;
  const ref = getAttr(c.text, 'r') ?? '';
  const m = /^([A-Z]{1,3})(\d+)$/.exec(ref);
  if (!m) return null;
  const sAttr = getAttr(c.text, 's');
  const style = sAttr === undefined ? undefined : Number(sAttr);
  const attrs = c.text
    .replace(/^<c\b/, '')
    .replace(/>$/, '')
    .replace(/\s(r|t|s)="[^"]*"/g, '');
  const node = tagNode(
    tag.tag,
    { paragraph: '', row: '', cell: '', rawExpand: '', paragraphLoop: false, lineBreak: () => null },
    errors,
  )[0];
  if (node === undefined || typeof node === 'string' || node.k !== 'field') return null;
  const data: TypedHook = { col: m[1] ?? '', orig: Number(m[2]), attrs, style, expr: node.expr, tag: tag.tag };
  return { node: { k: 'hook', name: 'xlsx.typed', data }, style };
}

// ---- render ----

export interface SheetState {
  rows: RowMap;
  hasLoops: boolean;
  /** `{%img}` pictures anchored in this sheet, created on the first one. */
  images?: SheetImages;
}

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/;
const MS_PER_DAY = 86_400_000;
const EPOCH_1900 = 25569;

function wallClock(d: Date, timeZone: string): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(d);
  const get = (t: string): number => Number(parts.find((p) => p.type === t)?.value ?? 0);
  return Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'));
}

/** Excel serial date in the document's time zone, or undefined when the value is not a date. */
function dateSerial(v: unknown, timeZone: string): { serial: number; time: boolean } | undefined {
  let utcWall: number;
  if (typeof v === 'string') {
    const m = ISO_DATE.exec(v);
    if (!m) return undefined;
    if (m[4] === undefined) {
      utcWall = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
    } else if (m[7] === undefined) {
      utcWall = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6] ?? 0));
    } else {
      const d = toDate(v);
      if (d === undefined) return undefined;
      utcWall = wallClock(d, timeZone);
    }
  } else if (v instanceof Date) {
    if (Number.isNaN(v.getTime())) return undefined;
    utcWall = wallClock(v, timeZone);
  } else {
    return undefined;
  }
  if (Number.isNaN(utcWall)) return undefined;
  const serial = utcWall / MS_PER_DAY + EPOCH_1900;
  return { serial: Math.round(serial * 1e10) / 1e10, time: utcWall % MS_PER_DAY !== 0 };
}

export function xlsxHook(styles: StyleInfo): (node: Exclude<Node, string>, scopes: Scopes, out: string[], ctx: RenderContext) => void {
  return (node, scopes, out, ctx) => {
    if (node.k !== 'hook') return;
    const st = ctx.state as SheetState;
    const rows = st.rows;
    switch (node.name) {
      case 'xlsx.row': {
        const d = node.data as RowHook;
        out.push(`${d.before}${rows.next(d.orig)}${d.after}`);
        break;
      }
      case 'xlsx.cell': {
        const d = node.data as CellHook;
        out.push(`${d.before}${d.col}${st.hasLoops ? rows.curOut : d.orig}${d.after}`);
        break;
      }
      case 'xlsx.formula':
        out.push(rewriteRefs(node.data as string, (r, w, single, absolute) => rows.mapInRow(r, w, single ?? false, absolute ?? false)));
        break;
      case 'xlsx.removed':
        rows.removed(...(node.data as [number, number]));
        break;
      case 'xlsx.group':
        rows.group = node.data as [number, number];
        break;
      case 'xlsx.typed': {
        const d = node.data as TypedHook;
        const v = evalTag(d.expr, d.tag, scopes, ctx);
        if (v === undefined) missing(d.tag, ctx);
        const head = `<c r="${d.col}${st.hasLoops ? rows.curOut : d.orig}"${d.attrs}`;
        const s = d.style === undefined ? '' : ` s="${d.style}"`;
        if (typeof v === 'number' && Number.isFinite(v)) {
          out.push(`${head}${s}><v>${v}</v></c>`);
        } else if (typeof v === 'boolean') {
          out.push(`${head}${s} t="b"><v>${v ? 1 : 0}</v></c>`);
        } else if (v === undefined || v === null || v === '') {
          out.push(`${head}${s}/>`);
        } else {
          const date = dateSerial(v, ctx.filter.timezone);
          if (date !== undefined) {
            const base = d.style ?? 0;
            const variant = styles.isDate[base] === true ? base : (date.time ? styles.dateTimeVariant : styles.dateVariant).get(base);
            out.push(`${head}${variant === undefined ? s : ` s="${variant}"`}><v>${date.serial}</v></c>`);
          } else {
            out.push(`${head}${s} t="inlineStr"><is><t xml:space="preserve">${escapeXml(toText(v))}</t></is></c>`);
          }
        }
        break;
      }
      default:
        break;
    }
  };
}

/** After a sheet renders: dimension, merged cells, conditional formats and validations follow rows. */
export function finishSheet(xml: string, st: SheetState): string {
  const rows = st.rows;
  xml = rows.resolveDeferred(xml);
  if (!rows.changed) return xml;
  const startData = xml.indexOf('<sheetData');
  const endData = xml.lastIndexOf('</sheetData>');
  if (startData < 0 || endData < 0) return xml;
  let head = xml.slice(0, startData);
  let tail = xml.slice(endData);
  head = head.replace(/(<dimension\b[^>]*\sref=")([^"]*)(")/, (_m, a: string, ref: string, b: string) => {
    const m = /^([A-Z]{1,3})(\d+)(?::([A-Z]{1,3})(\d+))?$/.exec(ref);
    if (!m) return `${a}${ref}${b}`;
    const endRow = Math.max(rows.maxOut, 1);
    return `${a}${m[1]}${m[2]}:${m[3] ?? m[1]}${endRow}${b}`;
  });
  tail = tail.replace(/<mergeCells\b[^>]*>([\s\S]*?)<\/mergeCells>/, (_m, body: string) => {
    const refs: string[] = [];
    for (const mc of body.matchAll(/<mergeCell\b[^>]*>/g)) {
      for (const r of expandRange(getAttr(mc[0], 'ref') ?? '', rows)) refs.push(r);
    }
    if (refs.length === 0) return '';
    return `<mergeCells count="${refs.length}">${refs.map((r) => `<mergeCell ref="${r}"/>`).join('')}</mergeCells>`;
  });
  tail = tail.replace(
    /(<(?:conditionalFormatting|dataValidation)\b[^>]*\ssqref=")([^"]*)(")/g,
    (_m, a: string, sq: string, b: string) => `${a}${rewriteSqref(sq, rows)}${b}`,
  );
  // Formats and validations whose cells were all removed by empty loops go with them.
  if (tail.indexOf('sqref=""') >= 0) {
    tail = tail
      .replace(/<conditionalFormatting\b[^>]*\ssqref=""[\s\S]*?<\/conditionalFormatting>/g, '')
      .replace(/<dataValidation\b[^>]*\ssqref=""(?:\/>|[\s\S]*?<\/dataValidation>)/g, '');
    tail = tail.replace(/<dataValidations\b[^>]*>([\s\S]*?)<\/dataValidations>/, (_m, body: string) => {
      const n = (body.match(/<dataValidation\b/g) ?? []).length;
      return n === 0 ? '' : `<dataValidations count="${n}">${body}</dataValidations>`;
    });
  }
  tail = tail.replace(/(<xm:sqref>)([^<]*)(<\/xm:sqref>)/g, (_m, a: string, sq: string, b: string) => `${a}${rewriteSqref(sq, rows)}${b}`);
  tail = tail.replace(
    /(<(?:hyperlink|autoFilter)\b[^>]*\sref=")([^"]*)(")/g,
    (_m, a: string, ref: string, b: string) => `${a}${rewriteRefs(ref, (r, w) => rows.map(r, w))}${b}`,
  );
  // Formulas of conditional formats and validations (unqualified references point into this sheet).
  tail = tail.replace(
    /(<(f|formula|formula1|formula2|xm:f)\b[^>]*>)([^<]*)(<\/\2>)/g,
    (_m, a: string, _n: string, f: string, b: string) => `${a}${rewriteRefs(f, (r, w, single) => rows.mapLive(r, w, single ?? false))}${b}`,
  );
  return head + xml.slice(startData, endData) + tail;
}

/** Formula-bearing elements of a worksheet whose sheet-qualified references follow other sheets' rows. */
const SHEET_FORMULAS = /(<(f|formula|formula1|formula2|xm:f)\b[^>]*>)([^<]*)(<\/\2>)/g;

/**
 * Workbook-level follow-up, once every sheet has rendered: references that name a sheet whose rows
 * moved (formulas and validations/conditional formats on any sheet, defined names including print
 * areas, chart series, pivot sources) and table ranges follow the rows, as when Excel inserts rows.
 * `rendered` holds the sheets rendered in this pass; the result may replace them.
 */
export function finishWorkbook(
  pkg: OpcPackage,
  wb: XlsxWorkbook,
  states: Map<string, SheetState>,
  rendered: ReadonlyMap<string, string>,
): Map<string, string> {
  const out = new Map<string, string>();
  const byName = new Map<string, RowMap>();
  for (const s of wb.sheets) {
    const st = states.get(s.part);
    // Excel compares sheet names case-insensitively.
    if (st !== undefined && st.rows.changed) byName.set(s.name.toLowerCase(), st.rows);
  }
  const sheets: SheetMapper = (name) => {
    const rows = byName.get(name.toLowerCase());
    return rows === undefined ? undefined : (r, w, single) => rows.mapLive(r, w, single ?? false);
  };
  pivotCaches(pkg, wb, states, sheets, out);
  if (byName.size === 0) return out;
  const qualified = (body: string): string => {
    if (body.indexOf('!') < 0) return body;
    const text = decodeXml(body);
    const next = rewriteRefs(text, null, sheets);
    return next === text ? body : escapeXml(next);
  };
  const edit = (name: string, xml: string | undefined, re: RegExp): void => {
    if (xml === undefined || xml.indexOf('!') < 0) return;
    const next = xml.replace(re, (m: string, a: string, _n: string, f: string, b: string) => {
      const g = qualified(f);
      return g === f ? m : `${a}${g}${b}`;
    });
    if (next !== xml) out.set(name, next);
  };
  // Cell values of a sheet as rendered (for chart caches), read once when a chart needs them.
  const cellCache = new Map<string, Map<string, { num?: string; str?: string }>>();
  const cellsOf = (sheet: string): Map<string, { num?: string; str?: string }> | undefined => {
    const info = wb.sheets.find((x) => x.name.toLowerCase() === sheet.toLowerCase());
    if (info === undefined) return undefined;
    let cells = cellCache.get(info.part);
    if (cells === undefined) {
      cells = sheetValues(out.get(info.part) ?? rendered.get(info.part) ?? pkg.text(info.part) ?? '', wb.strings);
      cellCache.set(info.part, cells);
    }
    return cells;
  };
  for (const s of wb.sheets) {
    const xml = rendered.get(s.part) ?? pkg.text(s.part);
    // Shared formulas name their followers by a fixed range: written out, each follows the rows. ('!' is
    // rare and found at memory speed, 't="shared"' is not: a sheet without a sheet-qualified reference
    // is not searched for shared formulas.)
    edit(s.part, xml !== undefined && xml.indexOf('!') >= 0 && xml.indexOf('t="shared"') >= 0 ? unshareFormulas(xml) : xml, SHEET_FORMULAS);
  }
  for (const name of pkg.entries.keys()) {
    if (/^xl\/charts\/chart[^/]*\.xml$/.test(name)) {
      const xml = pkg.text(name);
      // Series formulas in the chart namespace, whatever its prefix (openpyxl writes it as the default).
      const p = xml === undefined ? 'c:' : chartPrefix(xml);
      edit(name, xml, new RegExp(`(<(${escapeRe(p)}f|cx:f)\\b[^>]*>)([^<]*)(<\\/\\2>)`, 'g'));
      const moved = out.get(name);
      if (moved !== undefined) out.set(name, refreshChartCaches(moved, cellsOf, p));
    }
  }
  const wbXml = pkg.text(pkg.main);
  if (wbXml !== undefined) {
    let changed = wbXml.replace(
      /(<definedName\b[^>]*>)([^<]*)(<\/definedName>)/g,
      (_m, a: string, body: string, b: string) => `${a}${qualified(body)}${b}`,
    );
    // Cached formula results are stale once rows move: ask Excel to recalculate on open.
    changed = /<calcPr\b/.test(changed)
      ? changed.replace(/<calcPr\b(?![^>]*fullCalcOnLoad)/, '<calcPr fullCalcOnLoad="1"')
      : changed.replace(/<\/workbook>/, '<calcPr fullCalcOnLoad="1"/></workbook>');
    if (changed !== wbXml) out.set(pkg.main, changed);
  }
  for (const s of wb.sheets) {
    const rows = byName.get(s.name.toLowerCase());
    if (rows === undefined) continue;
    for (const rel of relsOf(pkg, s.part)) {
      if (!rel.type.endsWith('/table')) continue;
      const t = pkg.text(rel.target);
      if (t === undefined) continue;
      out.set(
        rel.target,
        t.replace(
          /(<(?:table|autoFilter)\b[^>]*\sref=")([^"]*)(")/g,
          (_m, a: string, ref: string, b: string) => `${a}${rewriteRefs(ref, (r, w) => rows.map(r, w))}${b}`,
        ),
      );
    }
  }
  return out;
}

// ---- pivot tables ----

/**
 * A pivot cache over a rendered sheet: its source range follows the rows, and it is marked to refresh on
 * load, since its records and items hold the template's cells (tags), not the data. The pivot table's own
 * cells are not template content (`pivotRanges`).
 */
function pivotCaches(
  pkg: OpcPackage,
  wb: XlsxWorkbook,
  states: Map<string, SheetState>,
  sheets: SheetMapper,
  out: Map<string, string>,
): void {
  const rendered = new Set(wb.sheets.filter((s) => states.has(s.part)).map((s) => s.name.toLowerCase()));
  for (const name of pkg.entries.keys()) {
    if (!/^xl\/pivotCache\/pivotCacheDefinition[^/]*\.xml$/.test(name)) continue;
    const xml = pkg.text(name);
    if (xml === undefined) continue;
    let source = false;
    let next = xml.replace(/<worksheetSource\b[^>]*\/?>/g, (m) => {
      const sheet = getAttr(m, 'sheet');
      if (sheet === undefined || !rendered.has(decodeXml(sheet).toLowerCase())) return m;
      source = true;
      const ref = getAttr(m, 'ref');
      const map = sheets(decodeXml(sheet));
      if (map === undefined || ref === undefined) return m;
      return m.replace(/(\sref=")([^"]*)(")/, (_x, a: string, r: string, b: string) => `${a}${rewriteRefs(r, map)}${b}`);
    });
    if (source) {
      next = /<pivotCacheDefinition\b[^>]*\srefreshOnLoad=/.test(next)
        ? next.replace(/(<pivotCacheDefinition\b[^>]*\srefreshOnLoad=")[^"]*(")/, '$11$2')
        : next.replace(/<pivotCacheDefinition\b/, '<pivotCacheDefinition refreshOnLoad="1"');
    }
    if (next !== xml) out.set(name, next);
  }
}

/** The cell ranges (`[col1, row1, col2, row2]`) pivot tables of a sheet occupy. */
function pivotRanges(pkg: OpcPackage, sheetPart: string): Array<[number, number, number, number]> {
  const out: Array<[number, number, number, number]> = [];
  for (const rel of relsOf(pkg, sheetPart)) {
    if (!rel.type.endsWith('/pivotTable') || rel.external) continue;
    const ref = getAttr(/<location\b[^>]*>/.exec(pkg.text(rel.target) ?? '')?.[0] ?? '', 'ref');
    const m = ref === undefined ? null : /^\$?([A-Z]{1,3})\$?(\d+)(?::\$?([A-Z]{1,3})\$?(\d+))?$/.exec(ref);
    if (m === null) continue;
    out.push([colToNum(m[1] ?? 'A'), Number(m[2]), colToNum(m[3] ?? m[1] ?? 'A'), Number(m[4] ?? m[2])]);
  }
  return out;
}

function inRanges(ref: string | undefined, ranges: Array<[number, number, number, number]>): boolean {
  const m = ref === undefined ? null : /^([A-Z]{1,3})(\d+)$/.exec(ref);
  if (m === null) return false;
  const c = colToNum(m[1] ?? 'A');
  const r = Number(m[2]);
  return ranges.some(([c1, r1, c2, r2]) => c >= c1 && c <= c2 && r >= r1 && r <= r2);
}

// ---- chart caches ----

const CHART_NS = 'http://schemas.openxmlformats.org/drawingml/2006/chart';

/** The prefix (with its colon; '' for the default namespace) the chart namespace has in a chart part. */
export function chartPrefix(xml: string): string {
  const m = new RegExp(`\\sxmlns(?::([\\w.-]+))?="${escapeRe(CHART_NS)}"`).exec(xml);
  return m === null ? 'c:' : m[1] === undefined ? '' : `${m[1]}:`;
}

type CellValues = Map<string, { num?: string; str?: string }>;

/** Values of a sheet's cells by reference: numbers (and booleans) as `num`, text as `str`. */
function sheetValues(xml: string, strings: string[]): CellValues {
  const out: CellValues = new Map();
  for (const m of xml.matchAll(/<c\b([^>]*?)(?:\/>|>([\s\S]*?)<\/c>)/g)) {
    const attrs = m[1] ?? '';
    const body = m[2] ?? '';
    const ref = getAttr(`<c${attrs}>`, 'r');
    if (ref === undefined || body === '') continue;
    const t = getAttr(`<c${attrs}>`, 't');
    const v = /<v>([^<]*)<\/v>/.exec(body)?.[1];
    if (t === 'inlineStr') out.set(ref, { str: [...body.matchAll(/<t\b[^>]*>([^<]*)<\/t>/g)].map((x) => decodeXml(x[1] ?? '')).join('') });
    else if (v === undefined || t === 'e') continue;
    else if (t === 's') out.set(ref, { str: strings[Number(v)] ?? '' });
    else if (t === 'str') out.set(ref, { str: decodeXml(v) });
    else out.set(ref, { num: v });
  }
  return out;
}

const MAX_CACHE_POINTS = 100_000;

/** Cells of a one-area range `'Sheet'!$A$2:$B$9`, row by row; undefined for anything else. */
function rangeCells(f: string): { sheet: string; refs: string[] } | undefined {
  const m = /^(?:'((?:[^']|'')+)'|([^'!()]+))!\$?([A-Z]{1,3})\$?(\d+)(?::\$?([A-Z]{1,3})\$?(\d+))?$/.exec(f.trim());
  if (m === null) return undefined;
  const c1 = colToNum(m[3] ?? 'A');
  const r1 = Number(m[4]);
  const c2 = m[5] === undefined ? c1 : colToNum(m[5]);
  const r2 = m[6] === undefined ? r1 : Number(m[6]);
  if (c2 < c1 || r2 < r1 || (c2 - c1 + 1) * (r2 - r1 + 1) > MAX_CACHE_POINTS) return undefined;
  const refs: string[] = [];
  for (let r = r1; r <= r2; r++) for (let c = c1; c <= c2; c++) refs.push(`${numToCol(c)}${r}`);
  return { sheet: m[1] !== undefined ? m[1].replace(/''/g, "'") : (m[2] ?? ''), refs };
}

/**
 * A chart keeps a copy of the values it plots (`c:numCache`/`c:strCache`), which viewers that do
 * not recalculate draw as is. Series whose range moved with the rows get caches rebuilt from the
 * rendered cells (formula cells contribute the value they carry; Excel refreshes them on open).
 */
export function refreshChartCaches(xml: string, cellsOf: (sheet: string) => CellValues | undefined, c = 'c:'): string {
  const e = escapeRe(c);
  return xml.replace(new RegExp(`<${e}(numRef|strRef)>([\\s\\S]*?)<\\/${e}\\1>`, 'g'), (m, kind: string, body: string) => {
    const f = new RegExp(`<${e}f>([^<]*)<\\/${e}f>`).exec(body);
    if (f === null) return m;
    const range = rangeCells(decodeXml(f[1] ?? ''));
    const cells = range === undefined ? undefined : cellsOf(range.sheet);
    if (range === undefined || cells === undefined) return m;
    let cache: string;
    if (kind === 'numRef') {
      const fmt = new RegExp(`<${e}formatCode>[\\s\\S]*?<\\/${e}formatCode>`).exec(body)?.[0] ?? `<${c}formatCode>General</${c}formatCode>`;
      const pts = range.refs.map((r, i) => {
        const v = cells.get(r)?.num;
        return v === undefined || !Number.isFinite(Number(v)) ? '' : `<${c}pt idx="${i}"><${c}v>${v}</${c}v></${c}pt>`;
      });
      cache = `<${c}numCache>${fmt}<${c}ptCount val="${range.refs.length}"/>${pts.join('')}</${c}numCache>`;
    } else {
      const pts = range.refs.map((r, i) => {
        const v = cells.get(r);
        const text = v?.str ?? v?.num;
        return text === undefined ? '' : `<${c}pt idx="${i}"><${c}v>${escapeXml(text)}</${c}v></${c}pt>`;
      });
      cache = `<${c}strCache><${c}ptCount val="${range.refs.length}"/>${pts.join('')}</${c}strCache>`;
    }
    const tag = kind === 'numRef' ? 'numCache' : 'strCache';
    const re = new RegExp(`<${e}${tag}>[\\s\\S]*?</${e}${tag}>|<${e}${tag}/>`);
    const next = re.test(body) ? body.replace(re, cache) : body.replace(f[0], `${f[0]}${cache}`);
    return `<${c}${kind}>${next}</${c}${kind}>`;
  });
}
