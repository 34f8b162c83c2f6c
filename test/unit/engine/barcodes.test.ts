import { inflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { render, TemplateError } from '../../support/engine.ts';
import { inflateEntry, readZip } from '../../../engine/zip.ts';
import { docx, p } from './helpers.ts';

// `{%value | qrcode}`, `| code128`, `| ean13`: barcodes as images. The PNGs are read back here and
// checked against the symbologies' own rules (QR finder patterns; EAN-13 decoded digit by digit).

/** Grayscale 8-bit PNG -> rows of booleans (dark). */
function readPng(bytes: Uint8Array): boolean[][] {
  const b = Buffer.from(bytes);
  expect(b.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  const width = b.readUInt32BE(16);
  const height = b.readUInt32BE(20);
  let pos = 8;
  const idat: Buffer[] = [];
  while (pos < b.length) {
    const len = b.readUInt32BE(pos);
    const type = b.toString('latin1', pos + 4, pos + 8);
    if (type === 'IDAT') idat.push(b.subarray(pos + 8, pos + 8 + len));
    pos += 12 + len;
  }
  const raw = inflateSync(Buffer.concat(idat));
  return Array.from({ length: height }, (_, y) => Array.from({ length: width }, (_, x) => raw[y * (width + 1) + 1 + x] === 0));
}

const L = ['0001101', '0011001', '0010011', '0111101', '0100011', '0110001', '0101111', '0111011', '0110111', '0001011'];
const G = L.map((c) =>
  [...c]
    .reverse()
    .map((x) => (x === '0' ? '1' : '0'))
    .join(''),
);
const R = L.map((c) => [...c].map((x) => (x === '0' ? '1' : '0')).join(''));
const PARITY = ['LLLLLL', 'LLGLGG', 'LLGGLG', 'LLGGGL', 'LGLLGG', 'LGGLLG', 'LGGGLL', 'LGLGLG', 'LGLGGL', 'LGGLGL'];

/** Decodes one scan line of an EAN-13 image (module width found from the start guard). */
function decodeEan13(line: boolean[]): string {
  const first = line.indexOf(true);
  let w = 0;
  while (line[first + w] === true) w++;
  const bits = Array.from({ length: 95 }, (_, k) => (line[first + k * w] === true ? '1' : '0')).join('');
  expect(bits.slice(0, 3)).toBe('101');
  expect(bits.slice(45, 50)).toBe('01010');
  expect(bits.slice(92)).toBe('101');
  let parity = '';
  let digits = '';
  for (let k = 0; k < 6; k++) {
    const c = bits.slice(3 + 7 * k, 10 + 7 * k);
    const l = L.indexOf(c);
    parity += l >= 0 ? 'L' : 'G';
    digits += String(l >= 0 ? l : G.indexOf(c));
  }
  for (let k = 0; k < 6; k++) digits += String(R.indexOf(bits.slice(50 + 7 * k, 57 + 7 * k)));
  return String(PARITY.indexOf(parity)) + digits;
}

async function images(tpl: Uint8Array, data: unknown): Promise<Uint8Array[]> {
  const out = await render(tpl, data);
  return [...readZip(out)].filter(([name]) => name.startsWith('word/media/')).map(([, e]) => new Uint8Array(inflateEntry(e)));
}

describe('QR codes and barcodes', () => {
  it('renders a QR code with its three finder patterns', async () => {
    const [qr] = await images(docx(p('{%url | qrcode:120}')), { url: 'https://docgen.test/orders/42' });
    const px = readPng(qr ?? new Uint8Array());
    const size = px.length;
    expect(px[0]?.length).toBe(size);
    // Module size: the first dark run on the row through the top-left finder's centre band.
    const quiet = px.findIndex((r) => r.includes(true));
    const scale = (px[quiet]?.indexOf(false, px[quiet]?.indexOf(true)) ?? 0) - (px[quiet]?.indexOf(true) ?? 0);
    const m = scale / 7;
    const finder = (x0: number, y0: number): string =>
      Array.from({ length: 7 }, (_, y) =>
        Array.from({ length: 7 }, (_, x) => (px[y0 + y * m + Math.floor(m / 2)]?.[x0 + x * m + Math.floor(m / 2)] ? '#' : '.')).join(''),
      ).join('/');
    const pattern = '#######/#.....#/#.###.#/#.###.#/#.###.#/#.....#/#######';
    const far = size - quiet - 7 * m;
    expect(finder(quiet, quiet)).toBe(pattern);
    expect(finder(far, quiet)).toBe(pattern);
    expect(finder(quiet, far)).toBe(pattern);
  });

  it('renders EAN-13 and Code 128 bars that decode to the value', async () => {
    const [ean, code] = await images(docx(p('{%gtin | ean13:50}') + p('{%sku | code128}')), { gtin: '5901234123457', sku: 'ABC-123' });
    const eanPx = readPng(ean ?? new Uint8Array());
    expect(eanPx.length).toBe(50);
    expect(decodeEan13(eanPx[25] ?? [])).toBe('5901234123457');
    const line = readPng(code ?? new Uint8Array())[30] ?? [];
    const runs: number[] = [];
    for (let x = line.indexOf(true), k = x; x < line.lastIndexOf(true) + 1; x = k) {
      while (line[k] === line[x] && k < line.length) k++;
      runs.push((k - x) / 2);
    }
    // Code 128: start B (211214), the value's symbols, checksum, stop (2331112).
    expect(runs.slice(0, 6).join('')).toBe('211214');
    expect(runs.slice(-7).join('')).toBe('2331112');
    expect((runs.length - 13) / 6).toBe('ABC-123'.length + 1);
  });

  it('reports a value the symbology cannot encode at its tag', async () => {
    const err = await render(docx(p('{%gtin | ean13}')), { gtin: '5901234123458' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TemplateError);
    expect((err as TemplateError).errors[0]).toMatchObject({ id: 'filter_failed', location: { part: 'word/document.xml', paragraph: 1 } });
    expect((err as TemplateError).errors[0]?.message).toMatch(/ean13: .*check digit/i);
  });
});
