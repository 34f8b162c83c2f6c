// Document solutions (extension: the spec names them only as link targets) and their links to data
// sources and templates. Soft-deleted solutions are absent everywhere.
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db.ts';
import {
  fromRow,
  inputColumns,
  type InputOf,
  listColumns,
  listRecords,
  placeholders,
  type RecordKind,
  type RecordOf,
  selectList,
  type SolutionRef,
  timestamp,
  uuid,
} from './fields.ts';
import { type ColumnSpec, type ListQuery, type ListResult } from './list.ts';

/** A document solution's fields (extension), in wire order. */
export const SOLUTION = {
  table: 'document_solutions',
  alias: 's',
  key: 'id',
  tenant: 'subscription_id',
  fields: {
    id: { ...uuid('id'), list: true },
    name: { type: 'text', col: 'name', input: true, list: true },
    description: { type: 'text', col: 'description', input: true, list: true },
    subscriptionId: uuid('subscription_id'),
    ownerId: uuid('owner_id'),
    lastModifiedUserId: uuid('last_modified_user_id'),
    createdDate: timestamp('created_date'),
    lastModifiedDate: timestamp('last_modified_date'),
  },
} as const satisfies RecordKind;

export type Solution = RecordOf<typeof SOLUTION.fields>;
export type SolutionInput = InputOf<typeof SOLUTION.fields>;

const SELECT = selectList(SOLUTION);
const INPUT = inputColumns(SOLUTION);
export const SOLUTION_COLUMNS: readonly ColumnSpec[] = listColumns(SOLUTION);
const toSolution = (r: Record<string, unknown>) => fromRow(SOLUTION, r);

export async function createSolution(db: Queryable, subscriptionId: string, userId: string, s: SolutionInput): Promise<Solution> {
  const r = await db.query<Record<string, unknown>>(
    `INSERT INTO document_solutions AS s (id, subscription_id, owner_id, last_modified_user_id, ${INPUT.map(([, col]) => col).join(', ')})
     VALUES ($1, $2, $3, $3, ${placeholders(INPUT.length, 4)}) RETURNING ${SELECT}`,
    [randomUUID(), subscriptionId, userId, ...INPUT.map(([f]) => s[f])],
  );
  return toSolution(r.rows[0] as Record<string, unknown>);
}

export async function getSolution(db: Queryable, subscriptionId: string, id: string): Promise<Solution | undefined> {
  const r = await db.query<Record<string, unknown>>(
    `SELECT ${SELECT} FROM document_solutions s WHERE s.id = $1 AND s.subscription_id = $2 AND NOT s.is_deleted`,
    [id, subscriptionId],
  );
  return r.rows[0] ? toSolution(r.rows[0]) : undefined;
}

export async function listSolutions(db: Queryable, subscriptionId: string, q: ListQuery): Promise<ListResult<Solution>> {
  const r = await listRecords(db, SOLUTION, subscriptionId, q);
  return { rows: r.rows.map(toSolution), rowCount: r.rowCount };
}

/** The live solutions of the subscription among `ids`, in the order given; unknown ids are dropped. */
export async function findSolutions(db: Queryable, subscriptionId: string, ids: readonly string[]): Promise<SolutionRef[]> {
  if (ids.length === 0) return [];
  const r = await db.query<SolutionRef>(
    'SELECT id, name, description FROM document_solutions WHERE subscription_id = $1 AND id = ANY($2::uuid[]) AND NOT is_deleted',
    [subscriptionId, [...new Set(ids)]],
  );
  const byId = new Map(r.rows.map((x) => [x.id, x]));
  return [...new Set(ids)].flatMap((id) => byId.get(id) ?? []);
}

type LinkTable = 'solution_templates' | 'solution_data_sources';
const LINK_COLUMN: Record<LinkTable, string> = { solution_templates: 'document_template_id', solution_data_sources: 'data_source_id' };

export async function linkSolutions(
  db: Queryable,
  table: LinkTable,
  subscriptionId: string,
  recordId: string,
  solutionIds: readonly string[],
): Promise<void> {
  for (const sid of solutionIds) {
    await db.query(
      `INSERT INTO ${table} (subscription_id, document_solution_id, ${LINK_COLUMN[table]}) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
      [subscriptionId, sid, recordId],
    );
  }
}

export async function unlinkAllSolutions(db: Queryable, table: LinkTable, subscriptionId: string, recordId: string): Promise<void> {
  await db.query(`DELETE FROM ${table} WHERE subscription_id = $1 AND ${LINK_COLUMN[table]} = $2`, [subscriptionId, recordId]);
}

/** Live solutions linked to a record, oldest link first. */
export async function linkedSolutions(db: Queryable, table: LinkTable, subscriptionId: string, recordId: string): Promise<SolutionRef[]> {
  const r = await db.query<SolutionRef>(
    `SELECT s.id, s.name, s.description FROM ${table} l JOIN document_solutions s ON s.id = l.document_solution_id AND s.subscription_id = l.subscription_id
     WHERE l.subscription_id = $1 AND l.${LINK_COLUMN[table]} = $2 AND NOT s.is_deleted ORDER BY l.seq`,
    [subscriptionId, recordId],
  );
  return r.rows;
}

/** What a solution links to: live data sources and templates (extension, for the solution get). */
export async function solutionMembers(
  db: Queryable,
  subscriptionId: string,
  solutionId: string,
): Promise<{ dataSources: SolutionRef[]; documentTemplates: SolutionRef[] }> {
  const [ds, dt] = await Promise.all([
    db.query<SolutionRef>(
      `SELECT d.id, d.name, d.description FROM solution_data_sources l JOIN data_sources d ON d.id = l.data_source_id AND d.subscription_id = l.subscription_id
       WHERE l.subscription_id = $1 AND l.document_solution_id = $2 AND NOT d.is_deleted ORDER BY l.seq`,
      [subscriptionId, solutionId],
    ),
    db.query<SolutionRef>(
      `SELECT t.id, t.name, t.description FROM solution_templates l JOIN document_templates t ON t.id = l.document_template_id AND t.subscription_id = l.subscription_id
       WHERE l.subscription_id = $1 AND l.document_solution_id = $2 AND NOT t.is_deleted ORDER BY l.seq`,
      [subscriptionId, solutionId],
    ),
  ]);
  return { dataSources: ds.rows, documentTemplates: dt.rows };
}
