/**
 * Just enough PDF reading/writing for metering and metadata: the exact page count (catalog -> page tree
 * /Count), the PDF/A identification in the XMP packet, and an incremental update that adds custom keys to
 * the document information dictionary. Reads the cross-reference sections a writer or an editor leaves,
 * newest first along their /Prev chain: classic tables (LibreOffice, Ghostscript, Chromium), xref streams
 * with objects compressed into object streams (Word, Acrobat, qpdf), hybrid files (a table whose trailer
 * names an xref stream too) and incremental updates of any of them. A file whose cross-references cannot
 * be read falls back to a scan of its objects. test/integration/convert/pdf-pages.test.ts checks the count
 * against pdf.js on files those writers made.
 */
import { inflateSync } from 'node:zlib';
import { ConvertError } from './errors.ts';

/** Where an object lives: at a byte offset (type 1), inside an object stream (type 2), or nowhere (free). */
type XrefEntry = { type: 0 } | { type: 1; offset: number } | { type: 2; stream: number; index: number };

interface PdfIndex {
  text: string; // latin1 view, one char per byte
  get(num: number): string | undefined;
  trailer: string;
  startxref: number;
}

export function latin1(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
}

export function objectAt(text: string, offset: number): string | undefined {
  const end = text.indexOf('endobj', offset);
  if (end < 0) return undefined;
  return text.slice(offset, end);
}

/** The data of a stream object (its text from `N G obj`), decoded when it is Flate-compressed (with PNG
 *  predictors, as xref streams use them); undefined for a filter this reader does not need. */
function streamData(obj: string): Buffer | undefined {
  const dict = outerDict(obj) ?? '';
  const sAt = obj.indexOf('stream', obj.indexOf(dict) + dict.length);
  if (sAt < 0) return undefined;
  let dataStart = sAt + 6;
  if (obj[dataStart] === '\r') dataStart++;
  if (obj[dataStart] === '\n') dataStart++;
  const length = /\/Length\s+(\d+)(?!\s+\d+\s+R)/.exec(dict)?.[1];
  const endAt = length !== undefined ? dataStart + Number(length) : obj.lastIndexOf('endstream');
  const raw = Buffer.from(obj.slice(dataStart, endAt < dataStart ? undefined : endAt), 'latin1');
  const filter = /\/Filter\s*(\[[^\]]*\]|\/\w+)/.exec(dict)?.[1]?.replace(/[[\]\s]/g, '');
  let data: Buffer;
  if (!filter) data = raw;
  else if (filter === '/FlateDecode') {
    try {
      data = inflateSync(raw, { finishFlush: 2 });
    } catch {
      return undefined;
    }
  } else return undefined;
  const predictor = Number(/\/Predictor\s+(\d+)/.exec(dict)?.[1] ?? 1);
  if (predictor < 10) return predictor === 1 ? data : undefined;
  return unpredictPng(data, Number(/\/Columns\s+(\d+)/.exec(dict)?.[1] ?? 1));
}

/** Undoes PNG row predictors (ISO 32000-1 7.4.4.4): each row is a filter byte and `columns` bytes. */
function unpredictPng(data: Buffer, columns: number): Buffer {
  const rows = Math.floor(data.byteLength / (columns + 1));
  const out = Buffer.alloc(rows * columns);
  for (let r = 0; r < rows; r++) {
    const type = data[r * (columns + 1)]!;
    for (let c = 0; c < columns; c++) {
      const x = data[r * (columns + 1) + 1 + c]!;
      const left = c > 0 ? out[r * columns + c - 1]! : 0;
      const up = r > 0 ? out[(r - 1) * columns + c]! : 0;
      const upLeft = r > 0 && c > 0 ? out[(r - 1) * columns + c - 1]! : 0;
      let v: number;
      if (type === 0) v = x;
      else if (type === 1) v = x + left;
      else if (type === 2) v = x + up;
      else if (type === 3) v = x + ((left + up) >> 1);
      else {
        const p = left + up - upLeft;
        const [pa, pb, pc] = [Math.abs(p - left), Math.abs(p - up), Math.abs(p - upLeft)];
        v = x + (pa <= pb && pa <= pc ? left : pb <= pc ? up : upLeft);
      }
      out[r * columns + c] = v & 0xff;
    }
  }
  return out;
}

