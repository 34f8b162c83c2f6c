import { inflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { prepareSvg, render, renderSync, TemplateError } from '../../support/engine.ts';
import { inflateEntry, readZip } from '../../../engine/zip.ts';
import { docx, p, pptx, shape, unzipText, xlsxBook } from './helpers.ts';
import { pdfInLibreOffice } from './libreoffice.ts';
import { packageProblems } from './package-check.ts';

// A 200x100 SVG: left half red, right half blue.
const SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" width="200" height="100" viewBox="0 0 20 10">' +
  '<rect x="0" y="0" width="10" height="10" fill="#ff0000"/><rect x="10" y="0" width="10" height="10" fill="#0000ff"/></svg>';
const SVG_URL = `data:image/svg+xml,${encodeURIComponent(SVG)}`;

/** Width, height and the RGBA of pixel (x, y) of an 8-bit RGBA PNG (what resvg writes). */
function pixel(png: Uint8Array, x: number, y: number): { w: number; h: number; rgba: number[] } {
  const b = Buffer.from(png);
  const w = b.readUInt32BE(16);
  const h = b.readUInt32BE(20);
  expect([b[24], b[25]]).toEqual([8, 6]);
  const idat: Buffer[] = [];
  for (let at = 8; at < b.length;) {
    const len = b.readUInt32BE(at);
    if (b.toString('latin1', at + 4, at + 8) === 'IDAT') idat.push(b.subarray(at + 8, at + 8 + len));
    at += 12 + len;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = w * 4 + 1;
  // Undo the PNG filters up to row y.
  const prev = Buffer.alloc(w * 4);
  const cur = Buffer.alloc(w * 4);
  for (let row = 0; row <= y; row++) {
    const f = raw[row * stride] ?? 0;
    for (let i = 0; i < w * 4; i++) {
      const v = raw[row * stride + 1 + i] ?? 0;
      const a = i >= 4 ? (cur[i - 4] ?? 0) : 0;
      const up = prev[i] ?? 0;
      const c = i >= 4 ? (prev[i - 4] ?? 0) : 0;
      let pred = 0;
      if (f === 1) pred = a;
      else if (f === 2) pred = up;
      else if (f === 3) pred = Math.floor((a + up) / 2);
      else if (f === 4) {
        const pa = Math.abs(up - c);
        const pb = Math.abs(a - c);
        const pc = Math.abs(a + up - 2 * c);
        pred = pa <= pb && pa <= pc ? a : pb <= pc ? up : c;
      }
      cur[i] = (v + pred) & 0xff;
    }
    cur.copy(prev);
  }
  return { w, h, rgba: [...cur.subarray(x * 4, x * 4 + 4)] };
}

function binary(bytes: Uint8Array, name: string): Uint8Array {
  const e = readZip(bytes).get(name);
  if (e === undefined) throw new Error(`missing ${name}`);
  return new Uint8Array(inflateEntry(e));
}

describe('SVG images', () => {
  it('renderSync asks for the SVG renderer before it is loaded; render loads it', async () => {
    const err = (() => {
      try {
        renderSync(docx(p('{%logo}')), { logo: SVG_URL });
        return undefined;
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(TemplateError);
    expect((err as TemplateError).errors[0]?.message).toContain('prepareSvg');
    // render() loads the renderer by itself; renderSync works from then on.
    const out = await render(docx(p('{%logo}')), { logo: SVG_URL });
    expect(unzipText(out).get('word/document.xml')).toContain('<asvg:svgBlip');
    expect(unzipText(renderSync(docx(p('{%logo}')), { logo: SVG_URL })).get('word/document.xml')).toContain('<asvg:svgBlip');
    await prepareSvg();
  });

  it('writes a PNG fallback with the SVG in the asvg:svgBlip extension, and LibreOffice draws it', async () => {
    const out = await render(docx(p('Logo: {%logo}') + p('After')), { logo: SVG_URL });
    expect(packageProblems(out)).toEqual([]);
    const files = unzipText(out);
    const doc = files.get('word/document.xml') ?? '';
    const m =
      /<a:blip [^>]*r:embed="([^"]+)"><a:extLst><a:ext uri="\{96DAC541-7B7A-43D3-8B79-37D633B846F1\}"><asvg:svgBlip xmlns:asvg="http:\/\/schemas\.microsoft\.com\/office\/drawing\/2016\/SVG\/main" r:embed="([^"]+)"\/>/.exec(
        doc,
      );
    expect(m).not.toBeNull();
    // Displayed at the SVG's own size: 200 x 100 px.
    expect(doc).toContain(`<wp:extent cx="${200 * 9525}" cy="${100 * 9525}"/>`);
    const rels = files.get('word/_rels/document.xml.rels') ?? '';
    const target = (id: string): string => `word/${new RegExp(`Id="${id}"[^>]*Target="([^"]+)"`).exec(rels)?.[1] ?? ''}`;
    const pngName = target(m?.[1] ?? '');
    const svgName = target(m?.[2] ?? '');
    expect(pngName).toMatch(/\.png$/);
    expect(svgName).toMatch(/\.svg$/);
    expect(files.get(svgName)).toContain('<rect x="10" y="0" width="10" height="10" fill="#0000ff"/>');
    const ct = files.get('[Content_Types].xml') ?? '';
    expect(ct).toContain('<Default Extension="svg" ContentType="image/svg+xml"/>');
    expect(ct).toContain('<Default Extension="png" ContentType="image/png"/>');
    // The fallback is the SVG drawn at twice its size: red on the left, blue on the right.
    const png = binary(out, pngName);
    const left = pixel(png, 10, 50);
    expect([left.w, left.h]).toEqual([400, 200]);
    expect(left.rgba).toEqual([255, 0, 0, 255]);
    expect(pixel(png, 390, 150).rgba).toEqual([0, 0, 255, 255]);

    const pdf = await pdfInLibreOffice(out, 'docx');
    expect(pdf.text).toContain('Logo:');
    expect(pdf.text).toContain('After');
    // LibreOffice draws the PNG fallback: the picture in the PDF is the 400 x 200 rendering.
    const raw = Buffer.from(pdf.pdf).toString('latin1');
    expect(raw).toMatch(/\/Subtype\s*\/Image/);
    expect(raw).toMatch(/\/Width 400\b/);
    expect(raw).toMatch(/\/Height 200\b/);
  });

  it('accepts base64 SVG bytes in a box, in slides and sheets too', async () => {
    const b64 = `data:image/svg+xml;base64,${Buffer.from(SVG).toString('base64')}`;
    const doc = await render(docx(p('{%logo}')), { logo: { data: Buffer.from(SVG), width: 50 } });
    expect(unzipText(doc).get('word/document.xml')).toContain(`<wp:extent cx="${50 * 9525}" cy="${25 * 9525}"/>`);

    const deck = await render(pptx([shape(2, '{%logo}')]), { logo: b64 });
    expect(packageProblems(deck)).toEqual([]);
    const slide = unzipText(deck).get('ppt/slides/slide1.xml') ?? '';
    expect(slide).toMatch(
      /<p:blipFill><a:blip r:embed="[^"]+"><a:extLst><a:ext uri="\{96DAC541-7B7A-43D3-8B79-37D633B846F1\}"><asvg:svgBlip [^>]*r:embed="[^"]+"\/>/,
    );

    const book = await render(
      xlsxBook({ strings: ['{%logo}'], sheets: [{ name: 'S', rows: '<row r="1"><c r="A1" t="s"><v>0</v></c></row>' }] }),
      { logo: b64 },
    );
    expect(packageProblems(book)).toEqual([]);
    const drawing = [...unzipText(book)].find(([n]) => n.startsWith('xl/drawings/') && !n.includes('_rels'))?.[1] ?? '';
    expect(drawing).toContain('<asvg:svgBlip');
  });

  it('removes scripts and outside references, and refuses DTDs', async () => {
    const unsafe =
      '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="10" height="10" onload="alert(1)"><script>if (a/>b) alert(2)</script><foreignObject/>' +
      '<image href="http://169.254.169.254/latest" width="5" height="5"/><image xlink:href="data:image/png;base64,AAAA"/><rect width="10" height="10" fill="url(#g)"/><use href="#a"/></svg>';
    const out = await render(docx(p('{%logo}')), { logo: Buffer.from(unsafe) });
    const svg = [...unzipText(out)].find(([n]) => n.endsWith('.svg'))?.[1] ?? '';
    expect(svg).not.toContain('169.254');
    expect(svg).not.toContain('script');
    expect(svg).not.toContain('onload');
    expect(svg).not.toContain('foreignObject');
    expect(svg).toContain('xlink:href="data:image/png;base64,AAAA"');
    expect(svg).toContain('fill="url(#g)"');
    expect(svg).toContain('<use href="#a"/>');

    const bomb =
      '<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY a "aaaa">]><svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><text>&a;</text></svg>';
    const err = await render(docx(p('{%logo}')), { logo: Buffer.from(bomb) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TemplateError);
    expect((err as TemplateError).errors.map((e) => e.id)).toEqual(['image_invalid']);
  });
});
