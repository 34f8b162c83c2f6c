// Rate limits (api/plugins/rate-limit.ts), each a 429 TOO_MANY_REQUESTS in the error envelope with
// Retry-After: per subscription (every API key of it together), failed authentications per client address
// (refused before any key lookup or signature check), and the routes that need no credentials per client
// address. Client addresses are real: requests leave from 127.0.0.x source addresses, and a trusted proxy
// (TRUST_PROXY) names the client in X-Forwarded-For.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Credentials } from '../../api/auth/credentials.ts';
import { client } from '../support/http.ts';
import { type Stack, startStack } from '../support/stack.ts';

interface Answer {
  status: number;
  retryAfter: number | undefined;
  body: any;
}

describe('rate limits', () => {
  let stack: Stack;
  let port: number;
  const PROXY = '127.0.0.9';

  beforeAll(async () => {
    stack = await startStack({
      rateLimitPerMinute: 60,
      rateLimitBurst: 5,
      authFailuresPerMinute: 60,
      authFailuresBurst: 3,
      trustProxy: [PROXY],
    });
    port = Number(new URL(stack.service.baseUrl).port);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  /** One GET from a chosen loopback source address (a client address of its own). */
  function get(
    path: string,
    opts: { from: string; creds?: Pick<Credentials, 'apiKey' | 'accessToken'>; headers?: Record<string, string> },
  ): Promise<Answer> {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.creds) {
      headers.authorization = `Bearer ${opts.creds.accessToken}`;
      headers['x-api-key'] = opts.creds.apiKey;
    }
    return new Promise((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port, path, localAddress: opts.from, headers, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          const ra = res.headers['retry-after'];
          resolve({
            status: res.statusCode ?? 0,
            retryAfter: ra === undefined ? undefined : Number(ra),
            body: text.startsWith('{') ? JSON.parse(text) : text,
          });
        });
      });
      req.on('error', reject);
      req.end();
    });
  }
  const list = '/v1/documents/template/list';
  const expect429 = (a: Answer, message: RegExp) => {
    expect(a.status, JSON.stringify(a.body)).toBe(429);
    expect(a.body.error.statusCode).toBe(429);
    expect(a.body.error.innerErrors[0].code).toBe('TOO_MANY_REQUESTS');
    expect(a.body.error.message).toMatch(message);
    // One request per second comes back at 60 per minute: the wait is about a second.
    expect(a.retryAfter).toBeGreaterThanOrEqual(1);
    expect(a.retryAfter).toBeLessThanOrEqual(2);
    expect(a.body.error.message).toContain(`retry after ${a.retryAfter} s`);
  };

  it('counts per subscription: a second API key of the same subscription shares the limit; other subscriptions are not affected', async () => {
    const first = await stack.credentials('noisy');
    const second = await stack.credentials('noisy'); // another API key of the same subscription
    expect(second.apiKey).not.toBe(first.apiKey);
    expect(second.subscriptionId).toBe(first.subscriptionId);
    const quiet = await stack.credentials('quiet');
    const statuses: number[] = [];
    for (const creds of [first, first, first, second, second]) statuses.push((await get(list, { from: '127.0.0.1', creds })).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    // The burst is the subscription's: the second key is refused as well as the first (issue 25: a second
    // key doubled the limit).
    const limited = await get(list, { from: '127.0.0.1', creds: second });
    expect429(limited, /this subscription sent more than 60 requests per minute, all its API keys together .*RATE_LIMIT_PER_MINUTE/);
    expect((await get(list, { from: '127.0.0.1', creds: first })).status).toBe(429);
    expect((await get(list, { from: '127.0.0.1', creds: quiet })).status).toBe(200);
    // After the wait the subscription is served again.
    await new Promise((r) => setTimeout(r, limited.retryAfter! * 1000 + 100));
    expect((await get(list, { from: '127.0.0.1', creds: second })).status).toBe(200);
  });

  it('counts failed authentications per client address and refuses that address before checking credentials', async () => {
    const good = await stack.credentials('victim-of-a-neighbour');
    const verified = await stack.credentials('verified-before');
    const from = '127.0.0.2';
    // A pair verified from this address before the failures stays usable (the auth cache answers it).
    expect((await get(list, { from, creds: verified })).status).toBe(200);
    const bad = { ...good, apiKey: `${good.apiKey.slice(0, -3)}xyz` };
    const failures: number[] = [];
    for (let i = 0; i < 3; i++) failures.push((await get(list, { from, creds: bad })).status);
    expect(failures).toEqual([401, 401, 401]);
    // Out of failures: the next attempt is refused without being checked...
    expect429(
      await get(list, { from, creds: bad }),
      /too many failed authentications from this address: more than 60 per minute .*AUTH_FAILURES_PER_MINUTE/,
    );
    // ...so even a valid pair that was never verified is refused (had it been checked, it would pass), and
    // so is a request without credentials...
    expect((await get(list, { from, creds: good })).status).toBe(429);
    expect((await get(list, { from })).status).toBe(429);
    // ...while the verified pair, and the same valid pair from another address, are served.
    expect((await get(list, { from, creds: verified })).status).toBe(200);
    expect((await get(list, { from: '127.0.0.3', creds: good })).status).toBe(200);
    // One failure per second comes back.
    const wait = (await get(list, { from, creds: bad })).retryAfter!;
    await new Promise((r) => setTimeout(r, wait * 1000 + 100));
    expect((await get(list, { from, creds: good })).status).toBe(200);
  });

  it('limits the routes that need no credentials per client address (health, readiness, API docs, unknown paths)', async () => {
    const from = '127.0.0.4';
    const statuses: number[] = [];
    for (const path of ['/v1/health', '/v1/ready', '/v1/openapi.json', '/v1/no-such-route', '/v1/health'])
      statuses.push((await get(path, { from })).status);
    expect(statuses).toEqual([200, 200, 200, 404, 200]);
    expect429(
      await get('/v1/ready', { from }),
      /this address sent more than 60 requests per minute to the routes that need no credentials/,
    );
    expect((await get('/v1/health', { from })).status).toBe(429);
    // Another address, and authenticated requests from this one, are not affected.
    expect((await get('/v1/health', { from: '127.0.0.5' })).status).toBe(200);
    expect((await get(list, { from, creds: await stack.credentials('public-neighbour') })).status).toBe(200);
  });

  it('behind a trusted proxy (TRUST_PROXY) counts the client X-Forwarded-For names; from anyone else the header is ignored', async () => {
    const through = (client: string) => get('/v1/health', { from: PROXY, headers: { 'x-forwarded-for': client } });
    for (let i = 0; i < 5; i++) expect((await through('198.51.100.7')).status).toBe(200);
    expect((await through('198.51.100.7')).status).toBe(429);
    expect((await through('198.51.100.8')).status).toBe(200);
    // An IPv6 client counts by its /64: another address of the same /64 is the same client.
    for (let i = 0; i < 5; i++) expect((await through(`2001:db8:1:2::${i + 1}`)).status).toBe(200);
    expect((await through('2001:db8:1:2:ffff::9')).status).toBe(429);
    expect((await through('2001:db8:1:3::1')).status).toBe(200);
    // A client that is not the proxy cannot pick its address with the header.
    const spoofer = '127.0.0.6';
    for (let i = 0; i < 5; i++)
      expect((await get('/v1/health', { from: spoofer, headers: { 'x-forwarded-for': `203.0.113.${i}` } })).status).toBe(200);
    expect((await get('/v1/health', { from: spoofer, headers: { 'x-forwarded-for': '203.0.113.200' } })).status).toBe(429);
  });

  it('documents 429 with Retry-After in every operation of the OpenAPI document', async () => {
    const doc = (await get('/v1/openapi.json', { from: '127.0.0.7' })).body;
    // Envelopes are named schemas (components/schemas) the operations refer to.
    const schemaOf = (s: any) => (typeof s?.$ref === 'string' ? doc.components.schemas[s.$ref.replace('#/components/schemas/', '')] : s);
    const operations = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]) => ({ path, method, op })),
    );
    expect(operations.length).toBeGreaterThan(50);
    for (const { path, method, op } of operations) {
      const r = op.responses?.['429'];
      expect(r, `${method} ${path}`).toBeDefined();
      expect(r.description, `${method} ${path}`).toMatch(/RATE_LIMIT_PER_MINUTE/);
      expect(r.headers?.['Retry-After']?.schema, `${method} ${path}`).toMatchObject({ type: 'integer' });
      expect(schemaOf(r.content?.['application/json']?.schema)?.properties?.error, `${method} ${path}`).toBeDefined();
    }
    // Manage's failures carry its own envelope (statusCode as a string), its 429 too.
    const manage429 = schemaOf(doc.paths['/v1/documents/document/manage'].post.responses['429'].content['application/json'].schema);
    expect(manage429.properties.error.properties.statusCode.type).toBe('string');
  });

  it('a 429 of manage is in its own envelope, as its 401 is', async () => {
    const creds = await stack.credentials('manage-burst');
    const api = client(creds);
    const body = {
      sourceDocument: { urn: '00000000-0000-4000-8000-000000000000', fileFormat: 'docx', loadMethod: 'Storage', remove: 'none' },
    };
    let last = await api.call('POST', '/documents/document/manage', { json: body });
    for (let i = 0; i < 5 && last.status !== 429; i++) last = await api.call('POST', '/documents/document/manage', { json: body });
    expect(last.status, JSON.stringify(last.body)).toBe(429);
    expect(last.body.error).toMatchObject({ statusCode: '429', externalErrors: [] });
    expect(last.headers.get('retry-after')).toMatch(/^\d+$/);
  });
});
