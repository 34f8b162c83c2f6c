import type { Db } from './db.ts';
import { migrations } from './migrations/index.ts';

/** Applies pending migrations in order; returns the versions applied now. Safe to run from several processes
 *  against PostgreSQL: an advisory lock serialises them. */
export async function migrate(db: Db): Promise<number[]> {
  // Under the lock too: concurrent CREATE TABLE IF NOT EXISTS on PostgreSQL can fail with a duplicate
  // pg_type row when several processes start on a fresh database at once.
  await db.transaction(async (tx) => {
    if (db.kind === 'postgres') await tx.query('SELECT pg_advisory_xact_lock(7363127)');
    await tx.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY, name text NOT NULL, applied_date timestamptz NOT NULL DEFAULT now())`);
  });
  const applied: number[] = [];
  for (const m of migrations) {
    const done = await db.transaction(async (tx) => {
      if (db.kind === 'postgres') await tx.query('SELECT pg_advisory_xact_lock(7363127)');
      const seen = await tx.query('SELECT 1 FROM schema_migrations WHERE version = $1', [m.version]);
      if (seen.rows.length > 0) return false;
      await tx.exec(m.sql);
      await tx.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
      return true;
    });
    if (done) applied.push(m.version);
  }
  return applied;
}
