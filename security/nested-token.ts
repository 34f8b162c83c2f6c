// The construction shared by the client token (spec 5.3) and the service token (spec 5.2): claims signed by
// the service (JWS ES256 with the local signing key, a `typ` per kind of token) and then encrypted (JWE dir +
// A256GCM, kid = the signing key) with a key derived by HKDF-SHA256 from that signing key under a label per
// kind, so one kind of token is never accepted as the other. Each kind maps these failures to its own row of
// the 5.3 table: NestedTokenFormatError (not decryptable) and NestedTokenSignatureError (unsigned, wrongly
// signed, another kind), of which NestedTokenExpiredError (signed by us, but expired) says when it expired.
import * as jose from 'jose';
import type { StoredSigningKey } from '../store/accounts.ts';
import { deriveFromSigningKey, publicKeySet } from './tokens.ts';

export interface NestedTokenKind {
  /** The JWS `typ` header. */
  typ: string;
  /** The HKDF label of the encryption key. */
  label: string;
}

export class NestedTokenFormatError extends Error {}
export class NestedTokenSignatureError extends Error {}
/** Signed by this service, of the right kind, but past its `exp` (the same 401 row of 5.3, said plainly). */
export class NestedTokenExpiredError extends NestedTokenSignatureError {
  readonly expiredAt: Date;
  constructor(exp: number) {
    super('expired');
    this.expiredAt = new Date(exp * 1000);
  }
}

const encryptionKey = (kind: NestedTokenKind, key: StoredSigningKey) => deriveFromSigningKey(key, kind.label, 'jwe A256GCM');

export async function signNestedJws(kind: NestedTokenKind, key: StoredSigningKey, payload: Record<string, unknown>): Promise<string> {
  return new jose.SignJWT(payload)
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: kind.typ })
    .sign(await jose.importJWK(key.privateJwk as jose.JWK, key.alg));
}

export async function sealNestedJws(kind: NestedTokenKind, key: StoredSigningKey, jws: string): Promise<string> {
  return new jose.CompactEncrypt(new TextEncoder().encode(jws))
    .setProtectedHeader({ alg: 'dir', enc: 'A256GCM', kid: key.kid, cty: 'JWT' })
    .encrypt(encryptionKey(kind, key));
}

/** The key id a token names (its JWE header), to fetch the keys it needs; undefined when unreadable. */
export function nestedTokenKid(value: string): string | undefined {
  try {
    const kid = jose.decodeProtectedHeader(value.trim()).kid;
    return typeof kid === 'string' ? kid : undefined;
  } catch {
    return undefined;
  }
}

/** Decrypts and verifies a token; the payload and the signing key it was encrypted with. */
export async function readNestedToken(
  kind: NestedTokenKind,
  keys: StoredSigningKey[],
  value: string,
  opts: { ignoreExpiry?: boolean } = {},
): Promise<{ payload: Record<string, unknown>; key: StoredSigningKey }> {
  let jws: string;
  let key: StoredSigningKey | undefined;
  try {
    const { plaintext, protectedHeader } = await jose.compactDecrypt(
      value.trim(),
      async (header) => {
        key = keys.find((k) => k.kid === header.kid);
        if (!key) throw new Error('unknown key');
        return encryptionKey(kind, key);
      },
      { keyManagementAlgorithms: ['dir'], contentEncryptionAlgorithms: ['A256GCM'] },
    );
    if (protectedHeader.cty !== 'JWT') throw new Error('not a nested JWT');
    jws = new TextDecoder('utf-8', { fatal: true }).decode(plaintext);
  } catch (err) {
    throw new NestedTokenFormatError((err as Error).message);
  }
  try {
    const verified = await jose.compactVerify(jws, publicKeySet(keys), { algorithms: ['ES256'] });
    if (verified.protectedHeader.typ !== kind.typ) throw new Error(`not a ${kind.typ}`);
    const payload = JSON.parse(new TextDecoder().decode(verified.payload)) as Record<string, unknown>;
    if (typeof payload.exp !== 'number') throw new Error('no expiry');
    if (!opts.ignoreExpiry && payload.exp <= Date.now() / 1000) throw new NestedTokenExpiredError(payload.exp);
    return { payload, key: key! };
  } catch (err) {
    if (err instanceof NestedTokenExpiredError) throw err;
    throw new NestedTokenSignatureError((err as Error).message);
  }
}
