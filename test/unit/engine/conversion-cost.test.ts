// The cost estimate of a document (engine/cost.ts): what LibreOffice would have to lay out, read from the
// package without laying it out, and the limits checked on it (issue 25, section 2). Calibrated against
// LibreOffice's own page counts in test/integration/convert/cost.test.ts.
import { describe, expect, it } from 'vitest';
import { DEFAULT_TEMPLATE_LIMITS, TemplateError } from '../../../engine/index.ts';
import { writeZip } from '../../../engine/zip.ts';
import { makeDocx, makePptx, makeXlsx, pageBreak, para } from '../../integration/convert/fixtures.ts';
import { hugePng, longRunDocx, numberedParagraphs } from '../../support/costly-office.ts';
import { checkCostBothWays, costBothWays } from '../../support/package-parts.ts';

const W = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main';

function limitError(f: () => unknown): TemplateError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(TemplateError);
    return e as TemplateError;
  }
  throw new Error('expected a TemplateError');
}

function rows(n: number, cols = 3): string {
  const row = `<w:tr>${'<w:tc><w:p><w:r><w:t>c</w:t></w:r></w:p></w:tc>'.repeat(cols)}</w:tr>`;
  return `<w:tbl><w:tblPr/>${row.repeat(n)}</w:tbl><w:p/>`;
}

describe('conversionCost: pages', () => {
  it('counts a line per short paragraph, 50 lines a page', () => {
    const c = costBothWays(makeDocx(numberedParagraphs(5_000)));
    expect(c.paragraphs).toBe(5_000);
    expect(c.pages).toBe(100);
  });

  it('wraps long paragraphs at 70 characters a line', () => {
    // 2 000 paragraphs of 140 characters: 2 lines each, 80 pages.
    const c = costBothWays(makeDocx(para('x'.repeat(140)).repeat(2_000)));
    expect(c.pages).toBe(80);
  });

  it('adds page breaks, page-break-before and section breaks, but not continuous sections', () => {
    // Three sections: the first ends in a paragraph, the second (continuous: no new page) in another, the
    // third is the body's own (makeDocx), which starts a new page.
    const body =
      para('a') +
      pageBreak +
      para('b') +
      '<w:p><w:pPr><w:pageBreakBefore/></w:pPr><w:r><w:t>c</w:t></w:r></w:p>' +
      '<w:p><w:pPr><w:pageBreakBefore w:val="false"/></w:pPr></w:p>' +
      '<w:p><w:pPr><w:sectPr/></w:pPr></w:p>' +
      para('d') +
      '<w:p><w:pPr><w:sectPr><w:type w:val="continuous"/></w:sectPr></w:pPr></w:p>' +
      para('e');
    expect(costBothWays(makeDocx(body)).breaks).toBe(3);
    const paged = costBothWays(makeDocx(Array.from({ length: 1_000 }, (_, i) => para(`Page ${i}`)).join(pageBreak)));
    expect(paged.breaks).toBe(999);
    expect(paged.pages).toBe(999 + Math.ceil(1_999 / 50));
  });

  it('counts a table row as a line (the tallest cell), cell paragraphs not again', () => {
    const c = costBothWays(makeDocx(rows(1_000)));
    expect(c.longestTable).toEqual({ rows: 1_000, part: 'word/document.xml' });
    // 1 000 rows + the paragraph after the table: 1 001 lines.
    expect(c.pages).toBe(21);
  });

  it('finds the longest table, nested ones included', () => {
    const inner = `<w:tbl>${'<w:tr><w:tc><w:p/></w:tc></w:tr>'.repeat(40)}</w:tbl>`;
    const c = costBothWays(makeDocx(`<w:tbl><w:tr><w:tc>${inner}<w:p/></w:tc></w:tr></w:tbl>${rows(10)}`));
    expect(c.longestTable?.rows).toBe(40);
  });

  it('counts slides as pages, and printed pages of sheets (50 rows, 500 cells a page)', () => {
    expect(costBothWays(makePptx(['one', 'two', 'three'])).pages).toBe(3);
    const tall = makeXlsx([{ name: 'S', rows: Array.from({ length: 2_000 }, (_, r) => [r, r, r, r]) }]);
    expect(costBothWays(tall)).toMatchObject({ cells: 8_000, pages: 40 });
    const wide = makeXlsx([{ name: 'S', rows: Array.from({ length: 100 }, (_, r) => Array.from({ length: 100 }, () => r)) }]);
    expect(costBothWays(wide)).toMatchObject({ cells: 10_000, pages: 20 });
  });

  it('reads parts by their root element and elements by local name: another prefix or part name changes nothing', () => {
    const body = Array.from({ length: 600 }, (_, i) => `<x:p><x:r><x:t>${i}</x:t></x:r></x:p>`).join('');
    const renamed = writeZip([
      {
        name: '[Content_Types].xml',
        data: Buffer.from(
          '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Override PartName="/a/b.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
        ),
      },
      {
        name: '_rels/.rels',
        data: Buffer.from(
          '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="r" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="a/b.xml"/></Relationships>',
        ),
      },
      { name: 'a/b.xml', data: Buffer.from(`<?xml version="1.0"?><x:document xmlns:x="${W}"><x:body>${body}</x:body></x:document>`) },
    ]);
    expect(costBothWays(renamed)).toMatchObject({ paragraphs: 600, pages: 12 });
  });

  it('counts text in CDATA and skips what comments and processing instructions hold', () => {
    const c = costBothWays(makeDocx(`<w:p><w:r><w:t><![CDATA[${'y'.repeat(500)}]]></w:t></w:r></w:p><!-- <w:p><w:p><w:p> --><?pi <w:p>?>`));
    expect(c.paragraphs).toBe(1);
    expect(c.longestParagraph?.chars).toBe(500);
  });
});

