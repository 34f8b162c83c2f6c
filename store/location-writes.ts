// The write journal of external locations (DriveA; DriveB can use it too): what an earlier attempt of a
// delivery already did at the external service, keyed by the urn the workflow chose for the write. A
// delivery retried after a crash reads it to find the file (or the upload session) its earlier attempt
// made instead of writing a second file. Scoped by subscription like every table.
import { createHash } from 'node:crypto';
import type { Db, Queryable } from './db.ts';

export type LocationWriteState = 'uploading' | 'uploaded' | 'placed';

export interface LocationWrite {
  state: LocationWriteState;
  /** The external id of the file (once uploaded). */
  itemId: string | null;
  /** A resumable upload in progress (DriveA: the upload session's URL, or a copy's monitor URL). Both
   *  are bearer credentials for the file: the location stores them sealed (security/sealed.ts). */
  uploadUrl: string | null;
}

export async function getLocationWrite(
  db: Queryable,
  subscriptionId: string,
  location: string,
  urn: string,
): Promise<LocationWrite | undefined> {
  const r = await db.query<{ state: LocationWriteState; item_id: string | null; upload_url: string | null }>(
    'SELECT state, item_id, upload_url FROM location_writes WHERE subscription_id = $1 AND location = $2 AND urn = $3',
    [subscriptionId, location, urn],
  );
  const row = r.rows[0];
  return row ? { state: row.state, itemId: row.item_id, uploadUrl: row.upload_url } : undefined;
}

export async function putLocationWrite(
  db: Queryable,
  subscriptionId: string,
  location: string,
  urn: string,
  w: LocationWrite,
): Promise<void> {
  await db.query(
    `INSERT INTO location_writes (subscription_id, location, urn, state, item_id, upload_url) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (subscription_id, location, urn) DO UPDATE SET state = EXCLUDED.state, item_id = EXCLUDED.item_id, upload_url = EXCLUDED.upload_url, updated_date = now()`,
    [subscriptionId, location, urn, w.state, w.itemId, w.uploadUrl],
  );
}

export async function deleteLocationWrite(db: Queryable, subscriptionId: string, location: string, urn: string): Promise<void> {
  await db.query('DELETE FROM location_writes WHERE subscription_id = $1 AND location = $2 AND urn = $3', [subscriptionId, location, urn]);
}

export interface StaleLocationWrite {
  subscriptionId: string;
  location: string;
  urn: string;
  state: LocationWriteState;
  updatedDate: Date;
}

/** Writes left unfinished (uploading or uploaded, never placed) and untouched since `before`: their run has
 *  ended without placing the file (the write failed for good, e.g. the connection's credentials were
 *  rotated between the upload and the rename), so what they made at the location is a leftover. */
export async function staleLocationWrites(db: Queryable, before: Date, limit: number): Promise<StaleLocationWrite[]> {
  const r = await db.query<{ subscription_id: string; location: string; urn: string; state: LocationWriteState; updated_date: Date }>(
    `SELECT subscription_id, location, urn, state, updated_date FROM location_writes
     WHERE state IN ('uploading', 'uploaded') AND updated_date < $1 ORDER BY updated_date LIMIT $2`,
    [before.toISOString(), limit],
  );
  return r.rows.map((w) => ({
    subscriptionId: w.subscription_id,
    location: w.location,
    urn: w.urn,
    state: w.state,
    updatedDate: new Date(w.updated_date),
  }));
}

/** Forgets every journal entry of a write once its document is recorded: the write is final then, and no
 *  retry of it can come (the record step runs after the delivery step completed). */
export async function forgetLocationWrites(db: Queryable, subscriptionId: string, urn: string): Promise<void> {
  await db.query('DELETE FROM location_writes WHERE subscription_id = $1 AND urn = $2', [subscriptionId, urn]);
}

/** Runs `fn` while holding the lock named `key` (e.g. a connection and a folder), so that look-up-then-
 *  create sequences at an external location (a folder, a free file name) are not interleaved by another
 *  delivery. Callers of one key through one database handle queue up here; on PostgreSQL the holder also takes a
 *  transaction-scoped advisory lock, which excludes every other process (several workers on one database)
 *  and is released by PostgreSQL if the holder's process dies. PGlite needs no more: one process owns its
 *  database (and its single session would take the advisory lock again without waiting). `fn` must not
 *  use the database: on PostgreSQL the lock's transaction holds a pool connection while it runs.
 *  A lock not obtained within `timeoutMs` (default 60 s) fails the caller, whose step is retried. */
export async function withLocationLock<T>(db: Db, key: string, fn: () => Promise<T>, opts: { timeoutMs?: number } = {}): Promise<T> {
  let queues = queuesOf.get(db);
  if (!queues) queuesOf.set(db, (queues = new Map()));
  const previous = queues.get(key) ?? Promise.resolve();
  let release!: () => void;
  const mine = new Promise<void>((r) => (release = r));
  const tail = previous.then(() => mine);
  queues.set(key, tail);
  try {
    await previous;
    if (db.kind !== 'postgres') return await fn();
    return await db.transaction(async (tx) => {
      await tx.query(`SET LOCAL lock_timeout = '${Math.max(1, Math.round(opts.timeoutMs ?? 60_000))}ms'`);
      await tx.query('SELECT pg_advisory_xact_lock($1::bigint)', [advisoryKey(key)]);
      return fn();
    });
  } finally {
    release();
    if (queues.get(key) === tail) queues.delete(key);
  }
}

/** Per database handle (one per process in the service; two handles on one PostgreSQL database behave as
 *  two processes), the tail of each key's queue. */
const queuesOf = new WeakMap<Db, Map<string, Promise<void>>>();

/** A 64-bit advisory lock number for a key (the first 8 bytes of its SHA-256, signed). */
export function advisoryKey(key: string): string {
  return createHash('sha256').update(`docgen-location-lock\n${key}`).digest().readBigInt64BE(0).toString();
}
