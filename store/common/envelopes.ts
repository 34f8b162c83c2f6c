// Envelopes with their documents, sign groups, recipients and fields (spec 2.11, 3, 4.2), the signature
// template delete of 4.2, and the dashboard summary of 2.10 computed from them. A signature template is an
// envelope with status Template. Children are deleted for real: the spec's soft deletes are for records.
import { randomUUID } from 'node:crypto';
import type { Db, Queryable } from '../db.ts';
import { iso } from '../records/list.ts';

export const ENVELOPE_STATUSES = ['Draft', 'Sent', 'Completed', 'Declined', 'Voided', 'Expired', 'Template'] as const;
export type EnvelopeStatus = (typeof ENVELOPE_STATUSES)[number];
export const RECIPIENT_STATUSES = ['Pending', 'Completed', 'Declined'] as const;
export type RecipientStatus = (typeof RECIPIENT_STATUSES)[number];

export interface EnvelopeInput {
  name: string;
  status: EnvelopeStatus;
  sendDate: string | null;
  expirationDate: string | null;
  documents: { name: string; fileFormat: string }[];
  signGroups: { name: string }[];
  recipients: {
    name: string;
    email: string;
    userId: string | null;
    status: RecipientStatus;
    action: string;
    actionDate: string | null;
    signGroupIndex: number | null;
  }[];
  fields: {
    type: string;
    page: number;
    x: number;
    y: number;
    value: string;
    documentIndex: number | null;
    recipientIndex: number | null;
  }[];
}

export interface Envelope {
  id: string;
  name: string;
  status: string;
  sendDate: string | null;
  expirationDate: string | null;
  subscriptionId: string;
  ownerId: string;
  createdDate: string;
  lastModifiedDate: string;
  documents: { id: string; name: string; fileFormat: string }[];
  signGroups: { id: string; name: string }[];
  recipients: {
    id: string;
    name: string;
    email: string;
    userId: string | null;
    signGroupId: string | null;
    status: string;
    action: string;
    actionDate: string | null;
  }[];
  fields: {
    id: string;
    type: string;
    page: number;
    x: number;
    y: number;
    value: string;
    documentId: string | null;
    recipientId: string | null;
  }[];
}

const isoOrNull = (d: unknown) => (d === null || d === undefined ? null : iso(d as Date));

export async function createEnvelope(db: Db, subscriptionId: string, userId: string, e: EnvelopeInput): Promise<string> {
  const id = randomUUID();
  await db.transaction(async (tx) => {
    // Sent and later states have a send date; drafts and templates have none unless given.
    const sendDate = e.sendDate ?? (e.status === 'Draft' || e.status === 'Template' ? null : new Date().toISOString());
    await tx.query(
      'INSERT INTO envelopes (id, subscription_id, owner_id, name, status, send_date, expiration_date) VALUES ($1, $2, $3, $4, $5, $6, $7)',
      [id, subscriptionId, userId, e.name, e.status, sendDate, e.expirationDate],
    );
    const docIds: string[] = [];
    for (const [i, d] of e.documents.entries()) {
      const did = randomUUID();
      docIds.push(did);
      await tx.query(
        'INSERT INTO envelope_documents (id, envelope_id, subscription_id, name, file_format, sort_order) VALUES ($1, $2, $3, $4, $5, $6)',
        [did, id, subscriptionId, d.name, d.fileFormat, i],
      );
    }
    const groupIds: string[] = [];
    for (const [i, g] of e.signGroups.entries()) {
      const gid = randomUUID();
      groupIds.push(gid);
      await tx.query('INSERT INTO envelope_sign_groups (id, envelope_id, subscription_id, name, sort_order) VALUES ($1, $2, $3, $4, $5)', [
        gid,
        id,
        subscriptionId,
        g.name,
        i,
      ]);
    }
    const recipientIds: string[] = [];
    for (const [i, r] of e.recipients.entries()) {
      const rid = randomUUID();
      recipientIds.push(rid);
      await tx.query(
        `INSERT INTO envelope_recipients (id, envelope_id, subscription_id, sign_group_id, user_id, name, email, status, action, action_date, sort_order)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
        [
          rid,
          id,
          subscriptionId,
          r.signGroupIndex === null ? null : groupIds[r.signGroupIndex],
          r.userId,
          r.name,
          r.email,
          r.status,
          r.action,
          r.actionDate,
          i,
        ],
      );
    }
    for (const f of e.fields) {
      await tx.query(
        `INSERT INTO envelope_fields (id, envelope_id, subscription_id, document_id, recipient_id, type, page, x, y, value)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
        [
          randomUUID(),
          id,
          subscriptionId,
          f.documentIndex === null ? null : docIds[f.documentIndex],
          f.recipientIndex === null ? null : recipientIds[f.recipientIndex],
          f.type,
          f.page,
          f.x,
          f.y,
          f.value,
        ],
      );
    }
  });
  return id;
}