describe('conversionCost: paragraphs and images', () => {
  it('measures a paragraph over all its runs, in characters (not UTF-8 bytes)', () => {
    const runs = Array.from({ length: 1_000 }, () => '<w:r><w:t>lorem ipsu</w:t></w:r>').join('');
    const c = costBothWays(makeDocx(para('short') + `<w:p>${runs}</w:p>`));
    expect(c.longestParagraph).toEqual({ chars: 10_000, part: 'word/document.xml', paragraph: 2 });
    expect(costBothWays(makeDocx(para('漢字'.repeat(5_000)))).longestParagraph?.chars).toBe(10_000);
    expect(costBothWays(longRunDocx(2_000_000)).longestParagraph?.chars).toBe(2_000_000);
  });

  const png = hugePng(30_000, 30_000);
  const jpeg = Buffer.from([
    0xff,
    0xd8,
    0xff,
    0xe0,
    0x00,
    0x10,
    ...Buffer.from('JFIF\0'),
    1,
    1,
    0,
    0,
    1,
    0,
    1,
    0,
    0,
    0xff,
    0xc0,
    0x00,
    0x11,
    0x08,
    0x0f,
    0xa0,
    0x17,
    0x70,
    0x03,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
  ]);
  const gif = Buffer.concat([Buffer.from('GIF89a'), Buffer.from([0x10, 0x27, 0x10, 0x27]), Buffer.alloc(10)]);
  const bmp = Buffer.alloc(54);
  bmp.write('BM', 0, 'latin1');
  bmp.writeInt32LE(8_000, 18);
  bmp.writeInt32LE(-6_000, 22);
  // A TIFF whose directory is after 200 KB of strip data, as cameras and scanners write it.
  const tiff = Buffer.alloc(8 + 200_000 + 2 + 2 * 12 + 4);
  tiff.write('II*\0', 0, 'latin1');
  tiff.writeUInt32LE(8 + 200_000, 4);
  tiff.writeUInt16LE(2, 200_008);
  tiff.writeUInt16LE(256, 200_010);
  tiff.writeUInt16LE(4, 200_012);
  tiff.writeUInt32LE(1, 200_014);
  tiff.writeUInt32LE(12_000, 200_018);
  tiff.writeUInt16LE(257, 200_022);
  tiff.writeUInt16LE(3, 200_024);
  tiff.writeUInt32LE(1, 200_026);
  tiff.writeUInt16LE(9_000, 200_030);
  const webp = Buffer.alloc(30);
  webp.write('RIFF', 0, 'latin1');
  webp.write('WEBPVP8X', 8, 'latin1');
  webp.writeUIntLE(16_000 - 1, 24, 3);
  webp.writeUIntLE(10_000 - 1, 27, 3);

  it.each([
    ['a 1-bit PNG of 30 000 x 30 000 (~110 KB)', png, 30_000, 30_000],
    ['a JPEG (SOF0)', jpeg, 6_000, 4_000],
    ['a GIF', gif, 10_000, 10_000],
    ['a bottom-up BMP', bmp, 8_000, 6_000],
    ['a TIFF with its directory at the end', tiff, 12_000, 9_000],
    ['a WebP (VP8X)', webp, 16_000, 10_000],
  ] as const)('reads the pixels of %s by its bytes, whatever its part name', (_name, bytes, w, h) => {
    const c = costBothWays(makeDocx({ body: para('x'), extra: { 'word/media/renamed.bin': new Uint8Array(bytes) } }));
    expect(c.largestImage).toEqual({ part: 'word/media/renamed.bin', width: w, height: h });
    expect(c.imagePixels).toBe(w * h);
  });

  it('adds up every image, deflated ones too', () => {
    expect(png.length).toBeLessThan(200_000);
    const deflated = writeZip([
      { name: 'word/document.xml', data: Buffer.from(`<w:document xmlns:w="${W}"><w:body><w:p/></w:body></w:document>`) },
      { name: 'word/media/a.png', data: png, level: 9 },
      { name: 'word/media/b.gif', data: gif },
    ]);
    expect(costBothWays(deflated).imagePixels).toBe(900_000_000 + 100_000_000);
  });
});

