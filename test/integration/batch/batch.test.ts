// Batches through the API (POST /documents/document/generate/batch), on the real stack: one document per row
// named by the pattern, failed rows listed with their row number and reason without failing the batch, the
// combined zip, metering per row, uploads consumed once at the end, and every problem of a bad request as
// a 400 with nothing queued.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { client } from '../../support/http.ts';
import { docxParagraphs, makeDocx } from '../../support/office.ts';
import { type Stack, startStack } from '../../support/stack.ts';
import { waitForBatch } from './support.ts';

describe('batch generation', () => {
  let stack: Stack;
  let api: ReturnType<typeof client>;

  beforeAll(async () => {
    stack = await startStack({ batchChunkRows: 4, batchWindow: 2 });
    api = client(await stack.credentials());
  });
  afterAll(async () => stack?.stop());

  async function upload(kind: 'template' | 'data', name: string, bytes: Uint8Array | string): Promise<string> {
    const r = await api.upload(kind, [{ name, bytes }]);
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    return r.body.result.data.files[0].id as string;
  }

  const document = {
    name: 'Invoice {number}',
    fileFormat: 'docx',
    deliveryMethod: 'Storage',
    path: 'root/{region}',
    timezone: 'Europe/London',
    locale: 'en-GB',
  };

  it('generates one document per CSV row, lists the failed ones, and writes the combined zip', async () => {
    const template = await upload('template', 'invoice.docx', makeDocx(['Invoice {number} for {customer.name}', 'Total {total}']));
    // Row 6's name pattern gives a name with a slash: that row fails, the others do not (the first rows are
    // checked at admission: a bad one there would be the request's 400).
    const rows = [
      'number;customer.name;total;region',
      ...Array.from(
        { length: 10 },
        (_, i) => `${i === 5 ? 'A/6' : `A-${i + 1}`};Customer ${i + 1};${10 * (i + 1)};${i % 2 ? 'north' : 'south'}`,
      ),
    ];
    const data = await upload('data', 'rows.csv', `${rows.join('\r\n')}\r\n`);
    const res = await api.call('POST', '/documents/document/generate/batch', {
      json: {
        template: { urn: template, loadMethod: 'Storage', fileFormat: 'docx', name: 'invoice.docx' },
        data: { urn: data, loadMethod: 'Storage' },
        document,
        combined: { format: 'zip', name: 'invoices', path: 'root', deliveryMethod: 'Storage' },
        externalContext: { run: 'csv' },
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.externalContext).toEqual({ run: 'csv' });
    const { id, rowsTotal } = res.body.result.data.batch;
    expect(rowsTotal).toBe(10);

    const batch = await waitForBatch(api, id);
    expect(batch).toMatchObject({ status: 'completed', rowsTotal: 10, rowsDone: 9, rowsFailed: 1, pages: 9 });
    expect(batch.failures).toEqual({
      rowCount: 1,
      items: [{ row: 6, code: 'VALIDATION_ERROR', message: expect.stringContaining('"Invoice A/6"') }],
    });

    // Each done row: its document in Storage, named by the pattern, in its folder, merged with its row.
    const listed = await api.call('GET', `/documents/batch/${id}/rows?status=done&top=100`);
    expect(listed.body.result.data.rowCount).toBe(9);
    const first = listed.body.result.data.rows[0];
    expect(first).toMatchObject({ row: 1, status: 'done', name: 'Invoice A-1.docx', path: 'root/south', pages: 1 });
    const doc = await api.download(first.urn);
    expect(docxParagraphs(doc.bytes)).toEqual(['Invoice A-1 for Customer 1', 'Total 10']);

    // One document record and one metering per done row, plus the combined output's record.
    const records = await api.call('GET', '/documents/document/list?top=100');
    expect(records.body.result.data.rowCount).toBe(10);
    const summary = await api.call('GET', '/common/summary?type=self-service');
    expect(JSON.stringify(summary.body)).toContain('documents-generated');

    // The combined zip: the nine documents, in their folders, read back by Python's zipfile.
    expect(batch.combined).toMatchObject({ format: 'zip', name: 'invoices.zip' });
    const zip = await api.download(batch.combined.urn);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'batch-zip-'));
    fs.writeFileSync(path.join(dir, 'c.zip'), zip.bytes);
    const names = JSON.parse(
      execFileSync('python3', [
        '-c',
        'import sys, zipfile, json; print(json.dumps(zipfile.ZipFile(sys.argv[1]).namelist()))',
        path.join(dir, 'c.zip'),
      ]).toString(),
    );
    fs.rmSync(dir, { recursive: true, force: true });
    expect(names).toEqual([
      'south/Invoice A-1.docx',
      'north/Invoice A-2.docx',
      'south/Invoice A-3.docx',
      'north/Invoice A-4.docx',
      'south/Invoice A-5.docx',
      'south/Invoice A-7.docx',
      'north/Invoice A-8.docx',
      'south/Invoice A-9.docx',
      'north/Invoice A-10.docx',
    ]);

    // The uploads were consumed when the batch ended: the same request now finds no template.
    const again = await api.call('POST', '/documents/document/generate/batch', {
      json: {
        template: { urn: template, loadMethod: 'Storage', fileFormat: 'docx' },
        data: { urn: data, loadMethod: 'Storage' },
        document,
      },
    });
    expect(again.status).toBe(400);
    expect(again.body.error.innerErrors[0].code).toBe('TEMPLATE_NOT_FOUND');
  });

  it('answers 400 for a bad request, every problem at once, and queues nothing', async () => {
    const template = await upload('template', 't.docx', makeDocx(['{name}']));
    const data = await upload('data', 'rows.json', JSON.stringify([{ name: 'a' }]));
    const res = await api.call('POST', '/documents/document/generate/batch', {
      json: {
        template: { urn: template, loadMethod: 'Storage', fileFormat: 'docx' },
        data: { urn: data, loadMethod: 'Storage', rowsFormat: 'xml' },
        document: { ...document, name: 'Letter {#x}', fileFormat: 'docx' },
        combined: { format: 'pdf', name: 'all', path: 'root', deliveryMethod: 'Storage' },
        stopAfterFailures: 0,
      },
    });
    expect(res.status).toBe(400);
    const messages = (res.body.error.innerErrors as { message: string }[]).map((e) => e.message);
    expect(messages).toEqual(
      expect.arrayContaining([
        'data.rowsFormat must be one of json, jsonl, csv',
        "combined.format pdf merges the rows' PDFs: document.fileFormat must be pdf (it is docx)",
        expect.stringContaining('document.name: tag "#x" must be a plain field'),
      ]),
    );
    // Nothing was consumed: the uploads still resolve for a good request.
    const ok = await api.call('POST', '/documents/document/generate/batch', {
      json: {
        template: { urn: template, loadMethod: 'Storage', fileFormat: 'docx' },
        data: { urn: data, loadMethod: 'Storage' },
        document: { ...document, name: 'L {name}', path: 'root' },
      },
    });
    expect(ok.status, JSON.stringify(ok.body)).toBe(201);
    expect(await waitForBatch(api, ok.body.result.data.batch.id)).toMatchObject({ status: 'completed', rowsDone: 1 });
  });

  it('refuses a batch whose first rows do not merge, before anything runs', async () => {
    const template = await upload('template', 't.docx', makeDocx(['{total | round:99}']));
    const data = await upload('data', 'rows.jsonl', '{"total": 1.5}\n{"total": 2}\n');
    const res = await api.call('POST', '/documents/document/generate/batch', {
      json: {
        template: { urn: template, loadMethod: 'Storage', fileFormat: 'docx' },
        data: { urn: data, loadMethod: 'Storage' },
        document: { ...document, name: 'x', path: 'root' },
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.error.innerErrors[0]).toMatchObject({ code: 'TEMPLATE_ERROR', message: expect.stringMatching(/^row 1: /) });
  });

  it('document.options.strict holds for every row: a row without a value for a tag fails naming it; at admission, the request fails', async () => {
    const letter = makeDocx(['Dear {name},', 'your rep is {rep}.']);
    const template = await upload('template', 't.docx', letter);
    // Rows 1 to 3 (merged at admission) have every value; row 5 has no rep.
    const data = await upload(
      'data',
      'rows.json',
      JSON.stringify([1, 2, 3, 4, 5].map((i) => (i === 5 ? { name: `n${i}` } : { name: `n${i}`, rep: 'Ann' }))),
    );
    const strictDocument = { ...document, name: 'L {name}', path: 'root', options: { strict: true } };
    const res = await api.call('POST', '/documents/document/generate/batch', {
      json: {
        template: { urn: template, loadMethod: 'Storage', fileFormat: 'docx' },
        data: { urn: data, loadMethod: 'Storage' },
        document: strictDocument,
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const batch = await waitForBatch(api, res.body.result.data.batch.id);
    expect(batch).toMatchObject({ status: 'completed', rowsDone: 4, rowsFailed: 1 });
    expect(batch.failures.items).toEqual([
      { row: 5, code: 'TEMPLATE_ERROR', message: expect.stringContaining('no value for tag "rep" (word/document.xml, paragraph 2)') },
    ]);

    // A first row without the value: the admission's merge refuses the request.
    const early = await api.call('POST', '/documents/document/generate/batch', {
      json: {
        template: { urn: await upload('template', 't.docx', letter), loadMethod: 'Storage', fileFormat: 'docx' },
        data: { urn: await upload('data', 'rows.json', JSON.stringify([{ name: 'a' }, { name: 'b', rep: 'Ann' }])), loadMethod: 'Storage' },
        document: strictDocument,
      },
    });
    expect(early.status, JSON.stringify(early.body)).toBe(400);
    expect(early.body.error.innerErrors).toEqual([
      expect.objectContaining({
        code: 'TEMPLATE_ERROR',
        message: expect.stringMatching(/^row 1: .*no value for tag "rep" \(word\/document\.xml, paragraph 2\)/),
      }),
    ]);
  });

  it('refuses an uploaded template of another kind than template.fileFormat before anything runs', async () => {
    const template = await upload('template', 't.docx', makeDocx(['{name}']));
    const data = await upload('data', 'rows.json', JSON.stringify([{ name: 'a' }]));
    const res = await api.call('POST', '/documents/document/generate/batch', {
      json: {
        template: { urn: template, loadMethod: 'Storage', fileFormat: 'pptx' },
        data: { urn: data, loadMethod: 'Storage' },
        document: { ...document, fileFormat: 'pptx', name: 'x', path: 'root' },
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.error.innerErrors).toEqual([
      expect.objectContaining({
        code: 'INVALID_TEMPLATE_FORMAT',
        message: 'template.fileFormat is pptx, but the template is a Word document (docx)',
      }),
    ]);
    // Refused by the API itself: not even the admission ran.
    const connection = await Connection.connect({ address: inject('temporalAddress') });
    try {
      await expect(
        new Client({ connection }).workflow.getHandle(`batch-admission-${res.body.operationId}`).describe(),
      ).rejects.toBeInstanceOf(WorkflowNotFoundError);
    } finally {
      await connection.close();
    }
  });

  it("reads another subscription's batch as absent", async () => {
    const template = await upload('template', 't.docx', makeDocx(['{name}']));
    const data = await upload('data', 'rows.json', JSON.stringify([{ name: 'a' }, { name: 'b' }]));
    const res = await api.call('POST', '/documents/document/generate/batch', {
      json: {
        template: { urn: template, loadMethod: 'Storage', fileFormat: 'docx' },
        data: { urn: data, loadMethod: 'Storage' },
        document: { ...document, name: '{name}', path: 'root' },
      },
    });
    expect(res.status).toBe(201);
    const other = client(await stack.credentials('other-tenant'));
    const id = res.body.result.data.batch.id;
    expect((await other.call('GET', `/documents/batch/${id}`)).status).toBe(404);
    expect((await other.call('GET', `/documents/batch/${id}/rows`)).status).toBe(404);
    expect((await other.call('POST', `/documents/batch/${id}/cancel`)).status).toBe(404);
    expect(await waitForBatch(api, id)).toMatchObject({ status: 'completed', rowsDone: 2 });
  });
});
