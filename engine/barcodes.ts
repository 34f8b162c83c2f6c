import { createRequire } from 'node:module';
import { deflateSync } from 'node:zlib';

/**
 * QR codes and barcodes (Code 128, EAN-13) as PNG images, for `{%value | qrcode}` and friends. The
 * symbols are encoded by bwip-js (a maintained port of Barcode Writer in Pure PostScript), which gives
 * the module matrix or bar widths synchronously; the PNG is drawn here (crisp, integer module size,
 * with the quiet zone the symbology requires). Linear codes are bars only, without the human-readable
 * line. bwip-js is loaded on first use, so templates without barcodes do not pay for it.
 */

interface Raw2D {
  pixs: number[];
  pixx: number;
  pixy: number;
}
interface Raw1D {
  sbs: number[];
}
interface Bwip {
  raw: (bcid: string, text: string, opts: Record<string, unknown>) => Array<Raw2D | Raw1D>;
}

let bwip: Bwip | undefined;
function encoder(): Bwip {
  bwip ??= createRequire(import.meta.url)('bwip-js') as Bwip;
  return bwip;
}

export class BarcodeError extends Error {}

export interface BarcodeImage {
  data: Uint8Array;
  width: number;
  height: number;
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(buf: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of buf) c = (CRC_TABLE[(c ^ b) & 0xff] ?? 0) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Uint8Array): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

/** 8-bit grayscale PNG from a dark(x, y) predicate. */
function png(width: number, height: number, dark: (x: number, y: number) => boolean): Uint8Array {
  const rows = Buffer.alloc((width + 1) * height, 0xff);
  for (let y = 0; y < height; y++) {
    rows[y * (width + 1)] = 0;
    for (let x = 0; x < width; x++) if (dark(x, y)) rows[y * (width + 1) + 1 + x] = 0;
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8;
  ihdr[9] = 0;
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(rows)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

function encode(bcid: string, text: string): Raw2D | Raw1D {
  if (text === '') throw new BarcodeError('there is no value to encode');
  if (text.length > 2000) throw new BarcodeError('the value is too long for a barcode (2000 characters at most)');
  try {
    const r = encoder().raw(bcid, text, {})[0];
    if (r === undefined) throw new BarcodeError('nothing was encoded');
    return r;
  } catch (e) {
    if (e instanceof BarcodeError) throw e;
    // bwip-js errors read like "bwipp.ean13badCheckDigit: Incorrect EAN-13 check digit provided".
    throw new BarcodeError((e instanceof Error ? e.message : String(e)).replace(/^bwipp?\.\w+:\s*/, ''));
  }
}

/** QR code fitted to `sizePx` (default 150): 4 modules of quiet zone. */
export function qrCode(text: string, sizePx = 150): BarcodeImage {
  const r = encode('qrcode', text) as Raw2D;
  const quiet = 4;
  const modules = r.pixx + 2 * quiet;
  const scale = Math.max(1, Math.floor(Math.max(sizePx, modules) / modules));
  const side = modules * scale;
  const data = png(side, side, (x, y) => {
    const mx = Math.floor(x / scale) - quiet;
    const my = Math.floor(y / scale) - quiet;
    return mx >= 0 && my >= 0 && mx < r.pixx && my < r.pixy && r.pixs[my * r.pixx + mx] === 1;
  });
  return { data, width: sizePx, height: sizePx };
}

/** Code 128 or EAN-13 bars, `heightPx` tall (default 60), 2 px per module, 10 modules of quiet zone. */
export function linearCode(kind: 'code128' | 'ean13', text: string, heightPx = 60): BarcodeImage {
  const r = encode(kind, text) as Raw1D;
  const quiet = kind === 'ean13' ? 11 : 10;
  const bars: boolean[] = [];
  r.sbs.forEach((w, k) => {
    for (let i = 0; i < w; i++) bars.push(k % 2 === 0);
  });
  const scale = 2;
  const width = (bars.length + 2 * quiet) * scale;
  const height = Math.max(10, Math.round(heightPx));
  const data = png(width, height, (x) => bars[Math.floor(x / scale) - quiet] === true);
  return { data, width, height };
}
