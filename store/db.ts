// One SQL dialect (PostgreSQL) for both backends: PGlite in-process by default, a real server through `pg`
// when DATABASE_URL is set. Repositories only see this interface.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

export interface QueryResult<T> {
  rows: T[];
}

export interface Queryable {
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<QueryResult<T>>;
  /** Several statements, no parameters (migrations). */
  exec(sql: string): Promise<void>;
}

export interface Db extends Queryable {
  readonly kind: 'pglite' | 'postgres';
  /** Runs `fn` in one transaction; a throw rolls everything back. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** `sharedBuffersMb`: PostgreSQL's shared_buffers (PGLITE_SHARED_BUFFERS_MB); PGlite's default (128 MB) when unset. */
export async function openPglite(dir: string | undefined, opts: { sharedBuffersMb?: number | undefined } = {}): Promise<Db> {
  const { PGlite, parse, protocol } = await import('@electric-sql/pglite');
  if (dir) fs.mkdirSync(path.dirname(dir), { recursive: true });
  const options = opts.sharedBuffersMb
    ? { startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${opts.sharedBuffersMb}MB`] }
    : {};
  const pg = dir ? await PGlite.create(dir, options) : await PGlite.create(options);
  // No plan is reused for other parameters, should a statement ever be kept prepared: PGlite never gathers
  // statistics, and with the generic plan PostgreSQL chose for a kept statement of a batch's flush, its time
  // per row grew with the tables (0.7 to 2.5 ms over 40,000 rows; planned each time, 0.8 to 1.0 ms).
  await pg.exec('SET plan_cache_mode = force_custom_plan');
  const { serialize } = protocol;
  // A parameter as `pg` sends it to a server (pg/lib/utils.js, which has no types of its own): null, text,
  // or the bytes of a Buffer.
  const { prepareValue } = createRequire(import.meta.url)('pg/lib/utils.js') as {
    prepareValue: (value: unknown) => string | Buffer | null;
  };
  /** One statement as one protocol message (parse, bind, describe, execute, sync), as `pg` sends it to a
   *  server: PGlite's own query() enters the database six times per statement (it first asks the
   *  parameters' types to pick their serializers), a fifth of a small statement's CPU in a tight loop
   *  (bench/store-statements.ts). Parameters go as `pg` sends them (prepareValue), typed by PostgreSQL from
   *  their use, so both backends see the same values; rows are parsed by PGlite's own parsers. Called under
   *  PGlite's query lock; a failed statement throws PostgreSQL's error (DatabaseError: code, message) after
   *  the sync. */
  async function statement<T>(sql: string, params: unknown[]): Promise<QueryResult<T>> {
    const message = Buffer.concat([
      serialize.parse({ text: sql, types: [] }),
      serialize.bind({ values: params.map((p) => prepareValue(p)) }),
      serialize.describe({ type: 'P' }),
      serialize.execute({}),
      serialize.sync(),
    ]);
    const messages = await pg.execProtocolStream(message, { syncToFs: false });
    const [result] = parse.parseResults(messages, pg.parsers);
    return { rows: (result?.rows ?? []) as T[] };
  }
  return {
    kind: 'pglite',
    async query<T>(sql: string, params: unknown[] = []) {
      await pg._checkReady();
      // As PGlite's query(): never inside another caller's open transaction; its files synced after.
      const r = await pg._runExclusiveTransaction(() => pg._runExclusiveQuery(() => statement<T>(sql, params)));
      await pg.syncToFs();
      return r;
    },
    async exec(sql: string) {
      await pg.exec(sql);
    },
    async transaction<T>(fn: (tx: Queryable) => Promise<T>) {
      return pg.transaction(async (tx) =>
        fn({
          async query<R>(sql: string, params: unknown[] = []) {
            if (tx.closed) throw new Error('the transaction is closed');
            return pg._runExclusiveQuery(() => statement<R>(sql, params));
          },
          async exec(sql: string) {
            await tx.exec(sql);
          },
        }),
      );
    },
    async close() {
      await pg.close();
    },
  };
}

export async function openPostgres(connectionString: string): Promise<Db> {
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({ connectionString, max: 10 });
  // An idle client whose connection drops (the server restarted, a failover, pg_terminate_backend, a proxy's
  // idle timeout) emits 'error' through the pool, which has already removed it: without a listener the
  // event would end the process. The next query opens a fresh connection.
  pool.on('error', () => undefined);
  // Fail at start-up, not on the first request, when the server is unreachable.
  const probe = await pool.connect();
  probe.release();
  return {
    kind: 'postgres',
    async query<T>(sql: string, params: unknown[] = []) {
      const r = await pool.query(sql, params);
      return { rows: r.rows as T[] };
    },
    async exec(sql: string) {
      await pool.query(sql);
    },
    async transaction<T>(fn: (tx: Queryable) => Promise<T>) {
      const client = await pool.connect();
      // A checked-out client has no listener of its own: a connection dropped while the transaction is open
      // and no statement runs (the location lock holds one during a drive's calls) emits 'error' here. It
      // is kept to fail the transaction's next statement (which fails anyway on the dead connection), and
      // the client is discarded instead of going back to the pool.
      let lost: Error | undefined;
      const onError = (err: Error) => (lost ??= err);
      client.on('error', onError);
      try {
        await client.query('BEGIN');
        const out = await fn({
          async query<R>(sql: string, params: unknown[] = []) {
            const r = await client.query(sql, params);
            return { rows: r.rows as R[] };
          },
          async exec(sql: string) {
            await client.query(sql);
          },
        });
        if (lost) throw lost;
        await client.query('COMMIT');
        return out;
      } catch (err) {
        if (!lost) await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      } finally {
        client.off('error', onError);
        // release(err) destroys the client: a connection that failed never serves another caller.
        client.release(lost ?? undefined);
      }
    },
    async close() {
      await pool.end();
    },
  };
}

/** DATABASE_URL wins; otherwise an embedded PGlite database under the data directory (or in memory). */
export async function openDb(opts: {
  databaseUrl?: string | undefined;
  dataDir?: string | undefined;
  pgliteSharedBuffersMb?: number | undefined;
}): Promise<Db> {
  if (opts.databaseUrl) return openPostgres(opts.databaseUrl);
  return openPglite(opts.dataDir ? path.join(opts.dataDir, 'db') : undefined, { sharedBuffersMb: opts.pgliteSharedBuffersMb });
}
