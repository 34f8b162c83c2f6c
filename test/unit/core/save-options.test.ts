// core/save-options.ts: what the API accepts before queueing, the converter accepts after (the converter's
// option planner, converter/options.ts, is pure and runs here without LibreOffice).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type ConvertError } from '../../../converter/errors.ts';
import { planConversion } from '../../../converter/options.ts';
import { CSV_ENCODINGS, parseSaveOptions, PDF_CONFORMANCE_LEVELS, PDF_VERSIONS } from '../../../core/save-options.ts';

const csv = (o: unknown) => parseSaveOptions({ csvSaveOptions: o }, 'csv', 'document.options');
const pdf = (o: unknown) => parseSaveOptions({ pdfSaveOptions: o }, 'pdf', 'document.options');
const messages = (r: { problems: { message: string }[] }) => r.problems.map((p) => p.message);

describe('save options', () => {
  it('counts csv sheets from 1, as the converter does: 0 and its digits are refused, with the base in the message', () => {
    for (const sheet of [0, '0', '00', -1, 1.5, '', '  ', true, null]) {
      expect(messages(csv({ sheet })), JSON.stringify(sheet)).toEqual([
        'document.options.csvSaveOptions.sheet must be a sheet name or a sheet number from 1 (1 is the first sheet)',
      ]);
    }
    for (const sheet of [1, 2, '1', '12', 'Totals', 'Sheet 0'])
      expect(csv({ sheet }), JSON.stringify(sheet)).toEqual({ options: { csv: { sheet } }, problems: [] });
  });

  it('names every problem at once and reads only the options of the output format', () => {
    expect(messages(csv('{"sheet": 0, "separator": ";;", "encoding": "klingon-8"}'))).toEqual([
      'document.options.csvSaveOptions.sheet must be a sheet name or a sheet number from 1 (1 is the first sheet)',
      'document.options.csvSaveOptions.separator must be one character',
      `document.options.csvSaveOptions.encoding must be one of ${CSV_ENCODINGS.join(', ')}`,
    ]);
    expect(messages(pdf({ pdfConformanceLevel: 'PdfA9Z', pdfVersion: 2 }))).toEqual([
      'document.options.pdfSaveOptions.pdfConformanceLevel must be one of PdfA1B, PdfA2B, PdfA3B, PdfUa1, Pdf15, Pdf16, Pdf17',
      'document.options.pdfSaveOptions.pdfVersion must be 1.5, 1.6 or 1.7',
    ]);
    expect(parseSaveOptions({ csvSaveOptions: { sheet: 0 }, pdfSaveOptions: '{nope' }, 'docx', 'targetDocument.options')).toEqual({
      options: {},
      problems: [],
    });
    expect(messages(parseSaveOptions({ pdfSaveOptions: '{nope' }, 'pdf', 'targetDocument.options'))).toEqual([
      'targetDocument.options.pdfSaveOptions must be JSON text of an object',
    ]);
    expect(messages(parseSaveOptions({ pdfSaveOptions: [1] }, 'pdf', 'document.options'))).toEqual([
      'document.options.pdfSaveOptions must be an object (or JSON text of one)',
    ]);
    expect(pdf('{"pdfConformanceLevel":"pdfa2b","pdfVersion":"1.7"}')).toEqual({
      options: { pdf: { conformance: 'pdfa2b', version: '1.7' } },
      problems: [],
    });
  });

  it('every name the API accepts plans a conversion', () => {
    for (const encoding of CSV_ENCODINGS)
      expect(() => planConversion({ from: 'xlsx', to: 'csv', csv: { encoding: encoding.toUpperCase() } })).not.toThrow();
    for (const conformance of PDF_CONFORMANCE_LEVELS)
      expect(() => planConversion({ from: 'docx', to: 'pdf', pdf: { conformance } })).not.toThrow();
    for (const version of PDF_VERSIONS) expect(() => planConversion({ from: 'docx', to: 'pdf', pdf: { version } })).not.toThrow();
  });

  it('csv options the API accepts never fail the conversion plan (property)', () => {
    const value = fc.oneof(
      fc.integer({ min: -3, max: 5 }),
      fc.double(),
      fc.string({ maxLength: 3 }),
      fc.constantFrom(...CSV_ENCODINGS, 'UTF-8', ' latin1 '),
      fc.boolean(),
      fc.constant(null),
    );
    fc.assert(
      fc.property(fc.record({ sheet: value, separator: value, encoding: value }, { requiredKeys: [] }), (o) => {
        const { options, problems } = csv(o);
        if (problems.length > 0) return;
        try {
          planConversion({ from: 'xlsx', to: 'csv', ...(options.csv ? { csv: options.csv } : {}) });
        } catch (err) {
          expect.unreachable(`accepted ${JSON.stringify(o)}, then the converter refused it: ${(err as ConvertError).message}`);
        }
      }),
      { numRuns: 500 },
    );
  });
});
