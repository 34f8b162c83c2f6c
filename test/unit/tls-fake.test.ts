// The test CA reaches the test processes: a fake served over HTTPS with the test certificate is trusted by
// Node's own fetch, without any per-request option.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type HttpsServer, startHttps } from '../support/https.ts';

let server: HttpsServer;
beforeAll(async () => {
  server = await startHttps((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ host: req.headers.host }));
  });
});
afterAll(async () => server?.close());

it('fetch trusts the fake under both host names', async () => {
  for (const base of [server.url, server.ipUrl]) {
    const res = await fetch(`${base}/ping`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { host: string }).host).toBe(new URL(base).host);
  }
});
