// A crm endpoint that answers something other than Salesforce's JSON (a proxy's or a portal's HTML page,
// with 200) is the connection's problem, said at once: LocationError CONNECTION_ERROR (non-retryable, the
// caller's 400), not a TypeError that the workflow retries until the synchronous caller's 504 (issue 36,
// section 3). Both the token endpoint and the org's REST API are tried. A real HTTP server answers.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../config/env.ts';
import { connectionStore } from '../../../connectors/connection-store.ts';
import { crmLocation } from '../../../connectors/crm/location.ts';
import { type Location, LocationError } from '../../../connectors/location.ts';
import { openBlobStore } from '../../../connectors/storage/open.ts';
import { seal } from '../../../security/sealed.ts';
import { ensureSubscription } from '../../../store/accounts.ts';
import { putConnection } from '../../../store/connections.ts';
import { type Db, openDb } from '../../../store/db.ts';
import { migrate } from '../../../store/migrate.ts';

const HTML = '<!doctype html><html><body><h1>Maintenance</h1></body></html>';

describe('a crm endpoint that answers HTML', () => {
  let server: http.Server;
  let tokens: http.Server;
  let url: string;
  let tokenUrl: string;
  let db: Db;
  let dir: string;
  let location: Location;
  /** Subscriptions whose connection's login URL answers HTML to everything, or a token then HTML. */
  const subs: Record<'login' | 'api', string> = { login: '', api: '' };

  beforeAll(async () => {
    // HTML to everything; and a token endpoint that works, naming that server as the org.
    server = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(HTML);
    });
    tokens = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ access_token: 'token', instance_url: url, token_type: 'Bearer' }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    await new Promise<void>((r) => tokens.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    tokenUrl = `http://127.0.0.1:${(tokens.address() as AddressInfo).port}`;
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'crm-html-'));
    db = await openDb({ dataDir: dir });
    await migrate(db);
    for (const kind of ['login', 'api'] as const) {
      const subscriptionId = (subs[kind] = (await ensureSubscription(db, `crm-html-${randomUUID()}`)).id);
      await putConnection(db, {
        subscriptionId,
        userId: randomUUID(),
        kind: 'crm',
        settings: { loginUrl: kind === 'login' ? url : tokenUrl, clientId: 'app', flow: 'client_credentials' },
        sealedSecrets: await seal(db, subscriptionId, JSON.stringify({ clientSecret: 'secret' })),
        secretNames: ['clientSecret'],
      });
    }
    const settings = { crmApiVersion: '62.0', crmLoginHosts: [url, tokenUrl], crmMultipartBytes: 1024 * 1024 };
    location = crmLocation({
      db,
      blobs: openBlobStore(loadConfig({}, { dataDir: dir })),
      settings: settings as never,
      connections: connectionStore(db),
    });
  });
  afterAll(async () => {
    server?.close();
    tokens?.close();
    await db?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const failureOf = async (p: Promise<unknown>) =>
    p.then(
      () => undefined,
      (e: unknown) => e,
    );

  it.each(['login', 'api'] as const)('%s endpoint: CONNECTION_ERROR naming what answered, at once', async (kind) => {
    const ctx = { subscriptionId: subs[kind], userId: randomUUID() };
    for (const attempt of [
      () => location.readDocument!(ctx, '068000000000001AAA'),
      () =>
        location.write!(ctx, {
          urn: randomUUID(),
          name: 'a',
          path: '',
          fileFormat: 'pdf',
          source: { key: 'none', sha256: '', size: 0, contentType: 'application/pdf' },
        }),
    ]) {
      const err = await failureOf(attempt());
      expect(err).toBeInstanceOf(LocationError);
      expect(err).toMatchObject({
        code: 'CONNECTION_ERROR',
        message: expect.stringMatching(/not (?:JSON as Salesforce answers|Salesforce's JSON).*check the connection's loginUrl/),
      });
    }
  });
});
