// A batch's combined zip: every row's document, in row order, written as a stream (one document in memory
// at a time, whatever the number of rows). Entries are stored, not deflated: docx, xlsx, pptx are zip files
// already and pdf streams are compressed, so deflating again costs CPU for nothing. ZIP64 records are written
// when the archive needs them (more than 65,535 entries, or past 4 GiB), as Info-ZIP, 7-Zip and Python read.
import { Readable } from 'node:stream';
import { crc32 } from 'node:zlib';

export interface ZipEntry {
  /** Path inside the archive, `/`-separated (sanitised: no absolute paths, no `..`). */
  name: string;
  bytes: Uint8Array;
  mtime?: Date;
}

const U16 = 0xffff;
const U32 = 0xffffffff;

/** A name that every unzip extracts inside its target directory. */
export function safeEntryName(name: string): string {
  const parts = name
    .replace(/\\/g, '/')
    .split('/')
    .map((p) => p.replace(/[\u0000-\u001f]/g, '_').trim())
    .filter((p) => p !== '' && p !== '.' && p !== '..');
  return parts.join('/') || 'document';
}

/** Entry names made unique the way file managers do: `a.pdf`, `a (2).pdf`, `a (3).pdf`. */
export function uniqueNames(): (name: string) => string {
  const seen = new Set<string>();
  return (name) => {
    let candidate = name;
    const dot = name.lastIndexOf('.');
    const [stem, ext] = dot > name.lastIndexOf('/') + 1 ? [name.slice(0, dot), name.slice(dot)] : [name, ''];
    for (let n = 2; seen.has(candidate.toLowerCase()); n++) candidate = `${stem} (${n})${ext}`;
    seen.add(candidate.toLowerCase());
    return candidate;
  };
}

function dosTime(d: Date): { time: number; date: number } {
  const year = Math.max(1980, d.getUTCFullYear());
  return {
    time: (d.getUTCHours() << 11) | (d.getUTCMinutes() << 5) | Math.floor(d.getUTCSeconds() / 2),
    date: ((year - 1980) << 9) | ((d.getUTCMonth() + 1) << 5) | d.getUTCDate(),
  };
}

interface Central {
  name: Buffer;
  crc: number;
  size: number;
  offset: number;
  time: number;
  date: number;
}

/** The archive of `entries` (read one at a time, in order), as a byte stream. */
export function zipStream(entries: AsyncIterable<ZipEntry> | Iterable<ZipEntry>): Readable {
  return Readable.from(zipChunks(entries), { objectMode: false });
}

async function* zipChunks(entries: AsyncIterable<ZipEntry> | Iterable<ZipEntry>): AsyncGenerator<Buffer> {
  const central: Central[] = [];
  let offset = 0;
  for await (const entry of entries) {
    const name = Buffer.from(safeEntryName(entry.name), 'utf8');
    const { time, date } = dosTime(entry.mtime ?? new Date());
    const size = entry.bytes.byteLength;
    const crc = crc32(entry.bytes);
    const zip64 = size >= U32 || offset >= U32;
    // Local header: sizes in a ZIP64 extra field when they do not fit.
    const extra = zip64 ? zip64Extra([size, size]) : Buffer.alloc(0);
    const h = Buffer.alloc(30);
    h.writeUInt32LE(0x04034b50, 0);
    h.writeUInt16LE(zip64 ? 45 : 20, 4); // version needed
    h.writeUInt16LE(0x0800, 6); // UTF-8 names
    h.writeUInt16LE(0, 8); // stored
    h.writeUInt16LE(time, 10);
    h.writeUInt16LE(date, 12);
    h.writeUInt32LE(crc, 14);
    h.writeUInt32LE(zip64 ? U32 : size, 18);
    h.writeUInt32LE(zip64 ? U32 : size, 22);
    h.writeUInt16LE(name.length, 26);
    h.writeUInt16LE(extra.length, 28);
    central.push({ name, crc, size, offset, time, date });
    yield Buffer.concat([h, name, extra]);
    yield Buffer.from(entry.bytes.buffer, entry.bytes.byteOffset, entry.bytes.byteLength);
    offset += h.length + name.length + extra.length + size;
  }
  const cdStart = offset;
  for (const c of central) {
    const big = [c.size >= U32 ? c.size : undefined, c.size >= U32 ? c.size : undefined, c.offset >= U32 ? c.offset : undefined].filter(
      (v): v is number => v !== undefined,
    );
    const extra = big.length > 0 ? zip64Extra(big) : Buffer.alloc(0);
    const h = Buffer.alloc(46);
    h.writeUInt32LE(0x02014b50, 0);
    h.writeUInt16LE((3 << 8) | 45, 4); // made by: Unix, 4.5
    h.writeUInt16LE(big.length > 0 ? 45 : 20, 6);
    h.writeUInt16LE(0x0800, 8);
    h.writeUInt16LE(0, 10);
    h.writeUInt16LE(c.time, 12);
    h.writeUInt16LE(c.date, 14);
    h.writeUInt32LE(c.crc, 16);
    h.writeUInt32LE(Math.min(c.size, U32), 20);
    h.writeUInt32LE(Math.min(c.size, U32), 24);
    h.writeUInt16LE(c.name.length, 28);
    h.writeUInt16LE(extra.length, 30);
    h.writeUInt16LE(0, 32); // comment
    h.writeUInt16LE(0, 34); // disk
    h.writeUInt16LE(0, 36); // internal attributes
    h.writeUInt32LE((0o100644 << 16) >>> 0, 38); // -rw-r--r--
    h.writeUInt32LE(Math.min(c.offset, U32), 42);
    yield Buffer.concat([h, c.name, extra]);
    offset += h.length + c.name.length + extra.length;
  }
  const cdSize = offset - cdStart;
  const count = central.length;
  if (count >= U16 || cdStart >= U32 || cdSize >= U32) {
    const z = Buffer.alloc(56);
    z.writeUInt32LE(0x06064b50, 0);
    z.writeBigUInt64LE(44n, 4);
    z.writeUInt16LE((3 << 8) | 45, 12);
    z.writeUInt16LE(45, 14);
    z.writeUInt32LE(0, 16);
    z.writeUInt32LE(0, 20);
    z.writeBigUInt64LE(BigInt(count), 24);
    z.writeBigUInt64LE(BigInt(count), 32);
    z.writeBigUInt64LE(BigInt(cdSize), 40);
    z.writeBigUInt64LE(BigInt(cdStart), 48);
    const locator = Buffer.alloc(20);
    locator.writeUInt32LE(0x07064b50, 0);
    locator.writeUInt32LE(0, 4);
    locator.writeBigUInt64LE(BigInt(offset), 8);
    locator.writeUInt32LE(1, 16);
    yield Buffer.concat([z, locator]);
  }
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(Math.min(count, U16), 8);
  end.writeUInt16LE(Math.min(count, U16), 10);
  end.writeUInt32LE(Math.min(cdSize, U32), 12);
  end.writeUInt32LE(Math.min(cdStart, U32), 16);
  yield end;
}

function zip64Extra(values: number[]): Buffer {
  const b = Buffer.alloc(4 + 8 * values.length);
  b.writeUInt16LE(0x0001, 0);
  b.writeUInt16LE(8 * values.length, 2);
  values.forEach((v, i) => b.writeBigUInt64LE(BigInt(v), 4 + 8 * i));
  return b;
}
