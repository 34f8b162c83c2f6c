// The documents table's one repository: generated and managed document records (spec 2.5) and the
// metering recorded with them, written by the record steps of generate and manage; read, listed and
// corrected field by field by the document routes (spec 4.7).
import { randomUUID } from 'node:crypto';
import type { Consumption } from '../../core/envelope.ts';
import type { Db, Queryable } from '../db.ts';
import { type FileRecord, fileInsert, fileValues } from '../files.ts';
import {
  clientText,
  fromRow,
  inputColumns,
  type InputOf,
  listColumns,
  listRecords,
  type RecordKind,
  type RecordOf,
  selectList,
  timestamp,
  uuid,
} from './fields.ts';
import { type ColumnSpec, type ListQuery, type ListResult } from './list.ts';

const link = (col: string) => ({ type: 'text', col }) as const;

/** A document record's fields (2.5), in wire order. The client changes the `input` ones (4.7); the sharing
 *  links (the fields named *Link) are written by generate and manage only. */
export const DOCUMENT = {
  table: 'documents',
  alias: 'd',
  key: 'document_guid',
  tenant: 'subscription_guid',
  fields: {
    documentGuid: { ...uuid('document_guid'), list: true },
    subscriptionGuid: uuid('subscription_guid'),
    ownerGuid: uuid('owner_guid'),
    lastModifiedUserGuid: uuid('last_modified_user_guid'),
    title: clientText('title'),
    urn: clientText('urn'),
    url: clientText('url'),
    path: clientText('path'),
    fileFormat: clientText('file_format'),
    deliveryMethod: clientText('delivery_method'),
    viewAnonymousLink: link('view_anonymous_link'),
    editAnonymousLink: link('edit_anonymous_link'),
    viewUserLink: link('view_user_link'),
    editUserLink: link('edit_user_link'),
    viewOrganizationLink: link('view_organization_link'),
    editOrganizationLink: link('edit_organization_link'),
    succeededViewUserEmailList: clientText('succeeded_view_user_email_list'),
    succeededEditUserEmailList: clientText('succeeded_edit_user_email_list'),
    failedViewUserEmailList: clientText('failed_view_user_email_list'),
    failedEditUserEmailList: clientText('failed_edit_user_email_list'),
    /** Extension: X-Email of the manage request that made the record (spec 5.2), else empty. */
    initiatorEmail: { type: 'text', col: 'initiator_email', list: true },
    createdDate: timestamp('created_date'),
    lastModifiedDate: timestamp('last_modified_date'),
    isDeleted: { type: 'boolean', col: 'is_deleted' },
  },
} as const satisfies RecordKind;

type Name = keyof typeof DOCUMENT.fields;
type LinkName = Name extends infer K ? (K extends `${string}Link` ? K : never) : never;
/** The sharing links, with their columns. */
export const LINK_FIELDS = Object.entries(DOCUMENT.fields).flatMap(([f, d]) =>
  f.endsWith('Link') ? [[f as LinkName, d.col] as const] : [],
);

/** Fields the update operation may change, with their columns. */
export const DOCUMENT_UPDATABLE = inputColumns(DOCUMENT);
export type DocumentUpdate = Partial<InputOf<typeof DOCUMENT.fields>>;
export type DocumentRecord = RecordOf<typeof DOCUMENT.fields>;

const SELECT = selectList(DOCUMENT);
export const DOCUMENT_COLUMNS: readonly ColumnSpec[] = listColumns(DOCUMENT);
const toRecord = (r: Record<string, unknown>) => fromRow(DOCUMENT, r);

export async function getDocumentRecord(db: Queryable, subscriptionId: string, id: string): Promise<DocumentRecord | undefined> {
  const r = await db.query<Record<string, unknown>>(
    `SELECT ${SELECT} FROM documents d WHERE d.document_guid = $1 AND d.subscription_guid = $2 AND NOT d.is_deleted`,
    [id, subscriptionId],
  );
  return r.rows[0] ? toRecord(r.rows[0]) : undefined;
}

