// Async generation end to end against the real worker, Temporal dev server and a real HTTP receiver:
// the client token (5.3) row by row, 201 with an empty body, the callback body (exactly the synchronous
// body, or the error envelope), Standard Webhooks signatures, the retry schedule with Retry-After, 3xx,
// 410 and 4xx rules, and the outbound guard. Delays are milliseconds here (CALLBACK_RETRY_SCHEDULE).
import { Client, Connection, WorkflowFailedError, WorkflowNotFoundError } from '@temporalio/client';
import * as jose from 'jose';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Credentials } from '../../../api/auth/credentials.ts';
import { sealClientJws } from '../../../security/client-token.ts';
import { localSigningKey } from '../../../security/tokens.ts';
import { verifyCallback } from '../../../client/webhooks.ts';
import { inspect } from '../../../engine/index.ts';
import { docxParagraphs, makeDocx } from '../../support/office.ts';
import { client, generateBody } from '../../support/http.ts';
import { localActivities } from '../../support/history.ts';
import { type Stack, startStack } from '../../support/stack.ts';
import { type Delivery, type Receiver, startReceiver } from './receiver.ts';
import { generateWorkflowId } from '../../../api/temporal.ts';

const SCHEDULE = [0, 150, 150, 150];
const MISSING = '3f1e9a43-1111-4c1f-9f3e-3d2b0c8a9e11';

