// One SQL dialect (PostgreSQL) for both backends: PGlite in-process by default, a real server through `pg`
// when DATABASE_URL is set. Repositories only see this interface.
import fs from 'node:fs';
import path from 'node:path';
import type { PGlite } from '@electric-sql/pglite';

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
  const { PGlite } = await import('@electric-sql/pglite');
  if (dir) fs.mkdirSync(path.dirname(dir), { recursive: true });
  const options = opts.sharedBuffersMb
    ? { startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${opts.sharedBuffersMb}MB`] }
    : {};
  const pg = dir ? await PGlite.create(dir, options) : await PGlite.create(options);
  // Every run of a prepared statement is planned for its own parameters, as an unnamed one was: PGlite never
  // gathers statistics, and with the generic plan PostgreSQL chose for a batch's flush its time per row grew
  // with the tables (0.7 to 2.5 ms over 40,000 rows; planned each time, 0.8 to 1.0 ms).
  await pg.exec('SET plan_cache_mode = force_custom_plan');
  const statements = await preparedStatements(pg);
  return {
    kind: 'pglite',
    async query<T>(sql: string, params: unknown[] = []) {
      await pg._checkReady();
      return pg._runExclusiveTransaction(() => statements.run<T>(sql, params, false));
    },
    async exec(sql: string) {
      statements.forgetAll();
      await pg.exec(sql);
    },
    async transaction<T>(fn: (tx: Queryable) => Promise<T>) {
      return pg.transaction(async (tx) =>
        fn({
          query: <R>(sql: string, params: unknown[] = []) => statements.run<R>(sql, params, true),
          async exec(sql: string) {
            statements.forgetAll();
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

/** Distinct statements kept prepared in the embedded database; the least recently used is closed past it. */
const MAX_PREPARED = 256;

/**
 * Statements for embedded PGlite, each in one message to its WebAssembly backend. PGlite's own query() makes
 * six calls into it per statement (parse, describe the statement for its parameters' types, bind, describe,
 * execute, sync) and parses and plans the statement every time; on a busy service that was most of what a
 * sync generate spent in its six statements. Here each distinct SQL text is parsed once, as a named prepared
 * statement (planned for each run's parameters: plan_cache_mode force_custom_plan, set in openPglite), and
 * every run is one message: bind, describe, execute, sync. Parameters go as text of unknown type, as node-postgres sends them to PostgreSQL (openPostgres), so
 * the server infers each one's type from the statement on both backends; rows are parsed with PGlite's own
 * type parsers, as its query() does. Runs hold PGlite's query lock (and, outside a transaction, its
 * transaction lock), so nothing else talks to the backend meanwhile.
 */
async function preparedStatements(pg: PGlite) {
  const { protocol, parse } = await import('@electric-sql/pglite');
  const { serialize } = protocol;
  const names = new Map<string, string>();
  // Statements to close with the next message: evicted ones, and any a failed message may have prepared.
  const closing: string[] = [];
  let next = 0;
  return {
    run<T>(sql: string, params: unknown[], inTransaction: boolean): Promise<QueryResult<T>> {
      return pg._runExclusiveQuery(async () => {
        const parts: Uint8Array[] = closing.splice(0).map((name) => serialize.close({ type: 'S', name }));
        let name = names.get(sql);
        const prepared = name !== undefined;
        if (name !== undefined) {
          // Most recently used last.
          names.delete(sql);
        } else {
          name = `docgen_${++next}`;
          parts.push(serialize.parse({ name, text: sql }));
        }
        names.set(sql, name);
        for (const [text, old] of names) {
          if (names.size <= MAX_PREPARED) break;
          names.delete(text);
          closing.push(old);
        }
        parts.push(serialize.bind({ statement: name, values: params.map(textOf) }), serialize.describe({ type: 'P' }));
        parts.push(serialize.execute({}), serialize.sync());
        try {
          const { messages } = await pg.execProtocol(concat(parts), { syncToFs: !inTransaction });
          return { rows: parse.parseResults(messages, pg.parsers)[0]?.rows as T[] };
        } catch (err) {
          // A statement whose message failed may or may not have been prepared: it is parsed again next time,
          // under a new name, and the old name closed (closing a statement that does not exist is no error).
          if (!prepared && names.get(sql) === name) {
            names.delete(sql);
            closing.push(name);
          }
          throw err;
        }
      });
    },
    /** After DDL (exec: migrations), statements are prepared again: a table's columns may have changed. */
    forgetAll(): void {
      closing.push(...names.values());
      names.clear();
    },
  };
}

/** A parameter as node-postgres sends it (its prepareValue): null, a date as ISO 8601, an array as an array
 *  literal, another object as JSON, anything else as its string. */
function textOf(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  if (v instanceof Date) return v.toISOString();
  if (Array.isArray(v)) return arrayLiteral(v);
  if (ArrayBuffer.isView(v)) return `\\x${Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('hex')}`;
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

function arrayLiteral(items: unknown[]): string {
  const out = items.map((v) => {
    if (v === null || v === undefined) return 'NULL';
    if (Array.isArray(v)) return arrayLiteral(v);
    return `"${textOf(v)!.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
  });
  return `{${out.join(',')}}`;
}

function concat(parts: Uint8Array[]): Uint8Array {
  let size = 0;
  for (const p of parts) size += p.byteLength;
  const out = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
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