/** The entries of a classic xref table at `at` (the `xref` keyword) and its trailer, or null. */
export function classicSection(text: string, at: number): { entries: Map<number, XrefEntry>; trailer: string } | null {
  if (text.slice(at, at + 4) !== 'xref') return null;
  const trailerAt = text.indexOf('trailer', at);
  if (trailerAt < 0) return null;
  const entries = new Map<number, XrefEntry>();
  const lines = text
    .slice(at + 4, trailerAt)
    .split(/\r\n|\r|\n/)
    .map((l) => l.trim())
    .filter(Boolean);
  let num = 0;
  for (const l of lines) {
    const parts = l.split(/\s+/);
    if (parts.length === 2) {
      num = Number(parts[0]);
      continue;
    }
    if (parts.length >= 3) entries.set(num, parts[2] === 'n' ? { type: 1, offset: Number(parts[0]) } : { type: 0 });
    num++;
  }
  const trailerEnd = text.indexOf('startxref', trailerAt);
  return { entries, trailer: text.slice(trailerAt, trailerEnd < 0 ? undefined : trailerEnd) };
}

/** The entries of an xref stream whose object starts at `at`, and its dictionary (the trailer), or null. */
function streamSection(text: string, at: number): { entries: Map<number, XrefEntry>; trailer: string } | null {
  const obj = /^\s*\d+\s+\d+\s+obj\b/.test(text.slice(at, at + 40)) ? objectAt(text, at) : undefined;
  const dict = obj === undefined ? undefined : outerDict(obj);
  if (obj === undefined || dict === undefined || !/\/Type\s*\/XRef\b/.test(dict)) return null;
  const w = /\/W\s*\[\s*(\d+)\s+(\d+)\s+(\d+)\s*\]/.exec(dict)?.slice(1).map(Number);
  const data = streamData(obj);
  if (!w || !data) return null;
  const size = Number(/\/Size\s+(\d+)/.exec(dict)?.[1] ?? 0);
  const index = (/\/Index\s*\[([^\]]*)\]/.exec(dict)?.[1] ?? `0 ${size}`).trim().split(/\s+/).map(Number);
  const field = (pos: number, width: number, fallback: number) => {
    if (width === 0) return fallback;
    let v = 0;
    for (let i = 0; i < width; i++) v = v * 256 + data[pos + i]!;
    return v;
  };
  const entries = new Map<number, XrefEntry>();
  const rowBytes = w[0]! + w[1]! + w[2]!;
  let pos = 0;
  for (let i = 0; i + 1 < index.length; i += 2) {
    for (let k = 0; k < index[i + 1]!; k++, pos += rowBytes) {
      if (pos + rowBytes > data.byteLength) return null;
      const type = field(pos, w[0]!, 1);
      const f2 = field(pos + w[0]!, w[1]!, 0);
      const f3 = field(pos + w[0]! + w[1]!, w[2]!, 0);
      const num = index[i]! + k;
      entries.set(num, type === 1 ? { type: 1, offset: f2 } : type === 2 ? { type: 2, stream: f2, index: f3 } : { type: 0 });
    }
  }
  return { entries, trailer: `trailer\n<<${dict}>>` };
}

/** Every cross-reference entry of the file, the newest section's winning, and the newest trailer; null
 *  when a section along the /Prev chain cannot be read. */
