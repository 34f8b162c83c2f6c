// Nothing is lost (issue 6): the Temporal dev server (persistent SQLite database, as `docgen start` runs
// it) is killed outright in the middle of an asynchronous generation and started again on the same
// database; the `docgen api` and `docgen worker` processes reconnect by themselves and the run completes
// with one document and exactly one callback. The kill lands while the run waits inside the load-data
// step (a GraphQL endpoint holds its first request).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type DevServer, freePort, startDevServer } from '../../cli/temporal-dev.ts';
import type { AsyncGenerateResult } from '../../workflows/generate-async.ts';
import { startReceiver, type Receiver } from '../integration/async/receiver.ts';
import { expectOneDocument, processEnv, queueAsyncGeneration, startGraphqlEndpoint } from '../support/async-e2e.ts';
import { docgenCredentials } from '../support/docgen-start.ts';
import { client } from '../support/http.ts';
import { runDocgen, stopProcess } from '../support/service-process.ts';

describe('durability: Temporal server restarted mid-generation', () => {
  let dir: string;
  let server: DevServer | undefined;
  let setup: Awaited<ReturnType<typeof processEnv>>;
  let receiver: Receiver;
  let graphql: Awaited<ReturnType<typeof startGraphqlEndpoint>>;
  const procs: ReturnType<typeof runDocgen>[] = [];
  let port: number;

  const devServer = () =>
    startDevServer({
      cli: inject('temporalCli'),
      port,
      headless: true,
      dbFile: path.join(dir, 'temporal.db'),
      logFile: path.join(dir, 'temporal.log'),
    });

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-temporal-restart-'));
    port = await freePort();
    server = await devServer();
    receiver = await startReceiver();
    graphql = await startGraphqlEndpoint({ hold: true });
    setup = await processEnv(server.address, { CALLBACK_RETRY_SCHEDULE: '0,500,1000,2000' });
  });
  afterAll(async () => {
    graphql?.release();
    for (const p of procs) await stopProcess(p, 'SIGKILL');
    await server?.stop();
    await receiver?.close();
    await graphql?.close();
    setup?.cleanup();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('completes after the server comes back, with one document and one callback', async () => {
    const { env } = setup;
    const worker = runDocgen(['worker'], env, 'docgen worker polling');
    const api = runDocgen(['api'], env, 'docgen api listening');
    procs.push(worker, api);
    await Promise.all([worker.started, api.started]);

    const sdk = client(await docgenCredentials(env, 'restart'));
    const { operationId } = await queueAsyncGeneration(sdk, {
      callbackBase: receiver.url,
      dest: '/done',
      graphqlUrl: graphql.url,
      externalContext: { run: 'restart' },
    });

    // The run is inside the load-data step: kill the server outright (no graceful shutdown), let the step
    // finish while it is down, then start it again on the same database and port.
    await graphql.firstHit;
    server!.process.kill('SIGKILL');
    await new Promise<void>((r) =>
      server!.process.exitCode !== null || server!.process.signalCode !== null ? r() : server!.process.once('exit', () => r()),
    );
    graphql.release();
    await new Promise((r) => setTimeout(r, 1_000));
    server = await devServer();

    const [delivery] = await receiver.waitFor('/done', 1, 90_000);
    const body = JSON.parse(delivery?.body ?? '{}') as { result?: { data: { document: { urn: string } } }; externalContext?: unknown };
    expect(body.externalContext).toEqual({ run: 'restart' });

    // The run is in the restarted server's history, completed, and the worker and API processes survived.
    const connection = await Connection.connect({ address: server.address });
    try {
      const handle = new Client({ connection }).workflow.getHandle(`generate-async-${operationId}`);
      const result = (await handle.result()) as AsyncGenerateResult;
      expect(result).toMatchObject({ generated: true, callback: { delivered: true } });
    } finally {
      await connection.close();
    }
    expect(worker.child.exitCode).toBe(null);
    expect(api.child.exitCode).toBe(null);

    await new Promise((r) => setTimeout(r, 1_500));
    expect(receiver.at('/done')).toHaveLength(1);
    await expectOneDocument(sdk, body);
  }, 180_000);
});
