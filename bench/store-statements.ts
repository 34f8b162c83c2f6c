// The CPU of docgen's statements on embedded PGlite, against PGlite's own query() in the same process: a
// lookup by id (getFile), a file record's insert (insertFile), and a generate's template and data looked up
// at once (two getFile concurrently, as the prepare step asked them, against one getFiles). Two databases on
// the service's schema, one through store/db.ts, one through PGlite's query(); each case alternates between
// them, medians of --rounds rounds of --n statements (thread CPU, not wall time).
//   node bench/store-statements.ts [--rounds 10] [--n 300]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { PGlite } from '@electric-sql/pglite';
import { ensureFirstUser, ensureSubscription } from '../store/accounts.ts';
import { type Db, openDb, type Queryable } from '../store/db.ts';
import { getFile, getFiles } from '../store/files.ts';
import { migrate } from '../store/migrate.ts';
import { uploadRecord } from '../test/support/upload-record.ts';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '10' }, n: { type: 'string', default: '300' } } });
const rounds = Number(values.rounds);
const n = Number(values.n);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-store-statements-'));

/** PGlite's query() behind docgen's Db interface: what store/db.ts did before a statement was one message. */
async function openThroughQuery(at: string): Promise<Db> {
  fs.mkdirSync(path.dirname(at), { recursive: true });
  const pg = await PGlite.create(at);
  await pg.exec('SET plan_cache_mode = force_custom_plan');
  const q = (on: Pick<PGlite, 'query' | 'exec'>): Queryable => ({
    query: async <T>(sql: string, params: unknown[] = []) => ({ rows: (await on.query<T>(sql, params)).rows }),
    exec: async (sql: string) => void (await on.exec(sql)),
  });
  return { kind: 'pglite', ...q(pg), transaction: (fn) => pg.transaction((tx) => fn(q(tx))), close: () => pg.close() };
}

const dbs = {
  'store/db.ts': await openDb({ dataDir: path.join(dir, 'ours') }),
  "PGlite's query()": await openThroughQuery(path.join(dir, 'theirs', 'db')),
};
const cases: Record<string, Record<string, () => Promise<unknown>>> = {};
for (const [name, db] of Object.entries(dbs)) {
  await migrate(db);
  const s = await ensureSubscription(db, 'bench');
  const u = await ensureFirstUser(db, s);
  const file = (kind: 'template' | 'data') => uploadRecord(db, s.id, u.id, kind, new Date(Date.now() + 86_400_000));
  const pairs: [string, string][] = [];
  for (let i = 0; i < n; i++) pairs.push([(await file('template')).id, (await file('data')).id]);
  let i = 0;
  const next = () => pairs[i++ % n]!;
  const lookups = ([t, d]: [string, string]) => [
    { subscriptionId: s.id, id: d, kinds: ['data' as const], consumedBy: 'run' },
    { subscriptionId: s.id, id: t, kinds: ['template' as const], consumedBy: 'run' },
  ];
  cases[name] = {
    'a lookup by id (getFile)': () => getFile(db, s.id, next()[0], ['template']),
    'a file record inserted (insertFile)': () => file('template'),
    'template and data, two getFile at once': () =>
      Promise.all(lookups(next()).map((l) => getFile(db, l.subscriptionId, l.id, l.kinds, l.consumedBy))),
    'template and data, one getFiles': () => getFiles(db, lookups(next())),
  };
}

const cpuMs = () => {
  const c = process.threadCpuUsage();
  return (c.user + c.system) / 1000;
};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const names = Object.keys(dbs);
const results: Record<string, Record<string, number[]>> = {};
for (const c of Object.keys(cases[names[0]!]!)) {
  for (const name of names) for (let k = 0; k < n; k++) await cases[name]![c]!(); // warm-up
  for (let r = 0; r < rounds; r++)
    for (const name of names) {
      const t0 = cpuMs();
      for (let k = 0; k < n; k++) await cases[name]![c]!();
      ((results[c] ??= {})[name] ??= []).push((cpuMs() - t0) / n);
    }
}
console.log(
  `node ${process.version}, ${os.cpus().length} cores, load ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}; ms of CPU per call, medians of ${rounds} rounds of ${n}\n`,
);
console.log(`| statement | ${names.join(' | ')} | ratio |`);
console.log(`|---|${names.map(() => '---:').join('|')}|---:|`);
for (const [c, by] of Object.entries(results)) {
  const m = names.map((name) => median(by[name]!));
  console.log(`| ${c} | ${m.map((x) => x.toFixed(3)).join(' | ')} | ${(m[0]! / m[1]!).toFixed(2)} |`);
}
for (const db of Object.values(dbs)) await db.close();
fs.rmSync(dir, { recursive: true, force: true });
