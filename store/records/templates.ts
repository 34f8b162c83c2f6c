// Document template records (spec 2.3, 4.4): references to files, never the files themselves.
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db.ts';
import { type ColumnSpec, iso, type ListQuery, type ListResult, runList } from './list.ts';
import { linkedSolutions, linkSolutions, type SolutionRef, unlinkAllSolutions } from './solutions.ts';

export interface TemplateInput {
  name: string;
  description: string;
  title: string;
  urn: string;
  url: string;
  fileFormat: string;
  loadMethod: string;
}

export interface Template extends TemplateInput {
  id: string;
  subscriptionId: string;
  ownerId: string;
  lastModifiedUserId: string;
  path: string;
  documentSolutions: SolutionRef[];
  ownerName: string;
  lastModifiedUserName: string;
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
  title: string;
  urn: string;
  url: string;
  file_format: string;
  load_method: string;
  path: string;
  owner_name: string | null;
  last_modified_user_name: string | null;
  created_date: Date;
  last_modified_date: Date;
}

const FROM = `document_templates t
  LEFT JOIN users o ON o.id = t.owner_id AND o.subscription_id = t.subscription_id
  LEFT JOIN users m ON m.id = t.last_modified_user_id AND m.subscription_id = t.subscription_id`;
const SELECT = `t.id, t.subscription_id, t.owner_id, t.last_modified_user_id, t.name, t.description, t.title, t.urn, t.url, t.file_format,
  t.load_method, t.path, o.name AS owner_name, m.name AS last_modified_user_name, t.created_date, t.last_modified_date`;

export const TEMPLATE_COLUMNS: readonly ColumnSpec[] = [
  { name: 'Id', sql: 't.id::text', type: 'text' },
  { name: 'Name', sql: 't.name', type: 'text' },
  { name: 'Description', sql: 't.description', type: 'text' },
  { name: 'Title', sql: 't.title', type: 'text' },
  { name: 'Urn', sql: 't.urn', type: 'text' },
  { name: 'Url', sql: 't.url', type: 'text' },
  { name: 'FileFormat', sql: 't.file_format', type: 'text' },
  { name: 'LoadMethod', sql: 't.load_method', type: 'text' },
  { name: 'OwnerName', sql: "coalesce(o.name, '')", type: 'text' },
  { name: 'CreatedDate', sql: 't.created_date', type: 'date' },
  { name: 'LastModifiedDate', sql: 't.last_modified_date', type: 'date' },
];

function toTemplate(r: Row, documentSolutions: SolutionRef[]): Template {
  return {
    id: r.id,
    subscriptionId: r.subscription_id,
    ownerId: r.owner_id,
    lastModifiedUserId: r.last_modified_user_id,
    name: r.name,
    description: r.description,
    title: r.title,
    urn: r.urn,
    url: r.url,
    fileFormat: r.file_format,
    loadMethod: r.load_method,
    path: r.path,
    documentSolutions,
    ownerName: r.owner_name ?? '',
    lastModifiedUserName: r.last_modified_user_name ?? '',
    createdDate: iso(r.created_date),
    lastModifiedDate: iso(r.last_modified_date),
  };
}

async function load(db: Queryable, subscriptionId: string, id: string): Promise<Template | undefined> {
  const r = await db.query<Row>(`SELECT ${SELECT} FROM ${FROM} WHERE t.id = $1 AND t.subscription_id = $2 AND NOT t.is_deleted`, [id, subscriptionId]);
  const row = r.rows[0];
  return row ? toTemplate(row, await linkedSolutions(db, 'solution_templates', subscriptionId, id)) : undefined;
}

/** `solutionIds` must already be the caller's live solutions (linking is best-effort upstream). */
export async function createTemplate(db: Queryable, subscriptionId: string, userId: string, t: TemplateInput, solutionIds: readonly string[]): Promise<Template> {
  const id = randomUUID();
  await db.query(
    `INSERT INTO document_templates (id, subscription_id, owner_id, last_modified_user_id, name, description, title, urn, url, file_format, load_method)
     VALUES ($1, $2, $3, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [id, subscriptionId, userId, t.name, t.description, t.title, t.urn, t.url, t.fileFormat, t.loadMethod],
  );
  await linkSolutions(db, 'solution_templates', subscriptionId, id, solutionIds);
  return (await load(db, subscriptionId, id)) as Template;
}

/** Replaces the client fields; links are replaced only when `solutionIds` is given. */
export async function updateTemplate(
  db: Queryable,
  subscriptionId: string,
  userId: string,
  id: string,
  t: TemplateInput,
  solutionIds: readonly string[] | undefined,
): Promise<Template | undefined> {
  const r = await db.query(
    `UPDATE document_templates SET name = $4, description = $5, title = $6, urn = $7, url = $8, file_format = $9, load_method = $10,
       last_modified_user_id = $3, last_modified_date = now()
     WHERE id = $1 AND subscription_id = $2 AND NOT is_deleted RETURNING id`,
    [id, subscriptionId, userId, t.name, t.description, t.title, t.urn, t.url, t.fileFormat, t.loadMethod],
  );
  if (r.rows.length === 0) return undefined;
  if (solutionIds) {
    await unlinkAllSolutions(db, 'solution_templates', subscriptionId, id);
    await linkSolutions(db, 'solution_templates', subscriptionId, id, solutionIds);
  }
  return load(db, subscriptionId, id);
}

export const getTemplate = load;

export async function deleteTemplate(db: Queryable, subscriptionId: string, userId: string, id: string): Promise<boolean> {
  const r = await db.query(
    `UPDATE document_templates SET is_deleted = true, last_modified_user_id = $3, last_modified_date = now()
     WHERE id = $1 AND subscription_id = $2 AND NOT is_deleted RETURNING id`,
    [id, subscriptionId, userId],
  );
  return r.rows.length > 0;
}

export async function listTemplates(db: Queryable, subscriptionId: string, q: ListQuery): Promise<ListResult<Template>> {
  const r = await runList<Row>(
    db,
    { from: FROM, select: SELECT, scope: 't.subscription_id = $1 AND NOT t.is_deleted', scopeParams: [subscriptionId], columns: TEMPLATE_COLUMNS, defaultOrder: 't.created_date DESC', tieBreaker: 't.id' },
    q,
  );
  const rows = [];
  for (const row of r.rows) rows.push(toTemplate(row, await linkedSolutions(db, 'solution_templates', subscriptionId, row.id)));
  return { rows, rowCount: r.rowCount };
}
