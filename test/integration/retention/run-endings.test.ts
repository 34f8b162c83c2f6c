// Nothing is left behind, however a run ends (issue 28 §3): a generate cancelled mid-run consumes its
// uploads (spec 3: on success or failure) and discards its scratch files like any other ending; and the
// scratch files of runs that ran no code at their end (stopped by the server) are removed by the upload
// sweeper once they are older than the longest run, on the directory store (through the real sweeper
// workflow) and on S3.
import fs from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { retentionActivities } from '../../../activities/retention.ts';
import type { ActivityDeps } from '../../../activities/deps.ts';
import { generateWorkflowId } from '../../../api/temporal.ts';
import { RUN_TIME_LIMIT_MS } from '../../../core/run.ts';
import { client, generateBody } from '../../support/http.ts';
import { type Held, type S3Proxy, s3ProxyEnv, startS3Proxy } from '../../support/s3-hold.ts';
import { type Stack, startStack } from '../../support/stack.ts';

describe('a cancelled generate', () => {
  let proxy: S3Proxy;
  let stack: Stack;
  let connection: Connection;
  const holds: Held[] = [];
  beforeAll(async () => {
    proxy = await startS3Proxy(inject('s3Endpoint'));
    const s3 = await s3ProxyEnv(proxy);
    stack = await startStack({ converterPoolSize: 1, ...s3.settings, s3Endpoint: proxy.endpoint }, { storage: 'directory' });
    connection = await Connection.connect({ address: inject('temporalAddress') });
  });
  afterEach(() => {
    for (const held of holds.splice(0)) held.release();
  });
  afterAll(async () => {
    await connection?.close();
    await stack?.stop();
    await proxy?.close();
  });

  it('consumes its uploads and discards its scratch files', async () => {
    const creds = await stack.credentials();
    const api = client(creds);
    const { templateUrn, dataUrn } = await api.uploadPair();
    // The conversion's output never reaches the store: the run is inside its conversion, its merged file
    // already in scratch, when it is cancelled.
    const held = proxy.hold((r) => r.method === 'PUT' && r.path.includes('/scratch/') && r.path.endsWith('/output.pdf'), { drop: true });
    holds.push(held);
    const answer = api.call('POST', '/documents/document/generate', {
      json: generateBody(templateUrn, dataUrn, { document: { fileFormat: 'pdf' } }),
      headers: { 'idempotency-key': 'cancel-me' },
    });
    answer.catch(() => undefined);
    await held.arrived;
    expect(await stack.blobs.list('scratch/')).not.toEqual([]);
    const handle = new Client({ connection }).workflow.getHandle(generateWorkflowId(creds.subscriptionId, 'cancel-me'));
    await handle.cancel();
    // The run ends while its conversion is still held: the cancellation, not a failed step, ends it.
    await expect(handle.result()).rejects.toThrow(/cancel/i);
    held.release();
    expect((await answer).status).not.toBe(201);
    // The cancelled conversion wrote nothing after the run's end: its held PUT was aborted, not retried once
    // dropped (the AWS SDK retries a dropped request within about a second; a late retry would leave
    // output.pdf in the scratch the end discarded).
    await new Promise((r) => setTimeout(r, 3_000));
    const outputPuts = proxy.log.filter((c) => c.method === 'PUT' && c.path.endsWith('/output.pdf'));
    expect(outputPuts.map((c) => c.status)).toEqual([0]);

    const rows = await stack.service.db.query<{ removed: boolean }>(
      'SELECT removed_date IS NOT NULL AS removed FROM stored_files WHERE id = ANY($1::uuid[])',
      [[templateUrn, dataUrn]],
    );
    expect(rows.rows).toEqual([{ removed: true }, { removed: true }]);
    expect(await stack.blobs.list('scratch/')).toEqual([]);
  });
});

describe('the scratch sweep', () => {
  it('the upload sweeper removes scratch files older than the longest run, and only those (directory store)', async () => {
    const stack = await startStack({ uploadSweepSeconds: 1 }, { storage: 'directory' });
    try {
      const old = ['scratch/generate-lost/merged.docx', 'scratch/generate-lost/output.pdf'];
      for (const key of [...old, 'scratch/generate-running/merged.docx']) await stack.blobs.put(key, new TextEncoder().encode(key));
      // Written a little longer ago than the longest run: nothing that can still be open wrote them.
      const then = new Date(Date.now() - RUN_TIME_LIMIT_MS - 60_000);
      for (const key of old) fs.utimesSync(path.join(stack.config.dataDir, 'storage', ...key.split('/')), then, then);
      const deadline = Date.now() + 30_000;
      while ((await stack.blobs.list('scratch/')).length > 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
      expect(await stack.blobs.list('scratch/')).toEqual(['scratch/generate-running/merged.docx']);
      // The directory of the swept run went with its last file.
      expect(fs.existsSync(path.join(stack.config.dataDir, 'storage', 'scratch', 'generate-lost'))).toBe(false);
    } finally {
      await stack.stop();
    }
  });

  it("on S3, by the objects' LastModified", async () => {
    const stack = await startStack({}, { storage: 's3' });
    try {
      const { sweepUploads } = retentionActivities({ db: stack.service.db, blobs: stack.blobs } as ActivityDeps);
      await stack.blobs.put('scratch/manage-lost/output.pdf', new TextEncoder().encode('old'));
      // S3 keeps LastModified to the second: 5 s apart, with a 3 s age, tells the two apart.
      await new Promise((r) => setTimeout(r, 5_000));
      await stack.blobs.put('scratch/manage-running/output.pdf', new TextEncoder().encode('new'));
      expect(await sweepUploads({ limit: 100, scratchOlderThanMs: 3_000 })).toEqual({ erased: 0, scratch: 1 });
      expect(await stack.blobs.list('scratch/')).toEqual(['scratch/manage-running/output.pdf']);
    } finally {
      await stack.stop();
    }
  });
});
