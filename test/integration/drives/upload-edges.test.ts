// The edges of writing to the drives (issue 39, findings 2 and 5), each location against its fake with
// the real clients: an upload session that expires half-way (404 on its URL: Graph upload sessions, Drive
// resumable uploads) is started again and the file arrives once; a second expiry says what happened; a
// full drive (Graph 507 quotaLimitReached, Drive storageQuotaExceeded) is QUOTA_EXCEEDED, and DriveB's
// advice to an OAuth user names no service account; Drive throttling past DRIVE_THROTTLE_MAX_WAIT_MS is
// TOO_MANY_REQUESTS with the Retry-After to use.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../config/env.ts';
import { connectionStore } from '../../../connectors/connection-store.ts';
import { driveALocation, UPLOAD_CHUNK as GRAPH_CHUNK } from '../../../connectors/driveA/location.ts';
import { UPLOAD_CHUNK as DRIVE_CHUNK } from '../../../connectors/driveB/client.ts';
import { driveBLocation } from '../../../connectors/driveB/location.ts';
import { type Location, LocationError, type WriteRequest } from '../../../connectors/location.ts';
import type { BlobStore } from '../../../connectors/storage/blob-store.ts';
import { openBlobStore } from '../../../connectors/storage/open.ts';
import { seal } from '../../../security/sealed.ts';
import { ensureSubscription } from '../../../store/accounts.ts';
import { putConnection } from '../../../store/connections.ts';
import { type Db, openDb } from '../../../store/db.ts';
import { migrate } from '../../../store/migrate.ts';
import type { GoogleFake } from '../../fakes/google/server.ts';
import { type GraphFake, startGraphFake } from '../../fakes/graph/server.ts';
import { startFakeGoogle } from '../driveB/setup.ts';

const D = 'b!drive-edges!1';
const ADA = 'ada@example.com';

