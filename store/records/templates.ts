// Document template records (spec 2.3, 4.4): references to files, never the files themselves.
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db.ts';
import {
  assignments,
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
import { linkedSolutions, linkSolutions, unlinkAllSolutions } from './solutions.ts';

/** A template's fields (2.3), in wire order. */
export const TEMPLATE = {
  table: 'document_templates',
  alias: 't',
  key: 'id',
  tenant: 'subscription_id',
  fields: {
    id: { ...uuid('id'), list: true },
    subscriptionId: uuid('subscription_id'),
    ownerId: uuid('owner_id'),
    lastModifiedUserId: uuid('last_modified_user_id'),
    name: clientText('name'),
    description: clientText('description'),
    title: clientText('title'),
    urn: clientText('urn'),
    url: clientText('url'),
    fileFormat: clientText('file_format'),
    loadMethod: clientText('load_method'),
    path: { type: 'text', col: 'path' },
    documentSolutions: { type: 'solutions', input: true },
    ownerName: { type: 'text', col: 'owner_name', sql: 'o.name', listSql: "coalesce(o.name, '')", list: true },
    lastModifiedUserName: { type: 'text', col: 'last_modified_user_name', sql: 'm.name' },
    createdDate: timestamp('created_date'),
    lastModifiedDate: timestamp('last_modified_date'),
  },
} as const satisfies RecordKind;

export type TemplateInput = InputOf<typeof TEMPLATE.fields>;
export type Template = RecordOf<typeof TEMPLATE.fields> & { documentSolutions: SolutionRef[] };

const FROM = `document_templates t
  LEFT JOIN users o ON o.id = t.owner_id AND o.subscription_id = t.subscription_id
  LEFT JOIN users m ON m.id = t.last_modified_user_id AND m.subscription_id = t.subscription_id`;
const SELECT = selectList(TEMPLATE);
const INPUT = inputColumns(TEMPLATE);
const INPUT_COLS = INPUT.map(([, col]) => col);
export const TEMPLATE_COLUMNS: readonly ColumnSpec[] = listColumns(TEMPLATE);

function toTemplate(r: Record<string, unknown>, documentSolutions: SolutionRef[]): Template {
  return { ...fromRow(TEMPLATE, r), documentSolutions };
}

async function load(db: Queryable, subscriptionId: string, id: string): Promise<Template | undefined> {
  const r = await db.query<Record<string, unknown>>(
    `SELECT ${SELECT} FROM ${FROM} WHERE t.id = $1 AND t.subscription_id = $2 AND NOT t.is_deleted`,
    [id, subscriptionId],
  );
  const row = r.rows[0];
  return row ? toTemplate(row, await linkedSolutions(db, 'solution_templates', subscriptionId, id)) : undefined;
}

/** `solutionIds` must already be the caller's live solutions (linking is best-effort upstream). */
export async function createTemplate(
  db: Queryable,
  subscriptionId: string,
  userId: string,
  t: TemplateInput,
  solutionIds: readonly string[],
): Promise<Template> {
  const id = randomUUID();
  await db.query(
    `INSERT INTO document_templates (id, subscription_id, owner_id, last_modified_user_id, ${INPUT_COLS.join(', ')})
     VALUES ($1, $2, $3, $3, ${placeholders(INPUT.length, 4)})`,
    [id, subscriptionId, userId, ...INPUT.map(([f]) => t[f])],
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
    `UPDATE document_templates SET ${assignments(INPUT_COLS, 4)}, last_modified_user_id = $3, last_modified_date = now()
     WHERE id = $1 AND subscription_id = $2 AND NOT is_deleted RETURNING id`,
    [id, subscriptionId, userId, ...INPUT.map(([f]) => t[f])],
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
  return softDelete(db, TEMPLATE, subscriptionId, userId, id);
}

export async function listTemplates(db: Queryable, subscriptionId: string, q: ListQuery): Promise<ListResult<Template>> {
  const r = await listRecords(db, TEMPLATE, subscriptionId, q, FROM);
  const rows = [];
  for (const row of r.rows) rows.push(toTemplate(row, await linkedSolutions(db, 'solution_templates', subscriptionId, String(row.id))));
  return { rows, rowCount: r.rowCount };
}
