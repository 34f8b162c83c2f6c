// Nothing is lost (issue 6): the worker process is killed (SIGKILL) in the middle of an asynchronous
// generation and another worker is started; the workflow completes on it, one document is written and
// exactly one callback arrives. Real processes: `docgen api`, two `docgen worker`s, PostgreSQL, the
// Temporal dev server, a GraphQL endpoint that holds its first request so the kill lands mid-step.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Credentials } from '../../api/auth/credentials.ts';
import { freePort } from '../../cli/temporal-dev.ts';
import { startReceiver, type Receiver } from '../integration/async/receiver.ts';
import { client } from '../support/http.ts';
import { makeDocx } from '../support/office.ts';
import { repoRoot, runDocgen, stopProcess } from '../support/service-process.ts';
import { createPgDatabase } from '../support/stack.ts';

const execFileP = promisify(execFile);

/** A GraphQL endpoint that answers every query with the same data, holding the first request until
 *  released, so the test knows the worker is inside the load-data step. */
async function startHoldingGraphql() {
  let hits = 0;
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let firstHit!: () => void;
  const hit = new Promise<void>((r) => (firstHit = r));
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      hits++;
      const answer = () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ data: { customer: { name: 'Ada' } } }));
      };
      if (hits === 1) {
        firstHit();
        void released.then(answer);
      } else answer();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`,
    hits: () => hits,
    firstHit: hit,
    release,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

describe('durability: worker killed mid-generation', () => {
  let env: NodeJS.ProcessEnv;
  let dataDir: string;
  let receiver: Receiver;
  let graphql: Awaited<ReturnType<typeof startHoldingGraphql>>;
  const procs: ReturnType<typeof runDocgen>[] = [];

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-durable-'));
    receiver = await startReceiver();
    graphql = await startHoldingGraphql();
    env = {
      ...process.env,
      DATABASE_URL: await createPgDatabase(),
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_TASK_QUEUE: `durable-${randomUUID()}`,
      PORT: String(await freePort()),
      DOCGEN_DATA_DIR: dataDir,
      OUTBOUND_ALLOW: '127.0.0.1',
      CALLBACK_RETRY_SCHEDULE: '0,200,200,200',
      LOG_LEVEL: 'warn',
    };
  });
  afterAll(async () => {
    graphql?.release();
    for (const p of procs) await stopProcess(p, 'SIGKILL');
    await receiver?.close();
    await graphql?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('completes on another worker with one document and one callback', async () => {
    const first = runDocgen(['worker'], env, 'docgen worker polling');
    const api = runDocgen(['api'], env, 'docgen api listening');
    procs.push(first, api);
    await Promise.all([first.started, api.started]);

    const { stdout } = await execFileP(process.execPath, [path.join(repoRoot, 'cli', 'docgen.mjs'), 'credentials', '--json', '--subscription', 'durable'], { env, cwd: repoRoot });
    const creds = JSON.parse(stdout) as Credentials;
    const sdk = client(creds);
    const token = await sdk.call('POST', '/common/client/token', { json: { sub: 'receiver-secret', iss: receiver.url, dest: '/done' } });
    expect(token.status, JSON.stringify(token.body)).toBe(200);
    const t = await sdk.upload('template', [{ name: 't.docx', bytes: makeDocx(['Hello {customer.name}']) }]);
    expect(t.status).toBe(201);

    const queued = await sdk.call('POST', '/documents/document/generate/async', {
      headers: { 'x-client-authorization': token.body.result.data.token },
      json: {
        template: { urn: t.body.result.data.files[0].id, loadMethod: 'Storage', fileFormat: 'docx' },
        data: { loadMethod: 'GraphQL', urn: graphql.url, query: 'query { customer { name } }' },
        document: { name: 'durable', fileFormat: 'docx', deliveryMethod: 'Storage', path: 'root', timezone: 'UTC', locale: 'en-US' },
        externalContext: { run: 'durable' },
      },
    });
    expect(queued.status, JSON.stringify(queued.body)).toBe(201);

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
    expect(body.result?.data.document.urn).toBeTruthy();
    // The step ran again on the new worker (the first attempt died with its process).
    expect(graphql.hits()).toBe(2);

    // Exactly one callback, and one document, even after waiting for stragglers.
    await new Promise((r) => setTimeout(r, 1500));
    expect(receiver.at('/done')).toHaveLength(1);
    const docs = await sdk.call('GET', '/documents/document/list');
    expect(docs.status).toBe(200);
    expect(docs.body.result.data.rowCount).toBe(1);
    const file = await sdk.download(body.result?.data.document.urn ?? '');
    expect(file.status).toBe(200);
  }, 120_000);
});