/** Changes only the fields present in `change`. */
export async function updateDocumentRecord(
  db: Queryable,
  subscriptionId: string,
  userId: string,
  id: string,
  change: DocumentUpdate,
): Promise<DocumentRecord | undefined> {
  const params: unknown[] = [id, subscriptionId, userId];
  const sets = ['last_modified_user_guid = $3', 'last_modified_date = now()'];
  for (const [f, col] of DOCUMENT_UPDATABLE) {
    const v = change[f];
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
  const r = await listRecords(db, DOCUMENT, subscriptionId, q);
  return { rows: r.rows.map(toRecord), rowCount: r.rowCount };
}

// ---- written by generate and manage -------------------------------------------------------------

export interface NewDocument {
  subscriptionId: string;
  userId: string;
  operationId: string;
  title: string;
  urn: string;
  path: string;
  fileFormat: string;
  deliveryMethod: string;
  /** Where the file opens at a drive (its web URL); empty for Storage. */
  url?: string;
  /** Sharing links of a drive delivery, as the spec's fields (viewAnonymousLink, ...). */
  links?: Partial<Record<LinkName, string>>;
  /** Per-recipient sharing results (spec 2.5's e-mail lists). */
  emails?: { succeededView: string[]; succeededEdit: string[]; failedView: string[]; failedEdit: string[] };
  /** X-Email of a manage request (spec 5.2). */
  initiatorEmail?: string;
}

/** The columns of a new record beyond its identity: url, links and e-mail lists ('' when absent). */
function sharingColumns(d: NewDocument): [string[], string[]] {
  const cols: string[] = ['url'];
  const values: string[] = [d.url ?? ''];
  for (const [f, col] of LINK_FIELDS) {
    cols.push(col);
    values.push(d.links?.[f] ?? '');
  }
  const e = d.emails;
  const {
    succeededViewUserEmailList: sv,
    succeededEditUserEmailList: se,
    failedViewUserEmailList: fv,
    failedEditUserEmailList: fe,
  } = DOCUMENT.fields;
  cols.push(sv.col, se.col, fv.col, fe.col);
  values.push(...[e?.succeededView, e?.succeededEdit, e?.failedView, e?.failedEdit].map((l) => (l ?? []).join(',')));
  return [cols, values];
}

/** Idempotent per operation: a retried record step returns the first record instead of writing a second. */
export async function recordDocument(db: Queryable, d: NewDocument): Promise<string> {
  // One statement: the new record's guid, or (a retried step) the guid the operation already has.
  const record = documentRecordCtes(d, []);
  const r = await db.query<{ document_guid: string | null }>(`WITH ${record.ctes} SELECT document_guid FROM recorded`, record.params);
  const row = r.rows[0];
  if (!row?.document_guid) throw new Error('document record vanished');
  return row.document_guid;
}

export type { Consumption };

/** Records the metering of an operation; idempotent per (operation, dimension). Returns what was new (a
 *  retried step inserts nothing), which is what the metering counters count. */
export async function recordConsumption(
  db: Queryable,
  subscriptionId: string,
  userId: string,
  operationId: string,
  items: Consumption[],
): Promise<Consumption[]> {
  if (items.length === 0) return [];
  const r = await db.query<{ dimension: string }>(
    `INSERT INTO consumption (subscription_id, user_id, operation_id, dimension, value)
     SELECT $1, $2, $3, dimension, value FROM unnest($4::text[], $5::integer[]) AS item(dimension, value)
     ON CONFLICT (operation_id, dimension) DO NOTHING RETURNING dimension`,
    [subscriptionId, userId, operationId, items.map((c) => c.dimension), items.map((c) => c.value)],
  );
  const inserted = new Set(r.rows.map((row) => row.dimension));
  return items.filter((c) => inserted.has(c.dimension));
}

/** A new document record and its metering in one statement (atomic as a transaction, one round trip instead
 *  of four: BEGIN, two statements, COMMIT); idempotent per operation, as recordDocument and
 *  recordConsumption are. `metered` is the metering that was new. The metering is written only with a
 *  record: when the operation's record is neither inserted nor visible (a concurrent attempt committed it
 *  after this statement began), nothing is written and the step fails, to be retried. `file`: the written
 *  file's record (a Storage write's, WriteRequest.recordLater), stored with them (a retry's updates it). */
export async function recordDocumentWithConsumption(
  db: Db,
  d: NewDocument,
  consumption: Consumption[],
  file?: FileRecord,
): Promise<{ documentGuid: string; metered: Consumption[] }> {
  const record = documentRecordCtes(d, consumption);
  const r = await db.query<{ document_guid: string | null; dimensions: string[] | null }>(
    `WITH ${record.ctes}${
      file
        ? `,
     file AS (${fileInsert(record.params.length, 'EXISTS (SELECT 1 FROM recorded)')})`
        : ''
    }
     SELECT (SELECT document_guid FROM recorded) AS document_guid, ARRAY(SELECT dimension FROM metered) AS dimensions`,
    file ? [...record.params, ...fileValues(file)] : record.params,
  );
  const row = r.rows[0];
  if (!row?.document_guid) throw new Error('document record vanished');
  const inserted = new Set(row.dimensions ?? []);
  return { documentGuid: row.document_guid, metered: consumption.filter((c) => inserted.has(c.dimension)) };
}

/** The common table expressions of a document record with its metering, for one statement: `inserted` (the
 *  new record, none when the operation has one), `recorded` (the operation's record, new or earlier) and
 *  `metered` (the metering that was new, written only with a record), with their parameters from $1. A
 *  statement may add its own expressions after them, numbering its parameters from `params.length + 1`
 *  (store/records/batches.ts: a batch row's entry in the same statement). */
export function documentRecordCtes(d: NewDocument, consumption: Consumption[]): { ctes: string; params: unknown[] } {
  const [cols, values] = sharingColumns(d);
  const n = 11 + cols.length;
  return {
    ctes: `inserted AS (
       INSERT INTO documents (document_guid, subscription_guid, owner_guid, last_modified_user_guid, operation_id, title, urn, path, file_format, delivery_method, initiator_email, ${cols.join(', ')})
       VALUES ($1, $2, $3, $3, $4, $5, $6, $7, $8, $9, $10, ${cols.map((_, i) => `$${11 + i}`).join(', ')})
       ON CONFLICT (subscription_guid, operation_id) DO NOTHING
       RETURNING document_guid),
     recorded AS (
       SELECT document_guid FROM inserted
       UNION ALL SELECT document_guid FROM documents WHERE subscription_guid = $2 AND operation_id = $4
       LIMIT 1),
     metered AS (
       INSERT INTO consumption (subscription_id, user_id, operation_id, dimension, value)
       SELECT $${n}, $${n + 1}, $${n + 2}, dimension, value FROM unnest($${n + 3}::text[], $${n + 4}::integer[]) AS item(dimension, value)
       WHERE EXISTS (SELECT 1 FROM recorded)
       ON CONFLICT (operation_id, dimension) DO NOTHING RETURNING dimension)`,
    params: [
      randomUUID(),
      d.subscriptionId,
      d.userId,
      d.operationId,
      d.title,
      d.urn,
      d.path,
      d.fileFormat,
      d.deliveryMethod,
      d.initiatorEmail ?? '',
      ...values,
      d.subscriptionId,
      d.userId,
      d.operationId,
      consumption.map((c) => c.dimension),
      consumption.map((c) => c.value),
    ],
  };
}

/** A Move carries the source's record over to the new file (urn, title, path, format, location), with the
 *  metering, in one transaction. A retry finds the record already moved (it matches either urn); a source
 *  without a live record gets a new record for the moved file. */
export async function moveDocumentRecord(
  db: Db,
  fromUrn: string,
  d: NewDocument,
  consumption: Consumption[],
): Promise<{ documentGuid: string; metered: Consumption[] }> {
  return db.transaction(async (tx) => {
    // The moved file's url, links and sharing results replace the source's (another location, other links).
    const [cols, values] = sharingColumns(d);
    const r = await tx.query<{ document_guid: string }>(
      `UPDATE documents SET urn = $3, title = $4, path = $5, file_format = $6, delivery_method = $7,
              last_modified_user_guid = $8, last_modified_date = now(),
              initiator_email = CASE WHEN $9 = '' THEN initiator_email ELSE $9 END, ${cols.map((c, i) => `${c} = $${10 + i}`).join(', ')}
       WHERE subscription_guid = $1 AND urn IN ($2, $3) AND NOT is_deleted
       RETURNING document_guid`,
      [d.subscriptionId, fromUrn, d.urn, d.title, d.path, d.fileFormat, d.deliveryMethod, d.userId, d.initiatorEmail ?? '', ...values],
    );
    const documentGuid = r.rows[0]?.document_guid ?? (await recordDocument(tx, d));
    const metered = await recordConsumption(tx, d.subscriptionId, d.userId, d.operationId, consumption);
    return { documentGuid, metered };
  });
}

/** Soft-deletes the live record of a urn (its file was removed); the record's guid, if there was one. */
export async function markDocumentDeleted(db: Queryable, subscriptionId: string, urn: string, userId: string): Promise<string | undefined> {
  const r = await db.query<{ document_guid: string }>(
    `UPDATE documents SET is_deleted = true, last_modified_user_guid = $3, last_modified_date = now()
     WHERE subscription_guid = $1 AND urn = $2 RETURNING document_guid`,
    [subscriptionId, urn, userId],
  );
  return r.rows[0]?.document_guid;
}

/** What a generate or manage operation recorded for the file it wrote at `urn` (a urn only its workflow
 *  run chose): the live record there and the operation's metering, both written by its record step in one
 *  transaction; undefined when that step never committed. Read only when a workflow task was lost after
 *  the record and the steps before it, run again, can no longer succeed (a scratch file already
 *  discarded, a source already removed: activities/generation.ts, workflows/manage.ts). */
export async function recordedOperation(
  db: Queryable,
  subscriptionId: string,
  operationId: string,
  urn: string,
): Promise<{ documentGuid: string; title: string; path: string; consumption: Consumption[] } | undefined> {
  const doc = await db.query<{ document_guid: string; title: string; path: string }>(
    'SELECT document_guid, title, path FROM documents WHERE subscription_guid = $1 AND urn = $2 AND NOT is_deleted',
    [subscriptionId, urn],
  );
  const metered = await db.query<{ dimension: string; value: number }>(
    'SELECT dimension, value FROM consumption WHERE subscription_id = $1 AND operation_id = $2',
    [subscriptionId, operationId],
  );
  const row = doc.rows[0];
  if (!row || metered.rows.length === 0) return undefined;
  return {
    documentGuid: row.document_guid,
    title: row.title,
    path: row.path,
    consumption: metered.rows.map((r) => ({ dimension: r.dimension, value: Number(r.value) })),
  };
}
