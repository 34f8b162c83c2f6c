// Subscriptions, users, API keys and the local token-signing key.
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Queryable } from './db.ts';

export interface Subscription {
  id: string;
  name: string;
}
export interface User {
  id: string;
  subscriptionId: string;
  name: string;
  email: string;
}
export interface ApiKeyOwner {
  keyId: string;
  subscriptionId: string;
  userId: string;
}

const API_KEY_PREFIX = 'dgk_';

export function digestApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** Idempotent by name, so `docgen credentials --subscription other` always lands in the same tenant. */
export async function ensureSubscription(db: Queryable, name: string): Promise<Subscription> {
  await db.query('INSERT INTO subscriptions (id, name) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', [randomUUID(), name]);
  const r = await db.query<{ id: string; name: string }>('SELECT id, name FROM subscriptions WHERE name = $1', [name]);
  const row = r.rows[0];
  if (!row) throw new Error(`subscription ${name} vanished`);
  return row;
}

/** The first user of a subscription, created on demand (development credentials). */
export async function ensureFirstUser(db: Queryable, sub: Subscription): Promise<User> {
  const existing = await db.query<{ id: string; name: string; email: string }>(
    'SELECT id, name, email FROM users WHERE subscription_id = $1 ORDER BY created_date, id LIMIT 1',
    [sub.id],
  );
  const row = existing.rows[0];
  if (row) return { ...row, subscriptionId: sub.id };
  const user = { id: randomUUID(), subscriptionId: sub.id, name: `${sub.name} developer`, email: `dev@${sub.name}.local` };
  await db.query('INSERT INTO users (id, subscription_id, name, email) VALUES ($1, $2, $3, $4)', [user.id, sub.id, user.name, user.email]);
  return user;
}

/** Returns the plaintext key once; only its SHA-256 digest is stored. */
export async function createApiKey(db: Queryable, user: User): Promise<string> {
  const key = API_KEY_PREFIX + randomBytes(32).toString('base64url');
  await db.query('INSERT INTO api_keys (id, subscription_id, user_id, prefix, digest) VALUES ($1, $2, $3, $4, $5)', [
    randomUUID(),
    user.subscriptionId,
    user.id,
    key.slice(0, API_KEY_PREFIX.length + 6),
    digestApiKey(key),
  ]);
  return key;
}

export async function findApiKey(db: Queryable, key: string): Promise<ApiKeyOwner | undefined> {
  if (!key.startsWith(API_KEY_PREFIX) || key.length > 200) return undefined;
  const digest = digestApiKey(key);
  const r = await db.query<{ id: string; subscription_id: string; user_id: string; digest: string }>(
    'SELECT id, subscription_id, user_id, digest FROM api_keys WHERE digest = $1 AND revoked_date IS NULL',
    [digest],
  );
  const row = r.rows[0];
  // The index lookup finds the row; the constant-time comparison is what decides.
  if (!row || !timingSafeEqual(Buffer.from(row.digest, 'hex'), Buffer.from(digest, 'hex'))) return undefined;
  return { keyId: row.id, subscriptionId: row.subscription_id, userId: row.user_id };
}

export async function findUser(db: Queryable, subscriptionId: string, userId: string): Promise<User | undefined> {
  const r = await db.query<{ id: string; name: string; email: string }>(
    'SELECT id, name, email FROM users WHERE id = $1 AND subscription_id = $2',
    [userId, subscriptionId],
  );
  const row = r.rows[0];
  return row ? { ...row, subscriptionId } : undefined;
}

/**
 * Makes `user.id` a user of the subscription unless it is one already (manage's service-token users, who
 * have no API key or bearer token of their own). The id of another subscription's user is never taken
 * over: the answer is then false, and nothing is written.
 */
export async function registerUser(db: Queryable, user: User): Promise<boolean> {
  await db.query('INSERT INTO users (id, subscription_id, name, email) VALUES ($1, $2, $3, $4) ON CONFLICT (id) DO NOTHING', [
    user.id,
    user.subscriptionId,
    user.name,
    user.email,
  ]);
  return (await findUser(db, user.subscriptionId, user.id)) !== undefined;
}

export interface StoredSigningKey {
  kid: string;
  alg: string;
  privateJwk: Record<string, unknown>;
  publicJwk: Record<string, unknown>;
}

export async function listSigningKeys(db: Queryable): Promise<StoredSigningKey[]> {
  const r = await db.query<{ kid: string; alg: string; private_jwk: unknown; public_jwk: unknown }>(
    'SELECT kid, alg, private_jwk, public_jwk FROM signing_keys ORDER BY created_date DESC',
  );
  return r.rows.map((row) => ({
    kid: row.kid,
    alg: row.alg,
    privateJwk: parseJson(row.private_jwk),
    publicJwk: parseJson(row.public_jwk),
  }));
}

export async function insertSigningKey(db: Queryable, key: StoredSigningKey): Promise<void> {
  await db.query('INSERT INTO signing_keys (kid, alg, private_jwk, public_jwk) VALUES ($1, $2, $3, $4) ON CONFLICT (kid) DO NOTHING', [
    key.kid,
    key.alg,
    JSON.stringify(key.privateJwk),
    JSON.stringify(key.publicJwk),
  ]);
}

function parseJson(v: unknown): Record<string, unknown> {
  return (typeof v === 'string' ? JSON.parse(v) : v) as Record<string, unknown>;
}
