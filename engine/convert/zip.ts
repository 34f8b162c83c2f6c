/**
 * Minimal zip reader/writer for OOXML packages (node:zlib only). Kept private to the converter so it
 * does not depend on the template engine's zip code while that is changing.
 *
 * Reading is defensive (GUIDE §5): entry count, per-entry and total inflated size are capped, names
 * with `..`, absolute paths or backslashes are refused. No zip64, no encryption, stored or deflated
 * entries only: that covers every file Office or LibreOffice writes.
 */
import { crc32, deflateRawSync, inflateRawSync } from 'node:zlib';
import { ConvertError } from './errors.ts';

export interface ZipEntry {
  name: string;
  method: number; // 0 stored, 8 deflate
  crc: number;
  compressedSize: number;
  size: number;
  /** The compressed bytes as found in the archive (a view, not a copy). */
  raw: Uint8Array;
}

export interface ZipLimits {
  maxEntries: number;
  maxEntrySize: number;
  maxTotalSize: number;
}

export const DEFAULT_ZIP_LIMITS: ZipLimits = {
  maxEntries: 10_000,
  maxEntrySize: 256 * 1024 * 1024,
  maxTotalSize: 1024 * 1024 * 1024,
};

function bad(msg: string): never {
  throw new ConvertError('BAD_INPUT', `invalid zip package: ${msg}`);
}