export function readXref(text: string, startxref: number): { entries: Map<number, XrefEntry>; trailer: string } | null {
  const entries = new Map<number, XrefEntry>();
  let newestTrailer: string | undefined;
  const visited = new Set<number>();
  const queue = [startxref];
  while (queue.length > 0) {
    const at = queue.shift()!;
    if (visited.has(at)) continue;
    visited.add(at);
    const section = classicSection(text, at) ?? streamSection(text, at);
    if (!section) return null;
    // A hybrid file's table names an xref stream for the objects it compresses, which the table leaves
    // out or marks free (for readers that know no object streams): the stream's entry is the one.
    const stm = /\/XRefStm\s+(\d+)/.exec(section.trailer)?.[1];
    const hybrid = stm === undefined ? null : streamSection(text, Number(stm));
    if (hybrid) for (const [num, e] of hybrid.entries) if ((section.entries.get(num)?.type ?? 0) === 0) section.entries.set(num, e);
    for (const [num, e] of section.entries) if (!entries.has(num)) entries.set(num, e);
    newestTrailer ??= section.trailer;
    const prev = /\/Prev\s+(\d+)/.exec(section.trailer)?.[1];
    if (prev !== undefined) queue.push(Number(prev));
  }
  return newestTrailer === undefined ? null : { entries, trailer: newestTrailer };
}

/** The objects of an object stream (its text from `N G obj`), by object number. */
function objectStreamContents(obj: string): Map<number, string> {
  const objs = new Map<number, string>();
  const dict = outerDict(obj) ?? '';
  const data = streamData(obj)?.toString('latin1');
  if (data === undefined) return objs;
  const n = Number(/\/N\s+(\d+)/.exec(dict)?.[1] ?? 0);
  const first = Number(/\/First\s+(\d+)/.exec(dict)?.[1] ?? 0);
  const header = data.slice(0, first).trim().split(/\s+/).map(Number);
  for (let i = 0; i < n; i++) {
    const num = header[2 * i];
    const off = header[2 * i + 1];
    if (num === undefined || off === undefined) break;
    const nextOff = header[2 * i + 3];
    objs.set(num, data.slice(first + off, nextOff === undefined ? undefined : first + nextOff));
  }
  return objs;
}

/** Fallback for a file whose cross-references cannot be read: every "N G obj" in the file (last wins)
 *  plus the contents of object streams (a later object stream's copy wins over an earlier one's). */
function scanObjects(text: string): Map<number, string> {
  const objs = new Map<number, string>();
  const re = /(?:^|[^\d])(\d+)\s+(\d+)\s+obj\b/g;
  for (const m of text.matchAll(re)) {
    const start = m.index + m[0].indexOf(m[1]!);
    const body = objectAt(text, start);
    if (body !== undefined) objs.set(Number(m[1]), body);
  }
  const top = new Set(objs.keys());
  for (const body of [...objs.values()]) {
    if (!/\/Type\s*\/ObjStm\b/.test(body)) continue;
    for (const [num, o] of objectStreamContents(body)) if (!top.has(num)) objs.set(num, o);
  }
  return objs;
}

function indexPdf(bytes: Uint8Array): PdfIndex {
  const text = latin1(bytes);
  if (!text.startsWith('%PDF-')) throw new ConvertError('BAD_INPUT', 'not a PDF (no %PDF- header)');
  const sx = text.lastIndexOf('startxref');
  const startxref = sx < 0 ? -1 : Number(/startxref\s+(\d+)/.exec(text.slice(sx))?.[1] ?? -1);
  const xref = startxref >= 0 ? readXref(text, startxref) : null;
  if (xref) {
    const streams = new Map<number, Map<number, string>>();
    const get = (num: number): string | undefined => {
      const e = xref.entries.get(num);
      if (!e || e.type === 0) return undefined;
      if (e.type === 1) {
        // The offset must hold this object; a wrong offset (a damaged table) reads nothing.
        const m = /^\s*(\d+)\s+\d+\s+obj\b/.exec(text.slice(e.offset, e.offset + 40));
        return m && Number(m[1]) === num ? objectAt(text, e.offset) : undefined;
      }
      let contents = streams.get(e.stream);
      if (!contents) {
        const host = xref.entries.get(e.stream);
        const obj = host?.type === 1 ? objectAt(text, host.offset) : undefined;
        contents = obj === undefined ? new Map() : objectStreamContents(obj);
        streams.set(e.stream, contents);
      }
      return contents.get(num);
    };
    return { text, startxref, trailer: xref.trailer, get };
  }
  const objs = scanObjects(text);
  // An xref stream's dictionary doubles as the trailer.
  const trailer = (startxref >= 0 ? objectAt(text, startxref) : undefined) ?? text.slice(text.lastIndexOf('trailer'));
  return { text, startxref, trailer, get: (num) => objs.get(num) };
}

