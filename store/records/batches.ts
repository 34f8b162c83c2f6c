// Batches and their rows (migration 009). Every query is scoped by subscription: another tenant's batch
// reads as absent. A row is recorded once: its entry, its document record and its metering go in one
// transaction, and the batch's counters move only when the entry is new (a row processed again after a
// crash, or by a retried chunk, counts once).
import { randomUUID } from 'node:crypto';
import type { Consumption } from '../../core/envelope.ts';
import { type GenerateWarning, MAX_GENERATE_WARNINGS } from '../../core/generate.ts';
import type { Db, Queryable } from '../db.ts';
import type { FileRecord } from '../files.ts';
import { documentRecordCtes, type NewDocument, recordConsumption } from './documents.ts';

export type BatchStatus = 'running' | 'completed' | 'cancelled' | 'stopped' | 'failed';

export interface Batch {
  id: string;
  subscriptionId: string;
  userId: string;
  workflowId: string;
  status: BatchStatus;
  rowsTotal: number;
  rowsDone: number;
  rowsFailed: number;
  pages: number;
  fileFormat: string;
  deliveryMethod: string;
  combined?: { format: string; urn: string; name: string; pages?: number };
  error?: { code: string; message: string };
  createdDate: Date;
  progressDate?: Date;
  endedDate?: Date;
  /** POST /documents/batch/{id}/cancel came: no row starts any more (status running until it has stopped). */
  cancelRequested?: boolean;
}

export interface NewBatch {
  id: string;
  subscriptionId: string;
  userId: string;
  workflowId: string;
  rowsTotal: number;
  fileFormat: string;
  deliveryMethod: string;
  combinedFormat?: string;
}

const COLUMNS =
  'id, subscription_id, user_id, workflow_id, status, rows_total, rows_done, rows_failed, pages, file_format, delivery_method, combined_format, combined_urn, combined_name, combined_pages, error_code, error_message, created_date, progress_date, ended_date, cancel_requested_date';

interface BatchRow {
  id: string;
  subscription_id: string;
  user_id: string;
  workflow_id: string;
  status: BatchStatus;
  rows_total: number;
  rows_done: number;
  rows_failed: number;
  pages: number;
  file_format: string;
  delivery_method: string;
  combined_format: string;
  combined_urn: string;
  combined_name: string;
  combined_pages: number | null;
  error_code: string;
  error_message: string;
  created_date: Date;
  progress_date: Date | null;
  ended_date: Date | null;
  cancel_requested_date: Date | null;
}

function toBatch(r: BatchRow): Batch {
  return {
    id: String(r.id),
    subscriptionId: String(r.subscription_id),
    userId: String(r.user_id),
    workflowId: r.workflow_id,
    status: r.status,
    rowsTotal: Number(r.rows_total),
    rowsDone: Number(r.rows_done),
    rowsFailed: Number(r.rows_failed),
    pages: Number(r.pages),
    fileFormat: r.file_format,
    deliveryMethod: r.delivery_method,
    ...(r.combined_format
      ? {
          combined: {
            format: r.combined_format,
            urn: r.combined_urn,
            name: r.combined_name,
            ...(r.combined_pages !== null ? { pages: Number(r.combined_pages) } : {}),
          },
        }
      : {}),
    ...(r.error_code ? { error: { code: r.error_code, message: r.error_message } } : {}),
    createdDate: new Date(r.created_date),
    ...(r.progress_date ? { progressDate: new Date(r.progress_date) } : {}),
    ...(r.ended_date ? { endedDate: new Date(r.ended_date) } : {}),
    ...(r.cancel_requested_date ? { cancelRequested: true } : {}),
  };
}

/** Idempotent: a second call (a retried step) keeps the first row. */
export async function createBatch(db: Queryable, b: NewBatch): Promise<void> {
  await db.query(
    `INSERT INTO batches (id, subscription_id, user_id, workflow_id, status, rows_total, file_format, delivery_method, combined_format)
     VALUES ($1, $2, $3, $4, 'running', $5, $6, $7, $8) ON CONFLICT (id) DO NOTHING`,
    [b.id, b.subscriptionId, b.userId, b.workflowId, b.rowsTotal, b.fileFormat, b.deliveryMethod, b.combinedFormat ?? ''],
  );
}

