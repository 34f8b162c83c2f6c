// A batch of e-invoices (issue 42): each row's invoice goes through the same steps as a single generate's
// (activities/einvoice.ts): checked before its merge, rendered as PDF/A-3b, the XML embedded. An invalid
// row fails with the rule and field, the others are delivered. Outputs kept for CI's validators.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pdfaIdentification } from '../../../converter/index.ts';
import { keepEInvoice } from '../../support/einvoice-outputs.ts';
import { client } from '../../support/http.ts';
import { makeDocx } from '../../support/office.ts';
import { keepPdfA } from '../../support/pdfa-outputs.ts';
import { type Stack, startStack } from '../../support/stack.ts';
import { waitForBatch } from '../batch/support.ts';
import { GUIDELINES, PEPPOL_PROCESS, XRECHNUNG_GUIDELINE } from '../../../einvoice/profiles.ts';
import { einvoiceFixture, templateInvoice, uploadFile } from '../../support/einvoice-fixtures.ts';

const invoice = JSON.parse(fs.readFileSync(new URL('../../fixtures/einvoice/invoice.json', import.meta.url), 'utf8')) as Record<
  string,
  any
>;

describe('a batch of e-invoices', () => {
  let stack: Stack;
  let api: ReturnType<typeof client>;

  beforeAll(async () => {
    stack = await startStack();
    api = client(await stack.credentials());
  });
  afterAll(async () => stack?.stop());

  const upload = (kind: 'template' | 'data', name: string, bytes: Uint8Array | string) => uploadFile(api, kind, name, bytes);

  for (const [standard, fileFormat] of [
    ['facturx', 'pdf'],
    ['xrechnung-ubl', 'xml'],
  ] as const) {
    it(`${standard}: one e-invoice per row; a row whose totals are wrong fails with BR-CO-15`, async () => {
      const rows = ['INV-B-1', 'INV-B-2', 'INV-B-3'].map((number): { invoice: Record<string, any> } => ({
        invoice: { ...structuredClone(invoice), number },
      }));
      rows[1]!.invoice.totals.grandTotal = '999.99';
      const template = await upload(
        'template',
        'invoice.docx',
        makeDocx(['Invoice {invoice.number}', 'Total {invoice.totals.grandTotal}']),
      );
      const data = await upload('data', 'rows.json', JSON.stringify(rows));
      const res = await api.call('POST', '/documents/document/generate/batch', {
        json: {
          template: { urn: template, loadMethod: 'Storage', fileFormat: 'docx' },
          data: { urn: data, loadMethod: 'Storage' },
          document: {
            name: '{invoice.number}',
            fileFormat,
            deliveryMethod: 'Storage',
            path: 'root',
            timezone: 'Europe/Paris',
            locale: 'fr-FR',
            einvoice: { standard, data: 'invoice' },
          },
        },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      const batch = await waitForBatch(api, res.body.result.data.batch.id);
      expect(batch).toMatchObject({ status: 'completed', rowsTotal: 3, rowsDone: 2, rowsFailed: 1 });
      expect(batch.failures.items).toEqual([
        { row: 2, code: 'EINVOICE_INVALID', message: expect.stringContaining('BR-CO-15 (invoice.totals.grandTotal)') },
      ]);
      const listed = await api.call('GET', `/documents/batch/${res.body.result.data.batch.id}/rows?status=done&top=10`);
      for (const row of listed.body.result.data.rows as { urn: string; name: string }[]) {
        const file = await api.download(row.urn);
        if (fileFormat === 'pdf') {
          expect(pdfaIdentification(file.bytes)).toEqual({ part: 3, conformance: 'B' });
          expect(Buffer.from(file.bytes).toString('latin1')).toContain('/UF (factur-x.xml)');
          keepPdfA(file.bytes, `batch-${row.name}`);
        } else expect(Buffer.from(file.bytes).toString('utf8')).toContain(`<cbc:ID>${row.name.replace(/\.xml$/, '')}</cbc:ID>`);
        keepEInvoice(file.bytes, `batch-${standard}-${row.name}`, fileFormat);
      }
    });
  }

  /** A batch of rows with document.einvoice; its done rows as GET /documents/batch/{id}/rows lists them. */
  async function batchRows(rows: unknown[], fileFormat: string, einvoice: Record<string, unknown>) {
    const template = await upload('template', 'invoice.docx', makeDocx(['Invoice {invoice.number}']));
    const data = await upload('data', 'rows.json', JSON.stringify(rows));
    const res = await api.call('POST', '/documents/document/generate/batch', {
      json: {
        template: { urn: template, loadMethod: 'Storage', fileFormat: 'docx' },
        data: { urn: data, loadMethod: 'Storage' },
        document: {
          name: '{invoice.number}',
          fileFormat,
          deliveryMethod: 'Storage',
          path: 'root',
          timezone: 'UTC',
          locale: 'en-US',
          einvoice,
        },
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const batch = await waitForBatch(api, res.body.result.data.batch.id);
    expect(batch, JSON.stringify(batch)).toMatchObject({ status: 'completed', rowsDone: rows.length, rowsFailed: 0 });
    const listed = await api.call('GET', `/documents/batch/${res.body.result.data.batch.id}/rows?status=done&top=10`);
    return listed.body.result.data.rows as { row: number; name: string; urn: string; warnings?: unknown[] }[];
  }

  it("a row lists its e-invoice's warning-level rules (EINVOICE_RULE), as a single generate does", async () => {
    const { paymentMeans: _pm, ...noPayment } = structuredClone(invoice);
    const rows = [{ invoice: { ...noPayment, number: 'INV-W-1' } }, { invoice: { ...structuredClone(invoice), number: 'INV-W-2' } }];
    const listed = await batchRows(rows, 'pdf', { standard: 'facturx', data: 'invoice' });
    expect(listed.map((r) => [r.row, r.warnings])).toEqual([
      [
        1,
        [
          {
            code: 'EINVOICE_RULE',
            message: expect.stringContaining('BG-16 invoice.paymentMeans:'),
            tag: 'BG-16',
            location: { part: 'invoice.paymentMeans' },
          },
        ],
      ],
      [2, undefined],
    ]);
    for (const r of listed) keepEInvoice((await api.download(r.urn)).bytes, `batch-warnings-${r.name}`, 'pdf');
  });

  it('rows from an XML template (document.einvoice.template): one XRechnung each; a tag without data listed on its row', async () => {
    const xml = await upload('template', 'invoice.xml', einvoiceFixture('invoice-cii.xml'));
    const rows = ['INV-X-1', 'INV-X-2'].map((number) => ({
      guideline: XRECHNUNG_GUIDELINE,
      process: PEPPOL_PROCESS,
      invoice: { ...templateInvoice(), number },
    }));
    // An optional term left out: its section renders nothing, and the row lists the tag (the XML stays valid).
    delete (rows[1]!.invoice as Record<string, any>).orderReference;
    const listed = await batchRows(rows, 'xml', { standard: 'xrechnung-cii', template: { urn: xml } });
    expect(listed.map((r) => [r.row, r.warnings])).toEqual([
      [1, undefined],
      [2, [expect.objectContaining({ code: 'MISSING_VALUE', tag: '#orderReference', location: expect.objectContaining({ line: 94 }) })]],
    ]);
    for (const r of listed) {
      const file = await api.download(r.urn);
      const text = Buffer.from(file.bytes).toString('utf8');
      expect(text).toContain(`<ram:ID>${r.name.replace(/\.xml$/, '')}</ram:ID>`);
      expect(text).not.toContain(GUIDELINES.EN16931 + '<');
      keepEInvoice(file.bytes, `batch-xml-template-${r.name}`, 'xml');
    }
  });
});
