// Upload retention (spec 3, 8) against the real worker, Temporal and database: an uploaded template or data
// file is removed when a generate consumes it (success or failure) or when UPLOAD_RETENTION_SECONDS have
// passed, whichever comes first; the template record naming it survives and its urn stops resolving. A
// consumed upload's bytes stay (readable by the consuming run alone, should a step of it run again after a
// lost workflow task) until the upload sweeper (one workflow per task queue, every UPLOAD_SWEEP_SECONDS)
// erases them after the retention period.
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Credentials } from '../../../api/auth/credentials.ts';
import { ensureUploadSweeper, generateWorkflowId, uploadSweeperId } from '../../../api/temporal.ts';
import { insertFile } from '../../../store/files.ts';
import { client, generateBody } from '../../support/http.ts';
import { type Stack, startStack } from '../../support/stack.ts';

const RETENTION_S = 5;
const MISSING = '3f1e9a43-1111-4c1f-9f3e-3d2b0c8a9e11';

describe('upload retention', () => {
  let stack: Stack;
  let creds: Credentials;
  let api: ReturnType<typeof client>;
  let connection: Connection;
  let temporal: Client;

  beforeAll(async () => {
    stack = await startStack({ uploadRetentionSeconds: RETENTION_S, uploadSweepSeconds: 1 });
    creds = await stack.credentials();
    api = client(creds);
    connection = await Connection.connect({ address: inject('temporalAddress') });
    temporal = new Client({ connection });
  });
  afterAll(async () => {
    await connection?.close();
    await stack?.stop();
  });

  const uploadPair = () => api.uploadPair();
  async function row(id: string) {
    const r = await stack.service.db.query<{ removed_date: Date | null; expires_date: Date; blob_key: string; consumed_by: string | null }>(
      'SELECT removed_date, expires_date, blob_key, consumed_by FROM stored_files WHERE id = $1',
      [id],
    );
    const found = r.rows[0];
    if (!found) throw new Error(`no row ${id}`);
    return { ...found, blobExists: await stack.blobs.exists(found.blob_key) };
  }
  async function until<T>(fn: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 15_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const v = await fn();
      if (ok(v) || Date.now() > deadline) return v;
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  it('a successful generate consumes its template and data at once; a second generate cannot use them', async () => {
    const { templateUrn, dataUrn } = await uploadPair();
    const gen = await api.call('POST', '/documents/document/generate', { json: generateBody(templateUrn, dataUrn) });
    expect(gen.status, JSON.stringify(gen.body)).toBe(201);
    const run = await temporal.workflow.getHandle(generateWorkflowId(creds.subscriptionId, gen.body.operationId)).describe();
    for (const id of [templateUrn, dataUrn]) {
      const r = await row(id);
      expect(r.removed_date).not.toBeNull();
      expect(r.removed_date!.getTime()).toBeLessThan(r.expires_date.getTime());
      // Consumed by this run; the bytes wait for the retention timer.
      expect(r.consumed_by).toBe(run.runId);
      expect(r.blobExists).toBe(true);
    }
    const again = await api.call('POST', '/documents/document/generate', { json: generateBody(templateUrn, dataUrn) });
    expect(again.status).toBe(400);
    expect(again.body.error.innerErrors[0].code).toBe('TEMPLATE_NOT_FOUND');
    // The delivered document is not an upload: it stays.
    expect((await api.download(gen.body.result.data.document.urn)).status).toBe(200);
  });

  it('a failed generate consumes too, even when it fails before loading the data', async () => {
    const { dataUrn } = await uploadPair();
    const res = await api.call('POST', '/documents/document/generate', { json: generateBody(MISSING, dataUrn) });
    expect(res.status).toBe(400);
    expect(res.body.error.innerErrors[0].code).toBe('TEMPLATE_NOT_FOUND');
    const r = await row(dataUrn);
    expect(r.removed_date).not.toBeNull();
    expect(r.consumed_by).not.toBeNull();
  });

  it('a request rejected by validation (no workflow) consumes nothing', async () => {
    const { templateUrn, dataUrn } = await uploadPair();
    const res = await api.call('POST', '/documents/document/generate', {
      json: generateBody(templateUrn, dataUrn, { document: { fileFormat: 'xlsx' } }),
    });
    expect(res.status).toBe(400);
    expect((await row(templateUrn)).removed_date).toBeNull();
    expect((await row(dataUrn)).removed_date).toBeNull();
  });

  it('another subscription cannot consume my upload', async () => {
    const { templateUrn, dataUrn } = await uploadPair();
    const other = client(await stack.credentials('retention-other'));
    const res = await other.call('POST', '/documents/document/generate', { json: generateBody(templateUrn, dataUrn) });
    expect(res.status).toBe(400);
    expect((await row(templateUrn)).removed_date).toBeNull();
    expect((await row(dataUrn)).blobExists).toBe(true);
  });

  it('an unused upload is removed when its retention period ends; the template record survives, its urn no longer resolves', async () => {
    const { templateUrn, dataUrn } = await uploadPair();
    const created = await api.call('POST', '/documents/template/create', {
      json: { documentTemplate: { name: 'kept', urn: templateUrn, loadMethod: 'Storage', fileFormat: 'docx' } },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const recordId: string = created.body.result.data.documentTemplate.id;
    // No workflow per upload: one sweeper per task queue, which an operator can find.
    expect((await temporal.workflow.count(`WorkflowId = "upload-retention-${templateUrn}"`)).count).toBe(0);
    const sweeper = await temporal.workflow.getHandle(uploadSweeperId(stack.config.taskQueue)).describe();
    expect(sweeper.type).toBe('uploadSweeper');
    expect(sweeper.status.name).toBe('RUNNING');
    expect(await sweeper.staticSummary()).toContain('every 1 s');
    expect((await row(templateUrn)).removed_date).toBeNull();

    for (const id of [templateUrn, dataUrn]) {
      const r = await until(
        () => row(id),
        (v) => v.removed_date !== null && !v.blobExists,
      );
      expect(r.removed_date).not.toBeNull();
      expect(r.removed_date!.getTime()).toBeGreaterThanOrEqual(r.expires_date.getTime());
      expect(r.blobExists).toBe(false);
    }
    const res = await api.call('POST', '/documents/document/generate', { json: generateBody(templateUrn, dataUrn) });
    expect(res.status).toBe(400);
    expect(res.body.error.innerErrors[0].code).toBe('TEMPLATE_NOT_FOUND');
    const kept = await api.call('GET', `/documents/template/${recordId}/get`);
    expect(kept.status).toBe(200);
    expect(kept.body.result.data.documentTemplate.urn).toBe(templateUrn);
  });

  it("a consumed upload's bytes are erased by the sweep after its retention period (the row was removed by the generate)", async () => {
    const { templateUrn, dataUrn } = await uploadPair();
    expect((await api.call('POST', '/documents/document/generate', { json: generateBody(templateUrn, dataUrn) })).status).toBe(201);
    const consumed = await row(dataUrn);
    expect(consumed.blobExists).toBe(true);
    const r = await until(
      () => row(dataUrn),
      (v) => !v.blobExists,
    );
    expect(r.blobExists).toBe(false);
    expect(Date.now()).toBeGreaterThanOrEqual(r.expires_date.getTime());
    // The removal date stays the consumption's.
    expect(r.removed_date!.getTime()).toBe(consumed.removed_date!.getTime());
  });

  it('an API that starts again hands its settings to the running sweeper, which sweeps with them at once', async () => {
    const handle = temporal.workflow.getHandle(uploadSweeperId(stack.config.taskQueue));
    const before = await handle.describe();
    // A sweep every minute, one upload per batch.
    const slow = { intervalMs: 60_000, batch: 1 };
    await ensureUploadSweeper({ client: temporal, taskQueue: stack.config.taskQueue }, slow);
    const after = await handle.describe();
    expect(after.runId).toBe(before.runId);
    expect(after.status.name).toBe('RUNNING');
    // The round these settings start is over: its last sweepUploads (scheduled after the signal) completed and
    // found nothing left (erased 0; uploads of the earlier tests may expire meanwhile, one batch each), so the
    // sweeper sleeps for a minute.
    const roundOver = async () => {
      const events = (await handle.fetchHistory()).events ?? [];
      const signalled = Math.max(...events.filter((e) => e.workflowExecutionSignaledEventAttributes).map((e) => Number(e.eventId)));
      const last = events.filter((e) => e.activityTaskScheduledEventAttributes && Number(e.eventId) > signalled).at(-1);
      const done =
        last && events.find((e) => String(e.activityTaskCompletedEventAttributes?.scheduledEventId ?? '') === String(last.eventId));
      const result = done?.activityTaskCompletedEventAttributes?.result?.payloads?.[0]?.data;
      return result ? (JSON.parse(new TextDecoder().decode(result)) as { erased: number }).erased === 0 : false;
    };
    expect(await until(roundOver, (done) => done)).toBe(true);
    // Four uploads whose period is over (as if uploaded a day ago), swept only when the next settings come:
    // one round takes four batches of one.
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const id = randomUUID();
      const blobKey = `subscriptions/${creds.subscriptionId}/uploads/${id}`;
      const put = await stack.blobs.put(blobKey, new TextEncoder().encode('{}'));
      await insertFile(stack.service.db, {
        id,
        subscriptionId: creds.subscriptionId,
        ownerId: creds.userId,
        kind: 'data',
        fileName: `old-${i}.json`,
        path: '',
        contentType: 'application/json',
        size: put.size,
        sha256: put.sha256,
        blobKey,
        expiresDate: new Date(Date.now() - 1_000),
      });
      ids.push(id);
    }
    await new Promise((r) => setTimeout(r, 1_000));
    for (const id of ids) expect((await row(id)).blobExists).toBe(true);
    await ensureUploadSweeper({ client: temporal, taskQueue: stack.config.taskQueue }, slow);
    for (const id of ids) {
      // The sweep erases the bytes, then marks the rows: wait for both (PostgreSQL showed the gap).
      const r = await until(
        () => row(id),
        (v) => !v.blobExists && v.removed_date !== null,
        5_000,
      );
      expect(r.blobExists).toBe(false);
      expect(r.removed_date).not.toBeNull();
    }
    await ensureUploadSweeper({ client: temporal, taskQueue: stack.config.taskQueue }, { intervalMs: 1_000, batch: 200 });
  });

  it('a per-upload retention timer started before the sweep existed still ends and erases its upload', async () => {
    const { templateUrn } = await uploadPair();
    const r0 = await row(templateUrn);
    const handle = await temporal.workflow.start('uploadRetention', {
      taskQueue: stack.config.taskQueue,
      workflowId: `upload-retention-${templateUrn}`,
      args: [
        {
          subscriptionId: creds.subscriptionId,
          fileId: templateUrn,
          fileName: 't.docx',
          kind: 'template',
          blobKey: r0.blob_key,
          retentionMs: 200,
        },
      ],
    });
    expect(await handle.result()).toEqual({ removed: true });
    const r = await row(templateUrn);
    expect(r.removed_date).not.toBeNull();
    expect(r.removed_date!.getTime()).toBeLessThan(r.expires_date.getTime());
    expect(r.blobExists).toBe(false);
  });
});
