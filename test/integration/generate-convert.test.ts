// Generate with conversion through the API: pdf and PDF/A from docx, csv from xlsx, real LibreOffice.
import { keepPdfA } from '../support/pdfa-outputs.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Credentials } from '../../api/auth/credentials.ts';
import { convert, pdfaIdentification, pdfPageCount } from '../../converter/index.ts';
import { makeDocx } from '../support/office.ts';
import { client, generateBody } from '../support/http.ts';
import { type Stack, startStack } from '../support/stack.ts';
import { row, xlsx } from '../unit/engine/helpers.ts';

describe('generate with conversion', () => {
  let stack: Stack;
  let creds: Credentials;
  let api: ReturnType<typeof client>;

  beforeAll(async () => {
    stack = await startStack();
    creds = await stack.credentials();
    api = client(creds);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  async function upload(name: string, template: Uint8Array, data: unknown) {
    const t = await api.upload('template', [{ name, bytes: template }]);
    const d = await api.upload('data', [{ name: 'd.json', bytes: JSON.stringify(data) }]);
    return { t: t.body.result.data.files[0].id as string, d: d.body.result.data.files[0].id as string };
  }

  it('docx -> PDF/A-2b, with exact page metering', async () => {
    const pages = ['Page one for {name}', '{#more}', 'More text {.}', '{/more}'];
    const template = makeDocx(pages);
    const { t, d } = await upload('t.docx', template, { name: 'Ada', more: ['a', 'b'] });
    const body = generateBody(t, d, {
      document: { fileFormat: 'pdf', name: 'report', options: { pdfSaveOptions: '{"pdfConformanceLevel":"PdfA2B"}' } },
    });
    const res = await api.call('POST', '/documents/document/generate', { json: body });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.result.data.document).toMatchObject({ name: 'report.pdf', fileFormat: 'pdf' });
    const file = await api.download(res.body.result.data.document.urn);
    expect(file.headers.get('content-type')).toBe('application/pdf');
    expect(Buffer.from(file.bytes.subarray(0, 5)).toString()).toBe('%PDF-');
    expect(pdfaIdentification(file.bytes)).toEqual({ part: 2, conformance: 'B' });
    keepPdfA(file.bytes, 'generate-PdfA2B');
    expect(res.body.consumption).toEqual([
      { dimension: 'pages-generated', value: pdfPageCount(file.bytes) },
      { dimension: 'documents-generated', value: 1 },
    ]);
  });

  // A letter whose loop runs it over several pages (test/integration/page-count-document.test.ts meters the
  // same letter with PAGE_COUNT=document).
  const longLetter = () => makeDocx(['Dear {name},', '{#lines}', 'Line {.} of a long letter that fills page after page.', '{/lines}']);
  const longData = { name: 'Ada', lines: Array.from({ length: 160 }, (_, i) => i) };

  it('meters a docx by the pages its PDF rendition has (PAGE_COUNT=auto, a converter at hand)', async () => {
    const { t, d } = await upload('t.docx', longLetter(), longData);
    const res = await api.call('POST', '/documents/document/generate', { json: generateBody(t, d) });
    expect(res.status).toBe(201);
    const file = await api.download(res.body.result.data.document.urn);
    const rendition = pdfPageCount(await convert(file.bytes, { from: 'docx', to: 'pdf' }));
    expect(rendition).toBeGreaterThan(1);
    expect(res.body.consumption).toEqual([
      { dimension: 'pages-generated', value: rendition },
      { dimension: 'documents-generated', value: 1 },
    ]);
  });

  it('xlsx -> csv with a separator', async () => {
    const template = xlsx({
      strings: ['Name', 'Qty', '{#items}{name}', '{qty}{/items}'],
      rows:
        row(1, [
          ['A1', 's:0'],
          ['B1', 's:1'],
        ]) +
        row(2, [
          ['A2', 's:2'],
          ['B2', 's:3'],
        ]),
    });
    const { t, d } = await upload('t.xlsx', template, {
      items: [
        { name: 'bolt', qty: 3 },
        { name: 'nut', qty: 5 },
      ],
    });
    const body = generateBody(t, d, {
      template: { fileFormat: 'xlsx' },
      document: { fileFormat: 'csv', name: 'items', options: { csvSaveOptions: { separator: ';' } } },
    });
    const res = await api.call('POST', '/documents/document/generate', { json: body });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const csv = Buffer.from((await api.download(res.body.result.data.document.urn)).bytes).toString('utf8');
    expect(csv.trim().split(/\r?\n/)).toEqual(['Name;Qty', 'bolt;3', 'nut;5']);
  });

  it('refuses a csv sheet the converter cannot pick before anything is queued or consumed (sheets count from 1)', async () => {
    const template = xlsx({
      strings: ['Name', '{name}'],
      rows: row(1, [
        ['A1', 's:0'],
        ['B1', 's:1'],
      ]),
    });
    const { t, d } = await upload('t.xlsx', template, { name: 'bolt' });
    const csvBody = (options: Record<string, unknown>) =>
      generateBody(t, d, {
        template: { fileFormat: 'xlsx' },
        document: { fileFormat: 'csv', name: 'items', options: { csvSaveOptions: options } },
      });
    for (const sheet of [0, '0', -1, 1.5, '']) {
      const res = await api.call('POST', '/documents/document/generate', { json: csvBody({ sheet }) });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.error.innerErrors).toEqual([
        expect.objectContaining({
          code: 'VALIDATION_ERROR',
          message: expect.stringContaining('document.options.csvSaveOptions.sheet must be a sheet name or a sheet number from 1'),
        }),
      ]);
    }
    // An encoding the converter does not know is refused the same way, with the others at once.
    const both = await api.call('POST', '/documents/document/generate', { json: csvBody({ sheet: 0, encoding: 'klingon-8' }) });
    expect(both.status).toBe(400);
    expect(both.body.error.innerErrors.map((e: { message: string }) => e.message.split(' ')[0])).toEqual([
      'document.options.csvSaveOptions.sheet',
      'document.options.csvSaveOptions.encoding',
    ]);
    // Nothing was consumed: the same uploads still generate, from the first sheet.
    const ok = await api.call('POST', '/documents/document/generate', { json: csvBody({ sheet: 1, encoding: 'utf-8' }) });
    expect(ok.status, JSON.stringify(ok.body)).toBe(201);
    expect(
      Buffer.from((await api.download(ok.body.result.data.document.urn)).bytes)
        .toString('utf8')
        .trim(),
    ).toBe('Name,bolt');
  });

  it('rejects unknown save options before queueing, naming the field', async () => {
    const body = generateBody('00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000002', {
      document: { fileFormat: 'pdf', options: { pdfSaveOptions: '{"pdfConformanceLevel":"PdfA9Z"}' } },
    });
    const res = await api.call('POST', '/documents/document/generate', { json: body });
    expect(res.status).toBe(400);
    expect(res.body.error.innerErrors[0].message).toContain('document.options.pdfSaveOptions.pdfConformanceLevel');
    const notJson = await api.call('POST', '/documents/document/generate', {
      json: { ...body, document: { ...body.document, options: { pdfSaveOptions: '{nope' } } },
    });
    expect(notJson.body.error.innerErrors[0].message).toContain('document.options.pdfSaveOptions must be JSON text');
  });
});
