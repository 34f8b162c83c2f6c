// Idempotency-Key on generate, async generate and manage, against the real worker, Temporal and database:
// a retried request with the same key gets the first request's outcome (one document, one callback), also
// after the first run finished; the same key with a different body is a 409.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Credentials } from '../../../api/auth/credentials.ts';
import { makeDocx } from '../../support/office.ts';
import { client, generateBody } from '../../support/http.ts';
import { type Stack, startStack } from '../../support/stack.ts';
import { type Receiver, startReceiver } from '../async/receiver.ts';

describe('Idempotency-Key', () => {
  let stack: Stack;
  let creds: Credentials;
  let api: ReturnType<typeof client>;
  let receiver: Receiver;

  beforeAll(async () => {
    [stack, receiver] = await Promise.all([
      startStack({ outboundAllow: ['127.0.0.1'], callbackRetryScheduleMs: [0, 200] }),
      startReceiver('127.0.0.1'),
    ]);
    creds = await stack.credentials();
    api = client(creds);
  });
  afterAll(async () => {
    await receiver?.close();
    await stack?.stop();
  });

  async function uploadPair() {
    const t = await api.upload('template', [{ name: 't.docx', bytes: makeDocx(['Hello {name}']) }]);
    const d = await api.upload('data', [{ name: 'd.json', bytes: JSON.stringify({ name: 'World' }) }]);
    return { templateUrn: t.body.result.data.files[0].id as string, dataUrn: d.body.result.data.files[0].id as string };
  }
  const generate = (json: unknown, key?: string) =>
    api.call('POST', '/documents/document/generate', { json, headers: key ? { 'idempotency-key': key } : {} });
  async function documentsWithUrn(urn: string): Promise<number> {
    const r = await stack.service.db.query<{ n: string }>('SELECT count(*) AS n FROM documents WHERE urn = $1', [urn]);
    return Number(r.rows[0]?.n);
  }

  it('sync generate: the same key twice (concurrently, then after completion) -> the same document, recorded once', async () => {
    const { templateUrn, dataUrn } = await uploadPair();
    const body = generateBody(templateUrn, dataUrn);
    const [a, b] = await Promise.all([generate(body, 'order-42'), generate(body, 'order-42')]);
    expect(a.status, JSON.stringify(a.body)).toBe(201);
    expect(b.status, JSON.stringify(b.body)).toBe(201);
    expect(b.body.result.data.document).toEqual(a.body.result.data.document);
    // After the run completed (and consumed its uploads) a retry reads its result instead of running again.
    const c = await generate(body, 'order-42');
    expect(c.status, JSON.stringify(c.body)).toBe(201);
    expect(c.body.result.data.document).toEqual(a.body.result.data.document);
    expect(c.body.consumption).toEqual(a.body.consumption);
    expect(await documentsWithUrn(a.body.result.data.document.urn)).toBe(1);
    const r = await stack.service.db.query<{ n: string }>(
      'SELECT count(*) AS n FROM documents WHERE subscription_guid = $1 AND title = $2',
      [creds.subscriptionId, 'letter.docx'],
    );
    expect(Number(r.rows[0]?.n)).toBe(1);
  });

  it('a failed run is the outcome too: the retry gets the same 400, not a new attempt', async () => {
    const { dataUrn } = await uploadPair();
    const body = generateBody('3f1e9a43-1111-4c1f-9f3e-3d2b0c8a9e11', dataUrn);
    const a = await generate(body, 'fails');
    const b = await generate(body, 'fails');
    expect(a.status).toBe(400);
    expect(b.status).toBe(400);
    expect(b.body.error.innerErrors).toEqual(a.body.error.innerErrors);
  });

  it('the same key with a different body: 409 IDEMPOTENCY_KEY_REUSED; keys are per subscription; a bad key is 400', async () => {
    const { templateUrn, dataUrn } = await uploadPair();
    expect((await generate(generateBody(templateUrn, dataUrn), 'k-1')).status).toBe(201);
    const other = await generate(generateBody(templateUrn, dataUrn, { document: { name: 'other' } }), 'k-1');
    expect(other.status).toBe(409);
    expect(other.body.error.innerErrors[0].code).toBe('IDEMPOTENCY_KEY_REUSED');
    // Another subscription's k-1 is its own request (and cannot see my uploads).
    const foreign = await client(await stack.credentials('idem-other')).call('POST', '/documents/document/generate', {
      json: generateBody(templateUrn, dataUrn),
      headers: { 'idempotency-key': 'k-1' },
    });
    expect(foreign.status).toBe(400);
    expect(foreign.body.error.innerErrors[0].code).toBe('TEMPLATE_NOT_FOUND');
    const bad = await generate(generateBody(templateUrn, dataUrn), 'x'.repeat(256));
    expect(bad.status).toBe(400);
    expect(bad.body.error.innerErrors[0].message).toContain('Idempotency-Key');
  });

  it('async generate: the same key twice -> one run, one callback', async () => {
    const made = await api.call('POST', '/common/client/token', {
      json: { sub: 'cb-token', iss: `${receiver.url}/hooks`, dest: '/idem', client_id: 'tests' },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    const token: string = made.body.result.data.token;
    const { templateUrn, dataUrn } = await uploadPair();
    const body = { ...generateBody(templateUrn, dataUrn), externalContext: { job: 'idem-async' } };
    const post = () =>
      api.call('POST', '/documents/document/generate/async', {
        json: body,
        headers: { 'x-client-authorization': token, 'idempotency-key': 'async-1' },
      });
    const first = await post();
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    expect((await post()).status).toBe(201);
    const [delivery] = await receiver.waitFor('/hooks/idem', 1);
    expect((await post()).status).toBe(201);
    await new Promise((r) => setTimeout(r, 1_500));
    expect(receiver.at('/hooks/idem')).toHaveLength(1);
    const sent = JSON.parse(delivery!.body);
    expect(sent.result.statusCode).toBe(201);
    expect(sent.externalContext).toEqual({ job: 'idem-async' });
    expect(await documentsWithUrn(sent.result.data.document.urn)).toBe(1);
  });

  it('manage: the same key twice -> one copy', async () => {
    const { templateUrn, dataUrn } = await uploadPair();
    const gen = await generate(generateBody(templateUrn, dataUrn, { document: { name: 'to-copy' } }));
    expect(gen.status).toBe(201);
    const json = {
      sourceDocument: { urn: gen.body.result.data.document.urn, fileFormat: 'docx', loadMethod: 'Storage', remove: 'none' },
      targetDocument: { name: 'copied-once', fileFormat: 'docx', deliveryMethod: 'Storage', path: 'root' },
    };
    const manage = () => api.call('POST', '/documents/document/manage', { json, headers: { 'idempotency-key': 'copy-1' } });
    const a = await manage();
    const b = await manage();
    expect(a.status, JSON.stringify(a.body)).toBe(201);
    expect(b.status).toBe(201);
    expect(b.body.result.data.document).toEqual(a.body.result.data.document);
    const r = await stack.service.db.query<{ n: string }>(
      'SELECT count(*) AS n FROM documents WHERE subscription_guid = $1 AND title = $2',
      [creds.subscriptionId, 'copied-once.docx'],
    );
    expect(Number(r.rows[0]?.n)).toBe(1);
    const different = await api.call('POST', '/documents/document/manage', {
      json: { ...json, targetDocument: { ...json.targetDocument, name: 'x' } },
      headers: { 'idempotency-key': 'copy-1' },
    });
    expect(different.status).toBe(409);
    expect(different.body.error).toMatchObject({ statusCode: '409', externalErrors: [] });
  });
});
