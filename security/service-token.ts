// The service-authorization token of spec 5.2 (manage's X-Service-Authorization): a user who has no
// account at the identity provider but may use the subscription. Made and read exactly like the client
// token (security/client-token.ts): the claims signed by the service (JWS ES256 with the local signing key,
// typ docgen-service+jwt) and then encrypted (JWE dir + A256GCM, kid = the signing key) with a key derived
// by HKDF-SHA256 from that signing key, under its own label, so a client token is never accepted as a
// service token nor the other way round. Claims: sub (the user's id in this subscription, a UUID: it is
// recorded as the document's owner), email (required), full_name (optional), sid (the subscription), iat,
// exp. The same failure table as the client token (spec 5.3), with code X_SERVICE_AUTH_ERROR for the 400s.
import { ApiError } from '../core/errors.ts';
import { findUser, registerUser, type StoredSigningKey } from '../store/accounts.ts';
import type { Db } from '../store/db.ts';
import {
  NestedTokenExpiredError,
  NestedTokenFormatError,
  NestedTokenSignatureError,
  nestedTokenKid,
  readNestedToken,
  sealNestedJws,
  signNestedJws,
} from './nested-token.ts';
import { localSigningKey, signingKeys } from './tokens.ts';

export const REQUIRED_SERVICE_CLAIMS = ['sub', 'email'] as const;
export const OPTIONAL_SERVICE_CLAIMS = ['full_name'] as const;

export interface ServiceClaims {
  sub: string;
  email: string;
  full_name?: string;
}

export interface ServiceToken {
  claims: ServiceClaims;
  subscriptionId: string;
  expiresAt: Date;
}

const TYP = 'docgen-service+jwt';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const KIND = { typ: TYP, label: 'docgen service token' };

/** Encrypts an already signed inner token with the service key (exported for tests of the 5.3 table). */
export function sealServiceJws(key: StoredSigningKey, jws: string): Promise<string> {
  return sealNestedJws(KIND, key, jws);
}

/** Signs a payload as a service token's inner JWS (exported for tests: unsigned, expired, missing claims). */
export function signServiceJws(key: StoredSigningKey, payload: Record<string, unknown>): Promise<string> {
  return signNestedJws(KIND, key, payload);
}

/** An e-mail address as manage's X-Email header must be one (name@domain.tld, at most 320 characters). */
export function isEmailAddress(value: string): boolean {
  return value.length <= 320 && /^[^\s@<>(),;:"]+@[^\s@<>(),;:"]+\.[^\s@<>(),;:"]+$/.test(value);
}

/** The nil and max UUIDs name nobody. */
const RESERVED_UUIDS = new Set(['00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-ffff-ffff-ffffffffffff']);

/**
 * Makes a service token for a user of the subscription. `sub` is the user's id: known to the subscription
 * already, or registered as its user by this call (the subscription's backend vouches for the user with
 * its own credentials), so later tokens and every manage name the same user. The id of another
 * subscription's user and the nil UUID are refused (400 naming sub), as is an `email` that is not an
 * e-mail address.
 */
export async function createServiceToken(
  db: Db,
  subscriptionId: string,
  claims: ServiceClaims,
  ttlSeconds: number,
): Promise<{ token: string; expiresAt: Date }> {
  if (!UUID.test(claims.sub)) throw new ApiError('VALIDATION_ERROR', 'sub must be a UUID: the id the service records as the user');
  const sub = claims.sub.toLowerCase();
  if (RESERVED_UUIDS.has(sub)) throw new ApiError('VALIDATION_ERROR', `sub ${sub} names no user: give the user's own id`);
  if (!isEmailAddress(claims.email.trim())) throw new ApiError('VALIDATION_ERROR', 'email must be an e-mail address (name@domain)');
  const name = claims.full_name?.trim() || claims.email.trim();
  if (!(await registerUser(db, { id: sub, subscriptionId, name, email: claims.email.trim() }))) {
    throw new ApiError(
      'VALIDATION_ERROR',
      `sub ${sub} cannot be a user of this subscription: give the id of one of its users, or a new UUID of your own`,
    );
  }
  claims = { ...claims, sub, email: claims.email.trim() };
  const key = await localSigningKey(db);
  const now = Math.floor(Date.now() / 1000);
  const payload: Record<string, unknown> = { sid: subscriptionId, iat: now, exp: now + ttlSeconds };
  for (const name of [...REQUIRED_SERVICE_CLAIMS, ...OPTIONAL_SERVICE_CLAIMS]) {
    if (claims[name] !== undefined) payload[name] = claims[name];
  }
  return { token: await sealServiceJws(key, await signServiceJws(key, payload)), expiresAt: new Date((now + ttlSeconds) * 1000) };
}

/**
 * Reads an X-Service-Authorization value, with the client token's failure table (spec 5.3):
 * not decryptable (wrong key, tampering, bad base64, a client token) -> 400 X_SERVICE_AUTH_ERROR
 * "Invalid format"; unsigned, wrongly signed or expired -> 401; a token of another subscription -> 401;
 * a required claim missing (or sub not a UUID) -> 400 X_SERVICE_AUTH_ERROR naming the claims.
 */
export async function readServiceToken(db: Db, value: string, opts: { subscriptionId: string }): Promise<ServiceToken> {
  let payload: Record<string, unknown>;
  try {
    ({ payload } = await readNestedToken(KIND, await signingKeys(db, nestedTokenKid(value)), value));
  } catch (err) {
    if (err instanceof NestedTokenFormatError) throw new ApiError('X_SERVICE_AUTH_ERROR', 'Invalid format');
    if (err instanceof NestedTokenExpiredError) {
      throw new ApiError(
        'UNAUTHORIZED',
        `the service authorization token expired at ${err.expiredAt.toISOString()}: make a new one with POST /common/service/token`,
      );
    }
    if (err instanceof NestedTokenSignatureError)
      throw new ApiError('UNAUTHORIZED', 'the service authorization token is not signed by this service');
    throw err;
  }
  if (payload.sid !== opts.subscriptionId)
    throw new ApiError('UNAUTHORIZED', 'the service authorization token was issued to another subscription');
  const missing = REQUIRED_SERVICE_CLAIMS.filter((c) => typeof payload[c] !== 'string' || payload[c] === '');
  if (missing.length > 0)
    throw new ApiError('X_SERVICE_AUTH_ERROR', `the service authorization token lacks required claims: ${missing.join(', ')}`);
  if (!UUID.test(payload.sub as string))
    throw new ApiError('X_SERVICE_AUTH_ERROR', "the service authorization token's sub claim is not a UUID");
  const claims: ServiceClaims = { sub: (payload.sub as string).toLowerCase(), email: payload.email as string };
  if (typeof payload.full_name === 'string') claims.full_name = payload.full_name;
  // Tokens name users of their subscription (registered when the token was made); one that does not (made
  // before that rule, or for a user since removed) acts for nobody.
  if (!(await findUser(db, opts.subscriptionId, claims.sub)))
    throw new ApiError('UNAUTHORIZED', 'the service authorization token names a user unknown to this subscription');
  return { claims, subscriptionId: opts.subscriptionId, expiresAt: new Date((payload.exp as number) * 1000) };
}
