// An API key sent as `?apiKey=` (spec 5.1) never leaves the process (issue 11 §3): not in `origin` of the
// responses, not in the callback body POSTed to a third party, not in the workflow histories (what the
// Temporal UI shows), not in the request log. The real service, Temporal dev server and a real receiver.
import { Writable } from 'node:stream';
import { Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Credentials } from '../../../api/auth/credentials.ts';
import { redactUrl } from '../../../api/envelope.ts';
import { historyText } from '../../support/history.ts';
import { makeDocx } from '../../support/office.ts';
import { client, generateBody } from '../../support/http.ts';
import { type Stack, startStack } from '../../support/stack.ts';
import { type Receiver, startReceiver } from '../async/receiver.ts';
import { generateWorkflowId, manageWorkflowId } from '../../../api/temporal.ts';

describe('redactUrl', () => {
  it('drops the apiKey parameter however it is spelled, and keeps the rest of the query as sent', () => {
    expect(redactUrl('/v1/x?apiKey=k1')).toBe('/v1/x');
    expect(redactUrl('/v1/x?a=1&apiKey=k1&b=%20two')).toBe('/v1/x?a=1&b=%20two');
    expect(redactUrl('/v1/x?APIKEY=k1&apikey=k2&api%4Bey=k3&api%4bEY=k4&a=1')).toBe('/v1/x?a=1');
    expect(redactUrl('/v1/x?apiKey&apiKey=&a')).toBe('/v1/x?a');
    expect(redactUrl('/v1/x?apiKeys=not-a-key')).toBe('/v1/x?apiKeys=not-a-key');
    expect(redactUrl('/v1/x')).toBe('/v1/x');
  });

  it('drops every key-like spelling the service refuses, since a refused request is echoed and logged too (issue 25)', () => {
    const spellings = [
      'api_key',
      'API_KEY',
      'api-key',
      'Api.Key',
      'x-api-key',
      'X_API_KEY',
      'apiKey[]',
      'apiKey%5B%5D',
      'apiKey[0]',
      'api_key[x]',
      'api%5Fkey',
      'api%255Fkey',
      'api+key',
      'key',
      'token',
      'access_token',
      'accessToken',
      'api_token',
    ];
    for (const name of spellings) expect(redactUrl(`/v1/x?a=1&${name}=dgk_secret&b=2`), name).toBe('/v1/x?a=1&b=2');
    // Other parameters stay as sent, including ones that merely contain a key-like word.
    expect(redactUrl('/v1/x?$top=1&keyboard=3&monkey=4&tokens=5')).toBe('/v1/x?$top=1&keyboard=3&monkey=4&tokens=5');
  });
});