describe('uploads at the edges of DriveA and DriveB', () => {
  let graph: GraphFake;
  let google: GoogleFake;
  let restoreEnv: () => void;
  let db: Db;
  let blobs: BlobStore;
  let driveA: Location;
  let driveB: Location;
  let dir: string;
  let subscriptionId: string;
  const ctx = () => ({ subscriptionId, userId: randomUUID() });

  beforeAll(async () => {
    graph = await startGraphFake();
    graph.addDrive(D);
    const g = await startFakeGoogle();
    google = g.fake;
    restoreEnv = g.restoreEnv;
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drive-edges-'));
    db = await openDb({ dataDir: dir });
    await migrate(db);
    subscriptionId = (await ensureSubscription(db, `edges-${randomUUID()}`)).id;
    blobs = openBlobStore(loadConfig({}, { dataDir: dir }));
    await putConnection(db, {
      subscriptionId,
      userId: randomUUID(),
      kind: 'driveA',
      settings: { tenantId: graph.tenantId, clientId: graph.clientId, driveId: D },
      sealedSecrets: await seal(db, subscriptionId, JSON.stringify({ clientSecret: graph.clientSecret })),
      secretNames: ['clientSecret'],
    });
    await putConnection(db, {
      subscriptionId,
      userId: randomUUID(),
      kind: 'driveB',
      settings: { mode: 'oauth', clientId: 'client-a' },
      sealedSecrets: await seal(db, subscriptionId, JSON.stringify({ clientSecret: 'secret-a', refreshToken: 'refresh-ada' })),
      secretNames: ['clientSecret', 'refreshToken'],
    });
    // A small throttle budget, so that Drive's back-off (1 s, 2 s, ...) passes it within the test.
    const settings = { driveAGraphUrl: graph.graphUrl, driveALoginUrl: graph.loginUrl, ...g.settings, driveThrottleMaxWaitMs: 2_500 };
    driveA = driveALocation({ db, blobs, settings: settings as never, connections: connectionStore(db) });
    driveB = driveBLocation(
      { db, blobs, settings: settings as never, connections: connectionStore(db) },
      { attempts: 3, baseMs: 10, maxMs: 50 },
    );
  });
  afterAll(async () => {
    await graph?.close();
    await google?.close();
    await db?.close();
    restoreEnv?.();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function request(over: Partial<WriteRequest> & { bytes?: Uint8Array } = {}): Promise<WriteRequest> {
    const { bytes, ...rest } = over;
    const key = `scratch/test/${randomUUID()}`;
    const put = await blobs.put(key, bytes ?? Buffer.from('%PDF-1.7 one'));
    return {
      urn: randomUUID(),
      name: 'report',
      path: 'Edges',
      fileFormat: 'pdf',
      source: { key, sha256: put.sha256, size: put.size, contentType: 'application/pdf' },
      ...rest,
    };
  }
  async function failure(p: Promise<unknown>): Promise<LocationError> {
    const err = await p.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(LocationError);
    return err as LocationError;
  }
  const graphFiles = (prefix: string) =>
    graph.files(D).filter((f) => f.path.startsWith(prefix) && !f.path.endsWith('/') && f.state === 'live');
  const driveFiles = (name: RegExp) => [...google.files.values()].filter((f) => name.test(f.name) && !f.trashed);

  it('Graph: a session that expires half-way is started again and the file arrives once; a second expiry says so', async () => {
    const bytes = Buffer.alloc(GRAPH_CHUNK * 2 + 777, 7);
    const sessions = graph.count('POST', 'createUploadSession');
    graph.expireUploadSessions(GRAPH_CHUNK);
    const w = await driveA.write!(ctx(), await request({ path: 'Expired', bytes }));
    expect(graph.count('POST', 'createUploadSession') - sessions).toBe(2);
    expect(graph.item(D, w.urn)?.content?.equals(bytes)).toBe(true);
    expect(graphFiles('Expired/').map((f) => f.path)).toEqual(['Expired/report.pdf']);

    graph.expireUploadSessions(GRAPH_CHUNK, 2);
    const err = await failure(driveA.write!(ctx(), await request({ path: 'Expired2', bytes })));
    expect(err.code).toBe('FILE_UPLOAD_FAILED');
    expect(err.message).toMatch(/upload session of .* expired before the upload finished, twice \(404 on its upload URL/);
    expect(err.message).not.toMatch(/driveId/);
    expect(graphFiles('Expired2/')).toEqual([]);
  });

  it('Drive: a resumable session that expires half-way is started again and the file arrives once; a second expiry says so', async () => {
    const bytes = Buffer.alloc(6 * 1024 * 1024 + 333, 9);
    google.expireUploadSessions(DRIVE_CHUNK * 4);
    const w = await driveB.write!(ctx(), await request({ path: '', name: 'resumed', bytes }));
    expect(google.files.get(w.urn)?.content.equals(bytes)).toBe(true);
    expect(driveFiles(/^resumed\.pdf$|^\.docgen-/).map((f) => f.name)).toEqual(['resumed.pdf']);

    google.expireUploadSessions(DRIVE_CHUNK * 4, 2);
    const err = await failure(driveB.write!(ctx(), await request({ path: '', name: 'expired-twice', bytes })));
    expect(err.code).toBe('FILE_UPLOAD_FAILED');
    expect(err.message).toMatch(/DriveB upload session expired before the upload finished, twice/);
    expect(err.message).not.toMatch(/was not found/);
    expect(driveFiles(/^expired-twice/)).toEqual([]);
  });

  it('a full drive is QUOTA_EXCEEDED (Graph 507, Drive storageQuotaExceeded); an OAuth user is not told about service accounts', async () => {
    graph.setQuota(D, 1);
    const a = await failure(driveA.write!(ctx(), await request({ path: 'Full/Deep' })));
    expect(a.code).toBe('QUOTA_EXCEEDED');
    expect(a.message).toMatch(/DriveA drive has no room left .*507 quotaLimitReached/);
    expect(graph.files(D).filter((f) => f.path.startsWith('Full'))).toEqual([]);
    graph.setQuota(D, undefined);

    google.setQuota(ADA, 1);
    const b = await failure(driveB.write!(ctx(), await request({ path: 'Full B/Deep', name: 'full' })));
    expect(b.code).toBe('QUOTA_EXCEEDED');
    expect(b.message).toMatch(/storage quota of the connected Google account is used up/);
    expect(b.message).not.toMatch(/service account/i);
    // The folders made for the refused write went again (spec 4.8).
    expect(driveFiles(/^(Full B|Deep)$/)).toEqual([]);
    google.setQuota(ADA, undefined);
  });

  it('Graph: a refused write removes the folders it made (only those, only empty ones), spec 4.8', async () => {
    // The site's own path eats most of SharePoint's 400 characters: the folders and the temporary name
    // fit, the final name does not, and Graph refuses it after the folders were made.
    const L = 'b!drive-edges-long!1';
    graph.addDrive(L, { pathPrefix: `sites/${'x'.repeat(300)}/Shared Documents` });
    const sub = (await ensureSubscription(db, `edges-long-${randomUUID()}`)).id;
    await putConnection(db, {
      subscriptionId: sub,
      userId: randomUUID(),
      kind: 'driveA',
      settings: { tenantId: graph.tenantId, clientId: graph.clientId, driveId: L },
      sealedSecrets: await seal(db, sub, JSON.stringify({ clientSecret: graph.clientSecret })),
      secretNames: ['clientSecret'],
    });
    graph.put(L, 'Kept/existing.pdf', Buffer.from('%PDF-1.7 kept'));
    const name = 'Quarterly report for the board of directors, final version approved on the 30th';
    const err = await failure(
      driveA.write!({ subscriptionId: sub, userId: randomUUID() }, await request({ name, path: 'Kept/New/Deeper' })),
    );
    expect(err.code).toBe('VALIDATION_ERROR');
    expect(err.message).toMatch(/path is too long/);
    // New and Deeper were made for the write and went again; Kept (there before, not empty) stays.
    expect(
      graph
        .files(L)
        .map((f) => f.path)
        .sort(),
    ).toEqual(['Kept/', 'Kept/existing.pdf']);
  });

  it('Drive: throttled chunks of a resumable upload are waited out as Retry-After says, not counted as failures', async () => {
    const bytes = Buffer.alloc(6 * 1024 * 1024 + 5, 4);
    // Twelve throttled chunk PUTs (Retry-After: 0), far more than the 3 attempts a failing chunk gets.
    google.failNext(12, { status: 429, retryAfter: 0 }, (r) => r.method === 'PUT' && r.query.upload_id !== undefined);
    const before = google.requests.filter((r) => r.status === 429).length;
    const w = await driveB.write!(ctx(), await request({ path: '', name: 'chunks-throttled', bytes }));
    expect(google.files.get(w.urn)?.content.equals(bytes)).toBe(true);
    expect(google.requests.filter((r) => r.status === 429).length - before).toBe(12);
  });

  it('Drive throttling past DRIVE_THROTTLE_MAX_WAIT_MS is TOO_MANY_REQUESTS with a Retry-After, after waiting the back-off', async () => {
    google.failNext(50, { status: 429 });
    const err = await failure(driveB.write!(ctx(), await request({ path: '', name: 'throttled' })));
    expect(err.code).toBe('TOO_MANY_REQUESTS');
    expect(err.message).toMatch(/DriveB \(Google Drive\) is throttling requests: waited 1 s .*DRIVE_THROTTLE_MAX_WAIT_MS \(3 s\)/);
    expect(err.retryAfterSeconds).toBe(2);
  });
});
