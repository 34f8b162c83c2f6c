// Nothing is lost (issue 6): the worker process is killed (SIGKILL) in the middle of an asynchronous
// generation and another worker is started; the workflow completes on it, one document is written and
// exactly one callback arrives. Real processes: `docgen api`, two `docgen worker`s, PostgreSQL, the
// Temporal dev server, a GraphQL endpoint that holds its first request so the kill lands mid-step.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startReceiver, type Receiver } from '../integration/async/receiver.ts';
import { expectOneDocument, processEnv, queueAsyncGeneration, startGraphqlEndpoint } from '../support/async-e2e.ts';
import { docgenCredentials } from '../support/docgen-start.ts';
import { client } from '../support/http.ts';
import { runDocgen, stopProcess } from '../support/service-process.ts';

describe('durability: worker killed mid-generation', () => {
  let setup: Awaited<ReturnType<typeof processEnv>>;
  let receiver: Receiver;
  let graphql: Awaited<ReturnType<typeof startGraphqlEndpoint>>;
  const procs: ReturnType<typeof runDocgen>[] = [];

  beforeAll(async () => {
    receiver = await startReceiver();
    graphql = await startGraphqlEndpoint({ hold: true });
    setup = await processEnv(inject('temporalAddress'), { CALLBACK_RETRY_SCHEDULE: '0,200,200,200' });
  });
  afterAll(async () => {
    graphql?.release();
    for (const p of procs) await stopProcess(p, 'SIGKILL');
    await receiver?.close();
    await graphql?.close();
    setup?.cleanup();
  });

  it('completes on another worker with one document and one callback', async () => {
    const { env } = setup;
    const first = runDocgen(['worker'], env, 'docgen worker polling');
    const api = runDocgen(['api'], env, 'docgen api listening');
    procs.push(first, api);
    await Promise.all([first.started, api.started]);

    const sdk = client(await docgenCredentials(env, 'durable'));
    await queueAsyncGeneration(sdk, {
      callbackBase: receiver.url,
      dest: '/done',
      graphqlUrl: graphql.url,
      externalContext: { run: 'durable' },
    });

    // The worker is now inside the load-data step, waiting for the GraphQL answer: kill it outright.
    await graphql.firstHit;
    expect(await stopProcess(first, 'SIGKILL')).toBe(null);
    graphql.release();

    const second = runDocgen(['worker'], env, 'docgen worker polling');
    procs.push(second);
    await second.started;

    const [delivery] = await receiver.waitFor('/done', 1, 60_000);
    expect(delivery?.headers.authorization).toBe('Bearer receiver-secret');
    const body = JSON.parse(delivery?.body ?? '{}') as { result?: { data: { document: { urn: string } } }; externalContext?: unknown };
    expect(body.externalContext).toEqual({ run: 'durable' });
    // The step ran again on the new worker (the first attempt died with its process).
    expect(graphql.hits()).toBe(2);

    // Exactly one callback, and one document, even after waiting for stragglers.
    await new Promise((r) => setTimeout(r, 1500));
    expect(receiver.at('/done')).toHaveLength(1);
    await expectOneDocument(sdk, body);
  }, 120_000);
});
