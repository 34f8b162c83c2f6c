// The connections table: one row per subscription and kind (driveA, driveB, crm). Public settings as JSON;
// secrets as one sealed value (security/sealed.ts), opened only by the connector that uses them. Every
// lookup is scoped to the subscription.
import { randomUUID } from 'node:crypto';
import type { Queryable } from './db.ts';

export interface StoredConnection {
  id: string;
  kind: string;
  settings: Record<string, unknown>;
  sealedSecrets: string;
  /** Which secrets the sealed value holds (shown; their values never are). */
  secretNames: string[];
  createdDate: string;
  lastModifiedDate: string;
  lastModifiedUserGuid: string;
}

const SELECT = 'id, kind, settings, sealed_secrets, secret_names, created_date, last_modified_date, last_modified_user_id';

const iso = (v: unknown) => (v instanceof Date ? v.toISOString() : new Date(String(v)).toISOString());

function toConnection(r: Record<string, unknown>): StoredConnection {
  return {
    id: r.id as string,
    kind: r.kind as string,
    settings: (typeof r.settings === 'string' ? JSON.parse(r.settings) : r.settings) as Record<string, unknown>,
    sealedSecrets: r.sealed_secrets as string,
    secretNames: (typeof r.secret_names === 'string' ? JSON.parse(r.secret_names) : r.secret_names) as string[],
    createdDate: iso(r.created_date),
    lastModifiedDate: iso(r.last_modified_date),
    lastModifiedUserGuid: r.last_modified_user_id as string,
  };
}

/** Creates or replaces the subscription's connection of this kind; a replaced connection keeps its id. */
export async function putConnection(
  db: Queryable,
  c: {
    subscriptionId: string;
    userId: string;
    kind: string;
    settings: Record<string, unknown>;
    sealedSecrets: string;
    secretNames: string[];
  },
): Promise<{ connection: StoredConnection; created: boolean }> {
  const r = await db.query<Record<string, unknown>>(
    `INSERT INTO connections (id, subscription_id, kind, settings, sealed_secrets, secret_names, created_by, last_modified_user_id)
     VALUES ($1, $2, $3, $4, $5, $7, $6, $6)
     ON CONFLICT (subscription_id, kind) DO UPDATE SET settings = EXCLUDED.settings, sealed_secrets = EXCLUDED.sealed_secrets, secret_names = EXCLUDED.secret_names,
       last_modified_user_id = EXCLUDED.last_modified_user_id, last_modified_date = clock_timestamp()
     RETURNING ${SELECT}, (xmax = 0) AS created`,
    [randomUUID(), c.subscriptionId, c.kind, JSON.stringify(c.settings), c.sealedSecrets, c.userId, JSON.stringify(c.secretNames)],
  );
  const row = r.rows[0] as Record<string, unknown>;
  return { connection: toConnection(row), created: row.created === true };
}

export async function getConnectionByKind(db: Queryable, subscriptionId: string, kind: string): Promise<StoredConnection | undefined> {
  const r = await db.query<Record<string, unknown>>(`SELECT ${SELECT} FROM connections WHERE subscription_id = $1 AND kind = $2`, [
    subscriptionId,
    kind,
  ]);
  return r.rows[0] ? toConnection(r.rows[0]) : undefined;
}

export async function getConnectionById(db: Queryable, subscriptionId: string, id: string): Promise<StoredConnection | undefined> {
  const r = await db.query<Record<string, unknown>>(`SELECT ${SELECT} FROM connections WHERE subscription_id = $1 AND id = $2`, [
    subscriptionId,
    id,
  ]);
  return r.rows[0] ? toConnection(r.rows[0]) : undefined;
}

export async function listConnections(db: Queryable, subscriptionId: string): Promise<StoredConnection[]> {
  const r = await db.query<Record<string, unknown>>(`SELECT ${SELECT} FROM connections WHERE subscription_id = $1 ORDER BY kind`, [
    subscriptionId,
  ]);
  return r.rows.map(toConnection);
}

/** Removes the connection; false when there was none. */
export async function deleteConnection(db: Queryable, subscriptionId: string, kind: string): Promise<boolean> {
  const r = await db.query(`DELETE FROM connections WHERE subscription_id = $1 AND kind = $2 RETURNING id`, [subscriptionId, kind]);
  return r.rows.length > 0;
}
