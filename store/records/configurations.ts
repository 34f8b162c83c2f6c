// Document solution configurations (spec 2.2, 4.3). Update replaces every client field, as the spec
// gives update the same body as create.
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db.ts';
import { type ColumnSpec, iso, type ListQuery, type ListResult, runList } from './list.ts';

/** Client-settable fields, in API spelling, with their SQL columns. */
export const CONFIGURATION_TEXT_FIELDS = {
  name: 'name',
  description: 'description',
  title: 'title',
  fileFormat: 'file_format',
  processingType: 'processing_type',
  deliveryMethod: 'delivery_method',
  path: 'path',
  pdfConformanceLevel: 'pdf_conformance_level',
  pdfVersion: 'pdf_version',
  language: 'language',
  locale: 'locale',
  timeZone: 'time_zone',
  embeddedData: 'embedded_data',
  viewUserEmailList: 'view_user_email_list',
  editUserEmailList: 'edit_user_email_list',
} as const;
export const CONFIGURATION_BOOLEAN_FIELDS = {
  viewAnonymous: 'view_anonymous',
  editAnonymous: 'edit_anonymous',
  viewOrganization: 'view_organization',
  editOrganization: 'edit_organization',
  viewUser: 'view_user',
  editUser: 'edit_user',
} as const;

type TextField = keyof typeof CONFIGURATION_TEXT_FIELDS;
type BoolField = keyof typeof CONFIGURATION_BOOLEAN_FIELDS;

export type ConfigurationInput = Record<TextField, string> & Record<BoolField, boolean> & { documentSolutionGuid: string | null };

export type Configuration = ConfigurationInput & {
  documentSolutionConfigurationGuid: string;
  subscriptionGuid: string;
  ownerGuid: string;
  lastModifiedUserGuid: string;
  createdDate: string;
  lastModifiedDate: string;
  isDeleted: boolean;
};

const TEXT = Object.entries(CONFIGURATION_TEXT_FIELDS) as [TextField, string][];
const BOOL = Object.entries(CONFIGURATION_BOOLEAN_FIELDS) as [BoolField, string][];
const SELECT = [
  'c.id',
  'c.subscription_id',
  'c.owner_id',
  'c.last_modified_user_id',
  'c.document_solution_id',
  ...TEXT.map(([, col]) => `c.${col}`),
  ...BOOL.map(([, col]) => `c.${col}`),
  'c.created_date',
  'c.last_modified_date',
  'c.is_deleted',
].join(', ');

export const CONFIGURATION_COLUMNS: readonly ColumnSpec[] = [
  { name: 'DocumentSolutionConfigurationGuid', sql: 'c.id::text', type: 'text' },
  { name: 'DocumentSolutionGuid', sql: "coalesce(c.document_solution_id::text, '')", type: 'text' },
  ...TEXT.map(([field, col]): ColumnSpec => ({ name: field[0]?.toUpperCase() + field.slice(1), sql: `c.${col}`, type: 'text' })),
  ...BOOL.map(([field, col]): ColumnSpec => ({ name: field[0]?.toUpperCase() + field.slice(1), sql: `c.${col}`, type: 'boolean' })),
  { name: 'CreatedDate', sql: 'c.created_date', type: 'date' },
  { name: 'LastModifiedDate', sql: 'c.last_modified_date', type: 'date' },
];

function toConfiguration(r: Record<string, unknown>): Configuration {
  const out: Record<string, unknown> = {
    documentSolutionConfigurationGuid: r.id,
    documentSolutionGuid: r.document_solution_id ?? null,
    subscriptionGuid: r.subscription_id,
    ownerGuid: r.owner_id,
    lastModifiedUserGuid: r.last_modified_user_id,
  };
  for (const [field, col] of TEXT) out[field] = r[col];
  for (const [field, col] of BOOL) out[field] = r[col];
  out.createdDate = iso(r.created_date as Date);
  out.lastModifiedDate = iso(r.last_modified_date as Date);
  out.isDeleted = r.is_deleted;
  return out as Configuration;
}

export async function createConfiguration(db: Queryable, subscriptionId: string, userId: string, c: ConfigurationInput): Promise<Configuration> {
  const cols = [...TEXT.map(([, col]) => col), ...BOOL.map(([, col]) => col)];
  const values = [...TEXT.map(([f]) => c[f]), ...BOOL.map(([f]) => c[f])];
  const r = await db.query<Record<string, unknown>>(
    `INSERT INTO solution_configurations AS c (id, subscription_id, owner_id, last_modified_user_id, document_solution_id, ${cols.join(', ')})
     VALUES ($1, $2, $3, $3, $4, ${cols.map((_, i) => `$${i + 5}`).join(', ')}) RETURNING ${SELECT}`,
    [randomUUID(), subscriptionId, userId, c.documentSolutionGuid, ...values],
  );
  return toConfiguration(r.rows[0] as Record<string, unknown>);
}

export async function updateConfiguration(db: Queryable, subscriptionId: string, userId: string, id: string, c: ConfigurationInput): Promise<Configuration | undefined> {
  const cols = [...TEXT.map(([, col]) => col), ...BOOL.map(([, col]) => col)];
  const values = [...TEXT.map(([f]) => c[f]), ...BOOL.map(([f]) => c[f])];
  const r = await db.query<Record<string, unknown>>(
    `UPDATE solution_configurations AS c SET last_modified_user_id = $3, last_modified_date = now(), document_solution_id = $4,
       ${cols.map((col, i) => `${col} = $${i + 5}`).join(', ')}
     WHERE c.id = $1 AND c.subscription_id = $2 AND NOT c.is_deleted RETURNING ${SELECT}`,
    [id, subscriptionId, userId, c.documentSolutionGuid, ...values],
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
  const r = await runList<Record<string, unknown>>(
    db,
    {
      from: 'solution_configurations c',
      select: SELECT,
      scope: 'c.subscription_id = $1 AND NOT c.is_deleted',
      scopeParams: [subscriptionId],
      columns: CONFIGURATION_COLUMNS,
      defaultOrder: 'c.created_date DESC',
      tieBreaker: 'c.id',
    },
    q,
  );
  return { rows: r.rows.map(toConfiguration), rowCount: r.rowCount };
}
