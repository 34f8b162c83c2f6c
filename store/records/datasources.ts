// Data source records (spec 2.4, 4.5) and the strict solution link.
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db.ts';
import { type ColumnSpec, iso, type ListQuery, type ListResult, runList } from './list.ts';
import { linkedSolutions, linkSolutions, type SolutionRef } from './solutions.ts';

export interface DataSourceInput {
  name: string;
  description: string;
  urn: string;
  loadMethod: string;
  query: string;
  variables: string;
}

export interface DataSource extends DataSourceInput {
  id: string;
  subscriptionId: string;
  ownerId: string;
  lastModifiedUserId: string;
  ownerName: string;
  lastModifiedUserName: string;
  createdDate: string;
  lastModifiedDate: string;
  isDeleted: boolean;
}

interface Row {
  id: string;
  subscription_id: string;
  owner_id: string;
  last_modified_user_id: string;
  name: string;
  description: string;
  urn: string;
  load_method: string;
  query: string;
  variables: string;
  owner_name: string | null;
  last_modified_user_name: string | null;
  created_date: Date;
  last_modified_date: Date;
  is_deleted: boolean;
}

const FROM = `data_sources d
  LEFT JOIN users o ON o.id = d.owner_id AND o.subscription_id = d.subscription_id
  LEFT JOIN users m ON m.id = d.last_modified_user_id AND m.subscription_id = d.subscription_id`;
const SELECT = `d.id, d.subscription_id, d.owner_id, d.last_modified_user_id, d.name, d.description, d.urn, d.load_method, d.query, d.variables,
  o.name AS owner_name, m.name AS last_modified_user_name, d.created_date, d.last_modified_date, d.is_deleted`;

export const DATA_SOURCE_COLUMNS: readonly ColumnSpec[] = [
  { name: 'DataSourceGuid', sql: 'd.id::text', type: 'text' },
  { name: 'Name', sql: 'd.name', type: 'text' },
  { name: 'Description', sql: 'd.description', type: 'text' },
  { name: 'Urn', sql: 'd.urn', type: 'text' },
  { name: 'LoadMethod', sql: 'd.load_method', type: 'text' },
  { name: 'CreatedDate', sql: 'd.created_date', type: 'date' },
  { name: 'LastModifiedDate', sql: 'd.last_modified_date', type: 'date' },
];

function toDataSource(r: Row): DataSource {
  return {
    id: r.id,
    subscriptionId: r.subscription_id,
    ownerId: r.owner_id,
    lastModifiedUserId: r.last_modified_user_id,
    name: r.name,
    description: r.description,
    urn: r.urn,
    loadMethod: r.load_method,
    query: r.query,
    variables: r.variables,
    ownerName: r.owner_name ?? '',
    lastModifiedUserName: r.last_modified_user_name ?? '',
    createdDate: iso(r.created_date),
    lastModifiedDate: iso(r.last_modified_date),
    isDeleted: r.is_deleted,
  };
}

/** `solutionIds` must already be the caller's live solutions (linking on create is best-effort upstream). */
export async function createDataSource(
  db: Queryable,
  subscriptionId: string,
  userId: string,
  d: DataSourceInput,
  solutionIds: readonly string[],
): Promise<DataSource & { documentSolutions: SolutionRef[] }> {
  const id = randomUUID();
  await db.query(
    `INSERT INTO data_sources (id, subscription_id, owner_id, last_modified_user_id, name, description, urn, load_method, query, variables)
     VALUES ($1, $2, $3, $3, $4, $5, $6, $7, $8, $9)`,
    [id, subscriptionId, userId, d.name, d.description, d.urn, d.loadMethod, d.query, d.variables],
  );
  await linkSolutions(db, 'solution_data_sources', subscriptionId, id, solutionIds);
  const r = await db.query<Row>(`SELECT ${SELECT} FROM ${FROM} WHERE d.id = $1 AND d.subscription_id = $2`, [id, subscriptionId]);
  return { ...toDataSource(r.rows[0] as Row), documentSolutions: await linkedSolutions(db, 'solution_data_sources', subscriptionId, id) };
}

export async function dataSourceExists(db: Queryable, subscriptionId: string, id: string): Promise<boolean> {
  const r = await db.query('SELECT 1 FROM data_sources WHERE id = $1 AND subscription_id = $2 AND NOT is_deleted', [id, subscriptionId]);
  return r.rows.length > 0;
}

export async function listDataSources(db: Queryable, subscriptionId: string, q: ListQuery): Promise<ListResult<DataSource>> {
  const r = await runList<Row>(
    db,
    { from: FROM, select: SELECT, scope: 'd.subscription_id = $1 AND NOT d.is_deleted', scopeParams: [subscriptionId], columns: DATA_SOURCE_COLUMNS, defaultOrder: 'd.created_date DESC', tieBreaker: 'd.id' },
    q,
  );
  return { rows: r.rows.map(toDataSource), rowCount: r.rowCount };
}

export async function deleteDataSource(db: Queryable, subscriptionId: string, userId: string, id: string): Promise<boolean> {
  const r = await db.query(
    `UPDATE data_sources SET is_deleted = true, last_modified_user_id = $3, last_modified_date = now()
     WHERE id = $1 AND subscription_id = $2 AND NOT is_deleted RETURNING id`,
    [id, subscriptionId, userId],
  );
  return r.rows.length > 0;
}

/** Strict: both records must be live in the subscription, else nothing changes. Linking twice is a no-op. */
export async function addDataSourceToSolution(db: Queryable, subscriptionId: string, solutionId: string, dataSourceId: string): Promise<'linked' | 'missing'> {
  const r = await db.query<{ n: string | number }>(
    `SELECT (SELECT count(*) FROM document_solutions WHERE id = $2 AND subscription_id = $1 AND NOT is_deleted)
          + (SELECT count(*) FROM data_sources WHERE id = $3 AND subscription_id = $1 AND NOT is_deleted) AS n`,
    [subscriptionId, solutionId, dataSourceId],
  );
  if (Number(r.rows[0]?.n) !== 2) return 'missing';
  await linkSolutions(db, 'solution_data_sources', subscriptionId, dataSourceId, [solutionId]);
  return 'linked';
}
