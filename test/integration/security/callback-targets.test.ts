// Issue 11 §5: a callback target the guarded outbound client would refuse is refused up front (400
// X_CLIENT_AUTH_ERROR on POST /common/client/token and on async generate), and no error message tells a
// tenant what a host name resolves to (GraphQL data.urn, image URLs, callbacks). Real service, Temporal
// dev server, real HTTP servers. The stack's OUTBOUND_ALLOW names 127.0.0.2 only, so 127.0.0.1 and
// `localhost` (which resolves to it) stand for internal addresses.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outboundPolicy } from '../../../connectors/http/address-policy.ts';
import { checkOutboundTarget, safeFetch } from '../../../connectors/http/safe-fetch.ts';
import type { Credentials } from '../../../api/auth/credentials.ts';
import { makeDocx } from '../../support/office.ts';
import { client, generateBody } from '../../support/http.ts';
import { type Stack, startStack } from '../../support/stack.ts';
import { type Receiver, startReceiver } from '../async/receiver.ts';

/** Rejects with the error's message. */
async function messageOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('expected a rejection');
}

const ADDRESS = /127\.0\.0\.1|::1|->/;

describe('the guarded client names hosts, never what they resolve to', () => {
  let server: http.Server;
  let port: number;
  beforeAll(async () => {
    server = http.createServer((_req, res) => res.end('ok'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => {
    server?.close();
  });

  it('a name resolving to a refused address and a name that does not resolve read the same', async () => {
    const none = outboundPolicy('');
    const internal = await messageOf(safeFetch(`http://localhost:${port}/`, { policy: none }));
    const missing = await messageOf(safeFetch('http://nothing.invalid/', { policy: none }));
    expect(internal).not.toMatch(ADDRESS);
    expect(internal).toBe(
      'localhost is not reachable from this service (it must resolve to a public address, or be listed in OUTBOUND_ALLOW)',
    );
    expect(missing).toBe(internal.replace('localhost', 'nothing.invalid'));
    // The check made before accepting a callback says the same.
    expect(await messageOf(checkOutboundTarget(`http://localhost:${port}/`, none))).toBe(internal);
    expect(await messageOf(checkOutboundTarget('http://nothing.invalid/', none))).toBe(missing);
    // A literal address is the caller's own text: its reason is given.
    expect(await messageOf(safeFetch(`http://127.0.0.1:${port}/`, { policy: none }))).toMatch(
      /^127\.0\.0\.1 is not reachable from this service \(loopback\)/,
    );
  });

  it('a refused connection to an allowed name does not reveal the address it resolved to', async () => {
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const message = await messageOf(safeFetch(`http://localhost:${closedPort}/`, { policy: outboundPolicy('localhost') }));
    expect(message).toBe(`localhost:${closedPort} could not be reached (ECONNREFUSED)`);
    expect((await safeFetch(`http://localhost:${port}/`, { policy: outboundPolicy('localhost') })).status).toBe(200);
  });
});

describe('callback targets are checked before anything is queued', () => {
  let stack: Stack;
  let creds: Credentials;
  let api: ReturnType<typeof client>;
  let allowed: Receiver;
  let internal: Receiver;

  beforeAll(async () => {
    [stack, allowed, internal] = await Promise.all([
      startStack({ outboundAllow: ['127.0.0.2'], callbackRetryScheduleMs: [0, 200], outboundTimeoutMs: 5_000 }),
      startReceiver('127.0.0.2'),
      startReceiver('127.0.0.1'),
    ]);
    creds = await stack.credentials();
    api = client(creds);
  });
  afterAll(async () => {
    await allowed?.close();
    await internal?.close();
    await stack?.stop();
  });

  async function upload(template: Uint8Array, data: unknown) {
    const t = await api.upload('template', [{ name: 't.docx', bytes: template }]);
    const d = await api.upload('data', [{ name: 'd.json', bytes: JSON.stringify(data) }]);
    return { t: t.body.result.data.files[0].id as string, d: d.body.result.data.files[0].id as string };
  }

  it('POST /common/client/token refuses loopback, metadata, private and link-local targets, internal names and names that do not resolve', async () => {
    const cases: [string, RegExp][] = [
      [internal.url, /127\.0\.0\.1 is not reachable from this service \(loopback\)/],
      [`http://localhost:${internal.port}`, /localhost is not reachable from this service/],
      ['http://169.254.169.254', /169\.254\.169\.254 is not reachable from this service \(link-local \/ cloud metadata/],
      ['http://10.1.2.3:8080/base', /10\.1\.2\.3 is not reachable from this service \(private/],
      [`http://[::1]:${internal.port}`, /::1 is not reachable from this service \(loopback\)/],
      ['http://[::ffff:169.254.169.254]', /not reachable from this service \(link-local/],
      ['https://nothing.invalid', /nothing\.invalid is not reachable from this service/],
    ];
    for (const [iss, message] of cases) {
      const res = await api.call('POST', '/common/client/token', { json: { sub: 's', iss, dest: '/cb' } });
      expect(res.status, `${iss}: ${JSON.stringify(res.body)}`).toBe(400);
      expect(res.body.error.innerErrors[0].code).toBe('X_CLIENT_AUTH_ERROR');
      expect(res.body.error.message, iss).toMatch(/^the callback target \(iss joined with dest\) cannot be called back: /);
      expect(res.body.error.message, iss).toMatch(message);
      if (!/\[|\d+\.\d+/.test(iss)) expect(res.body.error.message, iss).not.toMatch(ADDRESS);
    }
  });

  it('an allowed target is accepted and called back', async () => {
    const ok = await api.call('POST', '/common/client/token', { json: { sub: 's', iss: allowed.url, dest: '/cb' } });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    const p = await upload(makeDocx(['Hello {name}']), { name: 'World' });
    const queued = await api.call('POST', '/documents/document/generate/async', {
      json: generateBody(p.t, p.d),
      headers: { 'x-client-authorization': ok.body.result.data.token },
    });
    expect(queued.status, JSON.stringify(queued.body)).toBe(201);
    expect(JSON.parse((await allowed.waitFor('/cb'))[0]?.body ?? '{}').result.statusCode).toBe(201);
  });

  it('GraphQL data.urn and image URLs: "not reachable", without the addresses a name resolves to', async () => {
    const graphql = await upload(makeDocx(['{customer.name}']), {});
    const viaName = await api.call('POST', '/documents/document/generate', {
      json: {
        ...generateBody(graphql.t, graphql.d),
        data: { loadMethod: 'GraphQL', urn: `http://localhost:${internal.port}/graphql`, query: '{ customer { name } }' },
      },
    });
    expect(viaName.status, JSON.stringify(viaName.body)).toBe(400);
    expect(viaName.body.error.innerErrors[0].code).toBe('DATA_NOT_FOUND');
    expect(viaName.body.error.message).toMatch(/localhost is not reachable from this service/);
    expect(JSON.stringify(viaName.body.error)).not.toMatch(ADDRESS);

    const image = await upload(makeDocx(['Logo: {%logo}']), { logo: `http://localhost:${internal.port}/logo.png` });
    const viaImage = await api.call('POST', '/documents/document/generate', { json: generateBody(image.t, image.d) });
    expect(viaImage.status, JSON.stringify(viaImage.body)).toBe(400);
    expect(viaImage.body.error.innerErrors[0].code).toBe('TEMPLATE_ERROR');
    expect(viaImage.body.error.innerErrors[0].message).toMatch(/localhost is not reachable from this service/);
    expect(JSON.stringify(viaImage.body.error)).not.toMatch(ADDRESS);
    expect(internal.deliveries).toHaveLength(0);
  });
});