describe('POST /documents/document/generate/async', () => {
  let stack: Stack;
  let creds: Credentials;
  let api: ReturnType<typeof client>;
  let receiver: Receiver;
  let blockedReceiver: Receiver;
  let temporal: Client;
  let connection: Connection;
  let pair: { templateUrn: string; dataUrn: string };

  beforeAll(async () => {
    [stack, receiver, blockedReceiver] = await Promise.all([
      startStack({ outboundAllow: ['127.0.0.1'], callbackRetryScheduleMs: SCHEDULE, callbackTimeoutMs: 2_000 }),
      startReceiver('127.0.0.1'),
      startReceiver('127.0.0.2'),
    ]);
    creds = await stack.credentials();
    api = client(creds);
    connection = await Connection.connect({ address: inject('temporalAddress') });
    temporal = new Client({ connection });
    pair = await uploadPair();
  });
  afterAll(async () => {
    await connection?.close();
    await receiver?.close();
    await blockedReceiver?.close();
    await stack?.stop();
  });

  async function uploadPair(template = makeDocx(['Hello {name}']), data: unknown = { name: 'World' }) {
    const t = await api.upload('template', [{ name: 't.docx', bytes: template }]);
    const d = await api.upload('data', [{ name: 'd.json', bytes: JSON.stringify(data) }]);
    return { templateUrn: t.body.result.data.files[0].id as string, dataUrn: d.body.result.data.files[0].id as string };
  }
  /** A generate that runs consumes its uploads (spec 3), so every run gets a fresh pair. */
  async function freshBody(overrides?: Parameters<typeof generateBody>[2]) {
    const p = await uploadPair();
    return generateBody(p.templateUrn, p.dataUrn, overrides);
  }
  async function token(claims: Record<string, unknown>, c: Credentials = creds) {
    const res = await client(c).call('POST', '/common/client/token', { json: claims });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.result.data as { token: string; webhookSecret: string; expiresAt: string };
  }
  const claimsFor = (dest: string, iss = `${receiver.url}/hooks`) => ({ sub: `callback-token-${dest}`, iss, dest, client_id: 'tests' });
  async function postAsync(json: unknown, clientToken?: string) {
    return api.call('POST', '/documents/document/generate/async', {
      json,
      headers: clientToken === undefined ? {} : { 'x-client-authorization': clientToken },
    });
  }
  /** Waits for the run to end; its result, or the failure's message. */
  async function runOutcome(operationId: string): Promise<{ ok: boolean; value: any }> {
    const handle = temporal.workflow.getHandle(`generate-async-${operationId}`);
    try {
      return { ok: true, value: await handle.result() };
    } catch (err) {
      if (err instanceof WorkflowFailedError) return { ok: false, value: err.cause?.message };
      throw err;
    }
  }
  async function expectNoWorkflow(operationId: string) {
    await expect(temporal.workflow.getHandle(`generate-async-${operationId}`).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
  }
  const json = (d: Delivery | undefined) => JSON.parse(d?.body ?? 'null') as Record<string, any>;

  describe('POST /common/client/token', () => {
    it("returns a sealed token and the webhook secret; iat and exp are the service's", async () => {
      const made = await token({
        ...claimsFor('/x'),
        oid: 'svc-1',
        full_name: 'Ada',
        email: 'ada@example.com',
        locale: 'en-GB',
        zoneinfo: 'Europe/London',
      });
      expect(made.token.split('.')).toHaveLength(5);
      expect(jose.decodeProtectedHeader(made.token)).toMatchObject({ alg: 'dir', enc: 'A256GCM', cty: 'JWT' });
      expect(made.webhookSecret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      const ttl = (Date.parse(made.expiresAt) - Date.now()) / 1000;
      expect(ttl).toBeGreaterThan(stack.config.clientTokenTtlSeconds - 60);
      expect(ttl).toBeLessThanOrEqual(stack.config.clientTokenTtlSeconds);
      // The claims travel encrypted: nothing of them is readable in the token.
      expect(Buffer.from(made.token.split('.')[3] ?? '', 'base64url').toString('latin1')).not.toContain('callback-token');
    });

    it('validates the claims', async () => {
      const cases: [Record<string, unknown>, RegExp][] = [
        [{ iss: receiver.url, dest: '/x' }, /sub is required/],
        [{ sub: 's', dest: '/x' }, /iss is required/],
        [{ sub: 's', iss: receiver.url }, /dest is required/],
        [{ sub: 's', iss: 'not a url', dest: '/x' }, /iss must be an absolute http or https URL/],
        [{ sub: 's', iss: 'ftp://example.com', dest: '/x' }, /iss must be an http or https URL/],
        [{ sub: 's', iss: receiver.url, dest: 'https://evil.example/x' }, /dest must be a route/],
        [{ sub: 's', iss: receiver.url, dest: '/x', exp: 9999999999 }, /exp is not a known property/],
        [{ sub: '', iss: receiver.url, dest: '/x' }, /sub/],
      ];
      for (const [claims, message] of cases) {
        const res = await api.call('POST', '/common/client/token', { json: claims });
        expect(res.status, JSON.stringify(claims)).toBe(400);
        expect(res.body.error.innerErrors[0].code).toBe('VALIDATION_ERROR');
        expect(res.body.error.message).toMatch(message);
      }
    });
  });

  describe('X-Client-Authorization, row by row (5.3)', () => {
    const body = () => generateBody(MISSING, MISSING);
    async function sealed(claims: Record<string, unknown>, sign: (jwt: jose.SignJWT) => Promise<string>) {
      const key = await localSigningKey(stack.service.db);
      return sealClientJws(key, await sign(new jose.SignJWT({ sid: creds.subscriptionId, ...claims })));
    }
    async function serviceSigned(claims: Record<string, unknown>, exp: number) {
      const key = await localSigningKey(stack.service.db);
      const priv = await jose.importJWK(key.privateJwk as jose.JWK, 'ES256');
      return sealed(claims, (jwt) =>
        jwt.setProtectedHeader({ alg: 'ES256', kid: key.kid, typ: 'docgen-client+jwt' }).setIssuedAt().setExpirationTime(exp).sign(priv),
      );
    }
    async function expectRejected(value: string | undefined, status: number, code: string, message: RegExp) {
      const res = await postAsync(body(), value);
      expect(res.status, JSON.stringify(res.body)).toBe(status);
      expect(res.body.error.innerErrors[0].code).toBe(code);
      expect(res.body.error.message).toMatch(message);
      expect(res.body.externalContext).toEqual(body().externalContext);
      await expectNoWorkflow(res.headers.get('x-operation-id') ?? '');
    }

    it('absent: 400 X_CLIENT_AUTH_ERROR', async () => {
      await expectRejected(undefined, 400, 'X_CLIENT_AUTH_ERROR', /missing/);
      await expectRejected('  ', 400, 'X_CLIENT_AUTH_ERROR', /missing/);
    });

    it('wrong key, tampering, bad base64: 400 X_CLIENT_AUTH_ERROR "Invalid format"', async () => {
      const good = (await token(claimsFor('/never'))).token;
      const parts = good.split('.');
      const flip = (s: string) => `${s.slice(0, 5)}${s[5] === 'A' ? 'B' : 'A'}${s.slice(6)}`;
      const tamperedCipher = [parts[0], parts[1], parts[2], flip(parts[3] ?? ''), parts[4]].join('.');
      const tamperedTag = [parts[0], parts[1], parts[2], parts[3], flip(parts[4] ?? '')].join('.');
      const badBase64 = [parts[0], parts[1], parts[2], `${(parts[3] ?? '').slice(0, 10)}!!${(parts[3] ?? '').slice(12)}`, parts[4]].join(
        '.',
      );
      const header = jose.decodeProtectedHeader(good);
      const wrongKey = await new jose.CompactEncrypt(new TextEncoder().encode('x.y.z'))
        .setProtectedHeader({ alg: 'dir', enc: 'A256GCM', kid: header.kid as string, cty: 'JWT' })
        .encrypt(crypto.getRandomValues(new Uint8Array(32)));
      for (const value of [tamperedCipher, tamperedTag, badBase64, wrongKey, 'not-a-token', good.slice(0, -4)]) {
        await expectRejected(value, 400, 'X_CLIENT_AUTH_ERROR', /^Invalid format$/);
      }
    });

    it('unsigned, wrongly signed or expired inner JWT: 401', async () => {
      const claims = claimsFor('/never');
      const unsigned = await sealClientJws(
        await localSigningKey(stack.service.db),
        new jose.UnsecuredJWT({ sid: creds.subscriptionId, ...claims }).setIssuedAt().setExpirationTime('1h').encode(),
      );
      const { privateKey } = await jose.generateKeyPair('ES256');
      const kid = (await localSigningKey(stack.service.db)).kid;
      const forged = await sealed(claims, (jwt) =>
        jwt.setProtectedHeader({ alg: 'ES256', kid, typ: 'docgen-client+jwt' }).setIssuedAt().setExpirationTime('1h').sign(privateKey),
      );
      const exp = Math.floor(Date.now() / 1000) - 5;
      const expired = await serviceSigned(claims, exp);
      for (const value of [unsigned, forged])
        await expectRejected(value, 401, 'UNAUTHORIZED', /^the client authorization token is not signed by this service$/);
      // Expired says so, and when (issue 32).
      await expectRejected(
        expired,
        401,
        'UNAUTHORIZED',
        new RegExp(
          `^the client authorization token expired at ${new Date(exp * 1000).toISOString().replace(/\./g, '\\.')}: make a new one with POST /common/client/token$`,
        ),
      );
      // Still valid: the same construction with a future expiry is accepted (so the rows above fail for the stated reason).
      const fine = await serviceSigned(claims, Math.floor(Date.now() / 1000) + 60);
      const res = await postAsync(await freshBody(), fine);
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      await receiver.waitFor('/hooks/never');
    });

    it('a required claim missing: 400 naming it', async () => {
      const value = await serviceSigned({ sub: 'x', iss: receiver.url }, Math.floor(Date.now() / 1000) + 60);
      await expectRejected(value, 400, 'X_CLIENT_AUTH_ERROR', /lacks required claims: dest/);
    });

    it("another subscription's token: 401", async () => {
      const other = await stack.credentials('tenant-b');
      const theirs = (await token(claimsFor('/never'), other)).token;
      await expectRejected(theirs, 401, 'UNAUTHORIZED', /another subscription/);
    });
  });

  it('converts on the office task queue (bounded by the converter), where a sync generate converts in a local activity', async () => {
    const convertQueue = async (workflowId: string) => {
      const events = (await temporal.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
      return events
        .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'convertDocument')
        .map((e) => e.activityTaskScheduledEventAttributes?.taskQueue?.name);
    };
    const { token: value } = await token(claimsFor('/pdf'));
    const queued = await postAsync(await freshBody({ document: { fileFormat: 'pdf' } }), value);
    expect(queued.status, JSON.stringify(queued.body)).toBe(201);
    const [delivery] = await receiver.waitFor('/hooks/pdf', 1, 60_000);
    expect(json(delivery).result.data.document).toMatchObject({ fileFormat: 'pdf' });
    expect(await convertQueue(`generate-async-${queued.headers.get('x-operation-id')}`)).toEqual([`${stack.config.taskQueue}-office`]);

    const sync = await api.call('POST', '/documents/document/generate', { json: await freshBody({ document: { fileFormat: 'pdf' } }) });
    expect(sync.status, JSON.stringify(sync.body)).toBe(201);
    expect(await convertQueue(generateWorkflowId(creds.subscriptionId, sync.body.operationId))).toEqual([]);
    const markers = localActivities(
      (await temporal.workflow.getHandle(generateWorkflowId(creds.subscriptionId, sync.body.operationId)).fetchHistory()).events,
    ).map((a) => a.type);
    expect(markers).toContain('convertDocument');
  });

  it('succeeds: 201 with an empty body, then the synchronous 201 body at iss+dest, signed', async () => {
    const { token: value, webhookSecret } = await token(claimsFor('/ok'));
    const req = await freshBody({ document: { name: 'async-letter' } });
    const res = await fetch(`${creds.baseUrl}/documents/document/generate/async`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${creds.accessToken}`,
        'x-api-key': creds.apiKey,
        'content-type': 'application/json',
        'x-client-authorization': value,
      },
      body: JSON.stringify(req),
    });
    expect(res.status).toBe(201);
    expect(await res.text()).toBe('');
    const operationId = res.headers.get('x-operation-id') ?? '';
    const [delivery] = await receiver.waitFor('/hooks/ok');
    expect(delivery?.headers.authorization).toBe('Bearer callback-token-/ok');
    expect(delivery?.headers['content-type']).toBe('application/json');
    expect(delivery?.headers['webhook-id']).toBe(`msg_${operationId}`);
    expect(verifyCallback(webhookSecret, delivery?.headers ?? {}, delivery?.body ?? '')).toBe(true);
    expect(verifyCallback(webhookSecret, delivery?.headers ?? {}, `${delivery?.body} `)).toBe(false);
    const body = json(delivery);
    expect(body.result).toMatchObject({ statusCode: 201, message: 'Created' });
    expect(body.result.data.document).toMatchObject({ deliveryMethod: 'Storage', name: 'async-letter.docx', fileFormat: 'docx' });
    expect(body.consumption).toEqual([
      { dimension: 'pages-generated', value: 1 },
      { dimension: 'documents-generated', value: 1 },
    ]);
    expect(body.externalContext).toEqual(req.externalContext);
    expect(body.origin).toBe(`POST ${creds.baseUrl}/documents/document/generate/async`);
    expect(body.operationId).toBe(operationId);
    expect(body.userId).toBe(creds.userId);
    expect(Date.parse(body.dateTime)).toBeGreaterThan(Date.now() - 60_000);
    expect(body.error).toBeUndefined();
    // Exactly the synchronous operation's body shape.
    // (The async run consumed req's uploads, spec 3: the synchronous one gets its own.)
    const sync = await api.call('POST', '/documents/document/generate', { json: await freshBody({ document: { name: 'async-letter' } }) });
    expect(sync.status).toBe(201);
    expect(Object.keys(body).sort()).toEqual(Object.keys(sync.body).sort());
    expect(Object.keys(body.result.data.document).sort()).toEqual(Object.keys(sync.body.result.data.document).sort());
    const file = await api.download(body.result.data.document.urn);
    expect(docxParagraphs(file.bytes)).toEqual(['Hello World']);
    const outcome = await runOutcome(operationId);
    expect(outcome.value.callback).toMatchObject({ delivered: true, attempts: 1, status: 200 });
  });

  it('fails: the error envelope at the callback, no result and no consumption', async () => {
    const { token: value, webhookSecret } = await token(claimsFor('/failed'));
    const res = await postAsync(generateBody(MISSING, (await uploadPair()).dataUrn), value);
    expect(res.status).toBe(201);
    const [delivery] = await receiver.waitFor('/hooks/failed');
    expect(verifyCallback(webhookSecret, delivery?.headers ?? {}, delivery?.body ?? '')).toBe(true);
    const body = json(delivery);
    expect(body.error.statusCode).toBe(400);
    expect(body.error.innerErrors[0].code).toBe('TEMPLATE_NOT_FOUND');
    expect(body.result).toBeUndefined();
    expect(body.consumption).toBeUndefined();
    expect(body.externalContext).toEqual({ correlation: 'abc-123', nested: { n: 1 } });
    expect(body.operationId).toBe(res.headers.get('x-operation-id'));
    expect(body.userId).toBe(creds.userId);
    expect(Object.keys(body).sort()).toEqual(['dateTime', 'error', 'externalContext', 'operationId', 'origin', 'userId']);
  });

  it('a tag without data: the callback body lists it in result.data.warnings, located, as the synchronous 201 would', async () => {
    const { token: value } = await token(claimsFor('/warnings'));
    const template = makeDocx(['Dear {customer.name},', 'your rep is {rep}.']);
    const data = { customer: { name: 'ACME' } };
    const queued = await uploadPair(template, data);
    const res = await postAsync(generateBody(queued.templateUrn, queued.dataUrn), value);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const [delivery] = await receiver.waitFor('/hooks/warnings');
    const body = json(delivery);
    expect(body.result.data.warnings).toEqual([
      {
        code: 'MISSING_VALUE',
        message: 'no value for tag "rep" (word/document.xml, paragraph 2)',
        tag: 'rep',
        location: inspect(template).tags.find((t) => t.source === 'rep')?.location,
      },
    ]);
    expect(body.result.data.warnings[0].location).toMatchObject({ part: 'word/document.xml', paragraph: 2 });
    // The same as the synchronous operation answers for the same request.
    const again = await uploadPair(template, data);
    const sync = await api.call('POST', '/documents/document/generate', { json: generateBody(again.templateUrn, again.dataUrn) });
    expect(sync.status, JSON.stringify(sync.body)).toBe(201);
    expect(sync.body.result.data.warnings).toEqual(body.result.data.warnings);
    expect(docxParagraphs((await api.download(body.result.data.document.urn)).bytes)).toEqual(['Dear ACME,', 'your rep is .']);
  });

  it('delivers what the OpenAPI document says of its callback: the documented headers, a body of the documented schema', async () => {
    const doc = (await (await fetch(`${creds.baseUrl}/openapi.json`)).json()) as any;
    const [expression, item] = Object.entries(
      doc.paths['/v1/documents/document/generate/async'].post.callbacks.result as Record<string, any>,
    )[0]!;
    const documented = item.post;
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);
    ajv.addSchema(doc, 'openapi.json');
    const pointer = [
      'paths',
      '/v1/documents/document/generate/async',
      'post',
      'callbacks',
      'result',
      expression,
      'post',
      'requestBody',
      'content',
      'application/json',
      'schema',
    ];
    const validBody = ajv.compile({ $ref: `openapi.json#/${pointer.map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/')}` });
    const headers = documented.parameters.filter((p: any) => p.in === 'header') as { name: string; required: boolean; schema: object }[];
    // The successes (with and without warnings) and the failure of the tests above: all as documented.
    const deliveries = [...receiver.at('/hooks/ok'), ...receiver.at('/hooks/failed'), ...receiver.at('/hooks/warnings')];
    expect(deliveries).toHaveLength(3);
    for (const d of deliveries) {
      expect(validBody(JSON.parse(d.body)), JSON.stringify(validBody.errors)).toBe(true);
      for (const h of headers) {
        if (h.required) expect(d.headers[h.name], h.name).toBeDefined();
        if (d.headers[h.name] !== undefined)
          expect(ajv.validate(h.schema, d.headers[h.name]), `${h.name}: ${d.headers[h.name]}`).toBe(true);
      }
      // Every header of the webhook's own is documented (the rest is HTTP's: host, content-length...).
      const own = Object.keys(d.headers).filter((n) => n.startsWith('webhook-') || n === 'user-agent');
      expect(own.filter((n) => !headers.some((h) => h.name === n))).toEqual([]);
      expect(d.headers.authorization).toMatch(/^Bearer /);
      expect(doc.components.securitySchemes[Object.keys(documented.security[0])[0]!]).toMatchObject({ type: 'http', scheme: 'bearer' });
      expect(Object.keys(documented.requestBody.content)).toEqual([d.headers['content-type']]);
    }
  });

  it('a 400 at request time queues nothing: no callback ever follows', async () => {
    const { token: value } = await token(claimsFor('/rejected'));
    const rejected = [
      await postAsync({ ...generateBody(pair.templateUrn, pair.dataUrn), document: undefined }, value),
      await postAsync(generateBody(pair.templateUrn, pair.dataUrn, { document: { fileFormat: 'xlsx' } }), value),
      await postAsync(generateBody(pair.templateUrn, pair.dataUrn), undefined),
      await postAsync(generateBody(pair.templateUrn, pair.dataUrn), `${value.slice(0, -3)}abc`),
    ];
    expect(rejected.map((r) => r.status)).toEqual([400, 400, 400, 400]);
    expect(rejected.map((r) => r.body.error.innerErrors[0].code)).toEqual([
      'VALIDATION_ERROR',
      'VALIDATION_ERROR',
      'X_CLIENT_AUTH_ERROR',
      'X_CLIENT_AUTH_ERROR',
    ]);
    for (const r of rejected) await expectNoWorkflow(r.headers.get('x-operation-id') ?? '');
    await new Promise((r) => setTimeout(r, 1_000));
    expect(receiver.at('/hooks/rejected')).toHaveLength(0);
  });

  describe('delivery retries', () => {
    async function start(dest: string) {
      const made = await token(claimsFor(dest));
      const res = await postAsync(await freshBody(), made.token);
      expect(res.status).toBe(201);
      return { operationId: res.headers.get('x-operation-id') ?? '', secret: made.webhookSecret };
    }

    it('503, 503, then 200: one successful delivery, the same webhook-id and body on every attempt, each attempt visible', async () => {
      receiver.script('/hooks/flaky', [{ status: 503 }, { status: 503 }]);
      const { operationId, secret } = await start('/flaky');
      const outcome = await runOutcome(operationId);
      expect(outcome.value.callback).toMatchObject({ delivered: true, attempts: 3, status: 200 });
      const attempts = receiver.at('/hooks/flaky');
      expect(attempts).toHaveLength(3);
      expect(new Set(attempts.map((a) => a.headers['webhook-id']))).toEqual(new Set([`msg_${operationId}`]));
      expect(new Set(attempts.map((a) => a.body)).size).toBe(1);
      for (const a of attempts) expect(verifyCallback(secret, a.headers, a.body)).toBe(true);
      const history = await temporal.workflow.getHandle(`generate-async-${operationId}`).fetchHistory();
      const events = history.events ?? [];
      // Each attempt is a local activity (workflows/callback.ts): a marker with its summary, no activity task.
      const callbackAttempts = localActivities(events).filter((a) => a.type === 'callbackAttempt');
      expect(callbackAttempts).toHaveLength(3);
      expect(callbackAttempts.map((a) => a.summary)).toEqual(
        [1, 2, 3].map((i) => `callback attempt ${i}/4: POST ${receiver.url}/hooks/flaky`),
      );
      expect(events.filter((e) => e.activityTaskScheduledEventAttributes)).toHaveLength(0);
      expect(events.filter((e) => e.timerStartedEventAttributes)).toHaveLength(2);
    });

    it('410 stops at once; the run fails so an operator finds it', async () => {
      receiver.script('/hooks/gone', [{ status: 410 }, { status: 410 }, { status: 410 }, { status: 410 }]);
      const { operationId } = await start('/gone');
      const outcome = await runOutcome(operationId);
      expect(outcome.ok).toBe(false);
      expect(outcome.value).toMatch(/not delivered after 1 attempt\(s\): HTTP 410/);
      expect(receiver.at('/hooks/gone')).toHaveLength(1);
    });

    it('another 4xx stops; 408 and 429 are retried', async () => {
      receiver.script('/hooks/bad', [{ status: 400 }, { status: 400 }]);
      receiver.script('/hooks/slow', [{ status: 408 }, { status: 429 }]);
      const bad = await start('/bad');
      const slow = await start('/slow');
      expect((await runOutcome(bad.operationId)).ok).toBe(false);
      expect(receiver.at('/hooks/bad')).toHaveLength(1);
      expect((await runOutcome(slow.operationId)).value.callback).toMatchObject({ delivered: true, attempts: 3 });
    });

    it('honours Retry-After', async () => {
      receiver.script('/hooks/later', [{ status: 503, headers: { 'retry-after': '2' } }]);
      const { operationId } = await start('/later');
      expect((await runOutcome(operationId)).value.callback).toMatchObject({ delivered: true, attempts: 2 });
      const [first, second] = receiver.at('/hooks/later');
      expect((second?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(1_900);
    });

    it('a 3xx is a failed attempt and is never followed', async () => {
      receiver.script('/hooks/moved', [
        { status: 302, headers: { location: `${blockedReceiver.url}/stolen` } },
        { status: 308, headers: { location: `${receiver.url}/hooks/other` } },
      ]);
      const { operationId } = await start('/moved');
      expect((await runOutcome(operationId)).value.callback).toMatchObject({ delivered: true, attempts: 3 });
      expect(blockedReceiver.at('/stolen')).toHaveLength(0);
      expect(receiver.at('/hooks/other')).toHaveLength(0);
    });

    it('gives up after the last scheduled attempt', async () => {
      receiver.script(
        '/hooks/down',
        SCHEDULE.map(() => ({ status: 500 })),
      );
      const { operationId } = await start('/down');
      const outcome = await runOutcome(operationId);
      expect(outcome.ok).toBe(false);
      expect(outcome.value).toMatch(/after 4 attempt\(s\).*HTTP 500/);
      expect(receiver.at('/hooks/down')).toHaveLength(4);
    });
  });

  it('refuses a callback to an address outside the allow-list (127.0.0.2, [::ffff:127.0.0.2]) before queueing anything', async () => {
    for (const iss of [`${blockedReceiver.url}/hooks`, `http://[::ffff:127.0.0.2]:${blockedReceiver.port}/hooks`]) {
      // The token route refuses it...
      const made = await api.call('POST', '/common/client/token', { json: claimsFor('/blocked', iss) });
      expect(made.status, JSON.stringify(made.body)).toBe(400);
      expect(made.body.error.innerErrors[0].code).toBe('X_CLIENT_AUTH_ERROR');
      expect(made.body.error.message).toMatch(/cannot be called back: .* is not reachable from this service \(loopback.*OUTBOUND_ALLOW/);
      // ...and so does async generate for a token made before (another allow-list, a changed DNS answer).
      const key = await localSigningKey(stack.service.db);
      const priv = await jose.importJWK(key.privateJwk as jose.JWK, 'ES256');
      const old = await sealClientJws(
        key,
        await new jose.SignJWT({ sid: creds.subscriptionId, ...claimsFor('/blocked', iss) })
          .setProtectedHeader({ alg: 'ES256', kid: key.kid, typ: 'docgen-client+jwt' })
          .setIssuedAt()
          .setExpirationTime('5m')
          .sign(priv),
      );
      const res = await postAsync(await freshBody(), old);
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.error.innerErrors[0].code).toBe('X_CLIENT_AUTH_ERROR');
      expect(res.body.error.message).toMatch(/not reachable from this service/);
      await expectNoWorkflow(res.headers.get('x-operation-id') ?? '');
    }
    expect(blockedReceiver.deliveries).toHaveLength(0);
  });
});