/** A dictionary's own entries, without those of the dictionaries nested in it. */
export function topLevel(dict: string): string {
  let out = '';
  let depth = 0;
  for (let i = 0; i < dict.length; i++) {
    if (dict[i] === '<' && dict[i + 1] === '<') {
      depth++;
      i++;
    } else if (dict[i] === '>' && dict[i + 1] === '>') {
      depth--;
      i++;
    } else if (depth === 0) out += dict[i];
  }
  return out;
}

function ref(dict: string, key: string): number | undefined {
  const m = new RegExp(`/${key}\\s+(\\d+)\\s+\\d+\\s+R`).exec(dict);
  return m ? Number(m[1]) : undefined;
}

/** Exact page count of a PDF: the page tree root's /Count. */
export function pdfPageCount(bytes: Uint8Array): number {
  const idx = indexPdf(bytes);
  const entries = (obj: string | undefined) => (obj === undefined ? undefined : topLevel(outerDict(obj) ?? obj));
  const rootNum = ref(entries(idx.trailer) ?? '', 'Root');
  const root = entries(rootNum === undefined ? undefined : idx.get(rootNum));
  const pagesNum = root === undefined ? undefined : ref(root, 'Pages');
  const pages = entries(pagesNum === undefined ? undefined : idx.get(pagesNum));
  // /Count may be an indirect object holding the number (its body, after `N G obj` when it has one).
  const countRef = pages === undefined ? undefined : ref(pages, 'Count');
  const count =
    countRef !== undefined
      ? /^\s*(?:\d+\s+\d+\s+obj\s+)?(\d+)\s*$/.exec(idx.get(countRef) ?? '')?.[1]
      : pages === undefined
        ? undefined
        : /\/Count\s+(\d+)/.exec(pages)?.[1];
  if (count !== undefined) return Number(count);
  // Damaged or unusual file: count leaf page objects, which is what viewers fall back to as well.
  const leaves = idx.text.match(/\/Type\s*\/Page(?![a-zA-Z])/g)?.length ?? 0;
  if (!leaves) throw new ConvertError('BAD_INPUT', 'cannot find the page tree of this PDF');
  return leaves;
}

/** Refuses a PDF with more pages than TEMPLATE_MAX_PAGES (TOO_COMPLEX): the estimate (engine/cost.ts)
 *  reads what makes layout expensive, within a factor two of LibreOffice's count, so a document it let
 *  through can still lay out past the limit; such a file is not delivered. */
export function checkPdfPages(pdf: Uint8Array, maxPages: number): void {
  const pages = pdfPageCount(pdf);
  if (pages > maxPages) {
    throw new ConvertError(
      'TOO_COMPLEX',
      `the document is too costly to convert: it laid out as ${pages} pages; the limit is ${maxPages} (TEMPLATE_MAX_PAGES)`,
    );
  }
}

export interface PdfAId {
  part: number;
  conformance: string;
}