describe('?apiKey= never leaves the process', () => {
  let stack: Stack;
  let receiver: Receiver;
  let creds: Credentials;
  let connection: Connection;
  const log: string[] = [];

  beforeAll(async () => {
    const stream = new Writable({
      write(chunk: Buffer, _enc, done) {
        log.push(chunk.toString());
        done();
      },
    });
    [stack, receiver] = await Promise.all([
      startStack({ outboundAllow: ['127.0.0.1'], callbackRetryScheduleMs: [0, 200] }, { logger: { level: 'info', stream } }),
      startReceiver('127.0.0.1'),
    ]);
    creds = await stack.credentials();
    connection = await Connection.connect({ address: inject('temporalAddress') });
  });
  afterAll(async () => {
    await connection?.close();
    await receiver?.close();
    await stack?.stop();
  });

  /** A call with the key in the query only (no X-Api-Key header). */
  async function call(
    method: string,
    route: string,
    init: { json?: unknown; headers?: Record<string, string>; bearer?: boolean; query?: string } = {},
  ) {
    const headers: Record<string, string> = {
      ...(init.bearer === false ? {} : { authorization: `Bearer ${creds.accessToken}` }),
      ...init.headers,
    };
    if (init.json !== undefined) headers['content-type'] = 'application/json';
    const sep = route.includes('?') ? '&' : '?';
    const res = await fetch(`${creds.baseUrl}${route}${sep}${init.query ?? `apiKey=${encodeURIComponent(creds.apiKey)}`}`, {
      method,
      headers,
      ...(init.json !== undefined ? { body: JSON.stringify(init.json) } : {}),
    });
    const text = await res.text();
    return { status: res.status, text, body: text ? (JSON.parse(text) as Record<string, any>) : undefined, headers: res.headers };
  }

  async function pair() {
    const api = client(creds);
    const t = await api.upload('template', [{ name: 't.docx', bytes: makeDocx(['Hello {name}']) }]);
    const d = await api.upload('data', [{ name: 'd.json', bytes: JSON.stringify({ name: 'World' }) }]);
    return generateBody(t.body.result.data.files[0].id as string, d.body.result.data.files[0].id as string);
  }

  it('sync generate, async generate (callback body), manage, a GET and a 401: origin, callback, histories and log hold no key', async () => {
    const key = creds.apiKey;
    const seen: string[] = [];

    const generated = await call('POST', '/documents/document/generate', { json: await pair() });
    expect(generated.status, generated.text).toBe(201);
    expect(generated.body?.origin).toBe(`POST ${creds.baseUrl}/documents/document/generate`);
    seen.push(generated.text, await historyText(connection, generateWorkflowId(creds.subscriptionId, generated.body?.operationId)));

    const token = await call('POST', '/common/client/token', { json: { sub: 'cb', iss: `${receiver.url}/hooks`, dest: '/apikey' } });
    expect(token.status, token.text).toBe(200);
    const queued = await call('POST', '/documents/document/generate/async', {
      json: await pair(),
      headers: { 'x-client-authorization': token.body?.result.data.token as string },
      query: `apiKey=${encodeURIComponent(key)}&keep=1`,
    });
    expect(queued.status, queued.text).toBe(201);
    const [delivery] = await receiver.waitFor('/hooks/apikey');
    expect(JSON.parse(delivery?.body ?? '{}').origin).toBe(`POST ${creds.baseUrl}/documents/document/generate/async?keep=1`);
    seen.push(delivery?.body ?? '', await historyText(connection, `generate-async-${queued.headers.get('x-operation-id')}`));

    const managed = await call('POST', '/documents/document/manage', {
      json: {
        sourceDocument: {
          urn: generated.body?.result.data.document.urn as string,
          fileFormat: 'docx',
          loadMethod: 'Storage',
          remove: 'none',
        },
        targetDocument: { name: 'copy', fileFormat: 'docx', deliveryMethod: 'Storage', path: 'root/managed' },
      },
    });
    expect(managed.status, managed.text).toBe(201);
    expect(managed.body?.origin).toBe(`POST ${creds.baseUrl}/documents/document/manage`);
    seen.push(managed.text, await historyText(connection, manageWorkflowId(creds.subscriptionId, managed.body?.operationId)));

    const listed = await call('GET', '/documents/template/list?$top=1');
    expect(listed.status, listed.text).toBe(200);
    expect(listed.text).toContain(`"origin":"GET ${creds.baseUrl}/documents/template/list?$top=1"`);
    seen.push(listed.text);

    // Refused requests echo origin too; spellings the auth does not accept are still never echoed.
    const refused = await call('GET', '/documents/template/list', { bearer: false, query: `apiKey=${key}&APIKEY=${key}&api%4Bey=${key}` });
    expect(refused.status).toBe(401);
    expect(refused.body?.origin).toBe(`GET ${creds.baseUrl}/documents/template/list`);
    seen.push(refused.text);

    // Spellings the service refuses (a client's mistake): the 401 echoes origin and the log records the URL,
    // both without the key (issue 25: `api_key=` and `apiKey[]=` were echoed and logged as sent).
    for (const query of [`api_key=${key}`, `apiKey[]=${key}&keep=2`, `x-api-key=${encodeURIComponent(key)}`]) {
      const misspelled = await call('GET', '/documents/template/list', { query });
      expect(misspelled.status, misspelled.text).toBe(401);
      expect(misspelled.body?.origin).toBe(`GET ${creds.baseUrl}/documents/template/list${query.includes('keep=2') ? '?keep=2' : ''}`);
      seen.push(misspelled.text);
    }

    // The log saw every one of these requests, by URL, without the key.
    const logged = log.join('');
    for (const route of [
      '/v1/documents/document/generate',
      '/v1/documents/document/generate/async?keep=1',
      '/v1/documents/document/manage',
      '/v1/documents/template/list?$top=1',
    ]) {
      expect(logged).toContain(`"url":"${route}"`);
    }
    seen.push(logged);

    for (const text of seen) expect(text).not.toContain(key);
  });
});
