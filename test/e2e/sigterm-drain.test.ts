// SIGTERM while a synchronous generate is in flight: the process stops taking new requests, lets the
// generate finish, answers it, then exits 0. Real processes: `docgen start` (API and worker in one process)
// and `docgen api` + `docgen worker` (each signalled), the generate held inside its load-data step by a
// GraphQL endpoint that answers only when the test says so.
import fs from 'node:fs';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { type Credentials } from '../../api/auth/credentials.ts';
import { startGraphFake } from '../fakes/graph/server.ts';
import { connect, DRIVE_A } from '../integration/driveA/support.ts';
import { processEnv, startGraphqlEndpoint } from '../support/async-e2e.ts';
import { docgenCredentials } from '../support/docgen-start.ts';
import { client } from '../support/http.ts';
import { makeDocx } from '../support/office.ts';
import { runDocgen, startDocgen, stopProcess } from '../support/service-process.ts';

type Graphql = Awaited<ReturnType<typeof startGraphqlEndpoint>>;
/** How long the generate stays held after SIGTERM: longer than a quick close would wait for it. */
const HOLD_MS = 12_000;

/** Starts a sync generate whose data comes from `graphql` (held), resolves with its answer. */
async function heldGenerate(
  creds: Credentials,
  graphql: Graphql,
  document: Record<string, unknown> = {},
): Promise<{ answer: Promise<{ status: number; body: string }> }> {
  const api = client(creds);
  const t = await api.upload('template', [{ name: 't.docx', bytes: makeDocx(['Hello {customer.name}']) }]);
  const answer = fetch(`${creds.baseUrl}/documents/document/generate`, {
    method: 'POST',
    headers: { authorization: `Bearer ${creds.accessToken}`, 'x-api-key': creds.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({
      template: { urn: t.body.result.data.files[0].id, loadMethod: 'Storage', fileFormat: 'docx' },
      data: { loadMethod: 'GraphQL', urn: graphql.url, query: '{ customer { name } }' },
      document: {
        name: 'late',
        fileFormat: 'docx',
        deliveryMethod: 'Storage',
        path: 'root',
        timezone: 'UTC',
        locale: 'en-US',
        ...document,
      },
    }),
  }).then(async (res) => ({ status: res.status, body: await res.text() }));
  answer.catch(() => undefined);
  await graphql.firstHit;
  return { answer };
}

describe('SIGTERM during a synchronous generate', () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const fn of cleanups.reverse()) await fn().catch(() => undefined);
  });

  it('docgen start: answers the generate, then exits 0', { timeout: 180_000 }, async () => {
    const graphql = await startGraphqlEndpoint({ hold: true });
    cleanups.push(() => graphql.close());
    const service = await startDocgen({ OUTBOUND_ALLOW: '127.0.0.1', OUTBOUND_TIMEOUT_MS: '60000' });
    cleanups.push(async () => {
      await service.stop('SIGKILL');
      fs.rmSync(service.dataDir, { recursive: true, force: true });
    });
    const creds = await service.credentials();
    const { answer } = await heldGenerate(creds, graphql);
    const exited = service.stop('SIGTERM');
    // Stopping: a new request is refused (connection refused, or 503 on a connection already open).
    await new Promise((r) => setTimeout(r, 1_000));
    const late = await fetch(`${creds.baseUrl}/health`).then(
      (r) => r.status,
      () => 'refused',
    );
    expect([503, 'refused']).toContain(late);
    await new Promise((r) => setTimeout(r, HOLD_MS));
    graphql.release();
    const res = await answer;
    expect(res.status, `${res.body}\n${service.output()}`).toBe(201);
    expect(JSON.parse(res.body).result.data.document.urn).toBeTruthy();
    expect(await exited, service.output()).toBe(0);
  });

  it(
    'docgen start, delivering to DriveA (a step that is a normal activity, polled after the signal): answers, then exits 0',
    { timeout: 180_000 },
    async () => {
      const graphql = await startGraphqlEndpoint({ hold: true });
      const fake = await startGraphFake();
      fake.addDrive(DRIVE_A);
      cleanups.push(
        () => graphql.close(),
        () => fake.close(),
      );
      const service = await startDocgen({
        OUTBOUND_ALLOW: '127.0.0.1',
        OUTBOUND_TIMEOUT_MS: '60000',
        DRIVEA_GRAPH_URL: fake.graphUrl,
        DRIVEA_LOGIN_URL: fake.loginUrl,
      });
      cleanups.push(async () => {
        await service.stop('SIGKILL');
        fs.rmSync(service.dataDir, { recursive: true, force: true });
      });
      const creds = await service.credentials();
      await connect(client(creds), fake);
      const { answer } = await heldGenerate(creds, graphql, { deliveryMethod: 'DriveA', path: 'Out' });
      const exited = service.stop('SIGTERM');
      await new Promise((r) => setTimeout(r, 2_000));
      graphql.release();
      const res = await answer;
      expect(res.status, `${res.body}\n${service.output()}`).toBe(201);
      expect(fake.files(DRIVE_A).filter((f) => f.state === 'live' && f.path === 'Out/late.docx')).toHaveLength(1);
      expect(await exited, service.output()).toBe(0);
    },
  );

  it('docgen api and docgen worker, both signalled: answers the generate, then both exit 0', { timeout: 180_000 }, async () => {
    const graphql = await startGraphqlEndpoint({ hold: true });
    cleanups.push(() => graphql.close());
    const setup = await processEnv(inject('temporalAddress'), { OUTBOUND_TIMEOUT_MS: '60000' });
    cleanups.push(async () => setup.cleanup());
    const worker = runDocgen(['worker'], setup.env, 'docgen worker polling');
    const api = runDocgen(['api'], setup.env, 'docgen api listening');
    cleanups.push(
      () => stopProcess(worker, 'SIGKILL'),
      () => stopProcess(api, 'SIGKILL'),
    );
    await Promise.all([worker.started, api.started]);
    const { answer } = await heldGenerate(await docgenCredentials(setup.env), graphql);
    const apiExit = stopProcess(api, 'SIGTERM');
    const workerExit = stopProcess(worker, 'SIGTERM');
    await new Promise((r) => setTimeout(r, HOLD_MS));
    graphql.release();
    const res = await answer;
    expect(res.status, `${res.body}\n${api.output()}\n${worker.output()}`).toBe(201);
    expect(await apiExit, api.output()).toBe(0);
    expect(await workerExit, worker.output()).toBe(0);
  });
});
