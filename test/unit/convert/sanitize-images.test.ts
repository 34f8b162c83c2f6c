// Images are judged by what their bytes are, not by their name, path or content type (issue 25 §1): a
// gzip-compressed SVG is inflated and cleaned like any SVG, an SVG may point only inside itself, an image
// part that is not a known raster image, SVG, EMF or WMF is replaced by an empty image, a metafile that
// embeds a reference goes the same way, and a macro relationship refuses the package whatever part it names.
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { ConvertError } from '../../../converter/index.ts';
import { entryData, readZip } from '../../../converter/zip.ts';
import { makeDocx, para, pictureRun, png } from '../../integration/convert/fixtures.ts';
import { sanitizeBothWays } from '../../support/package-parts.ts';

const REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const MS_REL = 'http://schemas.microsoft.com/office/2006/relationships';

function bytesOf(docx: Uint8Array, name: string): Uint8Array {
  const e = readZip(docx).find((x) => x.name === name);
  if (!e) throw new Error(`no part ${name}`);
  return entryData(e);
}
const textOf = (docx: Uint8Array, name: string) => Buffer.from(bytesOf(docx, name)).toString('utf8');

/** A docx whose picture is the part word/media/<name> (referenced by an image relationship). */
function withImage(name: string, bytes: Uint8Array | string, extra: Record<string, Uint8Array | string> = {}): Uint8Array {
  return makeDocx({
    body: para('x') + pictureRun('rIdImg', 'embed', 1),
    rels: `<Relationship Id="rIdImg" Type="${REL}/image" Target="media/${name}"/>`,
    extra: { [`word/media/${name}`]: bytes, ...extra },
  });
}

const svg = (inner: string) =>
  `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="10" height="10">${inner}</svg>`;
const EMPTY_PNG_HEAD = [0x89, 0x50, 0x4e, 0x47];
const isEmptyPng = (b: Uint8Array) => EMPTY_PNG_HEAD.every((x, i) => b[i] === x) && b.length < 100;

function refusal(docx: Uint8Array): string {
  try {
    sanitizeBothWays(docx, 'docx');
  } catch (e) {
    expect(e).toBeInstanceOf(ConvertError);
    expect((e as ConvertError).code).toBe('BAD_INPUT');
    return (e as ConvertError).message;
  }
  throw new Error('expected the package to be refused');
}

// --- metafiles built here: just enough records for what LibreOffice and the sanitizer read ----------------

function emf(records: Buffer[]): Uint8Array {
  const header = Buffer.alloc(88);
  header.writeUInt32LE(1, 0); // EMR_HEADER
  header.writeUInt32LE(88, 4);
  header.write(' EMF', 40, 'latin1');
  header.writeUInt32LE(0x10000, 44);
  const eof = Buffer.alloc(20);
  eof.writeUInt32LE(14, 0);
  eof.writeUInt32LE(20, 4);
  eof.writeUInt32LE(16, 12);
  eof.writeUInt32LE(20, 16);
  const all = Buffer.concat([header, ...records, eof]);
  all.writeUInt32LE(all.length, 48);
  all.writeUInt32LE(records.length + 2, 52);
  return new Uint8Array(all);
}

/** An EMF record of `type` carrying `data` (padded to 4 bytes). */
function emfRecord(type: number, data: Buffer, dataSizeField = false): Buffer {
  const body = dataSizeField ? Buffer.concat([Buffer.alloc(4), data]) : data;
  if (dataSizeField) body.writeUInt32LE(data.length, 0);
  const padded = Buffer.concat([body, Buffer.alloc((4 - (body.length % 4)) % 4)]);
  const head = Buffer.alloc(8);
  head.writeUInt32LE(type, 0);
  head.writeUInt32LE(8 + padded.length, 4);
  return Buffer.concat([head, padded]);
}

function wmf(escapeData: Buffer): Uint8Array {
  const header = Buffer.alloc(18);
  header.writeUInt16LE(1, 0);
  header.writeUInt16LE(9, 2);
  header.writeUInt16LE(0x0300, 4);
  const data = Buffer.concat([escapeData, Buffer.alloc(escapeData.length % 2)]);
  const escape = Buffer.alloc(10);
  escape.writeUInt32LE((10 + data.length) / 2, 0);
  escape.writeUInt16LE(0x0626, 4); // META_ESCAPE
  escape.writeUInt16LE(0x000f, 6); // MFCOMMENT
  escape.writeUInt16LE(escapeData.length, 8);
  const eof = Buffer.from([3, 0, 0, 0, 0, 0]);
  return new Uint8Array(Buffer.concat([header, escape, data, eof]));
}