/** An envelope the caller owns or is a recipient of, with its children; absent otherwise. */
export async function getEnvelope(db: Queryable, subscriptionId: string, userId: string, id: string): Promise<Envelope | undefined> {
  const email = await callerEmail(db, subscriptionId, userId);
  const r = await db.query<Record<string, unknown>>(
    `SELECT e.* FROM envelopes e WHERE e.id = $1 AND e.subscription_id = $2
       AND (e.owner_id = $3 OR EXISTS (SELECT 1 FROM envelope_recipients r WHERE r.envelope_id = e.id AND (r.user_id = $3 OR lower(r.email) = lower($4))))`,
    [id, subscriptionId, userId, email],
  );
  const e = r.rows[0];
  if (!e) return undefined;
  const [docs, groups, recipients, fields] = await Promise.all([
    db.query<Record<string, unknown>>(
      'SELECT id, name, file_format FROM envelope_documents WHERE envelope_id = $1 AND subscription_id = $2 ORDER BY sort_order, id',
      [id, subscriptionId],
    ),
    db.query<Record<string, unknown>>(
      'SELECT id, name FROM envelope_sign_groups WHERE envelope_id = $1 AND subscription_id = $2 ORDER BY sort_order, id',
      [id, subscriptionId],
    ),
    db.query<Record<string, unknown>>(
      'SELECT id, name, email, user_id, sign_group_id, status, action, action_date FROM envelope_recipients WHERE envelope_id = $1 AND subscription_id = $2 ORDER BY sort_order, id',
      [id, subscriptionId],
    ),
    db.query<Record<string, unknown>>(
      'SELECT id, type, page, x, y, value, document_id, recipient_id FROM envelope_fields WHERE envelope_id = $1 AND subscription_id = $2 ORDER BY page, id',
      [id, subscriptionId],
    ),
  ]);
  return {
    id: e.id as string,
    name: e.name as string,
    status: e.status as string,
    sendDate: isoOrNull(e.send_date),
    expirationDate: isoOrNull(e.expiration_date),
    subscriptionId: e.subscription_id as string,
    ownerId: e.owner_id as string,
    createdDate: iso(e.created_date as Date),
    lastModifiedDate: iso(e.last_modified_date as Date),
    documents: docs.rows.map((d) => ({ id: d.id as string, name: d.name as string, fileFormat: d.file_format as string })),
    signGroups: groups.rows.map((g) => ({ id: g.id as string, name: g.name as string })),
    recipients: recipients.rows.map((x) => ({
      id: x.id as string,
      name: x.name as string,
      email: x.email as string,
      userId: (x.user_id as string | null) ?? null,
      signGroupId: (x.sign_group_id as string | null) ?? null,
      status: x.status as string,
      action: x.action as string,
      actionDate: isoOrNull(x.action_date),
    })),
    fields: fields.rows.map((f) => ({
      id: f.id as string,
      type: f.type as string,
      page: Number(f.page),
      x: Number(f.x),
      y: Number(f.y),
      value: f.value as string,
      documentId: (f.document_id as string | null) ?? null,
      recipientId: (f.recipient_id as string | null) ?? null,
    })),
  };
}

/**
 * Spec 4.2: the id is looked up among the caller's own envelopes without a status filter; its fields,
 * recipients, sign groups and documents are deleted, then the envelope itself only if its status is
 * Template. Returns undefined when there is no such envelope, else whether the parent was deleted.
 */
export async function deleteSignatureTemplate(
  db: Db,
  subscriptionId: string,
  userId: string,
  id: string,
): Promise<{ parentDeleted: boolean } | undefined> {
  return db.transaction(async (tx) => {
    const found = await tx.query<{ status: string }>(
      'SELECT status FROM envelopes WHERE id = $1 AND subscription_id = $2 AND owner_id = $3 FOR UPDATE',
      [id, subscriptionId, userId],
    );
    if (!found.rows[0]) return undefined;
    for (const table of ['envelope_fields', 'envelope_recipients', 'envelope_sign_groups', 'envelope_documents']) {
      await tx.query(`DELETE FROM ${table} WHERE envelope_id = $1 AND subscription_id = $2`, [id, subscriptionId]);
    }
    const parent = await tx.query<{ id: string }>(
      "DELETE FROM envelopes WHERE id = $1 AND subscription_id = $2 AND owner_id = $3 AND status = 'Template' RETURNING id",
      [id, subscriptionId, userId],
    );
    if (!parent.rows[0]) {
      await tx.query('UPDATE envelopes SET last_modified_date = now() WHERE id = $1 AND subscription_id = $2', [id, subscriptionId]);
    }
    return { parentDeleted: parent.rows.length > 0 };
  });
}

async function callerEmail(db: Queryable, subscriptionId: string, userId: string): Promise<string | null> {
  const r = await db.query<{ email: string }>('SELECT email FROM users WHERE id = $1 AND subscription_id = $2', [userId, subscriptionId]);
  return r.rows[0]?.email ?? null;
}

