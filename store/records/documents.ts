// Reading and correcting generated document records (spec 2.5, 4.7). The generate workflow writes them
// (store/documents.ts); here they are read, listed and updated field by field.
import type { Queryable } from '../db.ts';
import { type ColumnSpec, iso, type ListQuery, type ListResult, runList } from './list.ts';

/** Fields the update operation may change, in API spelling, with their SQL columns. */
export const DOCUMENT_UPDATABLE = {
  title: 'title',
  urn: 'urn',
  url: 'url',
  path: 'path',
  fileFormat: 'file_format',
  deliveryMethod: 'delivery_method',
  succeededViewUserEmailList: 'succeeded_view_user_email_list',
  succeededEditUserEmailList: 'succeeded_edit_user_email_list',
  failedViewUserEmailList: 'failed_view_user_email_list',
  failedEditUserEmailList: 'failed_edit_user_email_list',
} as const;
export type DocumentUpdate = Partial<Record<keyof typeof DOCUMENT_UPDATABLE, string>>;

const LINKS = {
  viewAnonymousLink: 'view_anonymous_link',
  editAnonymousLink: 'edit_anonymous_link',
  viewUserLink: 'view_user_link',
  editUserLink: 'edit_user_link',
  viewOrganizationLink: 'view_organization_link',
  editOrganizationLink: 'edit_organization_link',
} as const;

const STRING_FIELDS = Object.entries({ ...DOCUMENT_UPDATABLE, ...LINKS });

export type DocumentRecord = Record<keyof typeof DOCUMENT_UPDATABLE | keyof typeof LINKS, string> & {
  documentGuid: string;
  subscriptionGuid: string;
  ownerGuid: string;
  lastModifiedUserGuid: string;
  createdDate: string;
  lastModifiedDate: string;
  isDeleted: boolean;
};

const SELECT = [
  'd.document_guid',
  'd.subscription_guid',
  'd.owner_guid',
  'd.last_modified_user_guid',
  ...STRING_FIELDS.map(([, col]) => `d.${col}`),
  'd.created_date',
  'd.last_modified_date',
  'd.is_deleted',
].join(', ');

const pascal = (s: string) => (s[0]?.toUpperCase() ?? '') + s.slice(1);
export const DOCUMENT_COLUMNS: readonly ColumnSpec[] = [
  { name: 'DocumentGuid', sql: 'd.document_guid::text', type: 'text' },
  ...Object.entries(DOCUMENT_UPDATABLE).map(([f, col]): ColumnSpec => ({ name: pascal(f), sql: `d.${col}`, type: 'text' })),
  { name: 'CreatedDate', sql: 'd.created_date', type: 'date' },
  { name: 'LastModifiedDate', sql: 'd.last_modified_date', type: 'date' },
];

function toRecord(r: Record<string, unknown>): DocumentRecord {
  const out: Record<string, unknown> = {
    documentGuid: r.document_guid,
    subscriptionGuid: r.subscription_guid,
    ownerGuid: r.owner_guid,
    lastModifiedUserGuid: r.last_modified_user_guid,
  };
  for (const [f, col] of STRING_FIELDS) out[f] = r[col];
  out.createdDate = iso(r.created_date as Date);
  out.lastModifiedDate = iso(r.last_modified_date as Date);
  out.isDeleted = r.is_deleted;
  return out as DocumentRecord;
}

export async function getDocumentRecord(db: Queryable, subscriptionId: string, id: string): Promise<DocumentRecord | undefined> {
  const r = await db.query<Record<string, unknown>>(
    `SELECT ${SELECT} FROM documents d WHERE d.document_guid = $1 AND d.subscription_guid = $2 AND NOT d.is_deleted`,
    [id, subscriptionId],
  );
  return r.rows[0] ? toRecord(r.rows[0]) : undefined;
}

/** Changes only the fields present in `change`. */
export async function updateDocumentRecord(db: Queryable, subscriptionId: string, userId: string, id: string, change: DocumentUpdate): Promise<DocumentRecord | undefined> {
  const params: unknown[] = [id, subscriptionId, userId];
  const sets = ['last_modified_user_guid = $3', 'last_modified_date = now()'];
  for (const [f, col] of Object.entries(DOCUMENT_UPDATABLE)) {
    const v = change[f as keyof DocumentUpdate];
    if (v === undefined) continue;
    params.push(v);
    sets.push(`${col} = $${params.length}`);
  }
  const r = await db.query<Record<string, unknown>>(
    `UPDATE documents d SET ${sets.join(', ')} WHERE d.document_guid = $1 AND d.subscription_guid = $2 AND NOT d.is_deleted RETURNING ${SELECT}`,
    params,
  );
  return r.rows[0] ? toRecord(r.rows[0]) : undefined;
}

export async function listDocumentRecords(db: Queryable, subscriptionId: string, q: ListQuery): Promise<ListResult<DocumentRecord>> {
  const r = await runList<Record<string, unknown>>(
    db,
    {
      from: 'documents d',
      select: SELECT,
      scope: 'd.subscription_guid = $1 AND NOT d.is_deleted',
      scopeParams: [subscriptionId],
      columns: DOCUMENT_COLUMNS,
      defaultOrder: 'd.created_date DESC',
      tieBreaker: 'd.document_guid',
    },
    q,
  );
  return { rows: r.rows.map(toRecord), rowCount: r.rowCount };
}