describe('sanitizeOoxml: images by what they are', () => {
  it('inflates a gzip-compressed SVG (svgz, whatever its name) and cleans it like any SVG', () => {
    const doc = withImage(
      'i.svg',
      gzipSync(
        svg(
          '<image width="10" height="10" xlink:href="file:///srv/data/storage/subscriptions/a/documents/x"/><rect width="5" height="5"/>',
        ),
      ),
    );
    const r = sanitizeBothWays(doc, 'docx');
    expect(r.removed).toEqual([
      'word/media/i.svg: <image> xlink:href → file:///srv/data/storage/subscriptions/a/documents/x',
      'word/media/i.svg: gzip-compressed SVG inflated and cleaned',
    ]);
    const out = textOf(r.bytes, 'word/media/i.svg');
    expect(out).toMatch(/^<svg /);
    expect(out).toContain('<rect width="5" height="5"/>');
    expect(out).not.toContain('file:');
  });

  it('lets an SVG point only inside itself: relative references, xml:base, url(), style sheets and non-raster data: go', () => {
    const pngUri = `data:image/png;base64,${Buffer.from(png()).toString('base64')}`;
    const nested = `data:image/svg+xml;base64,${Buffer.from(svg('<image xlink:href="file:///etc/hostname"/>')).toString('base64')}`;
    // Declared as a PNG, but its bytes are an SVG: LibreOffice reads the bytes.
    const disguised = `data:image/png;base64,${Buffer.from(svg('<image xlink:href="file:///etc/hostname"/>')).toString('base64')}`;
    const inner =
      '<image xlink:href="../../../../etc/passwd"/>' +
      `<g xml:base="file:///srv/"><image href="secret.png"/></g>` +
      `<image xlink:href="${nested}"/><image xlink:href="${disguised}"/>` +
      '<rect fill="url(file:///srv/p.svg#paint)" filter="url(#blur)" width="1" height="1"/>' +
      '<style>@import url(file:///srv/x.css);</style>' +
      `<image xlink:href="${pngUri}"/><use xlink:href="#r"/>`;
    const r = sanitizeBothWays(withImage('i.svg', svg(inner)), 'docx');
    expect(r.removed).toEqual([
      'word/media/i.svg: <image> xlink:href → ../../../../etc/passwd',
      'word/media/i.svg: <g> xml:base → file:///srv/',
      'word/media/i.svg: <image> href → secret.png',
      `word/media/i.svg: <image> xlink:href → ${nested.slice(0, 100)}…`,
      `word/media/i.svg: <image> xlink:href → ${disguised.slice(0, 100)}…`,
      'word/media/i.svg: <rect> fill → url(file:///srv/p.svg#paint)',
      'word/media/i.svg: <style> with an external reference',
    ]);
    const out = textOf(r.bytes, 'word/media/i.svg');
    expect(out).not.toMatch(/passwd|srv|hostname|svg\+xml/);
    expect(out).toContain('filter="url(#blur)"');
    expect(out).toContain(`<image xlink:href="${pngUri}"/><use xlink:href="#r"/>`);
  });

  it('replaces an image part that is not a raster image, SVG, EMF or WMF by an empty image, whatever its name', () => {
    const pdf = '%PDF-1.4\n1 0 obj <<>> endobj\n%%EOF\n';
    for (const [name, bytes, what] of [
      ['i.png', pdf, 'PDF image'],
      ['i.svg', '%!PS-Adobe-3.0 EPSF-3.0\n', 'PostScript image'],
      ['i.bin', new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]), 'image part whose bytes are not'],
      ['i.svgz', gzipSync(Buffer.from(pdf)), 'gzip-compressed part that is not an SVG, EMF or WMF'],
    ] as const) {
      const r = sanitizeBothWays(withImage(name, bytes), 'docx');
      expect(r.removed, name).toHaveLength(1);
      expect(r.removed[0], name).toContain(`word/media/${name}: ${what}`);
      expect(isEmptyPng(bytesOf(r.bytes, `word/media/${name}`)), name).toBe(true);
    }
    // An image by its content type alone, and a PDF in a part nothing calls an image.
    const typed = makeDocx({
      body: para('x'),
      extra: { 'word/media/x.png': new Uint8Array([9, 9, 9, 9]), 'word/embeddings/doc.pdf': pdf },
    });
    const r = sanitizeBothWays(typed, 'docx');
    expect(r.removed).toEqual([
      'word/media/x.png: image part whose bytes are not a known raster image, SVG, EMF or WMF; replaced by an empty image',
      'word/embeddings/doc.pdf: PDF image (not a known raster image, SVG, EMF or WMF); replaced by an empty image',
    ]);
  });

  it('keeps raster images (under any name), EMF and WMF that draw from their own bytes, and parts that are no image', () => {
    const text = Buffer.from('see https://example.com/report', 'utf16le');
    const docx = withImage('i.svg', png(), {
      'word/media/a.emf': emf([emfRecord(84, Buffer.concat([Buffer.alloc(76), text]))]), // EMR_EXTTEXTOUTW: a URL as text
      'word/media/b.wmf': wmf(Buffer.from('harmless comment')),
      'word/fonts/font1.odttf': new Uint8Array(Array.from({ length: 64 }, (_, i) => (i * 37) % 256)),
    });
    // Kept as it is, and said to carry fonts of its own (the instance that converts it restarts after it).
    expect(sanitizeBothWays(docx, 'docx')).toEqual({ bytes: docx, removed: [], embedsFonts: true });
  });

  it('replaces an EMF or WMF that embeds a reference or another format, and inflates a clean emz', () => {
    const cases: [string, Uint8Array, string][] = [
      ['c.emf', emf([emfRecord(70, Buffer.from('EMF+ x file:///etc/shadow', 'latin1'), true)]), 'EMF that references file://'],
      [
        'd.emf',
        emf([emfRecord(70, gzipSync(svg('<image xlink:href="file:///etc/shadow"/>')), true)]),
        'EMF that references a gzip-compressed stream',
      ],
      ['e.wmf', wmf(Buffer.from(svg(''))), 'WMF that references <svg'],
      [
        'f.emz',
        gzipSync(emf([emfRecord(70, Buffer.from('\\\\attacker\\share\\x.png', 'utf16le'), true)])),
        'gzip-compressed EMF that references \\\\attacker\\',
      ],
    ];
    for (const [name, bytes, what] of cases) {
      const r = sanitizeBothWays(withImage(name, bytes), 'docx');
      expect(r.removed, name).toEqual([`word/media/${name}: ${what}; replaced by an empty image`]);
      expect(isEmptyPng(bytesOf(r.bytes, `word/media/${name}`)), name).toBe(true);
    }
    const clean = emf([]);
    const r = sanitizeBothWays(withImage('g.emz', gzipSync(clean)), 'docx');
    expect(r.removed).toEqual(['word/media/g.emz: gzip-compressed EMF inflated']);
    expect(Buffer.from(bytesOf(r.bytes, 'word/media/g.emz')).equals(clean)).toBe(true);
  });
});

