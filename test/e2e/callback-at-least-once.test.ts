// Callbacks are delivered at least once, deduplicated by webhook-id (issue 28 §3; README "Asynchronous
// generation and callbacks"). Exactly once is not possible over HTTP: here the worker dies while the
// receiver holds the first POST (it has the callback, the sender never learns it), and the next worker,
// which cannot tell that POST from one that never arrived, sends it again. Both deliveries carry the same
// webhook-id, both verify with the subscription's secret, and both report the same document, recorded
// once: a receiver that deduplicates on webhook-id (client/README.md) handles the outcome once.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { verifyCallback } from '../../client/index.ts';
import { expectOneDocument, processEnv, queueAsyncGeneration, startGraphqlEndpoint } from '../support/async-e2e.ts';
import { docgenCredentials } from '../support/docgen-start.ts';
import { client } from '../support/http.ts';
import { runDocgen, stopProcess } from '../support/service-process.ts';

interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
}

describe('callbacks under a worker crash', () => {
  let setup: Awaited<ReturnType<typeof processEnv>>;
  let graphql: Awaited<ReturnType<typeof startGraphqlEndpoint>>;
  let receiver: http.Server;
  const received: Received[] = [];
  let firstArrived!: () => void;
  const first = new Promise<void>((r) => (firstArrived = r));
  const procs: ReturnType<typeof runDocgen>[] = [];

  beforeAll(async () => {
    // Records every POST; never answers the first one (its sender dies waiting), answers the others 204.
    receiver = http.createServer((req, res) => {
      let raw = '';
      req.on('data', (d: Buffer) => (raw += d.toString('utf8')));
      req.on('end', () => {
        received.push({ headers: req.headers, body: raw });
        if (received.length === 1) firstArrived();
        else res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    graphql = await startGraphqlEndpoint();
    setup = await processEnv(inject('temporalAddress'), { CALLBACK_RETRY_SCHEDULE: '0,200,200,200', CALLBACK_TIMEOUT_MS: '60000' });
  });
  afterAll(async () => {
    for (const p of procs) await stopProcess(p, 'SIGKILL');
    receiver?.closeAllConnections();
    await new Promise<void>((r) => (receiver ? receiver.close(() => r()) : r()));
    await graphql?.close();
    setup?.cleanup();
  });

  it('sends the callback again with the same webhook-id; both verify and report the one document', async () => {
    const { env } = setup;
    const worker = runDocgen(['worker'], env, 'docgen worker polling');
    const api = runDocgen(['api'], env, 'docgen api listening');
    procs.push(worker, api);
    await Promise.all([worker.started, api.started]);
    const sdk = client(await docgenCredentials(env, 'at-least-once'));
    const base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    const { webhookSecret } = await queueAsyncGeneration(sdk, {
      callbackBase: base,
      dest: '/done',
      graphqlUrl: graphql.url,
      externalContext: { run: 'twice' },
    });

    await first;
    expect(await stopProcess(worker, 'SIGKILL')).toBe(null);
    const second = runDocgen(['worker'], env, 'docgen worker polling');
    procs.push(second);
    await second.started;
    for (let i = 0; i < 600 && received.length < 2; i++) await new Promise((r) => setTimeout(r, 100));

    expect(received).toHaveLength(2);
    const [a, b] = received as [Received, Received];
    expect(b.headers['webhook-id']).toBe(a.headers['webhook-id']);
    for (const d of received) expect(verifyCallback(webhookSecret, d.headers, d.body)).toBe(true);
    const [ba, bb] = [JSON.parse(a.body), JSON.parse(b.body)];
    expect(bb.result.data.document).toEqual(ba.result.data.document);
    expect(bb.consumption).toEqual(ba.consumption);
    await expectOneDocument(sdk, bb);
  }, 180_000);
});
