// The caller's deadline is the API's wait, not the run's life (issue 28 §1). With GENERATE_TIMEOUT_MS at
// 1 s and the run held past it inside a step (its S3 request held by a proxy, test/support/s3-hold.ts),
// the caller gets a 504 that says the operation may still complete and which Idempotency-Key reads its
// outcome (its own, or its operationId when it sent none); the held step then goes on, the run delivers,
// records, consumes its uploads and discards its scratch once, and the retry with the key returns that
// document. Before, the server ended the run at the caller's deadline, the 504 said "nothing was
// delivered" while the step went on writing, and the retry read the same closed run.
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Credentials } from '../../api/auth/credentials.ts';
import { client, generateBody, type Reply } from '../support/http.ts';
import { type Held, type S3Proxy, s3ProxyEnv, startS3Proxy } from '../support/s3-hold.ts';
import { type Stack, startStack } from '../support/stack.ts';

describe('a sync operation that outlasts GENERATE_TIMEOUT_MS', () => {
  let proxy: S3Proxy;
  let stack: Stack;
  let creds: Credentials;
  let api: ReturnType<typeof client>;
  let documents: string;
  const holds: Held[] = [];
  /** Holds the delivery (a copy into documents/) until released; a failed test releases it too. */
  const holdDelivery = () => {
    const held = proxy.hold((r) => r.method === 'PUT' && r.path.startsWith(documents));
    holds.push(held);
    return held;
  };

  beforeAll(async () => {
    proxy = await startS3Proxy(inject('s3Endpoint'));
    const s3 = await s3ProxyEnv(proxy);
    stack = await startStack(
      { generateTimeoutMs: 1_000, converterPoolSize: 1, ...s3.settings, s3Endpoint: proxy.endpoint },
      { storage: 'directory' },
    );
    creds = await stack.credentials();
    api = client(creds);
    const url = new URL(s3.settings.storageUrl ?? '');
    documents = `/${url.hostname}${url.pathname.replace(/\/?$/, '/')}subscriptions/${creds.subscriptionId}/documents/`;
  });
  afterEach(() => {
    for (const held of holds.splice(0)) held.release();
  });
  afterAll(async () => {
    await stack?.stop();
    await proxy?.close();
  });

  /** The 504 of a caller whose wait ended first: it may still complete, and `key` reads the outcome. */
  function expectStillRunning(res: Reply, retryWith: string) {
    expect(res.status, JSON.stringify(res.body)).toBe(504);
    const inner = res.body.error.innerErrors[0];
    expect(inner.code).toBe('GENERATION_TIMEOUT');
    expect(inner.message).toContain('may still deliver');
    expect(inner.message).not.toContain('nothing was delivered');
    expect(inner.message).toContain(retryWith);
  }

  /** Sends the request again with `key` until its outcome is there (a run still going answers the same 504). */
  async function outcome(route: string, json: unknown, key: string): Promise<Reply> {
    for (let i = 0; i < 60; i++) {
      const res = await api.call('POST', route, { json, headers: { 'idempotency-key': key } });
      if (res.status !== 504) return res;
      expectStillRunning(res, 'the same Idempotency-Key');
    }
    throw new Error(`no outcome for ${key} after 60 waits`);
  }

  async function metering(operationId: string) {
    return (
      await stack.service.db.query<{ dimension: string; value: number }>(
        'SELECT dimension, value FROM consumption WHERE operation_id = $1 ORDER BY dimension',
        [operationId],
      )
    ).rows;
  }

  it('a pdf generate without a key: 504 naming its operationId as the key; that key returns the delivered pdf, recorded once', async () => {
    const { templateUrn, dataUrn } = await api.uploadPair();
    const body = generateBody(templateUrn, dataUrn, { document: { name: 'late', fileFormat: 'pdf' } });
    // The delivery waits until the caller has been answered.
    const held = holdDelivery();
    const first = await api.call('POST', '/documents/document/generate', { json: body });
    const operationId: string = first.body.operationId;
    expectStillRunning(first, `Idempotency-Key: ${operationId}`);
    await held.arrived;
    held.release();

    const done = await outcome('/documents/document/generate', body, operationId);
    expect(done.status, JSON.stringify(done.body)).toBe(201);
    const doc = done.body.result.data.document;
    expect(doc).toMatchObject({ deliveryMethod: 'Storage', name: 'late.pdf', fileFormat: 'pdf' });
    const pdf = await api.download(doc.urn);
    expect(Buffer.from(pdf.bytes).subarray(0, 5).toString('latin1')).toBe('%PDF-');
    // One document record and one metering, under the first request's operation.
    expect((await stack.service.db.query('SELECT 1 FROM documents WHERE urn = $1', [doc.urn])).rows).toHaveLength(1);
    expect(await metering(operationId)).toEqual([
      { dimension: 'documents-generated', value: 1 },
      { dimension: 'pages-generated', value: 1 },
    ]);
    expect(done.body.consumption).toEqual([
      { dimension: 'pages-generated', value: 1 },
      { dimension: 'documents-generated', value: 1 },
    ]);
    // The run ended as runs do: its uploads consumed, its scratch files gone.
    const rows = await stack.service.db.query('SELECT 1 FROM stored_files WHERE id = ANY($1::uuid[]) AND removed_date IS NOT NULL', [
      [templateUrn, dataUrn],
    ]);
    expect(rows.rows).toHaveLength(2);
    expect(await stack.blobs.list('scratch/')).toEqual([]);
  });

  it('a move with a key: 504 while the target is written, then the same key returns the moved document; the source is gone', async () => {
    const { templateUrn, dataUrn } = await api.uploadPair();
    const generated = await api.call('POST', '/documents/document/generate', {
      json: generateBody(templateUrn, dataUrn, { document: { name: 'source' } }),
    });
    expect(generated.status, JSON.stringify(generated.body)).toBe(201);
    const source: string = generated.body.result.data.document.urn;
    const move = {
      sourceDocument: { urn: source, fileFormat: 'docx', loadMethod: 'Storage', remove: 'delete' },
      targetDocument: { name: 'moved', fileFormat: 'docx', deliveryMethod: 'Storage', path: 'root/archive' },
    };
    const held = holdDelivery();
    const first = await api.call('POST', '/documents/document/manage', { json: move, headers: { 'idempotency-key': 'move-1' } });
    expectStillRunning(first, 'the same Idempotency-Key');
    await held.arrived;
    held.release();

    const done = await outcome('/documents/document/manage', move, 'move-1');
    expect(done.status, JSON.stringify(done.body)).toBe(201);
    const target: string = done.body.result.data.document.urn;
    expect(target).not.toBe(source);
    expect((await api.download(target)).status).toBe(200);
    expect((await api.download(source)).status).toBe(404);
    // The record moved with the file (one record, at the target), metered once.
    expect(
      (await stack.service.db.query('SELECT urn FROM documents WHERE urn = ANY($1::text[]) AND NOT is_deleted', [[source, target]])).rows,
    ).toEqual([{ urn: target }]);
    expect((await metering(first.body.operationId)).map((m) => m.dimension)).toEqual(['documents-managed', 'pages-managed']);
  });
});
