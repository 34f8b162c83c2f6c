// The DriveB location against the local Google server, below the workflows, with the real googleapis /
// google-auth-library clients: a revoked access token is renewed once; conflictBehavior replace writes
// the new content into the existing file (same id, link and permissions; resumable above 5 MB); reads
// stream with a cap instead of holding the file in memory; a folder made meanwhile by someone who does not
// take docgen's lock is noticed after creating, and everyone uses the oldest.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../config/env.ts';
import { connectionStore } from '../../../connectors/connection-store.ts';
import { driveBLocation } from '../../../connectors/driveB/location.ts';
import { type Location, LocationError, type WriteRequest } from '../../../connectors/location.ts';
import type { BlobStore } from '../../../connectors/storage/blob-store.ts';
import { openBlobStore } from '../../../connectors/storage/open.ts';
import { seal } from '../../../security/sealed.ts';
import { ensureSubscription } from '../../../store/accounts.ts';
import { putConnection } from '../../../store/connections.ts';
import { type Db, openDb } from '../../../store/db.ts';
import { migrate } from '../../../store/migrate.ts';
import { docParagraphs } from '../../fakes/google/office-model.ts';
import { type GoogleFake, MIME } from '../../fakes/google/server.ts';
import { makeDocx, para } from '../convert/fixtures.ts';
import { startFakeGoogle } from './setup.ts';

const ADA_USER = 'ada@example.com';
const MiB = 1024 * 1024;

