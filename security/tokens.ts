// Bearer tokens. Embedded default: an ES256 key pair kept in the database, so every API process of a
// deployment verifies the same tokens. With JWT_JWKS_URL set, an identity provider's keys are used instead.
import { hkdfSync, randomUUID } from 'node:crypto';
import * as jose from 'jose';
import { insertSigningKey, listSigningKeys, type StoredSigningKey } from '../store/accounts.ts';
import type { Db, Queryable } from '../store/db.ts';

const LOCAL_ALG = 'ES256';

const derived = new Map<string, Uint8Array>();

/** A 32-byte key derived (HKDF-SHA256) from the private part of a signing key, so every process of a
 *  deployment derives the same keys and nothing new is stored. `salt` names the purpose family. Kept in
 *  memory once derived (at most 10 000 of them: then forgotten and derived again). */
export function deriveFromSigningKey(key: StoredSigningKey, salt: string, info: string): Uint8Array {
  const id = `${key.kid}\u0000${salt}\u0000${info}`;
  const known = derived.get(id);
  if (known) return known;
  const d = key.privateJwk.d;
  if (typeof d !== 'string') throw new Error(`signing key ${key.kid} has no private part`);
  const out = new Uint8Array(hkdfSync('sha256', Buffer.from(d, 'base64url'), salt, info, 32));
  if (derived.size >= 10_000) derived.clear();
  derived.set(id, out);
  return out;
}

const KEYS_MAX_AGE_MS = 60_000;
const keysOf = new WeakMap<Queryable, { at: number; keys: Promise<StoredSigningKey[]> }>();

/** The signing keys (newest first), read from the database at most once a minute per process: every
 *  token and sealed value of a request needs them. `kid`: a key this process has not seen yet (added by
 *  another process) makes it read them again at once (at most once a second). */
export async function signingKeys(db: Queryable, kid?: string): Promise<StoredSigningKey[]> {
  const now = Date.now();
  const cached = keysOf.get(db);
  if (cached && now - cached.at < KEYS_MAX_AGE_MS) {
    const keys = await cached.keys.catch(() => undefined);
    if (keys && (kid === undefined || keys.some((k) => k.kid === kid) || now - cached.at < 1_000)) return keys;
  }
  const fresh = { at: now, keys: listSigningKeys(db) };
  keysOf.set(db, fresh);
  try {
    return await fresh.keys;
  } catch (err) {
    if (keysOf.get(db) === fresh) keysOf.delete(db);
    throw err;
  }
}

const keySets = new WeakMap<StoredSigningKey[], ReturnType<typeof jose.createLocalJWKSet>>();

/** The public keys of `keys` as a JWK set for verification, made once per list signingKeys returns. */
export function publicKeySet(keys: StoredSigningKey[]): ReturnType<typeof jose.createLocalJWKSet> {
  let set = keySets.get(keys);
  if (!set) keySets.set(keys, (set = jose.createLocalJWKSet({ keys: keys.map((k) => k.publicJwk as jose.JWK) })));
  return set;
}

export async function localSigningKey(db: Db): Promise<StoredSigningKey> {
  const existing = (await signingKeys(db)).find((k) => k.alg === LOCAL_ALG);
  if (existing) return existing;
  const { privateKey, publicKey } = await jose.generateKeyPair(LOCAL_ALG, { extractable: true });
  const kid = randomUUID();
  await insertSigningKey(db, {
    kid,
    alg: LOCAL_ALG,
    privateJwk: { ...(await jose.exportJWK(privateKey)), kid, alg: LOCAL_ALG },
    publicJwk: { ...(await jose.exportJWK(publicKey)), kid, alg: LOCAL_ALG, use: 'sig' },
  });
  // Another process may have won the race; everyone uses the newest key.
  keysOf.delete(db);
  const again = (await signingKeys(db)).find((k) => k.alg === LOCAL_ALG);
  if (!again) throw new Error('signing key was not stored');
  return again;
}

export async function issueAccessToken(
  db: Db,
  config: Pick<TokenSettings, 'jwtIssuer' | 'jwtAudience'>,
  claims: { userId: string; subscriptionId: string; name?: string; email?: string },
  ttl = '30d',
): Promise<string> {
  const key = await localSigningKey(db);
  const privateKey = await jose.importJWK(key.privateJwk as jose.JWK, key.alg);
  return new jose.SignJWT({
    sid: claims.subscriptionId,
    ...(claims.name ? { name: claims.name } : {}),
    ...(claims.email ? { email: claims.email } : {}),
  })
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT' })
    .setSubject(claims.userId)
    .setIssuer(config.jwtIssuer)
    .setAudience(config.jwtAudience)
    .setIssuedAt()
    .setExpirationTime(ttl)
    .sign(privateKey);
}

export interface VerifiedToken {
  userId: string;
  subscriptionId?: string;
  /** The token's `exp`, in milliseconds since the epoch. */
  expiresAt?: number;
}

export type TokenVerifier = (token: string) => Promise<VerifiedToken>;

/** The bearer-token settings (config/env.ts JWT_*). */
export interface TokenSettings {
  jwtIssuer: string;
  jwtAudience: string;
  jwtJwksUrl?: string | undefined;
  jwtAlgorithms: string;
}

export async function createTokenVerifier(db: Db, config: TokenSettings): Promise<TokenVerifier> {
  const algorithms = config.jwtAlgorithms.split(',').map((a) => a.trim());
  let keys: jose.JWTVerifyGetKey;
  if (config.jwtJwksUrl) {
    keys = jose.createRemoteJWKSet(new URL(config.jwtJwksUrl));
  } else {
    await localSigningKey(db);
    // A key added by another process (rotation) is found without a restart: signingKeys reads again for a
    // kid it has not seen.
    keys = async (header, token) => publicKeySet(await signingKeys(db, header.kid))(header, token);
  }
  return async (token) => {
    const { payload } = await jose.jwtVerify(token, keys, {
      algorithms,
      issuer: config.jwtIssuer,
      audience: config.jwtAudience,
      requiredClaims: ['sub', 'exp'],
    });
    const out: VerifiedToken = { userId: String(payload.sub) };
    if (typeof payload.sid === 'string') out.subscriptionId = payload.sid;
    if (typeof payload.exp === 'number') out.expiresAt = payload.exp * 1000;
    return out;
  };
}
