// Secrets a request hands to a workflow (the `header`-type GraphQL variables: credentials for the data
// endpoint) are sealed by the API before the workflow starts and opened only inside the activity that
// uses them, so the workflow input, its history and the Temporal UI show `sealed:...`, never the secret.
// JWE dir + A256GCM with a key derived (HKDF-SHA256) from the service signing key, like the client token;
// the subscription is bound in the protected header, so one tenant's sealed value cannot be replayed by
// another.
import * as jose from 'jose';
import type { StoredSigningKey } from '../store/accounts.ts';
import type { Db } from '../store/db.ts';
import { nestedTokenKid } from './nested-token.ts';
import { deriveFromSigningKey, localSigningKey, signingKeys } from './tokens.ts';

const PREFIX = 'sealed:';

const sealingKey = (key: StoredSigningKey) => deriveFromSigningKey(key, 'docgen sealed value', 'jwe A256GCM');

export function isSealed(value: unknown): value is string {
  return typeof value === 'string' && value.startsWith(PREFIX);
}

export async function seal(db: Db, subscriptionId: string, value: string): Promise<string> {
  return sealWith(await localSigningKey(db), subscriptionId, value);
}

async function sealWith(key: StoredSigningKey, subscriptionId: string, value: string): Promise<string> {
  const jwe = await new jose.CompactEncrypt(new TextEncoder().encode(value))
    .setProtectedHeader({ alg: 'dir', enc: 'A256GCM', kid: key.kid, sid: subscriptionId })
    .encrypt(sealingKey(key));
  return `${PREFIX}${jwe}`;
}

export class SealedValueError extends Error {}

/** The signing key a sealed value was made with (its JWE header), so a key added by another process is found. */
const kidOf = (sealed: string) => (isSealed(sealed) ? nestedTokenKid(sealed.slice(PREFIX.length)) : undefined);

export async function unseal(db: Db, subscriptionId: string, sealed: string): Promise<string> {
  return openWith(await signingKeys(db, kidOf(sealed)), subscriptionId, sealed);
}

async function openWith(keys: StoredSigningKey[], subscriptionId: string, sealed: string): Promise<string> {
  if (!isSealed(sealed)) throw new SealedValueError('not a sealed value');
  try {
    const { plaintext, protectedHeader } = await jose.compactDecrypt(
      sealed.slice(PREFIX.length),
      (header) => {
        const key = keys.find((k) => k.kid === header.kid);
        if (!key) throw new Error('unknown key');
        return sealingKey(key);
      },
      { keyManagementAlgorithms: ['dir'], contentEncryptionAlgorithms: ['A256GCM'] },
    );
    if (protectedHeader.sid !== subscriptionId) throw new Error('sealed for another subscription');
    return new TextDecoder('utf-8', { fatal: true }).decode(plaintext);
  } catch (err) {
    throw new SealedValueError(`a sealed value could not be opened: ${(err as Error).message}`);
  }
}

/** Seals the value of every `header` variable (the API, before the workflow starts). */
export async function sealHeaderVariables<V extends { type: string; value: unknown }>(
  db: Db,
  subscriptionId: string,
  variables: V[],
): Promise<V[]> {
  const secret = (v: V) => v.type === 'header' && typeof v.value === 'string';
  if (!variables.some(secret)) return variables;
  const key = await localSigningKey(db);
  return Promise.all(variables.map(async (v) => (secret(v) ? { ...v, value: await sealWith(key, subscriptionId, v.value as string) } : v)));
}

/** Opens sealed `header` variables (the activity that calls the endpoint). The API seals every header
 *  value, so a caller's own value that happens to start with `sealed:` comes back exactly as sent. */
export async function unsealHeaderVariables<V extends { type: string; value: unknown }>(
  db: Db,
  subscriptionId: string,
  variables: V[],
): Promise<V[]> {
  const sealed = (v: V) => v.type === 'header' && isSealed(v.value);
  if (!variables.some(sealed)) return variables;
  const keys = await signingKeys(db, kidOf(String(variables.find(sealed)?.value)));
  return Promise.all(
    variables.map(async (v) => (sealed(v) ? { ...v, value: await openWith(keys, subscriptionId, v.value as string) } : v)),
  );
}
