// The Storage location's removal on PGlite and the directory store: a permanent delete that runs again
// after an earlier attempt marked the row but stopped before erasing (a retried step, a replayed workflow
// task) still erases the bytes; a soft delete keeps them; a write undone before anything recorded it goes
// with its bytes, whether its row was written or left to the record step.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../config/env.ts';
import { DEFAULT_CONNECTOR_SETTINGS } from '../../../connectors/connections.ts';
import { connectionStore } from '../../../connectors/connection-store.ts';
import type { BlobStore } from '../../../connectors/storage/blob-store.ts';
import { storageLocation } from '../../../connectors/storage/location.ts';
import { openBlobStore } from '../../../connectors/storage/open.ts';
import { ensureFirstUser, ensureSubscription } from '../../../store/accounts.ts';
import { type Db, openDb } from '../../../store/db.ts';
import { getFile, insertFile, markFileRemoved } from '../../../store/files.ts';
import { migrate } from '../../../store/migrate.ts';

describe('Storage location: removing a document', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-storage-location-'));
  let db: Db;
  let blobs: BlobStore;
  let subscriptionId: string;
  let ownerId: string;
  beforeAll(async () => {
    db = await openDb({ dataDir: path.join(dir, 'db') });
    await migrate(db);
    blobs = openBlobStore(loadConfig({}, { dataDir: dir }));
    const sub = await ensureSubscription(db, 'storage-location');
    subscriptionId = sub.id;
    ownerId = (await ensureFirstUser(db, sub)).id;
  });
  afterAll(async () => {
    await db?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function document(): Promise<{ urn: string; key: string }> {
    const urn = randomUUID();
    const key = `subscriptions/${subscriptionId}/documents/${urn}`;
    await blobs.put(key, new TextEncoder().encode('bytes'));
    await insertFile(db, {
      id: urn,
      subscriptionId,
      ownerId,
      kind: 'document',
      fileName: 'd.docx',
      path: 'root',
      contentType: 'x',
      size: 5,
      sha256: 'ab',
      blobKey: key,
      expiresDate: null,
    });
    return { urn, key };
  }
  const location = () => storageLocation({ db, blobs, settings: DEFAULT_CONNECTOR_SETTINGS, connections: connectionStore(db) });

  it('a permanent delete run again after the row was marked still erases the bytes', async () => {
    const { urn, key } = await document();
    // An earlier attempt marked the row and stopped before erasing.
    expect(await markFileRemoved(db, subscriptionId, urn, ['document'])).toBe(key);
    expect(await blobs.exists(key)).toBe(true);
    await location().remove!({ subscriptionId }, urn, 'permanentDelete');
    expect(await blobs.exists(key)).toBe(false);
    expect(await getFile(db, subscriptionId, urn, ['document'])).toBeUndefined();
  });

  it('a write whose record was left to its caller is discarded with its bytes; a recorded one with its row', async () => {
    const source = { key: `scratch/${randomUUID()}/merged.docx`, size: 5, sha256: 'ab', contentType: 'x' };
    await blobs.put(source.key, new TextEncoder().encode('bytes'));
    const write = (urn: string, recordLater: boolean) =>
      location().write!(
        { subscriptionId, userId: ownerId },
        { urn, name: 'w.docx', path: 'root', fileFormat: 'docx', source, ...(recordLater ? { recordLater } : {}) },
      );
    const later = randomUUID();
    const written = await write(later, true);
    expect(written.file).toMatchObject({ id: later, blobKey: `subscriptions/${subscriptionId}/documents/${later}` });
    expect(await getFile(db, subscriptionId, later, ['document'])).toBeUndefined();
    expect(await blobs.exists(written.file!.blobKey)).toBe(true);
    await location().discard!({ subscriptionId }, later);
    expect(await blobs.exists(written.file!.blobKey)).toBe(false);

    const now = randomUUID();
    expect((await write(now, false)).file).toBeUndefined();
    const key = `subscriptions/${subscriptionId}/documents/${now}`;
    expect((await getFile(db, subscriptionId, now, ['document']))?.blobKey).toBe(key);
    await location().discard!({ subscriptionId }, now);
    expect(await blobs.exists(key)).toBe(false);
    expect(await getFile(db, subscriptionId, now, ['document'])).toBeUndefined();
    expect(await blobs.exists(source.key)).toBe(true);
  });

  it('a delete keeps the bytes; another subscription removes nothing', async () => {
    const { urn, key } = await document();
    await location().remove!({ subscriptionId: randomUUID() }, urn, 'permanentDelete');
    expect(await blobs.exists(key)).toBe(true);
    expect((await getFile(db, subscriptionId, urn, ['document']))?.id).toBe(urn);
    await location().remove!({ subscriptionId }, urn, 'delete');
    expect(await blobs.exists(key)).toBe(true);
    expect(await getFile(db, subscriptionId, urn, ['document'])).toBeUndefined();
  });
});
