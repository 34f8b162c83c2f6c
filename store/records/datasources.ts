// Data source records (spec 2.4, 4.5) and the strict solution link.
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db.ts';
import {
  clientText,
  fromRow,
  inputColumns,
  type InputOf,
  listColumns,
  listRecords,
  placeholders,
  type RecordKind,
  type RecordOf,
  selectList,
  softDelete,
  type SolutionRef,
  timestamp,
  uuid,
} from './fields.ts';
import { type ColumnSpec, type ListQuery, type ListResult } from './list.ts';
import { linkedSolutions, linkSolutions } from './solutions.ts';

/** A data source's fields (2.4), in wire order. Create answers the Id spelling, the list the Guid spelling
 *  (`listed`); the list shows isDeleted but not the links and user names. */
export const DATA_SOURCE = {
  table: 'data_sources',
  alias: 'd',
  key: 'id',
  tenant: 'subscription_id',
  fields: {
    id: { ...uuid('id'), list: true, listed: 'dataSourceGuid' },
    subscriptionId: { ...uuid('subscription_id'), listed: 'subscriptionGuid' },
    ownerId: { ...uuid('owner_id'), listed: 'ownerGuid' },
    lastModifiedUserId: { ...uuid('last_modified_user_id'), listed: 'lastModifiedUserGuid' },
    name: clientText('name'),
    description: clientText('description'),
    urn: clientText('urn'),
    loadMethod: clientText('load_method'),
    query: { type: 'text', col: 'query', input: true },
    variables: { type: 'text', col: 'variables', input: true },
    documentSolutions: { type: 'solutions', input: true, only: 'one' },
    ownerName: { type: 'text', col: 'owner_name', sql: 'o.name', only: 'one' },
    lastModifiedUserName: { type: 'text', col: 'last_modified_user_name', sql: 'm.name', only: 'one' },
    createdDate: timestamp('created_date'),
    lastModifiedDate: timestamp('last_modified_date'),
    isDeleted: { type: 'boolean', col: 'is_deleted', only: 'listed' },
  },
} as const satisfies RecordKind;

export type DataSourceInput = InputOf<typeof DATA_SOURCE.fields>;
export type DataSource = RecordOf<typeof DATA_SOURCE.fields>;

const FROM = `data_sources d
  LEFT JOIN users o ON o.id = d.owner_id AND o.subscription_id = d.subscription_id
  LEFT JOIN users m ON m.id = d.last_modified_user_id AND m.subscription_id = d.subscription_id`;
const SELECT = selectList(DATA_SOURCE);
const INPUT = inputColumns(DATA_SOURCE);
export const DATA_SOURCE_COLUMNS: readonly ColumnSpec[] = listColumns(DATA_SOURCE);
const toDataSource = (r: Record<string, unknown>) => fromRow(DATA_SOURCE, r);

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
    `INSERT INTO data_sources (id, subscription_id, owner_id, last_modified_user_id, ${INPUT.map(([, col]) => col).join(', ')})
     VALUES ($1, $2, $3, $3, ${placeholders(INPUT.length, 4)})`,
    [id, subscriptionId, userId, ...INPUT.map(([f]) => d[f])],
  );
  await linkSolutions(db, 'solution_data_sources', subscriptionId, id, solutionIds);
  const r = await db.query<Record<string, unknown>>(`SELECT ${SELECT} FROM ${FROM} WHERE d.id = $1 AND d.subscription_id = $2`, [
    id,
    subscriptionId,
  ]);
  return {
    ...toDataSource(r.rows[0] as Record<string, unknown>),
    documentSolutions: await linkedSolutions(db, 'solution_data_sources', subscriptionId, id),
  };
}

export async function dataSourceExists(db: Queryable, subscriptionId: string, id: string): Promise<boolean> {
  const r = await db.query('SELECT 1 FROM data_sources WHERE id = $1 AND subscription_id = $2 AND NOT is_deleted', [id, subscriptionId]);
  return r.rows.length > 0;
}

export async function listDataSources(db: Queryable, subscriptionId: string, q: ListQuery): Promise<ListResult<DataSource>> {
  const r = await listRecords(db, DATA_SOURCE, subscriptionId, q, FROM);
  return { rows: r.rows.map(toDataSource), rowCount: r.rowCount };
}

export async function deleteDataSource(db: Queryable, subscriptionId: string, userId: string, id: string): Promise<boolean> {
  return softDelete(db, DATA_SOURCE, subscriptionId, userId, id);
}

/** Strict: both records must be live in the subscription, else nothing changes. Linking twice is a no-op. */
export async function addDataSourceToSolution(
  db: Queryable,
  subscriptionId: string,
  solutionId: string,
  dataSourceId: string,
): Promise<'linked' | 'missing'> {
  const r = await db.query<{ n: string | number }>(
    `SELECT (SELECT count(*) FROM document_solutions WHERE id = $2 AND subscription_id = $1 AND NOT is_deleted)
          + (SELECT count(*) FROM data_sources WHERE id = $3 AND subscription_id = $1 AND NOT is_deleted) AS n`,
    [subscriptionId, solutionId, dataSourceId],
  );
  if (Number(r.rows[0]?.n) !== 2) return 'missing';
  await linkSolutions(db, 'solution_data_sources', subscriptionId, dataSourceId, [solutionId]);
  return 'linked';
}
