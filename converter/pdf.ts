/**
 * Just enough PDF reading/writing for metering and metadata: the exact page count (catalog →
 * page tree /Count), the PDF/A identification in the XMP packet, and an incremental update that adds
 * custom keys to the document information dictionary. Handles classic xref tables (what LibreOffice
 * writes) and, for reading, falls back to a scan that also opens object streams (Word, Acrobat).
 */
import { inflateSync } from 'node:zlib';
import { ConvertError } from './errors.ts';

interface PdfIndex {
  text: string; // latin1 view, one char per byte
  get(num: number): string | undefined;
  trailer: string;
  startxref: number;
}

function latin1(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
}

function objectAt(text: string, offset: number): string | undefined {
  const end = text.indexOf('endobj', offset);
  if (end < 0) return undefined;
  return text.slice(offset, end);
}

/** Offsets from a classic xref table and its /Prev chain; null when the file uses xref streams. */
function classicXref(text: string, startxref: number): { offsets: Map<number, number>; trailer: string } | null {
  const offsets = new Map<number, number>();
  let at: number | null = startxref;
  let newestTrailer = '';
  const visited = new Set<number>();
  while (at !== null && !visited.has(at)) {
    visited.add(at);
    if (text.slice(at, at + 4) !== 'xref') return null;
    const trailerAt = text.indexOf('trailer', at);
    if (trailerAt < 0) return null;
    const table = text.slice(at + 4, trailerAt);
    const lines = table.split(/\r\n|\r|\n/).map((l) => l.trim()).filter(Boolean);
    let num = 0;
    for (const l of lines) {
      const parts = l.split(/\s+/);
      if (parts.length === 2) {
        num = Number(parts[0]);
        continue;
      }
      if (parts.length >= 3 && !offsets.has(num) && parts[2] === 'n') offsets.set(num, Number(parts[0]));
      num++;
    }
    const trailerEnd = text.indexOf('startxref', trailerAt);
    const trailer = text.slice(trailerAt, trailerEnd < 0 ? undefined : trailerEnd);
    if (!newestTrailer) newestTrailer = trailer;
    const prev = /\/Prev\s+(\d+)/.exec(trailer);
    at = prev ? Number(prev[1]) : null;
  }
  return { offsets, trailer: newestTrailer };
}

/** Fallback: every "N G obj" in the file (last wins) plus the contents of object streams. */
function scanObjects(text: string): Map<number, string> {
  const objs = new Map<number, string>();
  const re = /(?:^|[^\d])(\d+)\s+(\d+)\s+obj\b/g;
  for (const m of text.matchAll(re)) {
    const start = m.index + m[0].indexOf(m[1]!);
    const body = objectAt(text, start);
    if (body !== undefined) objs.set(Number(m[1]), body);
  }
  for (const body of [...objs.values()]) {
    if (!/\/Type\s*\/ObjStm\b/.test(body)) continue;
    const sAt = body.indexOf('stream');
    if (sAt < 0) continue;
    let dataStart = sAt + 6;
    if (body[dataStart] === '\r') dataStart++;
    if (body[dataStart] === '\n') dataStart++;
    const endAt = body.lastIndexOf('endstream');
    const raw = Buffer.from(body.slice(dataStart, endAt < 0 ? undefined : endAt), 'latin1');
    let data: string;
    try {
      data = /\/FlateDecode/.test(body.slice(0, sAt)) ? inflateSync(raw, { finishFlush: 2 }).toString('latin1') : raw.toString('latin1');
    } catch {
      continue;
    }
    const n = Number(/\/N\s+(\d+)/.exec(body)?.[1] ?? 0);
    const first = Number(/\/First\s+(\d+)/.exec(body)?.[1] ?? 0);
    const header = data.slice(0, first).trim().split(/\s+/).map(Number);
    for (let i = 0; i < n; i++) {
      const num = header[2 * i];
      const off = header[2 * i + 1];
      if (num === undefined || off === undefined) break;
      const nextOff = header[2 * i + 3];
      if (!objs.has(num)) objs.set(num, data.slice(first + off, nextOff === undefined ? undefined : first + nextOff));
    }
  }
  return objs;
}

function indexPdf(bytes: Uint8Array): PdfIndex {
  const text = latin1(bytes);
  if (!text.startsWith('%PDF-')) throw new ConvertError('BAD_INPUT', 'not a PDF (no %PDF- header)');
  const sx = text.lastIndexOf('startxref');
  const startxref = sx < 0 ? -1 : Number(/startxref\s+(\d+)/.exec(text.slice(sx))?.[1] ?? -1);
  const classic = startxref >= 0 ? classicXref(text, startxref) : null;
  if (classic) {
    return {
      text,
      startxref,
      trailer: classic.trailer,
      get: (num) => {
        const off = classic.offsets.get(num);
        return off === undefined ? undefined : objectAt(text, off);
      },
    };
  }
  const objs = scanObjects(text);
  // An xref stream's dictionary doubles as the trailer.
  const trailer = (startxref >= 0 ? objectAt(text, startxref) : undefined) ?? text.slice(text.lastIndexOf('trailer'));
  return { text, startxref, trailer, get: (num) => objs.get(num) };
}

function ref(dict: string, key: string): number | undefined {
  const m = new RegExp(`/${key}\\s+(\\d+)\\s+\\d+\\s+R`).exec(dict);
  return m ? Number(m[1]) : undefined;
}

/** Exact page count of a PDF: the page tree root's /Count. */
export function pdfPageCount(bytes: Uint8Array): number {
  const idx = indexPdf(bytes);
  const rootNum = ref(idx.trailer, 'Root');
  const root = rootNum === undefined ? undefined : idx.get(rootNum);
  const pagesNum = root === undefined ? undefined : ref(root, 'Pages');
  const pages = pagesNum === undefined ? undefined : idx.get(pagesNum);
  const count = pages === undefined ? undefined : /\/Count\s+(\d+)/.exec(pages)?.[1];
  if (count !== undefined) return Number(count);
  // Damaged or unusual file: count leaf page objects, which is what viewers fall back to as well.
  const leaves = idx.text.match(/\/Type\s*\/Page(?![a-zA-Z])/g)?.length ?? 0;
  if (!leaves) throw new ConvertError('BAD_INPUT', 'cannot find the page tree of this PDF');
  return leaves;
}

export interface PdfAId {
  part: number;
  conformance: string;
}

/** The PDF/A identification schema (pdfaid:part / pdfaid:conformance) from the XMP packet. */
export function pdfaIdentification(bytes: Uint8Array): PdfAId | null {
  const text = latin1(bytes);
  const part = /pdfaid:part(?:>|\s*=\s*["'])\s*(\d)/.exec(text)?.[1];
  const conf = /pdfaid:conformance(?:>|\s*=\s*["'])\s*([A-Za-z])/.exec(text)?.[1];
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
function outerDict(body: string): string | undefined {
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
  const classic = startxref >= 0 ? classicXref(text, startxref) : null;
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
    const off = classic.offsets.get(infoNum);
    old = (off === undefined ? undefined : outerDict(objectAt(text, off) ?? '')) ?? '';
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