export function readZip(bytes: Uint8Array, limits: ZipLimits = DEFAULT_ZIP_LIMITS): ZipEntry[] {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const len = bytes.byteLength;
  if (len < 22) bad('too short');
  // End of central directory: last 22 bytes plus up to 64 KiB of comment.
  let eocd = -1;
  for (let i = len - 22; i >= Math.max(0, len - 22 - 0xffff); i--) {
    if (dv.getUint32(i, true) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) bad('no end of central directory');
  const count = dv.getUint16(eocd + 10, true);
  const cdSize = dv.getUint32(eocd + 12, true);
  const cdOffset = dv.getUint32(eocd + 16, true);
  if (count === 0xffff || cdOffset === 0xffffffff) bad('zip64 is not supported');
  if (count > limits.maxEntries) bad(`${count} entries (limit ${limits.maxEntries})`);
  if (cdOffset + cdSize > len) bad('central directory out of range');
  const entries: ZipEntry[] = [];
  const seen = new Set<string>();
  let total = 0;
  let p = cdOffset;
  const dec = new TextDecoder('utf-8', { fatal: false });
  for (let i = 0; i < count; i++) {
    if (p + 46 > len || dv.getUint32(p, true) !== 0x02014b50) bad('bad central directory entry');
    const flags = dv.getUint16(p + 8, true);
    const method = dv.getUint16(p + 10, true);
    const crc = dv.getUint32(p + 16, true);
    const compressedSize = dv.getUint32(p + 20, true);
    const size = dv.getUint32(p + 24, true);
    const nameLen = dv.getUint16(p + 28, true);
    const extraLen = dv.getUint16(p + 30, true);
    const commentLen = dv.getUint16(p + 32, true);
    const localOffset = dv.getUint32(p + 42, true);
    const name = dec.decode(bytes.subarray(p + 46, p + 46 + nameLen));
    p += 46 + nameLen + extraLen + commentLen;
    if (flags & 1) bad(`encrypted entry ${name}`);
    if (method !== 0 && method !== 8) bad(`unsupported compression method ${method} in ${name}`);
    if (name.startsWith('/') || name.includes('\\') || name.split('/').includes('..')) bad(`unsafe entry name ${name}`);
    if (seen.has(name)) bad(`duplicate entry ${name}`);
    seen.add(name);
    if (size > limits.maxEntrySize) bad(`entry ${name} inflates to ${size} bytes`);
    total += size;
    if (total > limits.maxTotalSize) bad('package inflates beyond the size limit');
    if (localOffset + 30 > len || dv.getUint32(localOffset, true) !== 0x04034b50) bad(`bad local header for ${name}`);
    const lNameLen = dv.getUint16(localOffset + 26, true);
    const lExtraLen = dv.getUint16(localOffset + 28, true);
    const start = localOffset + 30 + lNameLen + lExtraLen;
    if (start + compressedSize > len) bad(`entry ${name} out of range`);
    entries.push({ name, method, crc, compressedSize, size, raw: bytes.subarray(start, start + compressedSize) });
  }
  return entries;
}

/** Inflates one entry, enforcing its declared size (a lying header cannot inflate past it). */
export function entryData(e: ZipEntry): Uint8Array {
  if (e.method === 0) return e.raw;
  try {
    const out = inflateRawSync(e.raw, { maxOutputLength: Math.max(e.size, 1) });
    if (out.byteLength !== e.size) bad(`entry ${e.name} size mismatch`);
    return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
  } catch (err) {
    if (err instanceof ConvertError) throw err;
    return bad(`entry ${e.name} does not inflate: ${(err as Error).message}`);
  }
}

export function entryText(e: ZipEntry): string {
  return new TextDecoder('utf-8').decode(entryData(e));
}

/** A new entry from content (deflated) — for parts the sanitizer rewrote or added. */
export function makeEntry(name: string, content: Uint8Array | string): ZipEntry {
  const data = typeof content === 'string' ? new TextEncoder().encode(content) : content;
  const deflated = deflateRawSync(data, { level: 6 });
  return {
    name,
    method: 8,
    crc: crc32(data) >>> 0,
    compressedSize: deflated.byteLength,
    size: data.byteLength,
    raw: new Uint8Array(deflated.buffer, deflated.byteOffset, deflated.byteLength),
  };
}

/** Writes entries in order; unchanged entries keep their compressed bytes (no re-deflate). */
export function writeZip(entries: readonly ZipEntry[]): Uint8Array {
  const enc = new TextEncoder();
  const names = entries.map((e) => enc.encode(e.name));
  let size = 22;
  entries.forEach((e, i) => {
    const n = names[i]!.byteLength;
    size += 30 + n + e.compressedSize + 46 + n;
  });
  const out = new Uint8Array(size);
  const dv = new DataView(out.buffer);
  let p = 0;
  const offsets: number[] = [];
  // Fixed DOS timestamp (1980-01-01): output bytes depend only on content.
  const dosTime = 0;
  const dosDate = (0 << 9) | (1 << 5) | 1;
  entries.forEach((e, i) => {
    const name = names[i]!;
    offsets.push(p);
    dv.setUint32(p, 0x04034b50, true);
    dv.setUint16(p + 4, 20, true);
    dv.setUint16(p + 6, 0x0800, true); // UTF-8 names
    dv.setUint16(p + 8, e.method, true);
    dv.setUint16(p + 10, dosTime, true);
    dv.setUint16(p + 12, dosDate, true);
    dv.setUint32(p + 14, e.crc, true);
    dv.setUint32(p + 18, e.compressedSize, true);
    dv.setUint32(p + 22, e.size, true);
    dv.setUint16(p + 26, name.byteLength, true);
    dv.setUint16(p + 28, 0, true);
    out.set(name, p + 30);
    out.set(e.raw, p + 30 + name.byteLength);
    p += 30 + name.byteLength + e.compressedSize;
  });
  const cdStart = p;
  entries.forEach((e, i) => {
    const name = names[i]!;
    dv.setUint32(p, 0x02014b50, true);
    dv.setUint16(p + 4, 20, true);
    dv.setUint16(p + 6, 20, true);
    dv.setUint16(p + 8, 0x0800, true);
    dv.setUint16(p + 10, e.method, true);
    dv.setUint16(p + 12, dosTime, true);
    dv.setUint16(p + 14, dosDate, true);
    dv.setUint32(p + 16, e.crc, true);
    dv.setUint32(p + 20, e.compressedSize, true);
    dv.setUint32(p + 24, e.size, true);
    dv.setUint16(p + 28, name.byteLength, true);
    // extra, comment, disk, internal attrs, external attrs: zero
    dv.setUint32(p + 42, offsets[i]!, true);
    out.set(name, p + 46);
    p += 46 + name.byteLength;
  });
  dv.setUint32(p, 0x06054b50, true);
  dv.setUint16(p + 8, entries.length, true);
  dv.setUint16(p + 10, entries.length, true);
  dv.setUint32(p + 12, p - cdStart, true);
  dv.setUint32(p + 16, cdStart, true);
  return out;
}
