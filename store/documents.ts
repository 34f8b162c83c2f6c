// Generated document records (spec 2.5) and metering.
import { randomUUID } from 'node:crypto';
import type { Queryable } from './db.ts';

export interface NewDocument {
  subscriptionId: string;
  userId: string;
  operationId: string;
  title: string;
  urn: string;
  path: string;
  fileFormat: string;
  deliveryMethod: string;
}

/** Idempotent per operation: a retried record step returns the first record instead of writing a second. */
export async function recordDocument(db: Queryable, d: NewDocument): Promise<string> {
  await db.query(
    `INSERT INTO documents (document_guid, subscription_guid, owner_guid, last_modified_user_guid, operation_id, title, urn, path, file_format, delivery_method)
     VALUES ($1, $2, $3, $3, $4, $5, $6, $7, $8, $9)
     ON CONFLICT (subscription_guid, operation_id) DO NOTHING`,
    [randomUUID(), d.subscriptionId, d.userId, d.operationId, d.title, d.urn, d.path, d.fileFormat, d.deliveryMethod],
  );
  const r = await db.query<{ document_guid: string }>(
    'SELECT document_guid FROM documents WHERE subscription_guid = $1 AND operation_id = $2',
    [d.subscriptionId, d.operationId],
  );
  const row = r.rows[0];
  if (!row) throw new Error('document record vanished');
  return row.document_guid;
}

export interface Consumption {
  dimension: string;
  value: number;
}

export async function recordConsumption(
  db: Queryable,
  subscriptionId: string,
  userId: string,
  operationId: string,
  items: Consumption[],
): Promise<Consumption[]> {
  const inserted: Consumption[] = [];
  for (const c of items) {
    const r = await db.query(
      `INSERT INTO consumption (subscription_id, user_id, operation_id, dimension, value) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (operation_id, dimension) DO NOTHING RETURNING dimension`,
      [subscriptionId, userId, operationId, c.dimension, c.value],
    );
    if (r.rows.length) inserted.push(c);
  }
  /** What was new (a retried step inserts nothing): the metering counters count these. */
  return inserted;
}

export async function countDocuments(db: Queryable, subscriptionId: string): Promise<number> {
  const r = await db.query<{ n: string | number }>(
    'SELECT count(*) AS n FROM documents WHERE subscription_guid = $1 AND NOT is_deleted',
    [subscriptionId],
  );
  return Number(r.rows[0]?.n ?? 0);
}
