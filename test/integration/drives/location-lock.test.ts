// The lock the drives take around "look up, then create" (store/location-writes.ts withLocationLock): on
// PostgreSQL it excludes other processes (two database handles here, as two workers would have), a
// waiter is seen waiting in pg_locks until the holder is done, and a holder whose process dies releases it;
// on PGlite one process owns the database and callers queue up. Other keys never wait.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type Db, openDb, openPostgres } from '../../../store/db.ts';
import { advisoryKey, withLocationLock } from '../../../store/location-writes.ts';
import { createPgDatabase } from '../../support/stack.ts';

/** A critical section that stays open until `release()`; `entered` resolves once it runs. */
function section() {
  let entered!: () => void;
  let release!: () => void;
  const inside = new Promise<void>((r) => (entered = r));
  const gate = new Promise<void>((r) => (release = r));
  return { inside, release, run: async () => (entered(), await gate) };
}

describe('the location lock', () => {
  const dbs: Db[] = [];
  const dirs: string[] = [];
  afterAll(async () => {
    for (const db of dbs) await db.close().catch(() => undefined);
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it('PostgreSQL, two processes: the second waits in pg_locks until the first is done; another key does not wait', async () => {
    const url = await createPgDatabase();
    const a = await openPostgres(url);
    const b = await openPostgres(url);
    const observer = await openPostgres(url);
    dbs.push(a, b, observer);
    const key = 'DriveB conn-1 names:folder-1';
    const order: string[] = [];

    const first = section();
    const held = withLocationLock(a, key, async () => {
      order.push('a in');
      await first.run();
      order.push('a out');
    });
    await first.inside;
    const second = withLocationLock(b, key, async () => {
      order.push('b in');
    });
    // The second process is blocked on the advisory lock, in PostgreSQL.
    const [hi, lo] = (() => {
      const k = BigInt(advisoryKey(key));
      const u = BigInt.asUintN(64, k);
      return [Number(u >> 32n), Number(u & 0xffffffffn)];
    })();
    const waiting = async () =>
      (
        await observer.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND classid::bigint = $1 AND objid::bigint = $2`,
          [hi, lo],
        )
      ).rows[0]!.n;
    while ((await waiting()) === 0) await new Promise((r) => setImmediate(r));
    expect(order).toEqual(['a in']);
    // Another folder's lock is free meanwhile.
    await withLocationLock(b, 'DriveB conn-1 names:folder-2', async () => void order.push('other key'));
    first.release();
    await Promise.all([held, second]);
    expect(order).toEqual(['a in', 'other key', 'a out', 'b in']);
  });

  it('PostgreSQL: a holder whose process is killed releases the lock', async () => {
    const url = await createPgDatabase();
    const b = await openPostgres(url);
    dbs.push(b);
    const key = 'DriveB conn-2 folder:root';
    const root = path.resolve(import.meta.dirname, '../../..');
    // Another worker process takes the lock and is SIGKILLed while it holds it.
    const child = spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { openPostgres } from ${JSON.stringify(path.join(root, 'store/db.ts'))};
         import { withLocationLock } from ${JSON.stringify(path.join(root, 'store/location-writes.ts'))};
         const db = await openPostgres(process.env.LOCK_DB_URL);
         await withLocationLock(db, process.env.LOCK_KEY, () => { process.stdout.write('held\\n'); return new Promise(() => {}); });`,
      ],
      { env: { ...process.env, LOCK_DB_URL: url, LOCK_KEY: key }, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => d.toString().includes('held') && resolve());
      child.on('exit', (code) => reject(new Error(`the holder exited early (${code})`)));
    });
    const exited = new Promise((r) => child.on('exit', r));
    child.kill('SIGKILL');
    await exited;
    let entered = false;
    await withLocationLock(b, key, async () => void (entered = true));
    expect(entered).toBe(true);
  });

  it('PGlite: callers of one key run one after the other, others meanwhile', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lock-'));
    dirs.push(dir);
    const db = await openDb({ dataDir: dir });
    dbs.push(db);
    const order: string[] = [];
    const first = section();
    const held = withLocationLock(db, 'k', async () => {
      order.push('1 in');
      await first.run();
      order.push('1 out');
    });
    await first.inside;
    const second = withLocationLock(db, 'k', async () => void order.push('2 in'));
    const third = withLocationLock(db, 'k', async () => void order.push('3 in'));
    await withLocationLock(db, 'other', async () => void order.push('other'));
    // The database stays usable while a lock is held (no transaction is open on PGlite).
    expect((await db.query<{ one: number }>('SELECT 1 AS one')).rows[0]!.one).toBe(1);
    first.release();
    await Promise.all([held, second, third]);
    expect(order).toEqual(['1 in', 'other', '1 out', '2 in', '3 in']);
    // A failing holder releases the lock too.
    await expect(withLocationLock(db, 'k', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await withLocationLock(db, 'k', async () => 'next')).toBe('next');
  });
});