describe('checkConversionCost', () => {
  it('passes an ordinary document and returns its cost', () => {
    expect(checkCostBothWays(makeDocx(para('Hello') + rows(20))).pages).toBe(1);
  });

  it('refuses each limit with its value and setting, every limit exceeded at once', () => {
    const l = DEFAULT_TEMPLATE_LIMITS;
    const pages = limitError(() => checkCostBothWays(makeDocx(numberedParagraphs(260_000))));
    expect(pages.errors).toEqual([
      {
        id: 'limit_exceeded',
        message: `the document comes to about 5200 pages (260000 paragraphs); the limit is ${l.maxPages} (TEMPLATE_MAX_PAGES)`,
      },
    ]);
    const run = limitError(() => checkCostBothWays(longRunDocx(1_000_000)));
    expect(run.errors[0]).toEqual({
      id: 'limit_exceeded',
      message: `paragraph 1 of word/document.xml has 1000000 characters; the limit is ${l.maxParagraphChars} (TEMPLATE_MAX_PARAGRAPH_CHARS)`,
      location: { part: 'word/document.xml', paragraph: 1 },
    });
    const table = limitError(() => checkCostBothWays(makeDocx(rows(6_000, 1))));
    expect(table.message).toBe(`a table of word/document.xml has 6000 rows; the limit is ${l.maxTableRows} (TEMPLATE_MAX_TABLE_ROWS)`);
    const image = limitError(() =>
      checkCostBothWays(makeDocx({ body: para('x'), extra: { 'word/media/i.png': hugePng(30_000, 30_000) } })),
    );
    expect(image.message).toBe(
      `the images come to 900000000 pixels (the largest, word/media/i.png, is 30000 x 30000); the limit is ${l.maxImagePixels} (TEMPLATE_MAX_IMAGE_PIXELS)`,
    );
    const cells = limitError(() =>
      checkCostBothWays(makeXlsx([{ name: 'S', rows: Array.from({ length: 25_000 }, () => Array(10).fill(1)) }])),
    );
    expect(cells.errors.map((e) => e.message)).toEqual([`the workbook has 250000 cells; the limit is ${l.maxCells} (TEMPLATE_MAX_CELLS)`]);
    const both = limitError(() => checkCostBothWays(longRunDocx(1_000_000), { maxPages: 100 }));
    expect(both.errors.map((e) => e.message.replace(/.*\(/, '('))).toEqual(['(TEMPLATE_MAX_PARAGRAPH_CHARS)', '(TEMPLATE_MAX_PAGES)']);
  });

  it('takes the limits given', () => {
    expect(() => checkCostBothWays(makeDocx(numberedParagraphs(600)), { maxPages: 10 })).toThrow(
      /about 12 pages \(600 paragraphs\); the limit is 10 \(TEMPLATE_MAX_PAGES\)/,
    );
    expect(checkCostBothWays(makeDocx(numberedParagraphs(600)), { maxPages: 12 }).pages).toBe(12);
  });
});