/** The PDF/A identification schema (pdfaid:part / pdfaid:conformance) from the XMP packet. */
export function pdfaIdentification(bytes: Uint8Array): PdfAId | null {
  // The last XMP packet is the current one (an incremental update appends a new metadata stream).
  const text = latin1(bytes);
  const last = (re: RegExp) => [...text.matchAll(re)].at(-1)?.[1];
  const part = last(/pdfaid:part(?:>|\s*=\s*["'])\s*(\d)/g);
  const conf = last(/pdfaid:conformance(?:>|\s*=\s*["'])\s*([A-Za-z])/g);
  if (!part) return null;
  return { part: Number(part), conformance: (conf ?? '').toUpperCase() };
}

/** PDF text string: literal when printable ASCII, else UTF-16BE hex with a BOM. */
function pdfString(s: string): string {
  if (/^[\x20-\x7e]*$/.test(s)) return `(${s.replace(/([()\\])/g, '\\$1')})`;
  let hex = 'FEFF';
  for (let i = 0; i < s.length; i++) hex += s.charCodeAt(i).toString(16).padStart(4, '0').toUpperCase();
  return `<${hex}>`;
}

/** Extracts the outermost << ... >> of an object body (nested dictionaries kept intact). */
export function outerDict(body: string): string | undefined {
  const start = body.indexOf('<<');
  if (start < 0) return undefined;
  let depth = 0;
  for (let i = start; i < body.length - 1; i++) {
    if (body[i] === '<' && body[i + 1] === '<') {
      depth++;
      i++;
    } else if (body[i] === '>' && body[i + 1] === '>') {
      depth--;
      i++;
      if (depth === 0) return body.slice(start + 2, i - 1);
    }
  }
  return undefined;
}

/**
 * Adds custom keys to the document information dictionary with an incremental update (the
 * original bytes are untouched, which PDF/A allows). Only for classic-xref files; LibreOffice's
 * output always is one.
 */
export function addPdfInfo(bytes: Uint8Array, entries: Record<string, string>): Uint8Array {
  const keys = Object.keys(entries);
  if (!keys.length) return bytes;
  const text = latin1(bytes);
  const sx = text.lastIndexOf('startxref');
  const startxref = Number(/startxref\s+(\d+)/.exec(text.slice(sx))?.[1] ?? -1);
  const classic = startxref >= 0 ? classicSection(text, startxref) : null;
  if (!classic) throw new ConvertError('CONVERSION_FAILED', 'cannot add document properties: the PDF has no classic xref table');
  const trailerDict = outerDict(classic.trailer) ?? '';
  const size = Number(/\/Size\s+(\d+)/.exec(trailerDict)?.[1] ?? NaN);
  const root = /\/Root\s+\d+\s+\d+\s+R/.exec(trailerDict)?.[0];
  if (!Number.isFinite(size) || !root) throw new ConvertError('CONVERSION_FAILED', 'cannot add document properties: unreadable trailer');
  const infoM = /\/Info\s+(\d+)\s+(\d+)\s+R/.exec(trailerDict);
  let infoNum = size;
  let infoGen = 0;
  let old = '';
  if (infoM) {
    infoNum = Number(infoM[1]);
    infoGen = Number(infoM[2]);
    const info = readXref(text, startxref)?.entries.get(infoNum);
    old = (info?.type === 1 ? outerDict(objectAt(text, info.offset) ?? '') : undefined) ?? '';
    // Drop keys we are about to set so the dictionary has no duplicates.
    for (const k of keys) old = old.replace(new RegExp(`/${k.replace(/[.]/g, '\\.')}\\s*(\\([^)]*\\)|<[^>]*>)`, 'g'), '');
  }
  const custom = keys.map((k) => `/${k} ${pdfString(entries[k]!)}`).join('\n');
  const obj = `${infoNum} ${infoGen} obj\n<<${old.trim() ? `${old.trim()}\n` : ''}${custom}\n>>\nendobj\n`;
  const sep = text.endsWith('\n') ? '' : '\n';
  const objOffset = bytes.byteLength + sep.length;
  const xrefOffset = objOffset + Buffer.byteLength(obj, 'latin1');
  const id = /\/ID\s*\[[^\]]*\]/.exec(trailerDict)?.[0] ?? '';
  const newSize = Math.max(size, infoNum + 1);
  const tail =
    `${sep}${obj}xref\n${infoNum} 1\n${String(objOffset).padStart(10, '0')} ${String(infoGen).padStart(5, '0')} n \n` +
    `trailer\n<< /Size ${newSize} ${root} /Info ${infoNum} ${infoGen} R ${id} /Prev ${startxref} >>\nstartxref\n${xrefOffset}\n%%EOF\n`;
  const tailBytes = Buffer.from(tail, 'latin1');
  const out = new Uint8Array(bytes.byteLength + tailBytes.byteLength);
  out.set(bytes, 0);
  out.set(tailBytes, bytes.byteLength);
  return out;
}

/** A classic-xref PDF opened for an incremental update: its objects by number, its trailer and size. */
export interface UpdatablePdf {
  text: string;
  startxref: number;
  trailer: string;
  size: number;
  root: { num: number; gen: number };
  /** The body of object `num` (from `N G obj`), its dictionary (outermost << >>' contents). */
  get(num: number): string | undefined;
  dictOf(body: string): string | undefined;
}

export function openForUpdate(bytes: Uint8Array): UpdatablePdf {
  const text = latin1(bytes);
  const sx = text.lastIndexOf('startxref');
  const startxref = Number(/startxref\s+(\d+)/.exec(text.slice(sx))?.[1] ?? -1);
  const classic = startxref >= 0 ? classicSection(text, startxref) : null;
  const xref = classic ? readXref(text, startxref) : null;
  if (!classic || !xref) throw new ConvertError('CONVERSION_FAILED', 'cannot update the PDF: it has no classic xref table');
  const trailer = outerDict(classic.trailer) ?? '';
  const size = Number(/\/Size\s+(\d+)/.exec(trailer)?.[1] ?? NaN);
  const root = /\/Root\s+(\d+)\s+(\d+)\s+R/.exec(trailer);
  if (!Number.isFinite(size) || !root) throw new ConvertError('CONVERSION_FAILED', 'cannot update the PDF: unreadable trailer');
  const get = (num: number) => {
    const e = xref.entries.get(num);
    return e?.type === 1 ? objectAt(text, e.offset) : undefined;
  };
  return { text, startxref, trailer, size, root: { num: Number(root[1]), gen: Number(root[2]) }, get, dictOf: outerDict };
}

/** Appends objects (new ones, or new versions of old ones) as an incremental update: a new xref section
 *  for them and a trailer chained to the old one (/Prev), keeping /Root, /Info and /ID. */
export function appendUpdate(bytes: Uint8Array, pdf: UpdatablePdf, objects: { num: number; gen?: number; body: Uint8Array }[]): Uint8Array {
  const chunks: Buffer[] = [];
  let offset = bytes.byteLength;
  const sep = pdf.text.endsWith('\n') ? '' : '\n';
  if (sep) {
    chunks.push(Buffer.from(sep, 'latin1'));
    offset += sep.length;
  }
  const offsets = new Map<number, { offset: number; gen: number }>();
  for (const o of objects) {
    const head = Buffer.from(`${o.num} ${o.gen ?? 0} obj\n`, 'latin1');
    const tail = Buffer.from('\nendobj\n', 'latin1');
    offsets.set(o.num, { offset, gen: o.gen ?? 0 });
    chunks.push(head, Buffer.from(o.body), tail);
    offset += head.byteLength + o.body.byteLength + tail.byteLength;
  }
  const nums = [...offsets.keys()].sort((a, b) => a - b);
  let xref = 'xref\n';
  for (let i = 0; i < nums.length;) {
    let j = i;
    while (j + 1 < nums.length && nums[j + 1] === nums[j]! + 1) j++;
    xref += `${nums[i]} ${j - i + 1}\n`;
    for (let k = i; k <= j; k++) {
      const e = offsets.get(nums[k]!)!;
      xref += `${String(e.offset).padStart(10, '0')} ${String(e.gen).padStart(5, '0')} n \n`;
    }
    i = j + 1;
  }
  const size = Math.max(pdf.size, nums[nums.length - 1]! + 1);
  const keep = ['Root', 'Info']
    .map((k) => new RegExp(`/${k}\\s+\\d+\\s+\\d+\\s+R`).exec(pdf.trailer)?.[0])
    .filter(Boolean)
    .join(' ');
  const id = /\/ID\s*\[[^\]]*\]/.exec(pdf.trailer)?.[0] ?? '';
  xref += `trailer\n<< /Size ${size} ${keep} ${id} /Prev ${pdf.startxref} >>\nstartxref\n${offset}\n%%EOF\n`;
  chunks.push(Buffer.from(xref, 'latin1'));
  return new Uint8Array(Buffer.concat([Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), ...chunks]));
}
