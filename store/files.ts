// Metadata of the files the service holds; the bytes live in the blob store under `blob_key`.
import type { Queryable } from './db.ts';

export type FileKind = 'template' | 'data' | 'document';

export interface StoredFile {
  id: string;
  subscriptionId: string;
  ownerId: string;
  kind: FileKind;
  fileName: string;
  path: string;
  contentType: string;
  size: number;
  sha256: string;
  blobKey: string;
  createdDate: Date;
  expiresDate: Date | null;
}

interface Row {
  id: string;
  subscription_id: string;
  owner_id: string;
  kind: FileKind;
  file_name: string;
  path: string;
  content_type: string;
  size: string | number;
  sha256: string;
  blob_key: string;
  created_date: Date;
  expires_date: Date | null;
}

const COLUMNS = 'id, subscription_id, owner_id, kind, file_name, path, content_type, size, sha256, blob_key, created_date, expires_date';

function toFile(r: Row): StoredFile {
  return {
    id: r.id,
    subscriptionId: r.subscription_id,
    ownerId: r.owner_id,
    kind: r.kind,
    fileName: r.file_name,
    path: r.path,
    contentType: r.content_type,
    size: Number(r.size),
    sha256: r.sha256,
    blobKey: r.blob_key,
    createdDate: new Date(r.created_date),
    expiresDate: r.expires_date ? new Date(r.expires_date) : null,
  };
}

/** A file's record as a write makes it (its creation date is the database's). */
export type FileRecord = Omit<StoredFile, 'createdDate'>;

/** The INSERT of a file's record, its values (`fileValues`) numbered from $`from + 1`; with `onlyIf`, stored
 *  only when that condition holds (a statement that records the file with its document). Written again (a
 *  retried write), the row stays and takes the new size and digest. */
export function fileInsert(from: number, onlyIf?: string): string {
  const values = Array.from({ length: 11 }, (_, i) => `$${from + i + 1}`).join(', ');
  return `INSERT INTO stored_files (id, subscription_id, owner_id, kind, file_name, path, content_type, size, sha256, blob_key, expires_date)
     ${onlyIf ? `SELECT ${values} WHERE ${onlyIf}` : `VALUES (${values})`}
     ON CONFLICT (id) DO UPDATE SET size = EXCLUDED.size, sha256 = EXCLUDED.sha256`;
}

/** A file record's values, in fileInsert's order. */
export function fileValues(f: FileRecord): unknown[] {
  return [f.id, f.subscriptionId, f.ownerId, f.kind, f.fileName, f.path, f.contentType, f.size, f.sha256, f.blobKey, f.expiresDate];
}

export async function insertFile(db: Queryable, f: FileRecord): Promise<StoredFile> {
  const r = await db.query<Row>(`${fileInsert(0)} RETURNING ${COLUMNS}`, fileValues(f));
  const row = r.rows[0];
  if (!row) throw new Error('insert returned nothing');
  return toFile(row);
}

/** A live (not removed, not expired) file of the subscription; another tenant's id reads as absent.
 *  `consumedBy`: an upload that this run consumed (consumeFiles) still resolves for it. */
export async function getFile(
  db: Queryable,
  subscriptionId: string,
  id: string,
  kinds: FileKind[],
  consumedBy?: string,
): Promise<StoredFile | undefined> {
  const [found] = await getFiles(db, [{ subscriptionId, id, kinds, ...(consumedBy ? { consumedBy } : {}) }]);
  return found;
}

export interface FileLookup {
  subscriptionId: string;
  id: string;
  kinds: FileKind[];
  consumedBy?: string;
}

/** getFile for several files, in one statement: each lookup is a SELECT of its own (the same condition, so
 *  the same plan, as getFile's), joined by UNION ALL. The answers are in the lookups' order. */
export async function getFiles(db: Queryable, lookups: FileLookup[]): Promise<(StoredFile | undefined)[]> {
  const asked = lookups.map((l, i) => ({ ...l, i })).filter((l) => isUuid(l.id));
  const found: (StoredFile | undefined)[] = lookups.map(() => undefined);
  if (asked.length === 0) return found;
  const r = await db.query<Row & { lookup: number }>(
    asked
      .map(
        (l, n) => `SELECT ${l.i} AS lookup, ${COLUMNS} FROM stored_files
     WHERE id = $${4 * n + 1} AND subscription_id = $${4 * n + 2} AND kind = ANY($${4 * n + 3}::text[])
       AND (removed_date IS NULL OR consumed_by = $${4 * n + 4})
       AND (expires_date IS NULL OR expires_date > now())`,
      )
      .join('\n     UNION ALL '),
    asked.flatMap((l) => [l.id, l.subscriptionId, l.kinds, l.consumedBy ?? null]),
  );
  for (const row of r.rows) found[Number(row.lookup)] = toFile(row);
  return found;
}

/** getFile as a service asks it while serving many runs: the lookups asked in the same turn of the event
 *  loop (a generate's template and data, read at once) go to the database in one statement (getFiles), not
 *  one each; at most `perStatement` in one. */