describe('the DriveB location', () => {
  let fake: GoogleFake;
  let restoreEnv: () => void;
  let db: Db;
  let blobs: BlobStore;
  let location: Location;
  let capped: Location;
  let dir: string;
  let subscriptionId: string;
  const ctx = () => ({ subscriptionId, userId: randomUUID() });

  beforeAll(async () => {
    const g = await startFakeGoogle();
    fake = g.fake;
    restoreEnv = g.restoreEnv;
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'driveb-loc-'));
    db = await openDb({ dataDir: dir });
    await migrate(db);
    subscriptionId = (await ensureSubscription(db, `driveb-${randomUUID()}`)).id;
    blobs = openBlobStore(loadConfig({}, { dataDir: dir }));
    await putConnection(db, {
      subscriptionId,
      userId: randomUUID(),
      kind: 'driveB',
      settings: { mode: 'oauth', clientId: 'client-a' },
      sealedSecrets: await seal(db, subscriptionId, JSON.stringify({ clientSecret: 'secret-a', refreshToken: 'refresh-ada' })),
      secretNames: ['clientSecret', 'refreshToken'],
    });
    const deps = { db, blobs, settings: g.settings as never, connections: connectionStore(db) };
    const retry = { attempts: 3, baseMs: 10, maxMs: 50 };
    location = driveBLocation(deps, retry);
    capped = driveBLocation(deps, retry, { maxReadBytes: 4 * MiB });
  });
  afterAll(async () => {
    await fake?.close();
    await db?.close();
    restoreEnv?.();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function request(over: Partial<WriteRequest> & { bytes?: Uint8Array; contentType?: string } = {}): Promise<WriteRequest> {
    const { bytes, contentType, ...rest } = over;
    const key = `scratch/test/${randomUUID()}`;
    const put = await blobs.put(key, bytes ?? Buffer.from('%PDF-1.7 one'));
    return {
      urn: randomUUID(),
      name: 'report',
      path: 'Reports',
      fileFormat: 'pdf',
      source: { key, sha256: put.sha256, size: put.size, contentType: contentType ?? 'application/pdf' },
      ...rest,
    };
  }
  const child = (folderName: string) =>
    [...fake.files.values()].filter((f) => f.name === folderName && f.mimeType === MIME.folder && !f.trashed);

  it('a revoked access token is renewed once and the call made again; a token refused after that is CONNECTION_ERROR', async () => {
    await location.write!(ctx(), await request({ path: 'Tokens', name: 'first' }));
    const issued = fake.tokensIssued.length;
    fake.revokeAccessTokens();
    const again = await location.write!(ctx(), await request({ path: 'Tokens', name: 'second' }));
    expect(again.name).toBe('second.pdf');
    expect(fake.tokensIssued.length).toBe(issued + 1);
    expect(fake.requests.filter((r) => r.status === 401)).toHaveLength(1);

    // Refused again with the fresh token: the connection's problem, after one renewal only.
    fake.failNext(2, { status: 401 }, (r) => r.method === 'GET' && r.path === '/drive/v3/files');
    const refused = await location.write!(ctx(), await request({ path: 'Tokens', name: 'third' })).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(LocationError);
    expect((refused as LocationError).code).toBe('CONNECTION_ERROR');
    expect(fake.tokensIssued.length).toBe(issued + 2);
  });

  it('conflictBehavior replace puts the new content into the existing file: same id, link and permissions (small, large, native)', async () => {
    const first = await location.write!(
      ctx(),
      await request({ path: 'Replace', sharing: { viewUsers: ['bob@example.com'], viewAnonymous: true } }),
    );
    const before = fake.files.get(first.urn)!;
    const permissions = before.permissions.map((p) => `${p.type}:${p.role}:${p.emailAddress ?? ''}`).sort();
    const replaced = await location.write!(
      ctx(),
      await request({ path: 'Replace', conflict: 'replace', bytes: Buffer.from('%PDF-1.7 two') }),
    );
    expect(replaced.urn).toBe(first.urn);
    expect(replaced.uri).toBe(first.uri);
    const after = fake.files.get(first.urn)!;
    expect(after.content.toString()).toBe('%PDF-1.7 two');
    expect(after.trashed).toBe(false);
    expect(after.permissions.map((p) => `${p.type}:${p.role}:${p.emailAddress ?? ''}`).sort()).toEqual(permissions);
    expect(fake.childrenOf(after.parents[0]!).map((f) => f.name)).toEqual(['report.pdf']);
    expect([...fake.files.values()].filter((f) => f.trashed && f.name === 'report.pdf')).toEqual([]);

    // Above 5 MB: a resumable files.update session, the same file again.
    const big = Buffer.alloc(6 * MiB, 9);
    const bigReplace = await request({ path: 'Replace', conflict: 'replace', bytes: big });
    const sessions = fake.requests.length;
    expect((await location.write!(ctx(), bigReplace)).urn).toBe(first.urn);
    expect(
      fake.requests
        .slice(sessions)
        .filter((r) => r.method === 'PATCH' && r.path === `/upload/drive/v3/files/${first.urn}` && r.query.uploadType === 'resumable'),
    ).toHaveLength(1);
    expect(fake.files.get(first.urn)!.content.equals(big)).toBe(true);
    // Run again (a replayed step): the file carrying this write's urn is the answer; nothing is uploaded.
    const uploadsBefore = fake.requests.filter((r) => r.path.startsWith('/upload/')).length;
    expect((await location.write!(ctx(), bigReplace)).urn).toBe(first.urn);
    expect(fake.requests.filter((r) => r.path.startsWith('/upload/')).length).toBe(uploadsBefore);

    // A replace that died after writing into the file but before deleting its temporary upload: run again,
    // it answers with the replaced file and deletes the leftover.
    const interrupted = await request({ path: 'Replace', conflict: 'replace' });
    const folderId = fake.files.get(first.urn)!.parents[0]!;
    const leftover = fake.put({
      name: `.docgen-${interrupted.urn}.pdf`,
      mimeType: 'application/pdf',
      parent: folderId,
      owner: ADA_USER,
      content: '%PDF-1.7 two',
    });
    leftover.appProperties.docgenUrn = interrupted.urn;
    fake.files.get(first.urn)!.appProperties.docgenUrn = interrupted.urn;
    expect((await location.write!(ctx(), interrupted)).urn).toBe(first.urn);
    expect(fake.files.has(leftover.id)).toBe(false);
    expect(fake.childrenOf(folderId).map((f) => f.name)).toEqual(['report.pdf']);

    // A Google Doc replaced by a merged docx: Drive converts it again, in the same file.
    const doc = await location.write!(
      ctx(),
      await request({ path: 'Replace', name: 'letter', fileFormat: 'gdoc', bytes: makeDocx(para('Version one')), contentType: MIME.docx }),
    );
    const doc2 = await location.write!(
      ctx(),
      await request({
        path: 'Replace',
        name: 'letter',
        fileFormat: 'gdoc',
        conflict: 'replace',
        bytes: makeDocx(para('Version two')),
        contentType: MIME.docx,
      }),
    );
    expect(doc2.urn).toBe(doc.urn);
    expect(fake.files.get(doc.urn)!.mimeType).toBe(MIME.document);
    expect(docParagraphs(fake.files.get(doc.urn)!.content)).toEqual(['Version two']);
  });

  it('reads stream into the blob store with a cap: a file over it is refused after about the cap, nothing kept', async () => {
    const huge = fake.put({
      name: 'huge.pdf',
      mimeType: 'application/pdf',
      parent: fake.rootOf(ADA_USER),
      owner: ADA_USER,
      size: 256 * MiB,
    });
    const err = await capped.readDocument!(ctx(), huge.id).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(LocationError);
    expect((err as LocationError).code).toBe('VALIDATION_ERROR');
    expect((err as LocationError).message).toMatch(/larger than the 4194304 bytes this service reads from DriveB/);
    // The download stopped near the cap (socket buffers aside), far from the file's 256 MiB.
    expect(huge.generated!.sent).toBeLessThan(64 * MiB);
    expect(await blobs.list('scratch/driveB-')).toEqual([]);
    // Under the cap a read streams through as before.
    const small = fake.put({
      name: 'small.pdf',
      mimeType: 'application/pdf',
      parent: fake.rootOf(ADA_USER),
      owner: ADA_USER,
      size: 3 * MiB,
    });
    const found = await capped.readDocument!(ctx(), small.id);
    expect(found.blob.size).toBe(3 * MiB);
    expect(small.generated!.sent).toBe(3 * MiB);
  });

  it("a folder someone else made meanwhile (without docgen's lock): after creating, every delivery uses the oldest; ours goes", async () => {
    const root = fake.rootOf(ADA_USER);
    // Hold our folder creation; meanwhile a same-named folder appears (a person, another program).
    const held = fake.hold((r) => r.method === 'POST' && r.path === '/drive/v3/files');
    const writing = location.write!(ctx(), await request({ path: 'Meanwhile' }));
    await held.arrived;
    const theirs = fake.folder('Meanwhile', root, ADA_USER);
    theirs.createdTime = new Date(Date.now() - 1000).toISOString(); // made before ours, whatever the clock's resolution
    held.release();
    const w = await writing;
    expect(child('Meanwhile').map((f) => f.id)).toEqual([theirs.id]);
    expect(fake.files.get(w.urn)!.parents).toEqual([theirs.id]);
  });
});
