// The service-authorization token of spec 5.2 (manage's X-Service-Authorization): a user who has no
// account at the identity provider but may use the subscription. Made and read exactly like the client
// token (security/client-token.ts): the claims signed by the service (JWS ES256 with the local signing key,
// typ docgen-service+jwt) and then encrypted (JWE dir + A256GCM, kid = the signing key) with a key derived
// by HKDF-SHA256 from that signing key, under its own label, so a client token is never accepted as a
// service token nor the other way round. Claims: sub (the user's id in this subscription, a UUID: it is
// recorded as the document's owner), email (required), full_name (optional), sid (the subscription), iat,
// exp. The same failure table as the client token (spec 5.3), with code X_SERVICE_AUTH_ERROR for the 400s.
import { ApiError } from '../core/errors.ts';
import type { StoredSigningKey } from '../store/accounts.ts';
import type { Db } from '../store/db.ts';
import { NestedTokenExpiredError, NestedTokenFormatError, NestedTokenSignatureError, nestedTokenKid, readNestedToken, sealNestedJws, signNestedJws } from './nested-token.ts';
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

export async function createServiceToken(db: Db, subscriptionId: string, claims: ServiceClaims, ttlSeconds: number): Promise<{ token: string; expiresAt: Date }> {
  if (!UUID.test(claims.sub)) throw new ApiError('VALIDATION_ERROR', 'sub must be a UUID: the id the service records as the user');
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
      throw new ApiError('UNAUTHORIZED', `the service authorization token expired at ${err.expiredAt.toISOString()}: make a new one with POST /common/service/token`);
    }
    if (err instanceof NestedTokenSignatureError) throw new ApiError('UNAUTHORIZED', 'the service authorization token is not signed by this service');
    throw err;
  }
  if (payload.sid !== opts.subscriptionId) throw new ApiError('UNAUTHORIZED', 'the service authorization token was issued to another subscription');
  const missing = REQUIRED_SERVICE_CLAIMS.filter((c) => typeof payload[c] !== 'string' || payload[c] === '');
  if (missing.length > 0) throw new ApiError('X_SERVICE_AUTH_ERROR', `the service authorization token lacks required claims: ${missing.join(', ')}`);
  if (!UUID.test(payload.sub as string)) throw new ApiError('X_SERVICE_AUTH_ERROR', 'the service authorization token\'s sub claim is not a UUID');
  const claims: ServiceClaims = { sub: (payload.sub as string).toLowerCase(), email: payload.email as string };
  if (typeof payload.full_name === 'string') claims.full_name = payload.full_name;
  return { claims, subscriptionId: opts.subscriptionId, expiresAt: new Date((payload.exp as number) * 1000) };
}
