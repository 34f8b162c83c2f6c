// Nothing is lost (issue 6): the callback receiver is down for a while, then up. First a server that
// reads each delivery and drops the connection without answering, then nothing listening at all
// (connection refused), then the real receiver on the same port: the callback arrives, once, carrying
// the same webhook-id and a valid signature on every attempt, and the run stays visible as Running in
// Temporal meanwhile. Real processes: `docgen api`, `docgen worker`, PostgreSQL, the Temporal dev server.
import http from 'node:http';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { AsyncGenerateResult } from '../../workflows/generate-async.ts';
import { verifyCallback } from '../../client/webhooks.ts';
import { freePort } from '../../cli/temporal-dev.ts';
import { startReceiver, type Receiver } from '../integration/async/receiver.ts';
import { expectOneDocument, processEnv, queueAsyncGeneration, startGraphqlEndpoint } from '../support/async-e2e.ts';
import { docgenCredentials } from '../support/docgen-start.ts';
import { localActivities } from '../support/history.ts';
import { client } from '../support/http.ts';
import { runDocgen, stopProcess } from '../support/service-process.ts';

/** A receiver that is "down": it reads each request, records it, and drops the connection unanswered. */
async function startDroppingServer(port: number) {
  const seen: { headers: http.IncomingHttpHeaders; body: string }[] = [];
  const server = http.createServer((req) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      req.socket.destroy();
    });
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  return {
    seen,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('durability: callback receiver down, then up', () => {
  let setup: Awaited<ReturnType<typeof processEnv>>;
  let graphql: Awaited<ReturnType<typeof startGraphqlEndpoint>>;
  let connection: Connection;
  let receiver: Receiver | undefined;
  let dropping: Awaited<ReturnType<typeof startDroppingServer>> | undefined;
  const procs: ReturnType<typeof runDocgen>[] = [];

  beforeAll(async () => {
    graphql = await startGraphqlEndpoint();
    // Ten attempts about a second apart: long enough to outlast the outage below, short for a test.
    setup = await processEnv(inject('temporalAddress'), { CALLBACK_RETRY_SCHEDULE: '0,500,500,1000,1000,1000,1000,1000,1000,1000' });
    connection = await Connection.connect({ address: inject('temporalAddress') });
  });
  afterAll(async () => {
    for (const p of procs) await stopProcess(p, 'SIGKILL');
    await dropping?.close();
    await receiver?.close();
    await graphql?.close();
    await connection?.close();
    setup?.cleanup();
  });

  it('delivers once when the receiver comes back, with one webhook-id across every attempt', async () => {
    const { env } = setup;
    const worker = runDocgen(['worker'], env, 'docgen worker polling');
    const api = runDocgen(['api'], env, 'docgen api listening');
    procs.push(worker, api);
    await Promise.all([worker.started, api.started]);
    const temporal = new Client({ connection });

    const port = await freePort();
    dropping = await startDroppingServer(port);
    const sdk = client(await docgenCredentials(env, 'outage'));
    const { operationId, webhookSecret } = await queueAsyncGeneration(sdk, {
      callbackBase: `http://127.0.0.1:${port}`,
      dest: '/hooks/done',
      graphqlUrl: graphql.url,
      externalContext: { run: 'outage' },
    });
    const handle = temporal.workflow.getHandle(`generate-async-${operationId}`);

    // Down, phase 1: two deliveries reach a server that never answers.
    await until('two dropped deliveries', () => dropping!.seen.length >= 2);
    await dropping.close();
    const droppedDeliveries = [...dropping.seen];
    dropping = undefined;
    // Down, phase 2: nothing listens; wait until an attempt has been refused (a third completed attempt).
    // Each attempt is a local activity (workflows/callback.ts): one marker per completed attempt.
    const completedAttempts = async () =>
      localActivities((await handle.fetchHistory()).events).filter((a) => a.type === 'callbackAttempt').length;
    await until('a refused attempt', async () => (await completedAttempts()) >= 3);
    // While the receiver is down the run is still there, running, for an operator to see.
    expect((await handle.describe()).status.name).toBe('RUNNING');

    // Up again, on the same port.
    receiver = await startReceiver('127.0.0.1', port);
    const [delivery] = await receiver.waitFor('/hooks/done', 1, 30_000);
    const result = (await handle.result()) as AsyncGenerateResult;
    expect(result.callback.delivered).toBe(true);
    expect(result.callback.attempts).toBeGreaterThanOrEqual(4);

    // Every attempt that reached a server carried the same message id and bytes, each validly signed, so
    // a receiver deduplicating on webhook-id processes the callback exactly once.
    const reached = [...droppedDeliveries, delivery!];
    expect(new Set(reached.map((d) => d.headers['webhook-id']))).toEqual(new Set([`msg_${operationId}`]));
    expect(new Set(reached.map((d) => d.body)).size).toBe(1);
    for (const d of reached) expect(verifyCallback(webhookSecret, d.headers, d.body)).toBe(true);
    // At least one attempt found nothing listening (refused), so the run made more attempts than reached us.
    expect(result.callback.attempts).toBeGreaterThan(reached.length);
    const body = JSON.parse(delivery?.body ?? '{}') as { result?: { data: { document: { urn: string } } }; externalContext?: unknown };
    expect(body.externalContext).toEqual({ run: 'outage' });

    // Once: no second delivery after waiting beyond the next scheduled attempt, and one document.
    await new Promise((r) => setTimeout(r, 2_000));
    expect(receiver.at('/hooks/done')).toHaveLength(1);
    await expectOneDocument(sdk, body);
  }, 120_000);
});