describe('sanitizeOoxml: macros, whatever part they name', () => {
  it('refuses a VBA project relationship to a renamed part, and a macro content type on any part', () => {
    const renamed = makeDocx({
      body: para('x'),
      rels: `<Relationship Id="rIdVba" Type="${MS_REL}/vbaProject" Target="media/image9.png"/>`,
      extra: { 'word/media/image9.png': png() },
    });
    expect(refusal(renamed)).toMatch(
      /macro-enabled documents are refused \(word\/_rels\/document\.xml\.rels: a vbaProject relationship to media\/image9\.png\)/,
    );
    const keymap = makeDocx({
      body: para('x'),
      rels: `<Relationship Id="rIdK" Type="${MS_REL}/keyMapCustomizations" Target="custom.xml"/>`,
    });
    expect(refusal(keymap)).toMatch(/keyMapCustomizations relationship/);
    const typed = makeDocx({ body: para('x'), extra: { 'word/media/x.png': png() } });
    const entries = readZip(typed);
    const types = Buffer.from(entryData(entries.find((e) => e.name === '[Content_Types].xml')!))
      .toString('utf8')
      .replace('ContentType="image/png"', 'ContentType="application/vnd.ms-office.vbaProject"');
    const withType = makeDocx({ body: para('x'), extra: { 'word/media/x.png': png(), '[Content_Types].xml': types } });
    expect(refusal(withType)).toMatch(/content type application\/vnd\.ms-office\.vbaProject/);
  });
});
