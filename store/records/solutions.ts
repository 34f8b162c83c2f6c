// Document solutions (extension: the spec names them only as link targets) and their links to data
// sources and templates. Soft-deleted solutions are absent everywhere.
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db.ts';
import { type ColumnSpec, iso, type ListQuery, type ListResult, runList } from './list.ts';

export interface SolutionRef {
  id: string;
  name: string;
  description: string;
}

export interface Solution extends SolutionRef {
  subscriptionId: string;
  ownerId: string;
  lastModifiedUserId: string;
  createdDate: string;
  lastModifiedDate: string;
}

interface Row {
  id: string;
  subscription_id: string;
  owner_id: string;
  last_modified_user_id: string;
  name: string;
  description: string;
  created_date: Date;
  last_modified_date: Date;
}

const SELECT = 's.id, s.subscription_id, s.owner_id, s.last_modified_user_id, s.name, s.description, s.created_date, s.last_modified_date';

export const SOLUTION_COLUMNS: readonly ColumnSpec[] = [
  { name: 'Id', sql: 's.id::text', type: 'text' },
  { name: 'Name', sql: 's.name', type: 'text' },
  { name: 'Description', sql: 's.description', type: 'text' },
  { name: 'CreatedDate', sql: 's.created_date', type: 'date' },
  { name: 'LastModifiedDate', sql: 's.last_modified_date', type: 'date' },
];

function toSolution(r: Row): Solution {
  return {
    id: r.id,
    subscriptionId: r.subscription_id,
    ownerId: r.owner_id,
    lastModifiedUserId: r.last_modified_user_id,
    name: r.name,
    description: r.description,
    createdDate: iso(r.created_date),
    lastModifiedDate: iso(r.last_modified_date),
  };
}

export async function createSolution(db: Queryable, subscriptionId: string, userId: string, s: { name: string; description: string }): Promise<Solution> {
  const r = await db.query<Row>(
    `INSERT INTO document_solutions AS s (id, subscription_id, owner_id, last_modified_user_id, name, description)
     VALUES ($1, $2, $3, $3, $4, $5) RETURNING ${SELECT}`,
    [randomUUID(), subscriptionId, userId, s.name, s.description],
  );
  return toSolution(r.rows[0] as Row);
}

export async function getSolution(db: Queryable, subscriptionId: string, id: string): Promise<Solution | undefined> {
  const r = await db.query<Row>(`SELECT ${SELECT} FROM document_solutions s WHERE s.id = $1 AND s.subscription_id = $2 AND NOT s.is_deleted`, [id, subscriptionId]);
  return r.rows[0] ? toSolution(r.rows[0]) : undefined;
}

export async function listSolutions(db: Queryable, subscriptionId: string, q: ListQuery): Promise<ListResult<Solution>> {
  const r = await runList<Row>(
    db,
    {
      from: 'document_solutions s',
      select: SELECT,
      scope: 's.subscription_id = $1 AND NOT s.is_deleted',
      scopeParams: [subscriptionId],
      columns: SOLUTION_COLUMNS,
      defaultOrder: 's.created_date DESC',
      tieBreaker: 's.id',
    },
    q,
  );
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

export async function linkSolutions(db: Queryable, table: LinkTable, subscriptionId: string, recordId: string, solutionIds: readonly string[]): Promise<void> {
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
export async function solutionMembers(db: Queryable, subscriptionId: string, solutionId: string): Promise<{ dataSources: SolutionRef[]; documentTemplates: SolutionRef[] }> {
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
