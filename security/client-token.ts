// The client-authorization token of spec 5.3: the caller's claims (where and how to call it back) signed
// by the service (JWS ES256 with the local signing key, typ docgen-client+jwt) and then encrypted with
// authenticated encryption (JWE dir + A256GCM). The encryption key and the per-subscription webhook
// secrets are derived with HKDF-SHA256 from the private part of that signing key, which lives in the
// database: every API and worker process of a deployment derives the same keys and nothing new is stored.
// The JWE header names the signing key (kid), so tokens stay readable after a new key is added.
import { ApiError } from '../core/errors.ts';
import type { StoredSigningKey } from '../store/accounts.ts';
import type { Db } from '../store/db.ts';
import { webhookSecret } from './webhooks.ts';
import {
  NestedTokenExpiredError,
  NestedTokenFormatError,
  NestedTokenSignatureError,
  nestedTokenKid,
  readNestedToken,
  sealNestedJws,
  signNestedJws,
} from './nested-token.ts';
import { deriveFromSigningKey, localSigningKey, signingKeys } from './tokens.ts';

export const REQUIRED_CLIENT_CLAIMS = ['sub', 'iss', 'dest'] as const;
export const OPTIONAL_CLIENT_CLAIMS = ['oid', 'client_id', 'full_name', 'email', 'locale', 'zoneinfo'] as const;

export interface ClientClaims {
  sub: string;
  iss: string;
  dest: string;
  oid?: string;
  client_id?: string;
  full_name?: string;
  email?: string;
  locale?: string;
  zoneinfo?: string;
}

export interface ClientToken {
  claims: ClientClaims;
  /** iss joined with dest. */
  callbackUrl: string;
  /** The signing key the token was made with; the webhook secret is derived from it. */
  kid: string;
  subscriptionId: string;
  expiresAt: Date;
}

const TYP = 'docgen-client+jwt';
const INVALID_FORMAT = 'Invalid format';

/** `iss` joined with `dest` by concatenation (so a base path in iss is kept), as an http(s) URL of the
 *  origin named by iss. Throws with a caller-readable message. */
