// Folders (spec 2.8, 4.1): named containers shared by the users of a subscription.
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db.ts';

export interface Folder {
  id: string;
  name: string;
}

/** Sortable columns, API spelling -> SQL (constant text; the client's value is only compared with the keys). */
export const FOLDER_SORT = { Name: 'lower(name)', CreatedDate: 'created_date', LastModifiedDate: 'last_modified_date' } as const;
export type FolderSort = keyof typeof FOLDER_SORT;

export async function createFolder(db: Queryable, subscriptionId: string, userId: string, name: string): Promise<Folder> {
  const r = await db.query<Folder>(
    'INSERT INTO folders (id, subscription_id, owner_id, last_modified_user_id, name) VALUES ($1, $2, $3, $3, $4) RETURNING id, name',
    [randomUUID(), subscriptionId, userId, name],
  );
  return r.rows[0] as Folder;
}

export async function listFolders(
  db: Queryable,
  subscriptionId: string,
  q: { top: number; skip: number; sort: FolderSort; order: 'ASC' | 'DESC' },
): Promise<Folder[]> {
  const r = await db.query<Folder>(
    `SELECT id, name FROM folders WHERE subscription_id = $1 ORDER BY ${FOLDER_SORT[q.sort]} ${q.order === 'DESC' ? 'DESC' : 'ASC'}, id LIMIT $2 OFFSET $3`,
    [subscriptionId, q.top, q.skip],
  );
  return r.rows;
}

export async function getFolder(db: Queryable, subscriptionId: string, id: string): Promise<Folder | undefined> {
  const r = await db.query<Folder>('SELECT id, name FROM folders WHERE subscription_id = $1 AND id = $2', [subscriptionId, id]);
  return r.rows[0];
}

export async function renameFolder(
  db: Queryable,
  subscriptionId: string,
  userId: string,
  id: string,
  name: string,
): Promise<Folder | undefined> {
  const r = await db.query<Folder>(
    'UPDATE folders SET name = $4, last_modified_user_id = $3, last_modified_date = now() WHERE subscription_id = $1 AND id = $2 RETURNING id, name',
    [subscriptionId, id, userId, name],
  );
  return r.rows[0];
}
