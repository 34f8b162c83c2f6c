/**
 * What LibreOffice would have to lay out for a package, estimated from its XML and image headers in one
 * pass, without laying anything out: the pages (lines of text, table rows, page and section breaks;
 * slides; sheet rows and cells), the longest paragraph, the longest table, the cells of a workbook and the
 * pixels of its images. LibreOffice's time grows with these much faster than with the file's size (a
 * 0.8 MB docx of 260 000 one-word paragraphs, one 60 MB paragraph, a 0.15 MB PNG of a billion pixels, an
 * HTML table of 300 000 rows each hold an instance for minutes), so the merge refuses a document past
 * the limits (engine/limits.ts) before any conversion starts, and the converter does so for documents it
 * did not merge.
 *
 * Parts are recognised by their root element, not their name (a main document renamed in its
 * relationships is still read as one); elements by their local name, whatever their prefix.
 */
import { constants, inflateRawSync } from 'node:zlib';
import { TemplateError, type TemplateErrorEntry } from './errors.ts';
import { dimensions, sniff } from './images.ts';
import { limitError, resolveLimits, type TemplateLimits } from './limits.ts';
import { inflateEntry, readZip, type ZipEntry } from './zip.ts';

/** A4/Letter with default margins and font: LibreOffice lays out ~53 one-line paragraphs and ~3 300
 *  characters of running text on a page; the estimate rounds towards fewer pages. */
const LINES_PER_PAGE = 50;
const CHARS_PER_LINE = 70;
/** A printed sheet page holds ~50 rows of ~10 columns. */
const SHEET_ROWS_PER_PAGE = 50;
const SHEET_CELLS_PER_PAGE = 500;

export interface ConversionCost {
  /** Estimated pages: Word flow pages + slides + printed sheet pages. */
  pages: number;
  paragraphs: number;
  /** Explicit page breaks and section breaks. */
  breaks: number;
  slides: number;
  longestParagraph: { chars: number; part: string; paragraph: number } | null;
  longestTable: { rows: number; part: string } | null;
  /** Cells of all worksheets. */
  cells: number;
  /** Pixels of all images (each image part once). */
  imagePixels: number;
  largestImage: { part: string; width: number; height: number } | null;
}

type Mode = 'flow' | 'slide' | 'sheet' | 'other';

/** Root elements of parts whose paragraphs flow into pages (Word). */
const FLOW_ROOTS = new Set(['document', 'hdr', 'ftr', 'footnotes', 'endnotes', 'comments']);

interface Frame {
  kind: 'p' | 'tbl' | 'tr' | 'tc';
  /** Lines inside (p: of nested content; tbl: of its rows; tc: of its paragraphs). */
  lines: number;
  /** p: characters of its own text; tbl: rows; tr: the tallest cell's lines. */
  n: number;
  /** p: its number in the part (1-based). */
  at?: number;
}

export function conversionCost(pkg: Uint8Array, limits?: Partial<TemplateLimits>): ConversionCost {
  const cost: ConversionCost = {
    pages: 0, paragraphs: 0, breaks: 0, slides: 0, longestParagraph: null, longestTable: null, cells: 0, imagePixels: 0, largestImage: null,
  };
  let flowLines = 0;
  for (const entry of readZip(pkg, resolveLimits(limits)).values()) {
    if (entry.size === 0) continue;
    const head = headOf(entry, 64);
    if (looksLikeXml(head)) {
      flowLines += scanPart(entry.name, inflateEntry(entry), cost);
      continue;
    }
    const size = imageSize(entry);
    if (size) {
      cost.imagePixels += size.width * size.height;
      if (!cost.largestImage || size.width * size.height > cost.largestImage.width * cost.largestImage.height) cost.largestImage = { part: entry.name, ...size };
    }
  }
  cost.pages += cost.breaks + Math.ceil(flowLines / LINES_PER_PAGE) + cost.slides;
  return cost;
}

/** Throws the TemplateError (entries `limit_exceeded`, each naming its setting) of every limit the
 *  package's cost exceeds; returns the cost otherwise. */
