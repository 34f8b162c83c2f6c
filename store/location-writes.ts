// The write journal of external locations (DriveA; DriveB can use it too): what an earlier attempt of a
// delivery already did at the external service, keyed by the urn the workflow chose for the write. A
// delivery retried after a crash reads it to find the file (or the upload session) its earlier attempt
// made instead of writing a second file. Scoped by subscription like every table.
import type { Queryable } from './db.ts';

export type LocationWriteState = 'uploading' | 'uploaded' | 'placed';

export interface LocationWrite {
  state: LocationWriteState;
  /** The external id of the file (once uploaded). */
  itemId: string | null;
  /** A resumable upload in progress (DriveA: the upload session's URL). */
  uploadUrl: string | null;
}

export async function getLocationWrite(db: Queryable, subscriptionId: string, location: string, urn: string): Promise<LocationWrite | undefined> {
  const r = await db.query<{ state: LocationWriteState; item_id: string | null; upload_url: string | null }>(
    'SELECT state, item_id, upload_url FROM location_writes WHERE subscription_id = $1 AND location = $2 AND urn = $3',
    [subscriptionId, location, urn],
  );
  const row = r.rows[0];
  return row ? { state: row.state, itemId: row.item_id, uploadUrl: row.upload_url } : undefined;
}

export async function putLocationWrite(db: Queryable, subscriptionId: string, location: string, urn: string, w: LocationWrite): Promise<void> {
  await db.query(
    `INSERT INTO location_writes (subscription_id, location, urn, state, item_id, upload_url) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (subscription_id, location, urn) DO UPDATE SET state = EXCLUDED.state, item_id = EXCLUDED.item_id, upload_url = EXCLUDED.upload_url, updated_date = now()`,
    [subscriptionId, location, urn, w.state, w.itemId, w.uploadUrl],
  );
}

export async function deleteLocationWrite(db: Queryable, subscriptionId: string, location: string, urn: string): Promise<void> {
  await db.query('DELETE FROM location_writes WHERE subscription_id = $1 AND location = $2 AND urn = $3', [subscriptionId, location, urn]);
}

/** Forgets every journal entry of a write once its document is recorded: the write is final then, and no
 *  retry of it can come (the record step runs after the delivery step completed). */
export async function forgetLocationWrites(db: Queryable, subscriptionId: string, urn: string): Promise<void> {
  await db.query('DELETE FROM location_writes WHERE subscription_id = $1 AND urn = $2', [subscriptionId, urn]);
}
