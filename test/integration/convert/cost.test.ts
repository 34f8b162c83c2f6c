// The cost estimate (engine/cost.ts) against LibreOffice's own page count: on long documents of each shape
// the estimate reads (short paragraphs, wrapped text, table rows, page breaks, sheet rows, layout), the
// estimated pages stay within a factor two (plus two pages) of LibreOffice's layout. Real LibreOffice. The
// same on the documents of the conformance corpus (made by Word and docxtemplater's authors, not by us):
// test/shared/cost-corpus.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LibreOfficePool } from '../../../converter/index.ts';
import { checkConversionCost, conversionCost } from '../../../engine/cost.ts';
import { numberedParagraphs } from '../../support/costly-office.ts';
import { hostileLayoutDocx, longDocx, makeDocx, makeXlsx, pagedDocx, para } from './fixtures.ts';

let pool: LibreOfficePool;
beforeAll(async () => {
  pool = new LibreOfficePool({ size: 1, timeoutMs: 60_000, log: () => {} });
  await pool.ready();
});
afterAll(async () => {
  await pool?.stop();
});

const near = (estimate: number, pages: number) => estimate <= 2 * pages + 2 && 2 * estimate + 2 >= pages;

describe('estimated pages against LibreOffice', () => {
  it.each([
    ['5 000 one-line paragraphs', () => makeDocx(numberedParagraphs(5_000)), 'docx'],
    ['2 000 paragraphs of two lines', () => longDocx(2_000), 'docx'],
    [
      'a table of 1 000 rows',
      () =>
        makeDocx(
          `<w:tbl><w:tblPr/>${'<w:tr><w:tc><w:p><w:r><w:t>a</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>b</w:t></w:r></w:p></w:tc></w:tr>'.repeat(1_000)}</w:tbl><w:p/>`,
        ),
      'docx',
    ],
    ['500 pages of page breaks', () => pagedDocx(500), 'docx'],
    // What makes layout expensive, read from the document (issue 36): page size and margins, font sizes,
    // line spacing, spacing before/after, character spacing, row heights, styles.
    ['the hostile layout: 1-inch pages, 72 pt type, 22-inch line spacing (10 paragraphs)', () => hostileLayoutDocx(10), 'docx'],
    ['the same layout through the document defaults and the default paragraph style', () => hostileLayoutDocx(10, 'styles'), 'docx'],
    [
      '72 pt type on A4',
      () =>
        makeDocx(
          Array.from(
            { length: 50 },
            (_, i) => `<w:p><w:r><w:rPr><w:sz w:val="144"/></w:rPr><w:t>Paragraph ${i} words and more words here</w:t></w:r></w:p>`,
          ).join(''),
        ),
      'docx',
    ],
    [
      '2 inches of spacing after each paragraph',
      () =>
        makeDocx(
          Array.from({ length: 60 }, (_, i) => `<w:p><w:pPr><w:spacing w:after="2880"/></w:pPr><w:r><w:t>P ${i}</w:t></w:r></w:p>`).join(
            '',
          ),
        ),
      'docx',
    ],
    [
      'triple line spacing',
      () =>
        makeDocx(
          Array.from(
            { length: 200 },
            (_, i) => `<w:p><w:pPr><w:spacing w:line="720" w:lineRule="auto"/></w:pPr><w:r><w:t>P ${i}</w:t></w:r></w:p>`,
          ).join(''),
        ),
      'docx',
    ],
    [
      'table rows 3 inches high',
      () =>
        makeDocx(
          `<w:tbl>${'<w:tr><w:trPr><w:trHeight w:val="4320" w:hRule="exact"/></w:trPr><w:tc><w:p><w:r><w:t>x</w:t></w:r></w:p></w:tc></w:tr>'.repeat(40)}</w:tbl><w:p/>`,
        ),
      'docx',
    ],
    [
      'a small page with wide margins',
      () =>
        makeDocx({
          body: Array.from({ length: 100 }, (_, i) => para(`Paragraph ${i} lorem ipsum dolor sit amet`)).join(''),
          sectPr: '<w:sectPr><w:pgSz w:w="4320" w:h="4320"/><w:pgMar w:top="1440" w:right="720" w:bottom="1440" w:left="720"/></w:sectPr>',
        }),
      'docx',
    ],
    [
      'a sheet of 2 000 rows x 10 columns',
      () => makeXlsx([{ name: 'S', rows: Array.from({ length: 2_000 }, (_, r) => Array.from({ length: 10 }, (_, c) => r * 10 + c)) }]),
      'xlsx',
    ],
  ] as const)(
    '%s',
    async (_name, build, from) => {
      const bytes = build();
      const estimate = conversionCost(bytes).pages;
      const pages = await pool.pageCount(bytes, { from });
      expect(near(estimate, pages), `estimated ${estimate}, LibreOffice ${pages}`).toBe(true);
    },
    120_000,
  );
});

describe('the hostile layout of issue 36', () => {
  it('1 000 paragraphs (past 120 s of LibreOffice) are refused by the estimate, naming TEMPLATE_MAX_PAGES, whether set directly or through styles', () => {
    for (const via of ['direct', 'styles'] as const) {
      const bytes = hostileLayoutDocx(1_000, via);
      expect(() => checkConversionCost(bytes), via).toThrow(/about \d+ pages .*TEMPLATE_MAX_PAGES/);
    }
  });

  it('100 paragraphs (2 400 pages laid out, the issue says) are estimated at more than 1 200', () => {
    for (const via of ['direct', 'styles'] as const) expect(conversionCost(hostileLayoutDocx(100, via)).pages, via).toBeGreaterThan(1_200);
  });
});
