// The crm location below the workflows, against the local Salesforce with the real client: a source's
// VersionData streams into the blob store with a cap. jsforce's own blob() also collects the whole answer
// in memory; a file over the cap is refused once about that much has arrived, and nothing is kept.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../config/env.ts';
import { connectionStore } from '../../../connectors/connection-store.ts';
import { crmLocation } from '../../../connectors/crm/location.ts';
import { type Location, LocationError } from '../../../connectors/location.ts';
import type { BlobStore } from '../../../connectors/storage/blob-store.ts';
import { openBlobStore } from '../../../connectors/storage/open.ts';
import { seal } from '../../../security/sealed.ts';
import { ensureSubscription } from '../../../store/accounts.ts';
import { putConnection } from '../../../store/connections.ts';
import { type Db, openDb } from '../../../store/db.ts';
import { migrate } from '../../../store/migrate.ts';
import { type SalesforceFake, startSalesforceFake } from '../../fakes/salesforce/server.ts';

const MiB = 1024 * 1024;

describe('the crm location', () => {
  let fake: SalesforceFake;
  let db: Db;
  let blobs: BlobStore;
  let capped: Location;
  let dir: string;
  let subscriptionId: string;
  const ctx = () => ({ subscriptionId, userId: randomUUID() });

  beforeAll(async () => {
    fake = await startSalesforceFake({ clients: [{ clientId: 'app-a', clientSecret: 'secret-a' }] });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'crm-loc-'));
    db = await openDb({ dataDir: dir });
    await migrate(db);
    subscriptionId = (await ensureSubscription(db, `crm-${randomUUID()}`)).id;
    blobs = openBlobStore(loadConfig({}, { dataDir: dir }));
    await putConnection(db, {
      subscriptionId,
      userId: randomUUID(),
      kind: 'crm',
      settings: { loginUrl: fake.url, clientId: 'app-a', flow: 'client_credentials' },
      sealedSecrets: await seal(db, subscriptionId, JSON.stringify({ clientSecret: 'secret-a' })),
      secretNames: ['clientSecret'],
    });
    const settings = { crmApiVersion: '62.0', crmLoginHosts: [`http://${new URL(fake.url).host}`], crmMultipartBytes: 30 * MiB };
    capped = crmLocation({ db, blobs, settings: settings as never, connections: connectionStore(db) }, { maxReadBytes: 4 * MiB });
  });
  afterAll(async () => {
    await fake?.close();
    await db?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('VersionData streams with a cap: a file over it is refused after about the cap, nothing kept; one under it reads whole', async () => {
    const huge = fake.putGenerated('huge.pdf', 256 * MiB);
    const err = await capped.readDocument!(ctx(), huge.Id).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(LocationError);
    expect((err as LocationError).code).toBe('VALIDATION_ERROR');
    expect((err as LocationError).message).toMatch(/larger than the 4194304 bytes this service reads from Salesforce/);
    expect(huge.generated!.sent).toBeLessThan(64 * MiB);
    expect(await blobs.list('scratch/crm-')).toEqual([]);

    const small = fake.putGenerated('small.pdf', 3 * MiB);
    const found = await capped.readDocument!(ctx(), small.Id);
    expect(found).toMatchObject({ urn: small.Id, name: 'small.pdf', fileFormat: 'pdf' });
    expect(found.blob.size).toBe(3 * MiB);
    expect(
      Buffer.from(await blobs.get(found.blob.key))
        .subarray(0, 4)
        .toString(),
    ).toBe('%%%%');
  });

  it('a session that expired is renewed once for the download too', async () => {
    const small = fake.putGenerated('again.pdf', 1024);
    await capped.readDocument!(ctx(), small.Id);
    const grants = fake.tokenGrants.filter((g) => g.ok).length;
    // Expired between the query (jsforce's own renewal) and the download (docgen's).
    fake.expireSessions((method, p) => method === 'GET' && p.endsWith('/VersionData'));
    const found = await capped.readDocument!(ctx(), small.Id);
    expect(found.blob.size).toBe(1024);
    expect(fake.tokenGrants.filter((g) => g.ok).length).toBe(grants + 1);
    expect(
      fake.requests
        .filter((r) => r.path.endsWith('/VersionData'))
        .map((r) => r.status)
        .slice(-2),
    ).toEqual([401, 200]);
  });
});
