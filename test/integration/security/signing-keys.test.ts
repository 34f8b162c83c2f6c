// The signing keys behind tokens and sealed values are read from the database at most once a minute per
// process; a token naming a key this process has not seen (added by another process) reads them again.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertSigningKey } from '../../../store/accounts.ts';
import { type Db, openDb, type Queryable } from '../../../store/db.ts';
import { migrate } from '../../../store/migrate.ts';
import { localSigningKey, signingKeys } from '../../../security/tokens.ts';

describe('signing keys', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-keys-'));
  let db: Db;
  beforeAll(async () => {
    db = await openDb({ dataDir: path.join(dir, 'db') });
    await migrate(db);
  });
  afterAll(async () => {
    await db?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('are read once for many uses, and again for a key made elsewhere', async () => {
    let reads = 0;
    const counting: Queryable = {
      query: (sql, params) => {
        if (/FROM signing_keys/.test(sql)) reads++;
        return db.query(sql, params);
      },
      exec: (sql) => db.exec(sql),
    };
    const local = await localSigningKey(db);
    for (let i = 0; i < 20; i++) expect((await signingKeys(counting)).map((k) => k.kid)).toEqual([local.kid]);
    expect(reads).toBe(1);
    // Another process adds a key: a token naming it finds it at once ...
    const other = { kid: 'key-from-another-process', alg: 'ES256', privateJwk: { kty: 'EC', d: 'AQAB' }, publicJwk: { kty: 'EC' } };
    await insertSigningKey(db, other);
    await new Promise((r) => setTimeout(r, 1_100));
    expect((await signingKeys(counting, other.kid)).map((k) => k.kid)).toContain(other.kid);
    expect(reads).toBe(2);
    // ... and an unknown key id cannot make every request read the table: at most once a second.
    await signingKeys(counting, 'no-such-key');
    await signingKeys(counting, 'no-such-key');
    expect(reads).toBe(2);
  });
});
