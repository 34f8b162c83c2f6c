// The DriveA location against the fake Microsoft Graph (test/fakes/graph), below the workflows: urn
// forms, folders, simple and session uploads, the clash policy, sharing, exactly one file when a write is
// retried after failing at each step, and how Graph's faults become the caller's errors.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../config/env.ts';
import { connectionStore } from '../../../connectors/connection-store.ts';
import { driveALocation, driveANameProblem, UPLOAD_CHUNK } from '../../../connectors/driveA/location.ts';
import { type Location, LocationError, type WriteRequest } from '../../../connectors/location.ts';
import type { BlobStore } from '../../../connectors/storage/blob-store.ts';
import { openBlobStore } from '../../../connectors/storage/open.ts';
import { ensureSubscription } from '../../../store/accounts.ts';
import { type Db, openDb } from '../../../store/db.ts';
import { migrate } from '../../../store/migrate.ts';
import { putConnection } from '../../../store/connections.ts';
import { seal } from '../../../security/sealed.ts';
import { CHUNK_UNIT, type GraphFake, startGraphFake } from '../../fakes/graph/server.ts';

const D = 'b!drive-loc!1';

describe('the DriveA location', () => {
  let fake: GraphFake;
  let db: Db;
  let blobs: BlobStore;
  let location: Location;
  let dir: string;
  let subscriptionId: string;
  const ctx = () => ({ subscriptionId, userId: randomUUID() });
  /** The subscription's connection, stored as the API stores it (secret sealed). */
  async function connectWith(clientSecret: string) {
    await putConnection(db, {
      subscriptionId,
      userId: randomUUID(),
      kind: 'driveA',
      settings: { tenantId: fake.tenantId, clientId: fake.clientId, driveId: D },
      sealedSecrets: await seal(db, subscriptionId, JSON.stringify({ clientSecret })),
      secretNames: ['clientSecret'],
    });
  }

  beforeAll(async () => {
    fake = await startGraphFake();
    fake.addDrive(D);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drivea-loc-'));
    db = await openDb({ dataDir: dir });
    await migrate(db);
    subscriptionId = (await ensureSubscription(db, `drivea-${randomUUID()}`)).id;
    blobs = openBlobStore(loadConfig({}, { dataDir: dir }));
    await connectWith(fake.clientSecret);
    location = driveALocation({
      db,
      blobs,
      settings: { driveAGraphUrl: fake.graphUrl, driveALoginUrl: fake.loginUrl } as never,
      connections: connectionStore(db),
    });
  });
  afterAll(async () => {
    await fake?.close();
    await db?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function blob(bytes: Buffer, contentType = 'application/pdf') {
    const key = `scratch/test/${randomUUID()}`;
    const put = await blobs.put(key, bytes);
    return { key, sha256: put.sha256, size: put.size, contentType };
  }
  async function request(over: Partial<WriteRequest> & { bytes?: Buffer } = {}): Promise<WriteRequest> {
    const { bytes, ...rest } = over;
    return {
      urn: randomUUID(),
      name: 'report',
      path: 'Reports/2026',
      fileFormat: 'pdf',
      source: await blob(bytes ?? Buffer.from('%PDF-1.7 small')),
      ...rest,
    };
  }
  const files = (prefix: string) => fake.files(D).filter((f) => f.path.startsWith(prefix) && !f.path.endsWith('/') && f.state === 'live');
  const code = async (p: Promise<unknown>) => {
    const err = await p.then(
      () => undefined,
      (e: unknown) => e,
    );
    return err instanceof LocationError ? err.code : `not a LocationError: ${String(err)}`;
  };

  it('writes into folders it makes, reads back by every urn form, renames on a clash by default', async () => {
    const first = await location.write!(ctx(), await request());
    expect(first).toMatchObject({ name: 'report.pdf', path: 'Reports/2026' });
    expect(first.uri).toMatch(/^https:\/\//);
    const again = await location.write!(ctx(), await request({ bytes: Buffer.from('%PDF second') }));
    expect(again.name).toBe('report 1.pdf');
    expect(
      files('Reports/')
        .map((f) => f.path)
        .sort(),
    ).toEqual(['Reports/2026/report 1.pdf', 'Reports/2026/report.pdf']);
    for (const urn of [first.urn, `${D}!${first.urn}`, 'root:/Reports/2026/report.pdf:', 'root:/Reports/2026/report.pdf']) {
      const found = await location.readDocument!(ctx(), urn);
      expect(Buffer.from(await blobs.get(found.blob.key)).toString()).toBe('%PDF-1.7 small');
      expect(found).toMatchObject({ name: 'report.pdf', path: 'Reports/2026', fileFormat: 'pdf' });
    }
    expect(await code(location.readTemplate!(ctx(), 'root:/Reports/missing.docx:'))).toBe('TEMPLATE_NOT_FOUND');
    expect(await code(location.readData!(ctx(), 'NOPE123'))).toBe('DATA_NOT_FOUND');
    expect(await code(location.readData!(ctx(), 'a/b'))).toBe('DATA_NOT_FOUND');
  });

  it('replace keeps one file, fail refuses and leaves nothing behind', async () => {
    const a = await location.write!(ctx(), await request({ path: 'Clash' }));
    const b = await location.write!(ctx(), await request({ path: 'Clash', conflict: 'replace', bytes: Buffer.from('%PDF replaced') }));
    expect(b.name).toBe('report.pdf');
    expect(await code(location.write!(ctx(), await request({ path: 'Clash', conflict: 'fail' })))).toBe('VALIDATION_ERROR');
    const left = files('Clash/');
    expect(left.map((f) => f.path)).toEqual(['Clash/report.pdf']);
    expect(left[0]!.content?.toString()).toBe('%PDF replaced');
    expect(a.urn).toBeTruthy();
  });

  it('uploads a large file through a session: 320 KiB multiples, no token on the upload URL', async () => {
    const bytes = Buffer.alloc(UPLOAD_CHUNK * 2 + 12_345, 3);
    const before = fake.log.length;
    const w = await location.write!(ctx(), await request({ path: 'Big', bytes }));
    const puts = fake.log.slice(before).filter((e) => e.method === 'PUT' && e.path.startsWith('/up/'));
    expect(puts.map((e) => e.status)).toEqual([202, 202, 201]);
    expect(puts.every((e) => !e.authorization && e.host.startsWith('127.0.0.1'))).toBe(true);
    expect(UPLOAD_CHUNK % CHUNK_UNIT).toBe(0);
    expect(fake.item(D, w.urn)?.content?.equals(bytes)).toBe(true);
  });

  it('a write retried after failing at any step leaves exactly one file', async () => {
    // 1. The session's second fragment fails (the attempt gives up): the retry resumes at nextExpectedRanges.
    const bytes = Buffer.alloc(UPLOAD_CHUNK * 3, 5);
    const req = await request({ path: 'Retry1', bytes });
    fake.inject({ status: 503, retryAfter: 0, times: 4, method: 'PUT', path: '/up/' });
    const firstPut = fake.count('PUT', '/up/');
    const failed = await location.write!(ctx(), req).then(
      () => 'wrote',
      (e: Error) => e.name,
    );
    expect(failed).toBe('GraphUnavailableError');
    fake.clearFaults();
    await location.write!(ctx(), req);
    // 4 refused + 3 fragments: the retry sent only what had not arrived.
    expect(fake.count('PUT', '/up/') - firstPut).toBe(4 + 3);
    expect(fake.count('POST', 'createUploadSession')).toBe(2); // the large test's one and this one
    expect(files('Retry1/').map((f) => f.path)).toEqual(['Retry1/report.pdf']);

    // 2. The rename fails after the upload: the retry renames, it does not upload again.
    const req2 = await request({ path: 'Retry2' });
    fake.inject({ status: 503, retryAfter: 0, times: 4, method: 'PATCH' });
    await expect(location.write!(ctx(), req2)).rejects.toThrow(/503/);
    expect(files('Retry2/').map((f) => f.path)).toEqual([expect.stringMatching(/^Retry2\/\.docgen-/)]);
    const contentPuts = fake.count('PUT', '/content');
    await location.write!(ctx(), req2);
    expect(fake.count('PUT', '/content')).toBe(contentPuts);
    expect(files('Retry2/').map((f) => f.path)).toEqual(['Retry2/report.pdf']);

    // 3. Sharing fails after the file is placed: the retry shares the same file.
    const req3 = await request({ path: 'Retry3', sharing: { viewAnonymous: true } });
    fake.inject({ status: 503, retryAfter: 0, times: 4, path: 'createLink' });
    await expect(location.write!(ctx(), req3)).rejects.toThrow(/503/);
    const again = await location.write!(ctx(), req3);
    expect(again.links?.viewAnonymousLink).toMatch(/^https:/);
    expect(files('Retry3/').map((f) => f.path)).toEqual(['Retry3/report.pdf']);
    // And a write that already succeeded, run again (a replayed step), is the same file.
    expect((await location.write!(ctx(), req3)).urn).toBe(again.urn);
    expect(files('Retry3/')).toHaveLength(1);
  });

  it('shares: anonymous links, invitations with per-recipient results, a tenant refusal recorded', async () => {
    fake.refuseRecipient('nobody@example.com');
    fake.refuseAnonymousLinks();
    try {
      const w = await location.write!(
        ctx(),
        await request({
          path: 'Shared',
          sharing: { viewAnonymous: true, viewUsers: ['ada@example.com', 'nobody@example.com'], editUsers: ['bob@example.com'] },
        }),
      );
      expect(w.links?.viewAnonymousLink).toBe('');
      expect(w.links?.viewUserLink).toBe(w.uri);
      expect(w.links?.editUserLink).toBe(w.uri);
      expect(w.emails).toEqual({
        succeededView: ['ada@example.com'],
        succeededEdit: ['bob@example.com'],
        failedView: ['nobody@example.com'],
        failedEdit: [],
      });
      expect(w.externalErrors).toEqual([
        expect.objectContaining({ option: 'document.options.driveA.viewAnonymous', status: 403, code: 'accessDenied' }),
        expect.objectContaining({ option: 'document.options.driveA.viewUsers', email: 'nobody@example.com', code: 'notAllowed' }),
      ]);
      const invite = fake.log.filter((e) => e.path.endsWith('/invite'));
      expect(invite.map((e) => e.status)).toEqual([207, 200]);
    } finally {
      fake.refuseAnonymousLinks(false);
    }
    const ok = await location.write!(ctx(), await request({ path: 'Shared', sharing: { editAnonymous: true } }));
    expect(ok.links?.editAnonymousLink).toMatch(/^https:\/\/contoso/);
    expect(ok.externalErrors).toBeUndefined();
  });

  it('throttling waits Retry-After; a long Retry-After, a wrong secret, an expired token', async () => {
    fake.inject({ status: 429, retryAfter: 1, times: 2, method: 'PUT' });
    const puts = fake.count('PUT', '/content');
    const early = fake.earlyRetries();
    await location.write!(ctx(), await request({ path: 'Throttled' }));
    // Two throttled answers, then the upload; the fake throttles again a retry that does not wait.
    expect(fake.count('PUT', '/content') - puts).toBe(3);
    expect(fake.earlyRetries() - early).toBe(0);

    // A Retry-After past what a step may wait (DRIVE_THROTTLE_MAX_WAIT_MS): a throttling answer at once,
    // with the Retry-After Graph asked for (issue 39), not a retry sooner than it.
    fake.inject({ status: 503, retryAfter: 3600, method: 'GET' });
    const err = await location.readDocument!(ctx(), 'root:/Throttled/report.pdf:').then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err).toBeInstanceOf(LocationError);
    expect(err).toMatchObject({ code: 'TOO_MANY_REQUESTS', retryAfterSeconds: 3600 });
    expect(err?.message).toMatch(/DriveA \(Microsoft Graph\) is throttling requests.*3600 s/);
    fake.clearFaults();

    const tokens = fake.count('POST', '/oauth2/v2.0/token');
    fake.expireTokens();
    await location.readDocument!(ctx(), 'root:/Throttled/report.pdf:');
    expect(fake.count('POST', '/oauth2/v2.0/token')).toBe(tokens + 1);

    // A token Graph keeps refusing after the one refresh: the connection is unusable, not a retry.
    const refreshed = fake.count('POST', '/oauth2/v2.0/token');
    fake.inject({ status: 401, times: 2, method: 'GET' });
    expect(await code(location.readDocument!(ctx(), 'root:/Throttled/report.pdf:'))).toBe('CONNECTION_ERROR');
    expect(fake.count('POST', '/oauth2/v2.0/token')).toBe(refreshed + 1);

    await connectWith('wrong');
    try {
      expect(await code(location.readTemplate!(ctx(), 'root:/x.docx:'))).toBe('CONNECTION_ERROR');
    } finally {
      await connectWith(fake.clientSecret);
    }
  });

  it('copies (async copy + monitor) and moves (PATCH) inside the drive, removes to the recycle bin or for good', async () => {
    const src = await location.write!(ctx(), await request({ path: 'Src', name: 'memo' }));
    const copy = await location.copyWithin!(ctx(), src.urn, { urn: randomUUID(), name: 'memo-copy', path: 'Dst', fileFormat: 'pdf' });
    expect(copy.name).toBe('memo-copy.pdf');
    expect(fake.count('GET', '/monitor/')).toBeGreaterThanOrEqual(2);
    expect(fake.item(D, copy.urn)?.content?.toString()).toBe('%PDF-1.7 small');
    // A copy whose monitor stopped answering: the retry follows the same copy, it does not start another.
    const copyReq = { urn: randomUUID(), name: 'memo-copy2', path: 'Dst', fileFormat: 'pdf' };
    const started = fake.count('POST', '/copy');
    fake.inject({ status: 503, retryAfter: 0, times: 4, path: '/monitor/' });
    await expect(location.copyWithin!(ctx(), src.urn, copyReq)).rejects.toThrow(/503/);
    const second = await location.copyWithin!(ctx(), src.urn, copyReq);
    expect(fake.count('POST', '/copy') - started).toBe(1);
    expect(second.name).toBe('memo-copy2.pdf');
    expect(
      files('Dst/')
        .map((f) => f.path)
        .sort(),
    ).toEqual(['Dst/memo-copy.pdf', 'Dst/memo-copy2.pdf']);
    const moved = (await location.moveWithin!(ctx(), src.urn, {
      urn: randomUUID(),
      name: 'memo-moved',
      path: 'Moved',
      fileFormat: 'pdf',
    }))!;
    expect(moved.urn).toBe(src.urn);
    expect(files('Src/')).toEqual([]);
    expect(files('Moved/').map((f) => f.path)).toEqual(['Moved/memo-moved.pdf']);
    await location.remove!(ctx(), copy.urn, 'delete');
    expect(fake.item(D, copy.urn)?.state).toBe('recycled');
    await location.remove!(ctx(), moved.urn, 'permanentDelete');
    expect(fake.item(D, moved.urn)).toBeUndefined();
    // Already gone: a retried removal is done, not an error.
    await location.remove!(ctx(), moved.urn, 'permanentDelete');
  });

  it("a final name Graph refuses (here SharePoint's path limit, which counts the site) leaves no temporary file or copy behind", async () => {
    // The site's own path eats most of SharePoint's 400 characters: the temporary name fits, the final one does not.
    const L = 'b!drive-long-site!1';
    fake.addDrive(L, { pathPrefix: `sites/${'x'.repeat(300)}/Shared Documents` });
    const sub = (await ensureSubscription(db, `drivea-long-${randomUUID()}`)).id;
    await putConnection(db, {
      subscriptionId: sub,
      userId: randomUUID(),
      kind: 'driveA',
      settings: { tenantId: fake.tenantId, clientId: fake.clientId, driveId: L },
      sealedSecrets: await seal(db, sub, JSON.stringify({ clientSecret: fake.clientSecret })),
      secretNames: ['clientSecret'],
    });
    const long = { subscriptionId: sub, userId: randomUUID() };
    const name = 'Quarterly report for the board of directors, final version approved on the 30th';
    // Within what docgen can know (the path from the drive root), the name is fine.
    expect(driveANameProblem({ name, path: 'Out', fileFormat: 'pdf' })).toBeUndefined();
    const refused = await location.write!(long, await request({ name, path: 'Out' })).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(LocationError);
    expect((refused as LocationError).code).toBe('VALIDATION_ERROR');
    expect((refused as LocationError).message).toMatch(/path is too long/);
    const live = () => fake.files(L).filter((f) => !f.path.endsWith('/') && f.state === 'live');
    expect(live()).toEqual([]);
    // Gone for good, not in the recycle bin; the journal forgets it.
    expect(fake.files(L).filter((f) => !f.path.endsWith('/'))).toEqual([]);
    expect((await db.query('SELECT urn FROM location_writes WHERE subscription_id = $1', [sub])).rows).toEqual([]);

    // The same for a copy inside the drive: the copy under its temporary name goes.
    const src = await location.write!(long, await request({ name: 'memo', path: 'Out' }));
    const copy = await location.copyWithin!(long, src.urn, { urn: randomUUID(), name, path: 'Out', fileFormat: 'pdf' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((copy as LocationError).code).toBe('VALIDATION_ERROR');
    expect(live().map((f) => f.path)).toEqual(['Out/memo.pdf']);

    // A name refused outright (what the API checks before queueing), written anyway: nothing stays either.
    const colon = await code(location.write!(ctx(), await request({ name: 'Invoice 12:30', path: 'Colon' })));
    expect(colon).toBe('VALIDATION_ERROR');
    expect(fake.files(D).filter((f) => f.path.startsWith('Colon/') && !f.path.endsWith('/'))).toEqual([]);
  });

  it("SharePoint's naming rules, as the API checks them before queueing", () => {
    const problem = (name: string, path = 'Out', fileFormat = 'docx') => driveANameProblem({ name, path, fileFormat });
    for (const bad of [
      'Invoice 12:30',
      'a"b',
      'a*b',
      'a<b',
      'a>b',
      'a?b',
      'a/b',
      'a\\b',
      'a|b',
      ' lead',
      'CON',
      'prn',
      'Aux',
      'NUL',
      'COM1',
      'lpt9',
      '~$lock',
      'x_vti_y',
    ]) {
      expect(problem(bad)?.field, bad).toBe('name');
    }
    // Names kept whole (their extension is the format's).
    expect(problem('desktop.ini', 'Out', 'ini')?.reason).toMatch(/reserve/);
    expect(problem('.lock', 'Out', 'lock')?.reason).toMatch(/reserve/);
    for (const bad of ['forms', 'A/~tilde', 'A/B:C', 'A/CON', 'A/x_vti_']) expect(problem('ok', bad)?.field, bad).toBe('path');
    for (const fine of ['Invoice 12.30', 'Rapport été 2026', 'console', 'A&B #1 (draft)', 'forms-2026'])
      expect(problem(fine), fine).toBeUndefined();
    expect(problem('x', 'A/forms')).toBeUndefined();
    expect(problem('x'.repeat(396))?.reason).toMatch(/400/);
  });

  it('the upload session URL and the copy monitor URL are kept sealed in the write journal', async () => {
    const journal = async (urn: string) =>
      (await db.query<{ upload_url: string | null }>('SELECT upload_url FROM location_writes WHERE urn = $1', [urn])).rows[0]?.upload_url;
    const bytes = Buffer.alloc(UPLOAD_CHUNK * 2, 7);
    const req = await request({ path: 'Sealed', bytes });
    let fragments = 0;
    const held = fake.hold((method, p) => method === 'PUT' && p.startsWith('/up/') && ++fragments === 2);
    const writing = location.write!(ctx(), req);
    await held.arrived;
    const stored = await journal(req.urn);
    held.release();
    await writing;
    expect(stored).toMatch(/^sealed:/);
    expect(stored).not.toContain('/up/');
    expect(stored).not.toContain('127.0.0.1');

    const src = await location.write!(ctx(), await request({ path: 'Sealed', name: 'src' }));
    const copyReq = { urn: randomUUID(), name: 'src-copy', path: 'Sealed', fileFormat: 'pdf' };
    const monitor = fake.hold((method, p) => method === 'GET' && p.startsWith('/monitor/'));
    const copying = location.copyWithin!(ctx(), src.urn, copyReq);
    await monitor.arrived;
    const sealedMonitor = await journal(copyReq.urn);
    monitor.release();
    expect((await copying).name).toBe('src-copy.pdf');
    expect(sealedMonitor).toMatch(/^sealed:/);
    expect(sealedMonitor).not.toContain('/monitor/');
  });
});