export async function getBatch(db: Queryable, subscriptionId: string, id: string): Promise<Batch | undefined> {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) return undefined;
  const r = await db.query<BatchRow>(`SELECT ${COLUMNS} FROM batches WHERE id = $1 AND subscription_id = $2`, [id, subscriptionId]);
  return r.rows[0] ? toBatch(r.rows[0]) : undefined;
}

export interface BatchRowEntry {
  row: number;
  status: 'done' | 'failed';
  urn: string;
  name: string;
  path: string;
  pages: number;
  code: string;
  message: string;
  /** A done row's warnings (empty when it had none). */
  warnings: GenerateWarning[];
}

/** A done row's warnings as stored (JSON text; NULL for none, as rows recorded before migration 012). */
function warningsText(warnings: GenerateWarning[] | undefined): string | null {
  return warnings && warnings.length > 0 ? JSON.stringify(warnings.slice(0, MAX_GENERATE_WARNINGS)) : null;
}

/** A page of the batch's row entries in row order: failures only, or every processed row. */
export async function listBatchRows(
  db: Queryable,
  subscriptionId: string,
  batchId: string,
  q: { status?: 'done' | 'failed'; skip: number; top: number; fromRow?: number },
): Promise<{ rows: BatchRowEntry[]; rowCount: number }> {
  const params: unknown[] = [batchId, subscriptionId];
  let where = 'batch_id = $1 AND subscription_id = $2';
  if (q.status) {
    params.push(q.status);
    where += ` AND status = $${params.length}`;
  }
  const count = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM batch_rows WHERE ${where}`, params);
  if (q.fromRow !== undefined) {
    params.push(q.fromRow);
    where += ` AND row_number >= $${params.length}`;
  }
  params.push(q.top, q.skip);
  const r = await db.query<{
    row_number: number;
    status: 'done' | 'failed';
    urn: string;
    name: string;
    path: string;
    pages: number;
    code: string;
    message: string;
    warnings: string | null;
  }>(
    `SELECT row_number, status, urn, name, path, pages, code, message, warnings FROM batch_rows WHERE ${where}
     ORDER BY row_number LIMIT $${params.length - 1} OFFSET $${params.length}`,
    params,
  );
  return {
    rowCount: Number(count.rows[0]?.n ?? 0),
    rows: r.rows.map((x) => ({
      row: Number(x.row_number),
      status: x.status,
      urn: x.urn,
      name: x.name,
      path: x.path,
      pages: Number(x.pages),
      code: x.code,
      message: x.message,
      warnings: x.warnings ? (JSON.parse(x.warnings) as GenerateWarning[]) : [],
    })),
  };
}

export interface DoneRow {
  subscriptionId: string;
  batchId: string;
  row: number;
  /** The row's document (empty when the row lives only in the combined output). */
  urn: string;
  name: string;
  path: string;
  pages: number;
  /** The row's warnings (its e-invoice's EINVOICE_RULE), listed with the row. */
  warnings?: GenerateWarning[];
  /** The row's metering, for a row without a document record (a delivered row was metered with its record). */
  metering?: { operationId: string; userId: string; consumption: Consumption[] };
}

/** Records a generated row: its entry (and the metering of a row without a record) in one transaction.
 *  `inserted` is false when the row was recorded before (nothing changes then); `metered` is the metering
 *  that was new. */
export async function recordBatchRowDone(
  db: Db,
  d: DoneRow,
): Promise<{ inserted: boolean; metered: Consumption[]; cancelRequested?: boolean }> {
  return db.transaction(async (tx) => {
    const entry = await insertDoneRow(tx, d);
    if (!entry.inserted) return { inserted: false, metered: [] };
    const metered = d.metering
      ? await recordConsumption(tx, d.subscriptionId, d.metering.userId, d.metering.operationId, d.metering.consumption)
      : [];
    return { inserted: true, metered, cancelRequested: await countDoneRow(tx, d) };
  });
}

/** A delivered row in one statement (atomic as a transaction, one round trip: PGlite pays per statement): its
 *  document's record and metering (idempotent per operation, as activities/record.ts records a generate's:
 *  store/records/documents.ts recordDocument and recordConsumption), its entry and the batch's counters; and
 *  whether a cancel was asked for, read as the counters change (the chunk's check between rows, without a
 *  query of its own). `inserted` is false when an earlier attempt had recorded the row's entry. */
export async function recordBatchRowDocument(
  db: Db,
  document: NewDocument,
  consumption: Consumption[],
  row: Omit<DoneRow, 'metering'>,
): Promise<{ documentGuid: string; metered: Consumption[]; inserted: boolean; cancelRequested?: boolean }> {
  const record = documentRecordCtes(document, consumption);
  const p = record.params.length;
  const r = await db.query<{ document_guid: string | null; dimensions: string[] | null; inserted: boolean; cancel: boolean | null }>(
    `WITH ${record.ctes},
     entry AS (
       INSERT INTO batch_rows (batch_id, subscription_id, row_number, status, urn, name, path, pages, warnings)
       SELECT $${p + 1}, $${p + 2}, $${p + 3}, 'done', $${p + 4}, $${p + 5}, $${p + 6}, $${p + 7}, $${p + 8}
       WHERE EXISTS (SELECT 1 FROM recorded)
       ON CONFLICT (batch_id, row_number) DO NOTHING RETURNING row_number),
     counted AS (
       UPDATE batches SET rows_done = rows_done + 1, pages = pages + $${p + 7}, progress_date = now()
       WHERE id = $${p + 1} AND subscription_id = $${p + 2} AND EXISTS (SELECT 1 FROM entry)
       RETURNING cancel_requested_date IS NOT NULL AS c)
     SELECT (SELECT document_guid FROM recorded) AS document_guid, ARRAY(SELECT dimension FROM metered) AS dimensions,
            EXISTS (SELECT 1 FROM entry) AS inserted, (SELECT c FROM counted) AS cancel`,
    [...record.params, row.batchId, row.subscriptionId, row.row, row.urn, row.name, row.path, row.pages, warningsText(row.warnings)],
  );
  const out = r.rows[0];
  if (!out?.document_guid) throw new Error('document record vanished');
  const metered = new Set(out.dimensions ?? []);
  return {
    documentGuid: out.document_guid,
    metered: consumption.filter((c) => metered.has(c.dimension)),
    inserted: out.inserted,
    ...(out.cancel !== null ? { cancelRequested: out.cancel } : {}),
  };
}

/** A delivered row waiting for its record (recordBatchRowsDelivered): a document without a url, links or
 *  sharing results (Storage), written at `urn` under the row's own operation. */
export interface DeliveredRow {
  row: number;
  operationId: string;
  userId: string;
  urn: string;
  name: string;
  path: string;
  pages: number;
  fileFormat: string;
  deliveryMethod: string;
  consumption: Consumption[];
  /** The row's warnings (its e-invoice's EINVOICE_RULE), listed with the row. */
  warnings?: GenerateWarning[];
  /** The written file's record (a Storage write's, WriteRequest.recordLater), stored with the rest. */
  file?: FileRecord;
}

/** Several delivered rows of one batch in one statement (a chunk's flush: PGlite and PostgreSQL pay per
 *  statement, not per row): each row's document record and metering (idempotent per operation, as
 *  recordBatchRowDocument's), its entry, its file's record (Storage: the file resolves from then on; written
 *  again by a retry, it is updated), and the batch's counters once; and whether a cancel was asked for.
 *  `inserted`: the rows whose entry this statement wrote (an earlier attempt wrote the others'). */
export async function recordBatchRowsDelivered(
  db: Db,
  subscriptionId: string,
  batchId: string,
  rows: DeliveredRow[],
): Promise<{ inserted: Set<number>; metered: Consumption[]; cancelRequested?: boolean }> {
  if (rows.length === 0) return { inserted: new Set(), metered: [] };
  const metering = rows.flatMap((r) => r.consumption.map((c) => ({ r, c })));
  const files = rows.flatMap((r) => (r.file ? [r.file] : []));
  const q = await db.query<{ entries: number[] | null; metered: string[] | null; cancel: boolean | null }>(
    `WITH doc AS (
       SELECT * FROM unnest($3::uuid[], $4::text[], $5::uuid[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::integer[], $12::integer[],
                            $17::text[])
         AS t(document_guid, operation_id, user_id, title, urn, path, file_format, delivery_method, row_number, pages, warnings)),
     inserted AS (
       INSERT INTO documents (document_guid, subscription_guid, owner_guid, last_modified_user_guid, operation_id, title, urn, path, file_format, delivery_method, initiator_email)
       SELECT document_guid, $2, user_id, user_id, operation_id, title, urn, path, file_format, delivery_method, '' FROM doc
       ON CONFLICT (subscription_guid, operation_id) DO NOTHING
       RETURNING operation_id),
     recorded AS (
       SELECT operation_id FROM inserted
       UNION SELECT d.operation_id FROM documents d JOIN doc ON d.operation_id = doc.operation_id WHERE d.subscription_guid = $2),
     metered AS (
       INSERT INTO consumption (subscription_id, user_id, operation_id, dimension, value)
       SELECT $2, m.user_id, m.operation_id, m.dimension, m.value
       FROM unnest($13::text[], $14::uuid[], $15::text[], $16::integer[]) AS m(operation_id, user_id, dimension, value)
       WHERE m.operation_id IN (SELECT operation_id FROM recorded)
       ON CONFLICT (operation_id, dimension) DO NOTHING RETURNING operation_id, dimension),
     entry AS (
       INSERT INTO batch_rows (batch_id, subscription_id, row_number, status, urn, name, path, pages, warnings)
       SELECT $1, $2, row_number, 'done', urn, title, path, pages, warnings FROM doc WHERE operation_id IN (SELECT operation_id FROM recorded)
       ON CONFLICT (batch_id, row_number) DO NOTHING RETURNING row_number, pages),
     file AS (
       INSERT INTO stored_files (id, subscription_id, owner_id, kind, file_name, path, content_type, size, sha256, blob_key)
       SELECT f.id, $2, f.owner_id, 'document', f.file_name, f.path, f.content_type, f.size, f.sha256, f.blob_key
       FROM unnest($18::uuid[], $19::uuid[], $20::text[], $21::text[], $22::text[], $23::bigint[], $24::text[], $25::text[])
         AS f(id, owner_id, file_name, path, content_type, size, sha256, blob_key)
       ON CONFLICT (id) DO UPDATE SET size = EXCLUDED.size, sha256 = EXCLUDED.sha256),
     counted AS (
       UPDATE batches SET rows_done = rows_done + (SELECT count(*) FROM entry), pages = pages + (SELECT coalesce(sum(pages), 0) FROM entry),
              progress_date = now()
       WHERE id = $1 AND subscription_id = $2 AND EXISTS (SELECT 1 FROM entry)
       RETURNING cancel_requested_date IS NOT NULL AS c)
     SELECT ARRAY(SELECT row_number FROM entry) AS entries, ARRAY(SELECT operation_id || ' ' || dimension FROM metered) AS metered,
            (SELECT c FROM counted) AS cancel`,
    [
      batchId,
      subscriptionId,
      rows.map(() => randomUUID()),
      rows.map((r) => r.operationId),
      rows.map((r) => r.userId),
      rows.map((r) => r.name),
      rows.map((r) => r.urn),
      rows.map((r) => r.path),
      rows.map((r) => r.fileFormat),
      rows.map((r) => r.deliveryMethod),
      rows.map((r) => r.row),
      rows.map((r) => r.pages),
      metering.map((m) => m.r.operationId),
      metering.map((m) => m.r.userId),
      metering.map((m) => m.c.dimension),
      metering.map((m) => m.c.value),
      rows.map((r) => warningsText(r.warnings)),
      files.map((f) => f.id),
      files.map((f) => f.ownerId),
      files.map((f) => f.fileName),
      files.map((f) => f.path),
      files.map((f) => f.contentType),
      files.map((f) => f.size),
      files.map((f) => f.sha256),
      files.map((f) => f.blobKey),
    ],
  );
  const out = q.rows[0];
  const newly = new Set(out?.metered ?? []);
  return {
    inserted: new Set((out?.entries ?? []).map(Number)),
    metered: metering.filter((m) => newly.has(`${m.r.operationId} ${m.c.dimension}`)).map((m) => m.c),
    ...(out?.cancel !== null && out?.cancel !== undefined ? { cancelRequested: out.cancel } : {}),
  };
}

async function insertDoneRow(tx: Queryable, d: Omit<DoneRow, 'metering'>): Promise<{ inserted: boolean }> {
  const entry = await tx.query<{ row_number: number }>(
    `INSERT INTO batch_rows (batch_id, subscription_id, row_number, status, urn, name, path, pages, warnings)
     VALUES ($1, $2, $3, 'done', $4, $5, $6, $7, $8) ON CONFLICT (batch_id, row_number) DO NOTHING RETURNING row_number`,
    [d.batchId, d.subscriptionId, d.row, d.urn, d.name, d.path, d.pages, warningsText(d.warnings)],
  );
  return { inserted: entry.rows.length > 0 };
}

/** Counts a done row on the batch; whether a cancel was asked for. */
async function countDoneRow(tx: Queryable, d: Pick<DoneRow, 'batchId' | 'subscriptionId' | 'pages'>): Promise<boolean> {
  const r = await tx.query<{ c: boolean }>(
    `UPDATE batches SET rows_done = rows_done + 1, pages = pages + $3, progress_date = now() WHERE id = $1 AND subscription_id = $2
     RETURNING cancel_requested_date IS NOT NULL AS c`,
    [d.batchId, d.subscriptionId, d.pages],
  );
  return r.rows[0]?.c === true;
}

/** Records a row that failed (its code and message); once per row. */
export async function recordBatchRowFailed(
  db: Db,
  subscriptionId: string,
  batchId: string,
  row: number,
  code: string,
  message: string,
): Promise<{ inserted: boolean; cancelRequested?: boolean }> {
  return db.transaction(async (tx) => {
    const entry = await tx.query(
      `INSERT INTO batch_rows (batch_id, subscription_id, row_number, status, code, message)
       VALUES ($1, $2, $3, 'failed', $4, $5) ON CONFLICT (batch_id, row_number) DO NOTHING RETURNING row_number`,
      [batchId, subscriptionId, row, code, message.slice(0, 2000)],
    );
    if (entry.rows.length === 0) return { inserted: false };
    const r = await tx.query<{ c: boolean }>(
      `UPDATE batches SET rows_failed = rows_failed + 1, progress_date = now() WHERE id = $1 AND subscription_id = $2
       RETURNING cancel_requested_date IS NOT NULL AS c`,
      [batchId, subscriptionId],
    );
    return { inserted: true, cancelRequested: r.rows[0]?.c === true };
  });
}

/** The rows of `rows` that are recorded already (done or failed): a chunk run again skips them. */
export async function recordedRows(db: Queryable, subscriptionId: string, batchId: string, from: number, to: number): Promise<Set<number>> {
  const r = await db.query<{ row_number: number }>(
    'SELECT row_number FROM batch_rows WHERE batch_id = $1 AND subscription_id = $2 AND row_number BETWEEN $3 AND $4',
    [batchId, subscriptionId, from, to],
  );
  return new Set(r.rows.map((x) => Number(x.row_number)));
}

/** The combined output, once written. */
export async function setBatchCombined(
  db: Queryable,
  subscriptionId: string,
  batchId: string,
  c: { urn: string; name: string; pages?: number },
): Promise<void> {
  await db.query('UPDATE batches SET combined_urn = $3, combined_name = $4, combined_pages = $5 WHERE id = $1 AND subscription_id = $2', [
    batchId,
    subscriptionId,
    c.urn,
    c.name,
    c.pages ?? null,
  ]);
}

/** Records a cancel of a running batch (the first one counts); the chunks read it between rows. */
export async function requestBatchCancel(db: Queryable, subscriptionId: string, batchId: string): Promise<void> {
  await db.query(
    `UPDATE batches SET cancel_requested_date = now() WHERE id = $1 AND subscription_id = $2 AND status = 'running' AND cancel_requested_date IS NULL`,
    [batchId, subscriptionId],
  );
}

/** Whether a cancel of the batch was asked for (one indexed read, made between rows). */
export async function batchCancelRequested(db: Queryable, subscriptionId: string, batchId: string): Promise<boolean> {
  const r = await db.query<{ c: boolean }>(
    `SELECT cancel_requested_date IS NOT NULL AS c FROM batches WHERE id = $1 AND subscription_id = $2`,
    [batchId, subscriptionId],
  );
  return r.rows[0]?.c === true;
}

/** The batch's end: its status (and the error that ended it, if one did). A batch already ended keeps its
 *  first end. */
export async function endBatch(
  db: Queryable,
  subscriptionId: string,
  batchId: string,
  status: Exclude<BatchStatus, 'running'>,
  error?: { code: string; message: string },
): Promise<Batch | undefined> {
  await db.query(
    `UPDATE batches SET status = $3, error_code = $4, error_message = $5, ended_date = now()
     WHERE id = $1 AND subscription_id = $2 AND status = 'running'`,
    [batchId, subscriptionId, status, error?.code ?? '', (error?.message ?? '').slice(0, 2000)],
  );
  return getBatch(db, subscriptionId, batchId);
}
