// Document solution configurations (spec 2.2, 4.3). Update replaces every client field, as the spec
// gives update the same body as create.
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
  timestamp,
  uuid,
} from './fields.ts';
import { type ColumnSpec, type ListQuery, type ListResult } from './list.ts';

const flag = (col: string) => ({ type: 'boolean', col, input: true, list: true }) as const;

/** A configuration's fields (2.2), in wire order. */
export const CONFIGURATION = {
  table: 'solution_configurations',
  alias: 'c',
  key: 'id',
  tenant: 'subscription_id',
  fields: {
    documentSolutionConfigurationGuid: { ...uuid('id'), list: true },
    documentSolutionGuid: { ...uuid('document_solution_id'), input: true, list: true, nullable: true },
    subscriptionGuid: uuid('subscription_id'),
    ownerGuid: uuid('owner_id'),
    lastModifiedUserGuid: uuid('last_modified_user_id'),
    name: clientText('name'),
    description: clientText('description'),
    title: clientText('title'),
    fileFormat: clientText('file_format'),
    processingType: clientText('processing_type'),
    deliveryMethod: clientText('delivery_method'),
    path: clientText('path'),
    pdfConformanceLevel: clientText('pdf_conformance_level'),
    pdfVersion: clientText('pdf_version'),
    language: clientText('language'),
    locale: clientText('locale'),
    timeZone: clientText('time_zone'),
    embeddedData: clientText('embedded_data'),
    viewUserEmailList: clientText('view_user_email_list'),
    editUserEmailList: clientText('edit_user_email_list'),
    viewAnonymous: flag('view_anonymous'),
    editAnonymous: flag('edit_anonymous'),
    viewOrganization: flag('view_organization'),
    editOrganization: flag('edit_organization'),
    viewUser: flag('view_user'),
    editUser: flag('edit_user'),
    createdDate: timestamp('created_date'),
    lastModifiedDate: timestamp('last_modified_date'),
    isDeleted: { type: 'boolean', col: 'is_deleted' },
  },
} as const satisfies RecordKind;

export type Configuration = RecordOf<typeof CONFIGURATION.fields>;
/** The client fields, the owning solution among them (checked by the API). */
export type ConfigurationInput = InputOf<typeof CONFIGURATION.fields>;

/** The client-set fields with their columns. */
export const CONFIGURATION_INPUT = inputColumns(CONFIGURATION);
const SELECT = selectList(CONFIGURATION);
export const CONFIGURATION_COLUMNS: readonly ColumnSpec[] = listColumns(CONFIGURATION);
const toConfiguration = (r: Record<string, unknown>) => fromRow(CONFIGURATION, r);

export async function createConfiguration(
  db: Queryable,
  subscriptionId: string,
  userId: string,
  c: ConfigurationInput,
): Promise<Configuration> {
  const cols = CONFIGURATION_INPUT.map(([, col]) => col);
  const values = CONFIGURATION_INPUT.map(([f]) => c[f]);
  const r = await db.query<Record<string, unknown>>(
    `INSERT INTO solution_configurations AS c (id, subscription_id, owner_id, last_modified_user_id, ${cols.join(', ')})
     VALUES ($1, $2, $3, $3, ${placeholders(cols.length, 4)}) RETURNING ${SELECT}`,
    [randomUUID(), subscriptionId, userId, ...values],
  );
  return toConfiguration(r.rows[0] as Record<string, unknown>);
}

export async function updateConfiguration(
  db: Queryable,
  subscriptionId: string,
  userId: string,
  id: string,
  c: ConfigurationInput,
): Promise<Configuration | undefined> {
  const cols = CONFIGURATION_INPUT.map(([, col]) => col);
  const values = CONFIGURATION_INPUT.map(([f]) => c[f]);
  const r = await db.query<Record<string, unknown>>(
    `UPDATE solution_configurations AS c SET last_modified_user_id = $3, last_modified_date = now(),
       ${assignments(cols, 4)}
     WHERE c.id = $1 AND c.subscription_id = $2 AND NOT c.is_deleted RETURNING ${SELECT}`,
    [id, subscriptionId, userId, ...values],
  );
  return r.rows[0] ? toConfiguration(r.rows[0]) : undefined;
}

export async function getConfiguration(db: Queryable, subscriptionId: string, id: string): Promise<Configuration | undefined> {
  const r = await db.query<Record<string, unknown>>(
    `SELECT ${SELECT} FROM solution_configurations c WHERE c.id = $1 AND c.subscription_id = $2 AND NOT c.is_deleted`,
    [id, subscriptionId],
  );
  return r.rows[0] ? toConfiguration(r.rows[0]) : undefined;
}

export async function listConfigurations(db: Queryable, subscriptionId: string, q: ListQuery): Promise<ListResult<Configuration>> {
  const r = await listRecords(db, CONFIGURATION, subscriptionId, q);
  return { rows: r.rows.map(toConfiguration), rowCount: r.rowCount };
}