export function callbackUrl(iss: string, dest: string): string {
  let base: URL;
  try {
    base = new URL(iss);
  } catch {
    throw new Error('iss must be an absolute http or https URL');
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new Error('iss must be an http or https URL');
  if (base.username || base.password || base.search || base.hash) throw new Error('iss must not carry credentials, a query or a fragment');
  if (/^[a-z][a-z0-9+.-]*:|^\/\//i.test(dest)) throw new Error('dest must be a route (a path), not a URL');
  const joined = `${base.origin}${base.pathname.replace(/\/+$/, '')}/${dest.replace(/^\/+/, '')}`;
  let url: URL;
  try {
    url = new URL(joined);
  } catch {
    throw new Error('iss joined with dest is not a URL');
  }
  if (url.origin !== base.origin) throw new Error('dest must stay on the origin of iss');
  return url.toString();
}

const derive = (key: StoredSigningKey, info: string) => deriveFromSigningKey(key, 'docgen client token', info);

const KIND = { typ: TYP, label: 'docgen client token' };

/** The secret that signs the callbacks of tokens made with this key for this subscription (`whsec_...`). */
export function webhookSecretFor(key: StoredSigningKey, subscriptionId: string): string {
  return webhookSecret(derive(key, `webhook ${subscriptionId}`));
}

/** Encrypts an already signed inner token with the service key (exported for tests of the 5.3 table). */
export function sealClientJws(key: StoredSigningKey, jws: string): Promise<string> {
  return sealNestedJws(KIND, key, jws);
}

export async function createClientToken(
  db: Db,
  subscriptionId: string,
  claims: ClientClaims,
  ttlSeconds: number,
): Promise<{ token: string; webhookSecret: string; expiresAt: Date }> {
  callbackUrl(claims.iss, claims.dest);
  const key = await localSigningKey(db);
  const now = Math.floor(Date.now() / 1000);
  const payload: Record<string, unknown> = { sid: subscriptionId };
  for (const name of [...REQUIRED_CLIENT_CLAIMS, ...OPTIONAL_CLIENT_CLAIMS]) {
    if (claims[name] !== undefined) payload[name] = claims[name];
  }
  const jws = await signNestedJws(KIND, key, { ...payload, iat: now, exp: now + ttlSeconds });
  return {
    token: await sealClientJws(key, jws),
    webhookSecret: webhookSecretFor(key, subscriptionId),
    expiresAt: new Date((now + ttlSeconds) * 1000),
  };
}

/**
 * Reads an X-Client-Authorization value, mapping each failure to the row of the 5.3 table:
 * absent -> 400 X_CLIENT_AUTH_ERROR; not decryptable (wrong key, tampering, bad base64) -> 400
 * X_CLIENT_AUTH_ERROR "Invalid format"; unsigned, wrongly signed or expired -> 401; required claim missing
 * -> 400 X_CLIENT_AUTH_ERROR naming the claims. A token of another subscription is a 401.
 * `ignoreExpiry` is for the callback retries of a request whose token was valid when it was accepted.
 */
export async function readClientToken(
  db: Db,
  value: string | undefined,
  opts: { subscriptionId: string; ignoreExpiry?: boolean },
): Promise<ClientToken> {
  if (value === undefined || value.trim() === '') {
    throw new ApiError('X_CLIENT_AUTH_ERROR', 'the X-Client-Authorization header is missing (it is required for async operations)');
  }
  let payload: Record<string, unknown>;
  let key: StoredSigningKey;
  try {
    ({ payload, key } = await readNestedToken(
      KIND,
      await signingKeys(db, nestedTokenKid(value)),
      value,
      opts.ignoreExpiry ? { ignoreExpiry: true } : {},
    ));
  } catch (err) {
    if (err instanceof NestedTokenFormatError) throw new ApiError('X_CLIENT_AUTH_ERROR', INVALID_FORMAT);
    if (err instanceof NestedTokenExpiredError) {
      throw new ApiError(
        'UNAUTHORIZED',
        `the client authorization token expired at ${err.expiredAt.toISOString()}: make a new one with POST /common/client/token`,
      );
    }
    if (err instanceof NestedTokenSignatureError)
      throw new ApiError('UNAUTHORIZED', 'the client authorization token is not signed by this service');
    throw err;
  }
  if (payload.sid !== opts.subscriptionId) {
    throw new ApiError('UNAUTHORIZED', 'the client authorization token was issued to another subscription');
  }
  const missing = REQUIRED_CLIENT_CLAIMS.filter((c) => typeof payload[c] !== 'string' || payload[c] === '');
  if (missing.length > 0) {
    throw new ApiError('X_CLIENT_AUTH_ERROR', `the client authorization token lacks required claims: ${missing.join(', ')}`);
  }
  const claims = {} as Record<string, string>;
  for (const name of [...REQUIRED_CLIENT_CLAIMS, ...OPTIONAL_CLIENT_CLAIMS]) {
    if (typeof payload[name] === 'string') claims[name] = payload[name];
  }
  const c = claims as unknown as ClientClaims;
  let url: string;
  try {
    url = callbackUrl(c.iss, c.dest);
  } catch (err) {
    throw new ApiError('X_CLIENT_AUTH_ERROR', `the client authorization token has no usable callback: ${(err as Error).message}`);
  }
  return {
    claims: c,
    callbackUrl: url,
    kid: key.kid,
    subscriptionId: opts.subscriptionId,
    expiresAt: new Date((payload.exp as number) * 1000),
  };
}

/** The key a token was made with, for deriving its webhook secret in the worker. */
export async function signingKeyById(db: Db, kid: string): Promise<StoredSigningKey | undefined> {
  return (await signingKeys(db, kid)).find((k) => k.kid === kid);
}
