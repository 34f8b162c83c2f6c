// A PostgreSQL connection that drops (a failover, an operator's pg_terminate_backend, a proxy's idle
// timeout) fails the statement or transaction using it, never the process: idle pool clients and clients
// checked out for a transaction (the DriveB location lock holds one while it calls Drive) both lose their
// backend here, on a real PostgreSQL server, and the same handle goes on working.
import type pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { type Db, openPostgres } from '../../store/db.ts';
import { withLocationLock } from '../../store/location-writes.ts';
import { createPgDatabase } from '../support/stack.ts';

describe('a dropped PostgreSQL connection', () => {
  let db: Db;
  let admin: pg.Client;
  let database: string;
  const uncaught: unknown[] = [];
  const onUncaught = (err: unknown) => uncaught.push(err);

  beforeAll(async () => {
    const url = await createPgDatabase();
    database = new URL(url).pathname.slice(1);
    db = await openPostgres(url);
    const { default: postgres } = await import('pg');
    admin = new postgres.Client({ connectionString: inject('postgresUrl') });
    await admin.connect();
    // An error event nobody listens to is thrown from the socket's callback: it would end this process
    // (vitest reports it as an unhandled error); recorded here to name it in the assertion.
    process.on('uncaughtException', onUncaught);
  });
  beforeEach(() => {
    uncaught.length = 0;
  });
  afterAll(async () => {
    process.off('uncaughtException', onUncaught);
    await db?.close();
    await admin?.end();
  });

  /** Terminates every backend of the test's database but the admin's; resolves with how many. */
  async function terminateBackends(): Promise<number> {
    const r = await admin.query(
      'SELECT count(*)::int AS n FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()) t',
      [database],
    );
    return (r.rows[0] as { n: number }).n;
  }

  /** Lets the sockets deliver the server's goodbye (the terminated backends close their connections). */
  const settle = () => new Promise((r) => setTimeout(r, 300));

  it('an idle pool connection that loses its backend is replaced; the next query works', async () => {
    await Promise.all([db.query('SELECT pg_sleep(0.05)'), db.query('SELECT pg_sleep(0.05)')]);
    expect(await terminateBackends()).toBeGreaterThanOrEqual(1);
    await settle();
    expect(uncaught).toEqual([]);
    expect((await db.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  });

  it('a transaction whose connection is dropped between statements fails; the process and the pool go on', async () => {
    await db.exec('CREATE TABLE IF NOT EXISTS marks (n int)');
    const failed = db.transaction(async (tx) => {
      await tx.query('INSERT INTO marks VALUES (1)');
      // Held open without a statement in flight, as the location lock holds it during a Drive call.
      await terminateBackends();
      await settle();
      await tx.query('INSERT INTO marks VALUES (2)');
    });
    await expect(failed).rejects.toThrow();
    expect(uncaught).toEqual([]);
    // Nothing of the broken transaction was committed, and the handle works.
    expect((await db.query<{ n: number }>('SELECT count(*)::int AS n FROM marks')).rows).toEqual([{ n: 0 }]);
  });

  it('the location lock: a backend dropped while the holder calls out fails that holder only', async () => {
    const held = withLocationLock(db, 'driveB:conn:folder', async () => {
      // The "Drive call": no statement on the lock's connection meanwhile.
      await terminateBackends();
      await settle();
      return 'written';
    });
    // The callout itself finished; the transaction's COMMIT found the connection gone.
    await expect(held).rejects.toThrow();
    expect(uncaught).toEqual([]);
    // The lock is free again: the next holder gets it at once.
    await expect(withLocationLock(db, 'driveB:conn:folder', async () => 'next')).resolves.toBe('next');
  });
});
