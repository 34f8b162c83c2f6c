// A batch's life beyond the happy path, on the real stack with LibreOffice: pdf rows merged into one PDF
// whose pages are the rows' (qpdf; read back by poppler), continue-as-new keeping the history bounded,
// stopAfterFailures, cancel (rows done stay, nothing half-written), the summary callback, rows from a
// GraphQL result, and Idempotency-Key.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { verifyCallback } from '../../../client/webhooks.ts';
import { client } from '../../support/http.ts';
import { makeDocx } from '../../support/office.ts';
import { type Stack, startStack } from '../../support/stack.ts';
import { type Receiver, startReceiver } from '../async/receiver.ts';
import { waitForBatch } from './support.ts';

type Api = ReturnType<typeof client>;

describe('batch lifecycle', () => {
  let stack: Stack;
  let api: Api;
  let receiver: Receiver;
  let connection: Connection;
  let temporal: Client;

  beforeAll(async () => {
    [stack, receiver] = await Promise.all([
      startStack({
        batchChunkRows: 2,
        batchWindow: 2,
        batchChunksPerRun: 2,
        outboundAllow: ['127.0.0.1'],
        callbackRetryScheduleMs: [0, 200, 200],
      }),
      startReceiver('127.0.0.1'),
    ]);
    api = client(await stack.credentials());
    connection = await Connection.connect({ address: inject('temporalAddress') });
    temporal = new Client({ connection });
  });
  afterAll(async () => {
    await connection?.close();
    await receiver?.close();
    await stack?.stop();
  });

  /** The chunks a batch's runs started, in order (their activities' inputs in the histories). */
  async function chunksOf(batchId: string): Promise<{ page: number; pages?: number; firstRow: number; count: number }[]> {
    const runs = [];
    for await (const w of temporal.workflow.list({ query: `DocgenBatchId = '${batchId}' AND WorkflowType = 'generateBatch'` }))
      runs.push(w);
    const chunks: Awaited<ReturnType<typeof chunksOf>> = [];
    for (const r of runs.sort((a, b) => a.startTime.getTime() - b.startTime.getTime())) {
      const history = await temporal.workflow.getHandle(r.workflowId, r.runId).fetchHistory();
      for (const e of history.events ?? []) {
        const scheduled = e.activityTaskScheduledEventAttributes;
        if (scheduled?.activityType?.name !== 'generateBatchChunk') continue;
        const { page, pages, firstRow, count } = defaultPayloadConverter.fromPayload<(typeof chunks)[number]>(
          scheduled.input!.payloads![0]!,
        );
        chunks.push({ page, pages, firstRow, count });
      }
    }
    return chunks;
  }

  async function upload(kind: 'template' | 'data', name: string, bytes: Uint8Array | string): Promise<string> {
    const r = await api.upload(kind, [{ name, bytes }]);
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    return r.body.result.data.files[0].id as string;
  }

  const doc = { fileFormat: 'pdf', deliveryMethod: 'Storage', path: 'root', timezone: 'Europe/London', locale: 'en-GB' };

  it("merges every row into one PDF with the rows' pages in order, over several workflow runs", async () => {
    // Row n has n paragraphs of page breaks: 1, 2, 3... pages, so order and count are both checked.
    const template = await upload('template', 'pages.docx', makeDocx(['Row {n} first page', '{#breaks}{text}{/breaks}']));
    const rows = Array.from({ length: 7 }, (_, i) => ({ n: i + 1, breaks: [{ text: `row ${i + 1} end` }] }));
    const data = await upload('data', 'rows.json', JSON.stringify(rows));
    const res = await api.call('POST', '/documents/document/generate/batch', {
      json: {
        template: { urn: template, loadMethod: 'Storage', fileFormat: 'docx' },
        data: { urn: data, loadMethod: 'Storage' },
        document: { ...doc, name: 'Row {n}' },
        combined: { format: 'pdf', name: 'all rows', path: 'root', deliveryMethod: 'Storage' },
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const id = res.body.result.data.batch.id as string;
    const batch = await waitForBatch(api, id, 120_000);
    expect(batch).toMatchObject({ status: 'completed', rowsDone: 7, rowsFailed: 0 });
    expect(batch.combined.pages).toBe(batch.pages);
    const merged = await api.download(batch.combined.urn);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'batch-pdf-'));
    try {
      fs.writeFileSync(path.join(dir, 'm.pdf'), merged.bytes);
      expect(execFileSync('pdfinfo', [path.join(dir, 'm.pdf')]).toString()).toMatch(new RegExp(`Pages:\\s+${batch.pages}\\b`));
      const text = execFileSync('pdftotext', [path.join(dir, 'm.pdf'), '-']).toString();
      expect([...text.matchAll(/Row (\d) first page/g)].map((m) => Number(m[1]))).toEqual([1, 2, 3, 4, 5, 6, 7]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
    // 4 pages of 2 rows in a window of 2: a chunk of two pages (rows 1-4: a window's share of the pages,
    // core/batch.ts chunkPages), then two of one; 2 chunks per run: the batch continued as new once; every
    // run carries the batch id.
    const runs = [];
    for await (const w of temporal.workflow.list({ query: `DocgenBatchId = '${id}' AND WorkflowType = 'generateBatch'` })) runs.push(w);
    expect(runs.length).toBe(2);
    expect(runs.filter((r) => r.status.name === 'CONTINUED_AS_NEW')).toHaveLength(1);
    expect(await chunksOf(id)).toEqual([
      { page: 0, pages: 2, firstRow: 1, count: 4 },
      { page: 2, pages: undefined, firstRow: 5, count: 2 },
      { page: 3, pages: undefined, firstRow: 7, count: 1 },
    ]);
    // The admission workflow too.
    const admitted = [];
    for await (const w of temporal.workflow.list({ query: `DocgenBatchId = '${id}' AND WorkflowType = 'batchAdmission'` }))
      admitted.push(w);
    expect(admitted).toHaveLength(1);
  });

  it('stops after stopAfterFailures rows have failed, without a combined output', async () => {
    const template = await upload('template', 't.docx', makeDocx(['{name}']));
    // Rows 4 on have names with a slash: they fail (rows 1-3 pass the admission check).
    const rows = Array.from({ length: 12 }, (_, i) => ({ name: i < 3 ? `ok ${i + 1}` : `bad/${i + 1}` }));
    const data = await upload('data', 'rows.json', JSON.stringify(rows));
    const res = await api.call('POST', '/documents/document/generate/batch', {
      json: {
        template: { urn: template, loadMethod: 'Storage', fileFormat: 'docx' },
        data: { urn: data, loadMethod: 'Storage' },
        document: { ...doc, fileFormat: 'docx', name: '{name}' },
        combined: { format: 'zip', name: 'z', path: 'root', deliveryMethod: 'Storage' },
        stopAfterFailures: 2,
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const batch = await waitForBatch(api, res.body.result.data.batch.id);
    expect(batch.status).toBe('stopped');
    expect(batch.rowsDone).toBe(3);
    expect(batch.rowsFailed).toBeGreaterThanOrEqual(2);
    expect(batch.rowsFailed).toBeLessThan(9);
    expect(batch.combined.urn).toBeUndefined();
    // One page a chunk (its chunks do not grow): the chunks running when the failures are counted finish
    // their rows, as many as before chunks grew.
    const chunks = await chunksOf(res.body.result.data.batch.id);
    expect(chunks.length).toBeGreaterThanOrEqual(2);
    expect(chunks.every((c) => c.pages === undefined && c.count <= 2)).toBe(true);
  });

  it('cancels: rows done stay with their documents, nothing half-written, the uploads consumed', async () => {
    const template = await upload('template', 't.docx', makeDocx(['{name}']));
    const rows = Array.from({ length: 60 }, (_, i) => ({ name: `row ${i + 1}` }));
    const data = await upload('data', 'rows.json', JSON.stringify(rows));
    const res = await api.call('POST', '/documents/document/generate/batch', {
      json: {
        template: { urn: template, loadMethod: 'Storage', fileFormat: 'docx' },
        data: { urn: data, loadMethod: 'Storage' },
        document: { ...doc, name: '{name}' },
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const id = res.body.result.data.batch.id as string;
    // Cancel once some rows are done.
    for (;;) {
      const b = (await api.call('GET', `/documents/batch/${id}`)).body.result.data.batch;
      if (b.rowsDone >= 2) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const cancel = await api.call('POST', `/documents/batch/${id}/cancel`);
    expect(cancel.status).toBe(200);
    const batch = await waitForBatch(api, id);
    expect(batch.status).toBe('cancelled');
    expect(batch.rowsDone).toBeGreaterThanOrEqual(2);
    expect(batch.rowsDone).toBeLessThan(60);
    // Every done row has its document, and no document exists without its row.
    const done = await api.call('GET', `/documents/batch/${id}/rows?status=done&top=1000`);
    expect(done.body.result.data.rowCount).toBe(batch.rowsDone);
    for (const r of done.body.result.data.rows) expect((await api.download(r.urn)).status).toBe(200);
    const files = await stack.service.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM stored_files WHERE kind = 'document' AND id::text IN (SELECT urn FROM batch_rows WHERE batch_id = $1)",
      [id],
    );
    expect(files.rows[0]?.n).toBe(batch.rowsDone);
    const orphans = await stack.service.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM documents WHERE operation_id LIKE $1 AND operation_id NOT IN (SELECT $2::text || ':row:' || row_number FROM batch_rows WHERE batch_id = $2::uuid)",
      [`${id}:row:%`, id],
    );
    expect(orphans.rows[0]?.n).toBe(0);
    // Nothing of the batch's scratch is left.
    expect(await stack.blobs.list(`scratch/batch-${id}/`)).toEqual([]);
    // The uploads were consumed when the batch ended.
    const reuse = await api.call('POST', '/documents/document/generate/batch', {
      json: {
        template: { urn: template, loadMethod: 'Storage', fileFormat: 'docx' },
        data: { urn: data, loadMethod: 'Storage' },
        document: { ...doc, name: '{name}' },
      },
    });
    expect(reuse.body.error.innerErrors[0].code).toBe('TEMPLATE_NOT_FOUND');
    // Cancelling again changes nothing.
    expect((await api.call('POST', `/documents/batch/${id}/cancel`)).body.result.data.batch.status).toBe('cancelled');
  });

  it('reads rows from a GraphQL result (rowsPath) and POSTs the summary to the callback', async () => {
    const server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ data: { customers: [{ name: 'Ada' }, { name: 'Grace' }, { name: 'Edsger' }] } }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const token = await api.call('POST', '/common/client/token', {
        json: { sub: 'batch-secret', iss: receiver.url, dest: '/batch-done' },
      });
      expect(token.status).toBe(200);
      const template = await upload('template', 't.docx', makeDocx(['Dear {name}']));
      const body = {
        template: { urn: template, loadMethod: 'Storage', fileFormat: 'docx' },
        data: {
          loadMethod: 'GraphQL',
          urn: `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`,
          query: '{ customers { name } }',
          rowsPath: 'customers',
        },
        document: { ...doc, fileFormat: 'docx', name: 'Letter {name}' },
        externalContext: { job: 7 },
      };
      const headers = { 'x-client-authorization': token.body.result.data.token as string, 'idempotency-key': `gql-${Date.now()}` };
      const res = await api.call('POST', '/documents/document/generate/batch', { json: body, headers });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      const id = res.body.result.data.batch.id as string;
      // The same key and body: the same batch, not a second one.
      const again = await api.call('POST', '/documents/document/generate/batch', { json: body, headers });
      expect(again.status).toBe(201);
      expect(again.body.result.data.batch.id).toBe(id);
      const [delivery] = await receiver.waitFor('/batch-done', 1, 60_000);
      expect(delivery!.headers.authorization).toBe('Bearer batch-secret');
      expect(verifyCallback(token.body.result.data.webhookSecret as string, delivery!.headers, delivery!.body)).toBe(true);
      const summary = JSON.parse(delivery!.body);
      expect(summary).toMatchObject({
        result: { statusCode: 201, data: { batch: { id, status: 'completed', rowsTotal: 3, rowsDone: 3, rowsFailed: 0 } } },
        consumption: [
          { dimension: 'pages-generated', value: 3 },
          { dimension: 'documents-generated', value: 3 },
        ],
        externalContext: { job: 7 },
        operationId: id,
      });
      const names = (await api.call('GET', `/documents/batch/${id}/rows`)).body.result.data.rows.map((r: { name: string }) => r.name);
      expect(names).toEqual(['Letter Ada.docx', 'Letter Grace.docx', 'Letter Edsger.docx']);
      await new Promise((r) => setTimeout(r, 500));
      expect(receiver.at('/batch-done')).toHaveLength(1);
    } finally {
      server.close();
    }
  });
});
