// A temporary `.docgen-<urn>` file left in a SharePoint library (issue 39, finding 3): the connection's
// credentials were rotated between the upload and the rename, so the rename is refused and the write fails
// for good with its file still under the temporary name. The retention sweep (activities/retention.ts)
// finds the unfinished write in the journal: while the connection is refused it reports the leftover (its
// result, and a warning in the log); once the connection works again it removes the file and the entry.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { retentionActivities } from '../../../activities/retention.ts';
import { loadConfig } from '../../../config/env.ts';
import { connectionStore } from '../../../connectors/connection-store.ts';
import { LocationError } from '../../../connectors/location.ts';
import { createLocationRegistry } from '../../../connectors/registry.ts';
import type { BlobStore } from '../../../connectors/storage/blob-store.ts';
import { openBlobStore } from '../../../connectors/storage/open.ts';
import { seal } from '../../../security/sealed.ts';
import { ensureSubscription } from '../../../store/accounts.ts';
import { putConnection } from '../../../store/connections.ts';
import { type Db, openDb } from '../../../store/db.ts';
import { getLocationWrite } from '../../../store/location-writes.ts';
import { migrate } from '../../../store/migrate.ts';
import { type GraphFake, startGraphFake } from '../../fakes/graph/server.ts';

const D = 'b!drive-leftovers!1';

describe('temporary files of failed DriveA writes', () => {
  let graph: GraphFake;
  let db: Db;
  let blobs: BlobStore;
  let dir: string;
  let subscriptionId: string;

  beforeAll(async () => {
    graph = await startGraphFake();
    graph.addDrive(D);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drivea-leftovers-'));
    db = await openDb({ dataDir: dir });
    await migrate(db);
    subscriptionId = (await ensureSubscription(db, `leftovers-${randomUUID()}`)).id;
    blobs = openBlobStore(loadConfig({}, { dataDir: dir }));
    await putConnection(db, {
      subscriptionId,
      userId: randomUUID(),
      kind: 'driveA',
      settings: { tenantId: graph.tenantId, clientId: graph.clientId, driveId: D },
      sealedSecrets: await seal(db, subscriptionId, JSON.stringify({ clientSecret: graph.clientSecret })),
      secretNames: ['clientSecret'],
    });
  });
  afterAll(async () => {
    await graph?.close();
    await db?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('are reported while the connection is refused, and removed once it works again', async () => {
    const locations = createLocationRegistry({
      db,
      blobs,
      settings: { driveAGraphUrl: graph.graphUrl, driveALoginUrl: graph.loginUrl } as never,
      connections: connectionStore(db),
    });
    const driveA = locations.get('DriveA')!;
    const sweep = retentionActivities({ db, blobs, locations }).sweepUploads;
    const key = `scratch/test/${randomUUID()}`;
    const put = await blobs.put(key, Buffer.from('%PDF-1.7 one'));
    const urn = randomUUID();
    // The rename after the upload is refused, the fresh token too: the application's access was revoked.
    graph.inject({ status: 401, times: 2, method: 'PATCH' });
    const failed = await driveA.write!(
      { subscriptionId, userId: randomUUID() },
      {
        urn,
        name: 'report',
        path: 'Out',
        fileFormat: 'pdf',
        source: { key, sha256: put.sha256, size: put.size, contentType: 'application/pdf' },
      },
    ).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(failed).toBeInstanceOf(LocationError);
    expect((failed as LocationError).code).toBe('CONNECTION_ERROR');
    const temporary = () => graph.files(D).filter((f) => f.path.startsWith('Out/.docgen-') && f.state === 'live');
    expect(temporary()).toHaveLength(1);

    // The sweep while every call is refused: the leftover stays, and the sweep says which and why.
    graph.inject({ status: 401, times: 1000 });
    const refused = await sweep({ limit: 10, journalOlderThanMs: 0 });
    expect(refused.leftovers).toEqual([
      expect.objectContaining({
        subscriptionId,
        location: 'DriveA',
        urn,
        reason: expect.stringMatching(/DriveA refused the connection's access/),
      }),
    ]);
    expect(temporary()).toHaveLength(1);
    expect(await getLocationWrite(db, subscriptionId, 'DriveA', urn)).toBeDefined();

    // The connection works again: the next sweep removes the file and forgets the write.
    graph.clearFaults();
    const cleaned = await sweep({ limit: 10, journalOlderThanMs: 0 });
    expect(cleaned.leftoversRemoved).toBe(1);
    expect(cleaned.leftovers).toBeUndefined();
    expect(temporary()).toEqual([]);
    expect(await getLocationWrite(db, subscriptionId, 'DriveA', urn)).toBeUndefined();
    // A placed file is never a leftover: a write that succeeds is untouched by the sweep.
    const ok = await driveA.write!(
      { subscriptionId, userId: randomUUID() },
      {
        urn: randomUUID(),
        name: 'kept',
        path: 'Out',
        fileFormat: 'pdf',
        source: { key, sha256: put.sha256, size: put.size, contentType: 'application/pdf' },
      },
    );
    await sweep({ limit: 10, journalOlderThanMs: 0 });
    expect(graph.item(D, ok.urn)?.state).toBe('live');
  });
});
