// Sealed values (security/sealed.ts) on a real in-memory PGlite database: round trip, bound to the
// subscription, tamper-evident, and header variables only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isSealed, SealedValueError, seal, sealHeaderVariables, unseal, unsealHeaderVariables } from '../../security/sealed.ts';
import { type Db, openPglite } from '../../store/db.ts';
import { migrate } from '../../store/migrate.ts';

describe('sealed values', () => {
  let db: Db;
  beforeAll(async () => {
    db = await openPglite(undefined);
    await migrate(db);
  });
  afterAll(async () => {
    await db?.close();
  });

  it('round-trips for the subscription it was sealed for, and only for it', async () => {
    const sealed = await seal(db, 'sub-a', 'Bearer s3cret');
    expect(isSealed(sealed)).toBe(true);
    expect(sealed).not.toContain('s3cret');
    expect(await seal(db, 'sub-a', 'Bearer s3cret')).not.toBe(sealed); // a fresh nonce each time
    expect(await unseal(db, 'sub-a', sealed)).toBe('Bearer s3cret');
    await expect(unseal(db, 'sub-b', sealed)).rejects.toThrow(/another subscription/);
  });

  it('refuses a tampered or foreign value', async () => {
    const sealed = await seal(db, 'sub-a', 'Bearer s3cret');
    const parts = sealed.split('.');
    const cipher = parts[3] ?? '';
    parts[3] = (cipher[0] === 'A' ? 'B' : 'A') + cipher.slice(1);
    await expect(unseal(db, 'sub-a', parts.join('.'))).rejects.toBeInstanceOf(SealedValueError);
    await expect(unseal(db, 'sub-a', 'sealed:not-a-jwe')).rejects.toBeInstanceOf(SealedValueError);
    await expect(unseal(db, 'sub-a', 'Bearer s3cret')).rejects.toBeInstanceOf(SealedValueError);
  });

  it('seals header variables only; a caller value that looks sealed comes back as sent', async () => {
    const variables = [
      { name: 'Authorization', value: 'Bearer s3cret', type: 'header' },
      { name: 'id', value: 'c1', type: 'graphql' },
      { name: 'X-Odd', value: 'sealed:whatever', type: 'header' },
    ];
    const sealed = await sealHeaderVariables(db, 'sub-a', variables);
    expect(sealed[1]).toEqual(variables[1]);
    expect(isSealed(sealed[0]?.value)).toBe(true);
    expect(JSON.stringify(sealed)).not.toContain('s3cret');
    expect(await unsealHeaderVariables(db, 'sub-a', sealed)).toEqual(variables);
  });
});
