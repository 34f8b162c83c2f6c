// User contacts (spec 2.7, 4.1). A contact belongs to the user who created it; shared with the account,
// every user of the subscription sees it. subscriptionUserGuid is the owning user.
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db.ts';

export interface Contact {
  id: string;
  name: string;
  email: string;
  sharedWithAccount: boolean;
  subscriptionUserGuid: string;
}

const SELECT = 'id, name, email, shared_with_account, owner_id';
const VISIBLE = 'subscription_id = $1 AND (owner_id = $2 OR shared_with_account)';

function toContact(r: Record<string, unknown>): Contact {
  return {
    id: r.id as string,
    name: r.name as string,
    email: r.email as string,
    sharedWithAccount: r.shared_with_account as boolean,
    subscriptionUserGuid: r.owner_id as string,
  };
}

export async function createContact(
  db: Queryable,
  subscriptionId: string,
  userId: string,
  c: { name: string; email: string; sharedWithAccount: boolean },
): Promise<Contact> {
  const r = await db.query<Record<string, unknown>>(
    `INSERT INTO user_contacts (id, subscription_id, owner_id, name, email, shared_with_account) VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${SELECT}`,
    [randomUUID(), subscriptionId, userId, c.name, c.email, c.sharedWithAccount],
  );
  return toContact(r.rows[0] as Record<string, unknown>);
}

/** The whole list, no paging (spec 8): the caller's own contacts and those shared with the account. */
export async function listContacts(db: Queryable, subscriptionId: string, userId: string): Promise<Contact[]> {
  const r = await db.query<Record<string, unknown>>(`SELECT ${SELECT} FROM user_contacts WHERE ${VISIBLE} ORDER BY lower(name), id`, [
    subscriptionId,
    userId,
  ]);
  return r.rows.map(toContact);
}

export async function getContact(db: Queryable, subscriptionId: string, userId: string, id: string): Promise<Contact | undefined> {
  const r = await db.query<Record<string, unknown>>(`SELECT ${SELECT} FROM user_contacts WHERE ${VISIBLE} AND id = $3`, [
    subscriptionId,
    userId,
    id,
  ]);
  return r.rows[0] ? toContact(r.rows[0]) : undefined;
}