export function fileLookups(db: Queryable, perStatement = 32): (lookup: FileLookup) => Promise<StoredFile | undefined> {
  type Asked = { lookup: FileLookup; resolve: (f: StoredFile | undefined) => void; reject: (err: unknown) => void };
  let pending: Asked[] | undefined;
  const flush = () => {
    const all = pending!;
    pending = undefined;
    for (let from = 0; from < all.length; from += perStatement) {
      const asked = all.slice(from, from + perStatement);
      getFiles(
        db,
        asked.map((a) => a.lookup),
      ).then(
        (found) => asked.forEach((a, i) => a.resolve(found[i])),
        (err: unknown) => asked.forEach((a) => a.reject(err)),
      );
    }
  };
  return (lookup) =>
    new Promise((resolve, reject) => {
      if (!pending) {
        pending = [];
        setImmediate(flush);
      }
      pending.push({ lookup, resolve, reject });
    });
}

/** Consumes uploads (spec 3): the live files among `ids` stop resolving for everyone but `consumedBy` (the
 *  consuming run, see getFile); their bytes stay until the upload sweep erases them after the retention
 *  period. Returns the ids it consumed; a second call by the same run finds nothing left to do. One
 *  statement, in which each id is an UPDATE of its own (a data-modifying CTE per id): one UPDATE for all
 *  (`id = ANY($1)`) was planned on the (subscription_id, kind) index wherever the table has no statistics
 *  (PGlite never analyzes), reading every upload of the subscription, a cost that grew with each request;
 *  and a statement per id costs embedded PGlite its planning and commit each. Each id's UPDATE is planned on
 *  the primary key once the table has grown (EXPLAIN on PGlite: from 3,000 files on; at 300 and fewer, on
 *  that index, over that few rows). */
export async function consumeFiles(
  db: Queryable,
  subscriptionId: string,
  ids: string[],
  kinds: FileKind[],
  consumedBy: string,
): Promise<{ id: string; blobKey: string }[]> {
  const valid = [...new Set(ids.filter(isUuid))];
  if (valid.length === 0) return [];
  const updates = valid.map(
    (_, i) => `u${i} AS (UPDATE stored_files SET removed_date = now(), consumed_by = $3
       WHERE id = $${i + 4} AND subscription_id = $1 AND kind = ANY($2::text[]) AND removed_date IS NULL
       RETURNING id, blob_key)`,
  );
  const r = await db.query<{ id: string; blob_key: string }>(
    `WITH ${updates.join(',\n     ')}
     ${valid.map((_, i) => `SELECT id, blob_key FROM u${i}`).join(' UNION ALL ')}`,
    [subscriptionId, kinds, consumedBy, ...valid],
  );
  return r.rows.map((row) => ({ id: String(row.id), blobKey: row.blob_key }));
}

export function isUuid(s: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s);
}

/** Marks a file removed (its id stops resolving) and returns its blob key so the caller can erase the
 *  bytes; undefined when there is no such live file. Idempotent: a second call finds nothing to do. */
export async function markFileRemoved(db: Queryable, subscriptionId: string, id: string, kinds: FileKind[]): Promise<string | undefined> {
  if (!isUuid(id)) return undefined;
  const r = await db.query<{ blob_key: string }>(
    `UPDATE stored_files SET removed_date = now()
     WHERE id = $1 AND subscription_id = $2 AND kind = ANY($3::text[]) AND removed_date IS NULL
     RETURNING blob_key`,
    [id, subscriptionId, kinds],
  );
  return r.rows[0]?.blob_key;
}

/** Deletes the row of a file nothing refers to yet (a write undone by the step that made it), returning
 *  its blob key; undefined when there was none. */
export async function deleteFile(db: Queryable, subscriptionId: string, id: string, kinds: FileKind[]): Promise<string | undefined> {
  if (!isUuid(id)) return undefined;
  const r = await db.query<{ blob_key: string }>(
    'DELETE FROM stored_files WHERE id = $1 AND subscription_id = $2 AND kind = ANY($3::text[]) RETURNING blob_key',
    [id, subscriptionId, kinds],
  );
  return r.rows[0]?.blob_key;
}

/** Uploads (templates, data files) whose retention period is over and whose bytes are not erased yet, oldest
 *  first, across all subscriptions: the upload sweep's next batch. */
export async function expiredUploads(db: Queryable, limit: number): Promise<{ id: string; blobKey: string }[]> {
  const r = await db.query<{ id: string; blob_key: string }>(
    `SELECT id, blob_key FROM stored_files
     WHERE erased_date IS NULL AND expires_date IS NOT NULL AND expires_date <= now() AND kind IN ('template', 'data')
     ORDER BY expires_date LIMIT $1`,
    [limit],
  );
  return r.rows.map((row) => ({ id: String(row.id), blobKey: row.blob_key }));
}

/** After their bytes are erased: the rows are marked erased, and removed when a generate had not consumed
 *  them first (the removal date of a consumed upload stays the consumption's). */
export async function markUploadsErased(db: Queryable, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await db.query(
    `UPDATE stored_files SET erased_date = now(), removed_date = COALESCE(removed_date, now())
     WHERE id = ANY($1::uuid[]) AND erased_date IS NULL`,
    [ids],
  );
}

/** The blob key of a file already marked removed: a retried permanent delete erases the bytes that an
 *  earlier attempt, stopped between marking the row and erasing, left behind. */
export async function removedFileKey(db: Queryable, subscriptionId: string, id: string, kinds: FileKind[]): Promise<string | undefined> {
  if (!isUuid(id)) return undefined;
  const r = await db.query<{ blob_key: string }>(
    'SELECT blob_key FROM stored_files WHERE id = $1 AND subscription_id = $2 AND kind = ANY($3::text[]) AND removed_date IS NOT NULL',
    [id, subscriptionId, kinds],
  );
  return r.rows[0]?.blob_key;
}
