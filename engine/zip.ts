import { crc32, deflateRawSync, inflateRawSync } from 'node:zlib';
import { TemplateError } from './errors.ts';
import { DEFAULT_TEMPLATE_LIMITS, limitError, type TemplateLimits } from './limits.ts';

/**
 * Minimal zip reader/writer for Office packages. Unchanged entries are copied compressed (no
 * inflate/deflate round trip), which is most of a package; only templated parts are re-deflated.
 */

/** The package limits (engine/limits.ts): one policy for the engine and the converter. */
export type ZipLimits = Pick<TemplateLimits, 'maxParts' | 'maxPartBytes' | 'maxTotalBytes' | 'maxRatio'>;

export const DEFAULT_LIMITS: ZipLimits = DEFAULT_TEMPLATE_LIMITS;

/** The ratio check applies to entries inflating past this size only (small parts compress very well). */
const MIN_RATIO_BYTES = 1024 * 1024;

export interface ZipEntry {
  name: string;
  method: number;
  crc: number;
  compressedSize: number;
  size: number;
  /** Compressed bytes as stored in the archive. */
  raw: Uint8Array;
}

const zipError = (message: string): TemplateError => TemplateError.single('invalid_package', message);

function u16(b: Uint8Array, p: number): number {
  return (b[p] ?? 0) | ((b[p + 1] ?? 0) << 8);
}
function u32(b: Uint8Array, p: number): number {
  return ((b[p] ?? 0) | ((b[p + 1] ?? 0) << 8) | ((b[p + 2] ?? 0) << 16)) + (b[p + 3] ?? 0) * 0x1000000;
}

export function isSafeEntryName(name: string): boolean {
  if (name.length === 0 || name.startsWith('/') || name.startsWith('\\') || /^[a-zA-Z]:/.test(name)) return false;
  if (name.includes('\0')) return false;
  return !name.split(/[/\\]/).some((seg) => seg === '..');
}