export interface Dashboard {
  todo: number;
  pending: number;
  inbox: number;
  expiring: number;
  completed: number;
  recentEnvelopes: { id: string; name: string; status: string }[];
  oldestTodoEnvelopes: { id: string; name: string; sendDate: string; userName: string; tid: string }[];
  latestPendingEnvelopes: { id: string; name: string; action: string; timestamp: string; person: string }[];
}

export const DASHBOARD_LIST_SIZE = 5;
export const EXPIRING_DAYS = 7;

/**
 * Spec 2.10 from the caller's point of view. "Mine" is an envelope the caller owns; "received" one where
 * the caller is a recipient (by user id, or by the e-mail address of the caller's user record).
 */
export async function getDashboard(db: Queryable, subscriptionId: string, userId: string): Promise<Dashboard> {
  const email = await callerEmail(db, subscriptionId, userId);
  // Never NULL (recipients without a user id, callers without a user record), so NOT works on it.
  const me = '(coalesce(r.user_id = $2, false) OR coalesce(lower(r.email) = lower($3), false))';
  const received = `EXISTS (SELECT 1 FROM envelope_recipients r WHERE r.envelope_id = e.id AND ${me})`;
  const todo = `e.status = 'Sent' AND EXISTS (SELECT 1 FROM envelope_recipients r WHERE r.envelope_id = e.id AND ${me} AND r.status = 'Pending')`;
  const pending = `e.owner_id = $2 AND e.status = 'Sent' AND EXISTS (SELECT 1 FROM envelope_recipients r WHERE r.envelope_id = e.id AND r.status = 'Pending' AND NOT ${me})`;
  const visible = `((e.owner_id = $2 AND e.status <> 'Template') OR (${received} AND e.status NOT IN ('Draft', 'Template')))`;
  const params = [subscriptionId, userId, email];
  const [counts, recent, oldest, latest] = await Promise.all([
    db.query<Record<string, number>>(
      `SELECT count(*) FILTER (WHERE ${todo})::int AS todo,
              count(*) FILTER (WHERE ${pending})::int AS pending,
              count(*) FILTER (WHERE ${received} AND e.status NOT IN ('Draft', 'Template'))::int AS inbox,
              count(*) FILTER (WHERE ${visible} AND e.status = 'Sent' AND e.expiration_date >= now() AND e.expiration_date < now() + interval '${EXPIRING_DAYS} days')::int AS expiring,
              count(*) FILTER (WHERE ${visible} AND e.status = 'Completed')::int AS completed
       FROM envelopes e WHERE e.subscription_id = $1`,
      params,
    ),
    db.query<Record<string, unknown>>(
      `SELECT e.id, e.name, e.status FROM envelopes e WHERE e.subscription_id = $1 AND ${visible} ORDER BY e.last_modified_date DESC, e.id LIMIT ${DASHBOARD_LIST_SIZE}`,
      params,
    ),
    db.query<Record<string, unknown>>(
      `SELECT e.id, e.name, coalesce(e.send_date, e.created_date) AS send_date, coalesce(u.name, '') AS user_name, e.subscription_id
       FROM envelopes e LEFT JOIN users u ON u.id = e.owner_id AND u.subscription_id = e.subscription_id
       WHERE e.subscription_id = $1 AND ${todo} ORDER BY coalesce(e.send_date, e.created_date), e.id LIMIT ${DASHBOARD_LIST_SIZE}`,
      params,
    ),
    db.query<Record<string, unknown>>(
      `SELECT e.id, e.name,
              coalesce(a.action, 'Sent') AS action,
              coalesce(a.action_date, e.send_date, e.created_date) AS ts,
              coalesce(a.name, u.name, '') AS person
       FROM envelopes e
       LEFT JOIN users u ON u.id = e.owner_id AND u.subscription_id = e.subscription_id
       LEFT JOIN LATERAL (SELECT r.action, r.action_date, r.name FROM envelope_recipients r
                          WHERE r.envelope_id = e.id AND r.action <> '' AND r.action_date IS NOT NULL
                          ORDER BY r.action_date DESC, r.id LIMIT 1) a ON true
       WHERE e.subscription_id = $1 AND ${pending} ORDER BY ts DESC, e.id LIMIT ${DASHBOARD_LIST_SIZE}`,
      params,
    ),
  ]);
  const c = counts.rows[0] ?? {};
  return {
    todo: Number(c.todo ?? 0),
    pending: Number(c.pending ?? 0),
    inbox: Number(c.inbox ?? 0),
    expiring: Number(c.expiring ?? 0),
    completed: Number(c.completed ?? 0),
    recentEnvelopes: recent.rows.map((r) => ({ id: r.id as string, name: r.name as string, status: r.status as string })),
    oldestTodoEnvelopes: oldest.rows.map((r) => ({
      id: r.id as string,
      name: r.name as string,
      sendDate: iso(r.send_date as Date),
      userName: r.user_name as string,
      tid: r.subscription_id as string,
    })),
    latestPendingEnvelopes: latest.rows.map((r) => ({
      id: r.id as string,
      name: r.name as string,
      action: r.action as string,
      timestamp: iso(r.ts as Date),
      person: r.person as string,
    })),
  };
}