export function checkConversionCost(pkg: Uint8Array, limits?: Partial<TemplateLimits>): ConversionCost {
  const l = resolveLimits(limits);
  const cost = conversionCost(pkg, l);
  const over: TemplateErrorEntry[] = [];
  const add = (e: TemplateError) => over.push(...e.errors);
  const p = cost.longestParagraph;
  if (p && p.chars > l.maxParagraphChars) {
    add(limitError('maxParagraphChars', `paragraph ${p.paragraph} of ${p.part} has ${p.chars} characters`, l.maxParagraphChars, { part: p.part, paragraph: p.paragraph }));
  }
  const t = cost.longestTable;
  if (t && t.rows > l.maxTableRows) add(limitError('maxTableRows', `a table of ${t.part} has ${t.rows} rows`, l.maxTableRows, { part: t.part }));
  const img = cost.largestImage;
  if (img && cost.imagePixels > l.maxImagePixels) {
    add(limitError('maxImagePixels', `the images come to ${cost.imagePixels} pixels (the largest, ${img.part}, is ${img.width} x ${img.height})`, l.maxImagePixels, { part: img.part }));
  }
  if (cost.cells > l.maxCells) add(limitError('maxCells', `the workbook has ${cost.cells} cells`, l.maxCells));
  if (cost.pages > l.maxPages) {
    const what = [
      cost.paragraphs ? `${cost.paragraphs} paragraphs` : '',
      cost.breaks ? `${cost.breaks} page breaks` : '',
      cost.slides ? `${cost.slides} slides` : '',
      cost.cells ? `${cost.cells} cells` : '',
    ].filter(Boolean).join(', ');
    add(limitError('maxPages', `the document comes to about ${cost.pages} pages${what ? ` (${what})` : ''}`, l.maxPages));
  }
  if (over.length > 0) throw new TemplateError(over);
  return cost;
}