export function readZip(bytes: Uint8Array, limits: ZipLimits = DEFAULT_LIMITS): Map<string, ZipEntry> {
  const len = bytes.length;
  if (len < 22) throw zipError('the template is not a zip package (too short)');
  let eocd = -1;
  const stop = Math.max(0, len - 22 - 0xffff);
  for (let i = len - 22; i >= stop; i--) {
    if (bytes[i] === 0x50 && bytes[i + 1] === 0x4b && bytes[i + 2] === 0x05 && bytes[i + 3] === 0x06) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw zipError('the template is not a zip package (no end of central directory)');
  const count = u16(bytes, eocd + 10);
  const cdSize = u32(bytes, eocd + 12);
  let p = u32(bytes, eocd + 16);
  if (count === 0xffff || p === 0xffffffff || cdSize === 0xffffffff) throw zipError('zip64 packages are not supported');
  if (count > limits.maxParts) throw limitError('maxParts', `the package has ${count} parts`, limits.maxParts);
  if (p + cdSize > eocd) throw zipError('the zip central directory is out of bounds');

  const entries = new Map<string, ZipEntry>();
  let declaredTotal = 0;
  for (let n = 0; n < count; n++) {
    if (p + 46 > len || u32(bytes, p) !== 0x02014b50) throw zipError('corrupt zip central directory');
    const flags = u16(bytes, p + 8);
    const method = u16(bytes, p + 10);
    const crc = u32(bytes, p + 16);
    const compressedSize = u32(bytes, p + 20);
    const size = u32(bytes, p + 24);
    const nlen = u16(bytes, p + 28);
    const xlen = u16(bytes, p + 30);
    const clen = u16(bytes, p + 32);
    const local = u32(bytes, p + 42);
    if (p + 46 + nlen > len) throw zipError('corrupt zip central directory');
    const name = Buffer.from(bytes.buffer, bytes.byteOffset + p + 46, nlen).toString('utf8');
    p += 46 + nlen + xlen + clen;
    if (!isSafeEntryName(name))
      throw TemplateError.single('unsafe_entry_name', `zip entry name ${JSON.stringify(name)} is absolute or escapes the package`);
    if (flags & 1) throw TemplateError.single('encrypted_package', `zip entry ${name} is encrypted`);
    if (method !== 0 && method !== 8) throw zipError(`zip entry ${name} uses unsupported compression method ${method}`);
    if (entries.has(name)) throw zipError(`duplicate zip entry ${name}`);
    if (name.endsWith('/')) continue;
    if (local + 30 > len || u32(bytes, local) !== 0x04034b50) throw zipError(`corrupt local header for zip entry ${name}`);
    const start = local + 30 + u16(bytes, local + 26) + u16(bytes, local + 28);
    if (start + compressedSize > len) throw zipError(`zip entry ${name} is truncated`);
    if (method === 0 && compressedSize !== size) throw zipError(`stored zip entry ${name} has inconsistent sizes`);
    checkDeclared(name, size, compressedSize, limits);
    declaredTotal += size;
    if (declaredTotal > limits.maxTotalBytes) {
      throw limitError('maxTotalBytes', `the package expands to more than ${limits.maxTotalBytes} bytes`, limits.maxTotalBytes);
    }
    entries.set(name, { name, method, crc, compressedSize, size, raw: bytes.subarray(start, start + compressedSize) });
  }
  return entries;
}

function checkDeclared(name: string, size: number, compressedSize: number, limits: ZipLimits): void {
  if (size > limits.maxPartBytes) {
    throw limitError('maxPartBytes', `part ${name} expands to ${size} bytes`, limits.maxPartBytes, { part: name });
  }
  if (size > MIN_RATIO_BYTES && size > compressedSize * limits.maxRatio) {
    throw limitError(
      'maxRatio',
      `part ${name} expands ${Math.round(size / Math.max(1, compressedSize))} times (possible zip bomb)`,
      limits.maxRatio,
      { part: name },
    );
  }
}

/**
 * Inflates one entry. The declared size is the hard cap while inflating, so a header that lies
 * about the size cannot make us allocate more than the limits checked in readZip.
 */
export function inflateEntry(entry: ZipEntry): Buffer {
  let out: Buffer;
  if (entry.method === 0) {
    out = Buffer.from(entry.raw.buffer, entry.raw.byteOffset, entry.raw.length);
  } else {
    try {
      out = inflateRawSync(entry.raw, { maxOutputLength: Math.max(entry.size, 1) });
    } catch {
      throw zipError(`zip entry ${entry.name} is corrupt or larger than declared`);
    }
  }
  if (out.length !== entry.size) throw zipError(`zip entry ${entry.name} does not match its declared size`);
  if (crc32(out) >>> 0 !== entry.crc) throw zipError(`zip entry ${entry.name} fails its CRC check`);
  return out;
}

/** A part of a package being written: its bytes in hand (`data`, deflated when written) or an entry copied
 *  compressed from another package. A render's parts, before they are zipped (engine/index.ts renderParts),
 *  are read as they are by the sanitizer and the cost estimate, without a zip round trip. */
export type OutEntry = { name: string; data: Uint8Array; level?: number } | { name: string; entry: ZipEntry };

/** Inflated bytes of entries up to this size are kept with the entry (entryBytes). */
const KEEP_INFLATED_BYTES = 1024 * 1024;
const inflated = new WeakMap<ZipEntry, Buffer>();

/** inflateEntry, kept while the entry lives (up to 1 MB inflated, or stored at any size): a cached template's parts are copied into every
 *  merged document, and the merge's sanitizer and estimate read each of them for every document. The bytes
 *  are shared: read them, never write to them. */
export function entryBytes(entry: ZipEntry): Buffer {
  let bytes = inflated.get(entry);
  if (bytes === undefined) {
    bytes = inflateEntry(entry);
    // A stored entry's bytes are a view of the package (nothing to keep but its CRC, checked once).
    if (entry.size <= KEEP_INFLATED_BYTES || entry.method === 0) inflated.set(entry, bytes);
  }
  return bytes;
}

/** A part's inflated bytes: those in hand, or its entry's (entryBytes: shared, read-only). */
export function outEntryData(e: OutEntry): Buffer {
  return 'entry' in e ? entryBytes(e.entry) : Buffer.from(e.data.buffer, e.data.byteOffset, e.data.byteLength);
}

const DOS_TIME = 0;
const DOS_DATE = (1 << 5) | 1; // 1980-01-01: fixed so identical inputs give identical outputs

export function writeZip(entries: OutEntry[], defaultLevel = 6): Uint8Array {
  const chunks: Uint8Array[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    let method: number;
    let crc: number;
    let size: number;
    let body: Uint8Array;
    if ('entry' in e) {
      ({ method, crc, size } = e.entry);
      body = e.entry.raw;
    } else {
      size = e.data.length;
      crc = crc32(e.data) >>> 0;
      if (size < 64 || e.level === 0) {
        method = 0;
        body = e.data;
      } else {
        method = 8;
        body = deflateRawSync(e.data, { level: e.level ?? defaultLevel });
      }
    }
    const name = Buffer.from(e.name, 'utf8');
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x0800, 6); // UTF-8 names
    local.writeUInt16LE(method, 8);
    local.writeUInt16LE(DOS_TIME, 10);
    local.writeUInt16LE(DOS_DATE, 12);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(0, 28);
    const cd = Buffer.alloc(46);
    cd.writeUInt32LE(0x02014b50, 0);
    cd.writeUInt16LE(20, 4);
    cd.writeUInt16LE(20, 6);
    cd.writeUInt16LE(0x0800, 8);
    cd.writeUInt16LE(method, 10);
    cd.writeUInt16LE(DOS_TIME, 12);
    cd.writeUInt16LE(DOS_DATE, 14);
    cd.writeUInt32LE(crc, 16);
    cd.writeUInt32LE(body.length, 20);
    cd.writeUInt32LE(size, 24);
    cd.writeUInt16LE(name.length, 28);
    cd.writeUInt32LE(offset, 42);
    central.push(cd, name);
    chunks.push(local, name, body);
    offset += 30 + name.length + body.length;
  }
  let cdSize = 0;
  for (const c of central) cdSize += c.length;
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cdSize, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...chunks, ...central, end]);
}

/** Compresses data once into an entry that writeZip can copy as is (for parts fixed at compile time). */
export function makeEntry(name: string, data: Uint8Array, level = 6): ZipEntry {
  const raw = deflateRawSync(data, { level });
  return { name, method: 8, crc: crc32(data) >>> 0, compressedSize: raw.length, size: data.length, raw };
}
