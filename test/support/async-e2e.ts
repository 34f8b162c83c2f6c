// Shared parts of the "nothing is lost" end-to-end tests: `docgen api` and `docgen worker` as real
// processes on PostgreSQL, a GraphQL endpoint that can hold its first request (so a test knows a run is
// inside the load-data step), and queueing one asynchronous generation the way a client would.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import { freePort } from '../../cli/temporal-dev.ts';
import type { client } from './http.ts';
import { makeDocx } from './office.ts';
import { createPgDatabase } from './stack.ts';

/** A GraphQL endpoint answering every query with `{ customer: { name: 'Ada' } }`. With `hold`, the first
 *  request waits until `release()`; `firstHit` resolves when it arrives. */
export async function startGraphqlEndpoint(opts: { hold?: boolean } = {}) {
  let hits = 0;
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  if (!opts.hold) release();
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
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** The environment of `docgen api`/`docgen worker` processes sharing a fresh PostgreSQL database, a data
 *  directory and a task queue; callbacks and GraphQL may reach 127.0.0.1. */
export async function processEnv(temporalAddress: string, extra: Record<string, string> = {}) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-e2e-'));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: await createPgDatabase(),
    TEMPORAL_ADDRESS: temporalAddress,
    TEMPORAL_TASK_QUEUE: `e2e-${randomUUID()}`,
    PORT: String(await freePort()),
    DOCGEN_DATA_DIR: dataDir,
    OUTBOUND_ALLOW: '127.0.0.1',
    LOG_LEVEL: 'warn',
    ...extra,
  };
  return { env, dataDir, cleanup: () => fs.rmSync(dataDir, { recursive: true, force: true }) };
}

/** Creates a client token calling back `callbackBase` + `dest`, uploads a one-line template and queues an
 *  async docx generation whose data comes from `graphqlUrl`. Returns the operation id and the secret that
 *  signs the callback. */
export async function queueAsyncGeneration(
  sdk: ReturnType<typeof client>,
  opts: { callbackBase: string; dest: string; graphqlUrl: string; externalContext: Record<string, unknown> },
) {
  const token = await sdk.call('POST', '/common/client/token', {
    json: { sub: 'receiver-secret', iss: opts.callbackBase, dest: opts.dest },
  });
  expect(token.status, JSON.stringify(token.body)).toBe(200);
  const t = await sdk.upload('template', [{ name: 't.docx', bytes: makeDocx(['Hello {customer.name}']) }]);
  expect(t.status, JSON.stringify(t.body)).toBe(201);
  const queued = await sdk.call('POST', '/documents/document/generate/async', {
    headers: { 'x-client-authorization': token.body.result.data.token },
    json: {
      template: { urn: t.body.result.data.files[0].id, loadMethod: 'Storage', fileFormat: 'docx' },
      data: { loadMethod: 'GraphQL', urn: opts.graphqlUrl, query: 'query { customer { name } }' },
      document: { name: 'durable', fileFormat: 'docx', deliveryMethod: 'Storage', path: 'root', timezone: 'UTC', locale: 'en-US' },
      externalContext: opts.externalContext,
    },
  });
  expect(queued.status, JSON.stringify(queued.body)).toBe(201);
  return { operationId: queued.headers.get('x-operation-id') ?? '', webhookSecret: token.body.result.data.webhookSecret as string };
}

/** The callback body of a successful generation: the document is downloadable and exactly one document
 *  record exists. */
export async function expectOneDocument(sdk: ReturnType<typeof client>, body: { result?: { data: { document: { urn: string } } } }) {
  expect(body.result?.data.document.urn).toBeTruthy();
  const docs = await sdk.call('GET', '/documents/document/list');
  expect(docs.status).toBe(200);
  expect(docs.body.result.data.rowCount).toBe(1);
  const file = await sdk.download(body.result?.data.document.urn ?? '');
  expect(file.status).toBe(200);
}
