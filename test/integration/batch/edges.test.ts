// Batches at the edges users meet (issue 39, findings 5, 7 and 10), on the real stack: a cancel stops rows
// from starting (checked between rows, whatever the chunk's size) and the answer says cancelling; rows
// after the first are held to SharePoint's naming rules before anything is sent to Graph; a row's message
// says its reason once; the summary callback lists the first failed rows and where the rest are.
import { Client, Connection } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { ChunkHeartbeat } from '../../../activities/batch/index.ts';
import { batchRows } from '../../../telemetry/metrics.ts';
import { type GraphFake, startGraphFake } from '../../fakes/graph/server.ts';
import { client } from '../../support/http.ts';
import { makeDocx } from '../../support/office.ts';
import { type Stack, startStack } from '../../support/stack.ts';
import { type Receiver, startReceiver } from '../async/receiver.ts';
import { connect, DRIVE_A } from '../driveA/support.ts';
import { waitForBatch } from './support.ts';

const WINDOW = 2;

describe('batches at the edges', () => {
  let stack: Stack;
  let api: ReturnType<typeof client>;
  let receiver: Receiver;
  let graph: GraphFake;

  beforeAll(async () => {
    graph = await startGraphFake();
    graph.addDrive(DRIVE_A);
    receiver = await startReceiver();
    // Large chunks: a cancel must not wait for a chunk's end.
    stack = await startStack({
      batchChunkRows: 100,
      batchWindow: WINDOW,
      outboundAllow: ['127.0.0.1'],
      driveAGraphUrl: graph.graphUrl,
      driveALoginUrl: graph.loginUrl,
    });
    api = client(await stack.credentials());
    await connect(api, graph);
  });
  afterAll(async () => {
    await stack?.stop();
    await receiver?.close();
    await graph?.close();
  });

  async function upload(kind: 'template' | 'data', name: string, bytes: Uint8Array | string): Promise<string> {
    const r = await api.upload(kind, [{ name, bytes }]);
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    return r.body.result.data.files[0].id as string;
  }
  const doc = { fileFormat: 'docx', deliveryMethod: 'Storage', path: 'root', timezone: 'Europe/London', locale: 'en-GB' };

  it('a cancel stops rows from starting: the rows in progress finish, no other starts, the answer says cancelling, no combined output; meanwhile the running chunks show their progress in Temporal', async () => {
    const template = await upload('template', 't.docx', makeDocx(['{name}']));
    const data = await upload('data', 'rows.json', JSON.stringify(Array.from({ length: 400 }, (_, i) => ({ name: `row ${i + 1}` }))));
    const res = await api.call('POST', '/documents/document/generate/batch', {
      json: {
        template: { urn: template, loadMethod: 'Storage', fileFormat: 'docx' },
        data: { urn: data, loadMethod: 'Storage' },
        document: { ...doc, name: '{name}' },
        combined: { format: 'zip', name: 'all', path: 'root', deliveryMethod: 'Storage' },
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const id = res.body.result.data.batch.id as string;
    for (;;) {
      const b = (await api.call('GET', `/documents/batch/${id}`)).body.result.data.batch;
      if (b.rowsDone >= 3) break;
      expect(b.status).toBe('running');
      await new Promise((r) => setTimeout(r, 50));
    }
    // While its chunks run (100 rows each: rows show before a chunk ends), the batch shows progress in Temporal:
    // each running chunk's heartbeat carries its rows so far, and the workflow's current details name the
    // chunks running; the metrics have counted the rows recorded.
    const connection = await Connection.connect({ address: inject('temporalAddress') });
    try {
      const handle = new Client({ connection }).workflow.getHandle(`batch-${id}`);
      let beats: ChunkHeartbeat[] = [];
      // Rows recorded show within the batch worker's heartbeat throttle (2 s).
      while (!beats.some((b) => b.recorded >= 1)) {
        const pending = (await handle.describe()).raw.pendingActivities ?? [];
        beats = pending
          .filter((a) => a.activityType?.name === 'generateBatchChunk' && (a.heartbeatDetails?.payloads?.length ?? 0) > 0)
          .map((a) => defaultPayloadConverter.fromPayload<ChunkHeartbeat>(a.heartbeatDetails!.payloads![0]!));
        if (!beats.some((b) => b.recorded >= 1)) await new Promise((r) => setTimeout(r, 50));
      }
      for (const beat of beats) {
        expect([200, 100]).toContain(beat.of);
        expect(beat.recorded).toBeGreaterThanOrEqual(0);
        expect(beat.recorded).toBeLessThanOrEqual(beat.of);
        expect(beat.lastRow % 100).toBe(beat.recorded % 100);
        expect(beat.failed).toBe(0);
      }
      // Rows are counted in the metrics as they are recorded, not when their chunk ends.
      const counted = (await batchRows.get()).values.find((v) => v.labels.outcome === 'done')?.value ?? 0;
      expect(counted).toBeGreaterThanOrEqual(Math.max(...beats.map((b) => b.recorded)));
      const details = (await handle.query<{ currentDetails?: string }>('__temporal_workflow_metadata')).currentDetails ?? '';
      // The chunks running, by their rows: 4 pages of 100 in a window of 2 are a chunk of two pages (a
      // window's share, core/batch.ts chunkPages), then two of one.
      expect(details).toMatch(/chunks? running: rows (1-200|201-300|301-400)(, (201-300|301-400))? \(/);
    } finally {
      await connection.close();
    }
    const cancel = await api.call('POST', `/documents/batch/${id}/cancel`);
    expect(cancel.status).toBe(200);
    const answered = cancel.body.result.data.batch;
    expect(answered.status).toBe('cancelling');
    const batch = await waitForBatch(api, id);
    expect(batch.status).toBe('cancelled');
    // Rows recorded after the answer: at most the one in progress in each running chunk.
    expect(batch.rowsDone + batch.rowsFailed).toBeLessThanOrEqual(answered.rowsDone + answered.rowsFailed + WINDOW);
    expect(batch.combined?.urn).toBeUndefined();
  });

  it("rows after the first are held to SharePoint's names (CON.docx, ~$draft.docx): refused before any upload", async () => {
    const template = await upload('template', 't.docx', makeDocx(['{name}']));
    const names = ['alpha', 'beta', 'gamma', 'CON', '~$draft', 'delta'];
    const data = await upload('data', 'rows.json', JSON.stringify(names.map((name) => ({ name }))));
    const puts = graph.count('PUT', '/content');
    const res = await api.call('POST', '/documents/document/generate/batch', {
      json: {
        template: { urn: template, loadMethod: 'Storage', fileFormat: 'docx' },
        data: { urn: data, loadMethod: 'Storage' },
        document: { ...doc, deliveryMethod: 'DriveA', path: 'Batch', name: '{name}' },
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const batch = await waitForBatch(api, res.body.result.data.batch.id);
    expect(batch).toMatchObject({ status: 'completed', rowsDone: 4, rowsFailed: 2 });
    expect(batch.failures.items).toEqual([
      {
        row: 4,
        code: 'VALIDATION_ERROR',
        message: expect.stringMatching(/gives "CON" for this row: .*CON\.docx is a name OneDrive and SharePoint reserve/),
      },
      {
        row: 5,
        code: 'VALIDATION_ERROR',
        message: expect.stringMatching(/gives "~\$draft" for this row: .*OneDrive and SharePoint refuse names that start with ~\$/),
      },
    ]);
    // Only the four good rows reached Graph.
    expect(graph.count('PUT', '/content') - puts).toBe(4);
    expect(
      graph
        .files(DRIVE_A)
        .filter((f) => f.path.startsWith('Batch/') && !f.path.endsWith('/'))
        .map((f) => f.path)
        .sort(),
    ).toEqual(['Batch/alpha.docx', 'Batch/beta.docx', 'Batch/delta.docx', 'Batch/gamma.docx']);
  });

  it("a row's message says its reason once; the summary callback lists the first failed rows and the rows link", async () => {
    const token = await api.call('POST', '/common/client/token', { json: { sub: 'batch-edges', iss: receiver.url, dest: '/batch-edges' } });
    expect(token.status).toBe(200);
    const template = await upload('template', 't.docx', makeDocx(['Dear {name},', 'your rep is {rep}.']));
    const rows = [1, 2, 3, 4, 5, 6].map((i) => (i >= 5 ? { name: `n${i}` } : { name: `n${i}`, rep: 'Ann' }));
    const data = await upload('data', 'rows.json', JSON.stringify(rows));
    const res = await api.call('POST', '/documents/document/generate/batch', {
      json: {
        template: { urn: template, loadMethod: 'Storage', fileFormat: 'docx' },
        data: { urn: data, loadMethod: 'Storage' },
        document: { ...doc, name: 'L {name}', options: { strict: true } },
      },
      headers: { 'x-client-authorization': token.body.result.data.token as string },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const id = res.body.result.data.batch.id as string;
    const [delivery] = await receiver.waitFor('/batch-edges', 1, 60_000);
    const summary = JSON.parse(delivery!.body);
    const reason = 'no value for tag "rep" (word/document.xml, paragraph 2)';
    expect(summary.result.data.batch).toMatchObject({
      id,
      status: 'completed',
      rowsDone: 4,
      rowsFailed: 2,
      failures: {
        rowCount: 2,
        items: [
          { row: 5, code: 'TEMPLATE_ERROR', message: expect.stringContaining(reason) },
          { row: 6, code: 'TEMPLATE_ERROR', message: expect.stringContaining(reason) },
        ],
      },
    });
    for (const item of summary.result.data.batch.failures.items)
      expect(item.message.split('no value for tag').length - 1, item.message).toBe(1);
    // The link reads the rows (here the failed ones) with the caller's credentials.
    const link = new URL(summary.result.data.batch.rowsUrl);
    expect(link.pathname).toMatch(new RegExp(`/documents/batch/${id}/rows$`));
    const listed = await api.call('GET', `${link.pathname.replace(/^\/v1/, '')}?status=failed`);
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    expect(listed.body.result.data.rows.map((r: { row: number }) => r.row)).toEqual([5, 6]);
  });
});