/** Scans one XML part; returns the lines it adds to the Word flow. */
function scanPart(part: string, xml: Buffer, cost: ConversionCost): number {
  let mode: Mode | undefined;
  const stack: Frame[] = [];
  let lines = 0;
  let paragraph = 0;
  let inText = 0;
  /** Characters of a text element outside any paragraph (a shared string, an inline cell string). */
  let looseChars = 0;
  /** Per section (its sectPr), whether it starts on a new page (w:type other than continuous). */
  const sections: boolean[] = [];
  let inSectPr = 0;
  let rows = 0;
  let cells = 0;
  const addLines = (n: number) => {
    const top = stack[stack.length - 1];
    if (top) top.lines += n;
    else lines += n;
  };
  const text = (from: number, to: number) => {
    let n = 0;
    for (let k = from; k < to; k++) if ((xml[k]! & 0xc0) !== 0x80) n++;
    const p = innermost(stack, 'p');
    if (p) p.n += n;
    else looseChars += n;
  };
  const longest = (chars: number, at: number) => {
    if (!cost.longestParagraph || chars > cost.longestParagraph.chars) cost.longestParagraph = { chars, part, paragraph: at };
  };
  const open = (name: string, tagStart: number, tagEnd: number) => {
    if (mode === undefined) {
      mode = FLOW_ROOTS.has(name) ? 'flow' : name === 'sld' ? 'slide' : name === 'worksheet' ? 'sheet' : 'other';
      if (mode === 'slide') cost.slides++;
    }
    switch (name) {
      case 'p':
        cost.paragraphs++;
        stack.push({ kind: 'p', lines: 0, n: 0, at: ++paragraph });
        break;
      case 'tbl':
        stack.push({ kind: 'tbl', lines: 0, n: 0 });
        break;
      case 'tr': {
        const tbl = innermost(stack, 'tbl');
        if (tbl) tbl.n++;
        stack.push({ kind: 'tr', lines: 0, n: 0 });
        break;
      }
      case 'tc':
        stack.push({ kind: 'tc', lines: 0, n: 0 });
        break;
      case 't':
        inText++;
        break;
      case 'br':
        if (/\btype\s*=\s*["']page["']/.test(xml.toString('latin1', tagStart, tagEnd))) cost.breaks++;
        break;
      case 'pageBreakBefore':
        if (!/\bval\s*=\s*["'](?:0|false|off)["']/.test(xml.toString('latin1', tagStart, tagEnd))) cost.breaks++;
        break;
      case 'sectPr':
        inSectPr++;
        sections.push(true);
        break;
      case 'type':
        if (inSectPr > 0 && /\bval\s*=\s*["']continuous["']/.test(xml.toString('latin1', tagStart, tagEnd))) sections[sections.length - 1] = false;
        break;
      case 'row':
        rows++;
        break;
      case 'c':
        if (mode === 'sheet') cells++;
        break;
    }
  };
  const close = (name: string) => {
    if (name === 'sectPr') {
      inSectPr = Math.max(0, inSectPr - 1);
      return;
    }
    if (name === 't') {
      inText = Math.max(0, inText - 1);
      if (inText === 0 && looseChars > 0) {
        longest(looseChars, 0);
        looseChars = 0;
      }
      return;
    }
    if (name !== 'p' && name !== 'tbl' && name !== 'tr' && name !== 'tc') return;
    const i = lastIndexOfKind(stack, name);
    if (i < 0) return;
    // Frames left open inside (malformed nesting) close with it.
    while (stack.length > i + 1) close(stack[stack.length - 1]!.kind);
    const f = stack.pop()!;
    if (f.kind === 'p') {
      longest(f.n, f.at ?? 0);
      addLines(Math.max(1, Math.ceil(f.n / CHARS_PER_LINE)) + f.lines);
    } else if (f.kind === 'tbl') {
      if (!cost.longestTable || f.n > cost.longestTable.rows) cost.longestTable = { rows: f.n, part };
      addLines(f.lines);
    } else if (f.kind === 'tr') {
      addLines(Math.max(1, f.n));
    } else {
      const tr = stack[stack.length - 1];
      if (tr?.kind === 'tr') tr.n = Math.max(tr.n, f.lines);
      else addLines(f.lines);
    }
  };

  let i = 0;
  const n = xml.length;
  while (i < n) {
    const lt = xml.indexOf(0x3c, i);
    if (lt < 0) break;
    if (inText > 0 && lt > i) text(i, lt);
    const c1 = xml[lt + 1];
    if (c1 === 0x21 /* ! */) {
      if (xml[lt + 2] === 0x2d && xml[lt + 3] === 0x2d) {
        const end = xml.indexOf('-->', lt + 4, 'latin1');
        i = end < 0 ? n : end + 3;
        continue;
      }
      if (xml.toString('latin1', lt, lt + 9) === '<![CDATA[') {
        const end = xml.indexOf(']]>', lt + 9, 'latin1');
        if (inText > 0) text(lt + 9, end < 0 ? n : end);
        i = end < 0 ? n : end + 3;
        continue;
      }
    }
    if (c1 === 0x3f /* ? */) {
      const end = xml.indexOf('?>', lt + 2, 'latin1');
      i = end < 0 ? n : end + 2;
      continue;
    }
    const gt = xml.indexOf(0x3e, lt + 1);
    if (gt < 0) break;
    const closing = c1 === 0x2f;
    let s = lt + (closing ? 2 : 1);
    let e = s;
    while (e < gt) {
      const b = xml[e]!;
      if (b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d || b === 0x2f) break;
      if (b === 0x3a) s = e + 1;
      e++;
    }
    i = gt + 1;
    // Only the first element's name (the part's kind) and the few names counted are ever made strings.
    const name = mode === undefined && !closing ? xml.toString('latin1', s, e) : nameOf(xml, s, e);
    if (name === undefined) continue;
    if (closing) close(name);
    else {
      open(name, lt, gt);
      if (xml[gt - 1] === 0x2f) close(name);
    }
  }
  while (stack.length > 0) close(stack[stack.length - 1]!.kind);
  if (mode === 'sheet') {
    cost.cells += cells;
    cost.pages += Math.max(Math.ceil(rows / SHEET_ROWS_PER_PAGE), Math.ceil(cells / SHEET_CELLS_PER_PAGE));
  }
  if (mode !== 'flow') return 0;
  // A section's properties say how it starts: every section after the first that is not continuous
  // starts a page.
  cost.breaks += sections.slice(1).filter(Boolean).length;
  return lines;
}

const COUNTED = ['p', 't', 'c', 'tr', 'tc', 'br', 'tbl', 'row', 'type', 'sectPr', 'pageBreakBefore'].map((n) => Buffer.from(n, 'latin1'));

/** The local name in xml[s, e) when it is one of the counted names, without allocating. */
function nameOf(xml: Buffer, s: number, e: number): string | undefined {
  const len = e - s;
  for (const n of COUNTED) {
    if (n.length !== len || n[0] !== xml[s]) continue;
    let k = 1;
    while (k < len && n[k] === xml[s + k]) k++;
    if (k === len) return NAMES.get(n)!;
  }
  return undefined;
}
const NAMES = new Map(COUNTED.map((n) => [n, n.toString('latin1')]));

function innermost(stack: Frame[], kind: Frame['kind']): Frame | undefined {
  const i = lastIndexOfKind(stack, kind);
  return i < 0 ? undefined : stack[i];
}

function lastIndexOfKind(stack: Frame[], kind: string): number {
  for (let i = stack.length - 1; i >= 0; i--) if (stack[i]!.kind === kind) return i;
  return -1;
}

function looksLikeXml(head: Uint8Array): boolean {
  let k = 0;
  if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) k = 3;
  while (k < head.length && (head[k] === 0x20 || head[k] === 0x09 || head[k] === 0x0a || head[k] === 0x0d)) k++;
  return head[k] === 0x3c;
}

/** The first bytes of a part (at most `max`), inflating only what they need. */
function headOf(entry: ZipEntry, max: number): Uint8Array {
  if (entry.method === 0) return entry.raw.subarray(0, max);
  // A prefix of the compressed bytes inflates to at most ~1 000 times its size: a few KB is enough for
  // any image header, and never a large allocation.
  for (const take of [16 * 1024, 1024]) {
    try {
      const out = inflateRawSync(entry.raw.subarray(0, take), { finishFlush: constants.Z_SYNC_FLUSH, maxOutputLength: 1 << 20 });
      return out.subarray(0, max);
    } catch {
      /* too much output for the cap: a smaller prefix */
    }
  }
  return new Uint8Array(0);
}

/** Width and height of an image part (PNG, JPEG, GIF, BMP, TIFF, WebP), by its bytes; null otherwise. */
function imageSize(entry: ZipEntry): { width: number; height: number } | null {
  let head = headOf(entry, 64 * 1024);
  const kind = sniff(head);
  if (kind) {
    const d = dimensions(head, kind);
    return d && d.w > 0 && d.h > 0 ? { width: d.w, height: d.h } : null;
  }
  if ((head[0] === 0x49 && head[1] === 0x49 && head[2] === 0x2a) || (head[0] === 0x4d && head[1] === 0x4d && head[3] === 0x2a)) {
    // A TIFF's directory may sit anywhere, often at the end.
    if (entry.size > head.length) head = inflateEntry(entry);
    return tiffSize(head);
  }
  if (head.length >= 30 && Buffer.from(head.subarray(0, 4)).toString('latin1') === 'RIFF' && Buffer.from(head.subarray(8, 12)).toString('latin1') === 'WEBP') return webpSize(head);
  return null;
}

function tiffSize(b: Uint8Array): { width: number; height: number } | null {
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const le = b[0] === 0x49;
  try {
    const ifd = v.getUint32(4, le);
    const count = v.getUint16(ifd, le);
    let width = 0;
    let height = 0;
    for (let k = 0; k < count; k++) {
      const at = ifd + 2 + k * 12;
      const tag = v.getUint16(at, le);
      const type = v.getUint16(at + 2, le);
      const value = type === 3 ? v.getUint16(at + 8, le) : v.getUint32(at + 8, le);
      if (tag === 256) width = value;
      if (tag === 257) height = value;
    }
    return width > 0 && height > 0 ? { width, height } : null;
  } catch {
    return null;
  }
}

function webpSize(b: Uint8Array): { width: number; height: number } | null {
  const chunk = Buffer.from(b.subarray(12, 16)).toString('latin1');
  if (chunk === 'VP8X') return { width: 1 + (b[24]! | (b[25]! << 8) | (b[26]! << 16)), height: 1 + (b[27]! | (b[28]! << 8) | (b[29]! << 16)) };
  if (chunk === 'VP8L') {
    const bits = b[21]! | (b[22]! << 8) | (b[23]! << 16) | (b[24]! << 24);
    return { width: 1 + (bits & 0x3fff), height: 1 + ((bits >>> 14) & 0x3fff) };
  }
  if (chunk === 'VP8 ') return { width: (b[26]! | (b[27]! << 8)) & 0x3fff, height: (b[28]! | (b[29]! << 8)) & 0x3fff };
  return null;
}
