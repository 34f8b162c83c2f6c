// Statements on embedded PGlite (store/db.ts). The same statements run on a real PostgreSQL server through
// node-postgres must give the same rows; a statement that fails, DDL, many distinct statements, transactions
// and concurrent callers must not leave the embedded backend answering a wrong or failed statement.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Db, openDb } from '../../store/db.ts';
import { createPgDatabase } from '../support/stack.ts';

const TABLE = `CREATE TABLE things (
  id uuid PRIMARY KEY,
  name text NOT NULL,
  tags text[] NOT NULL DEFAULT '{}',
  counts integer[],
  size bigint,
  ok boolean,
  settings jsonb,
  at timestamptz
)`;

const ROW = {
  id: randomUUID(),
  name: 'quote " backslash \\ comma , brace } and ü',
  tags: ['a', 'with "quotes"', 'back\\slash', 'comma,brace{}', '', 'NULL'],
  counts: [1, null, 3],
  size: 9_007_199_254_740_991,
  ok: false,
  settings: JSON.stringify({ nested: { list: [1, 'two'] }, text: 'x"y' }),
  at: new Date('2026-11-29T12:34:56.789Z'),
};

async function roundTrip(db: Db) {
  await db.query('INSERT INTO things (id, name, tags, counts, size, ok, settings, at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)', [
    ROW.id,
    ROW.name,
    ROW.tags,
    ROW.counts,
    ROW.size,
    ROW.ok,
    ROW.settings,
    ROW.at,
  ]);
  const r = await db.query<Record<string, unknown>>(
    `SELECT id, name, tags, counts, size::text AS size, ok, settings, at,
            $2::text[] AS echoed, $3::integer + 1 AS plus, $4::text IS NULL AS absent,
            encode($6::bytea, 'hex') AS bytes, $7::text[] AS nested, $8::bigint::text AS big, $9::text AS undef
       FROM things WHERE id = $1 AND tags @> $5::text[]`,
    [
      ROW.id,
      ['x', 'y "z"', null],
      41,
      null,
      ['with "quotes"'],
      Buffer.from([0, 1, 92, 254, 255]),
      [
        ['a', 'b"'],
        ['c\\', null],
      ],
      2n ** 62n,
      undefined,
    ],
  );
  return r.rows;
}

const backends = [
  { name: 'PGlite', open: () => openDb({}) },
  { name: 'PostgreSQL', open: async () => openDb({ databaseUrl: await createPgDatabase() }) },
];

describe('statements on PGlite give what node-postgres gives on PostgreSQL', () => {
  const rows: Record<string, unknown[]> = {};
  const dbs: Db[] = [];
  beforeAll(async () => {
    for (const b of backends) {
      const db = await b.open();
      dbs.push(db);
      await db.exec(TABLE);
      rows[b.name] = await roundTrip(db);
    }
  });
  afterAll(async () => {
    for (const db of dbs) await db.close();
  });

  it('the same rows, every value as it was sent', () => {
    expect(rows.PGlite).toEqual(rows.PostgreSQL);
    expect(rows.PGlite).toEqual([
      {
        id: ROW.id,
        name: ROW.name,
        tags: ROW.tags,
        counts: ROW.counts,
        size: String(ROW.size),
        ok: false,
        settings: JSON.parse(ROW.settings),
        at: ROW.at,
        echoed: ['x', 'y "z"', null],
        plus: 42,
        absent: true,
        bytes: '00015cfeff',
        nested: [
          ['a', 'b"'],
          ['c\\', null],
        ],
        big: String(2n ** 62n),
        undef: null,
      },
    ]);
  });
});

describe('statements on PGlite', () => {
  let db: Db;
  beforeAll(async () => {
    db = await openDb({});
    await db.exec(TABLE);
  });
  afterAll(async () => {
    await db?.close();
  });

  const insert = (id: string, name: string) => db.query('INSERT INTO things (id, name) VALUES ($1, $2)', [id, name]);
  const names = async () => (await db.query<{ name: string }>('SELECT name FROM things ORDER BY name')).rows.map((r) => r.name);

  it('plans each run for its own parameters (without statistics, a generic plan of the batch flush grew with its tables)', async () => {
    const r = await db.query<{ plan_cache_mode: string }>('SHOW plan_cache_mode');
    expect(r.rows).toEqual([{ plan_cache_mode: 'force_custom_plan' }]);
  });

  it('a statement that fails to parse fails again the same way, and others go on', async () => {
    for (let i = 0; i < 2; i++) await expect(db.query('SELEC name FROM things')).rejects.toThrow(/syntax error/);
    await insert(randomUUID(), 'after a syntax error');
    expect(await names()).toContain('after a syntax error');
  });

  it('a statement whose run fails (a bad parameter, a unique key) runs again with good ones', async () => {
    const id = randomUUID();
    await expect(insert('not-a-uuid', 'bad')).rejects.toThrow(/uuid/);
    await insert(id, 'first');
    await expect(insert(id, 'again')).rejects.toMatchObject({ code: '23505' });
    const other = randomUUID();
    await insert(other, 'second');
    const r = await db.query<{ name: string }>('SELECT name FROM things WHERE id = ANY($1::uuid[]) ORDER BY name', [[id, other]]);
    expect(r.rows.map((x) => x.name)).toEqual(['first', 'second']);
  });

  it('a transaction that fails leaves nothing, and its statements serve the next one', async () => {
    const id = randomUUID();
    await expect(
      db.transaction(async (tx) => {
        await tx.query('INSERT INTO things (id, name) VALUES ($1, $2)', [id, 'rolled back']);
        await tx.query('INSERT INTO things (id, name) VALUES ($1, $2)', [id, 'duplicate']);
      }),
    ).rejects.toMatchObject({ code: '23505' });
    expect(await names()).not.toContain('rolled back');
    await db.transaction(async (tx) => {
      await tx.query('INSERT INTO things (id, name) VALUES ($1, $2)', [id, 'committed']);
    });
    expect(await names()).toContain('committed');
  });

  it('after DDL a statement run before sees the table as it is now', async () => {
    const id = randomUUID();
    await insert(id, 'before the column');
    const star = () => db.query<Record<string, unknown>>('SELECT * FROM things WHERE id = $1', [id]);
    expect(Object.keys((await star()).rows[0]!)).not.toContain('extra');
    await db.exec("ALTER TABLE things ADD COLUMN extra text NOT NULL DEFAULT 'x'");
    expect((await star()).rows[0]).toMatchObject({ id, extra: 'x' });
  });

  it('300 distinct statements: each answers, the first again too', async () => {
    const first = 'SELECT $1::integer + 0 AS n';
    expect((await db.query<{ n: number }>(first, [7])).rows).toEqual([{ n: 7 }]);
    for (let i = 1; i <= 300; i++) {
      const r = await db.query<{ n: number }>(`SELECT $1::integer + ${i} AS n`, [1]);
      expect(r.rows[0]!.n).toBe(1 + i);
    }
    expect((await db.query<{ n: number }>(first, [8])).rows).toEqual([{ n: 8 }]);
  });

  it('concurrent callers and a transaction each get their own rows', async () => {
    const ids = Array.from({ length: 40 }, () => randomUUID());
    await Promise.all([
      ...ids.map((id, i) => insert(id, `concurrent ${i}`)),
      db.transaction(async (tx) => {
        for (let i = 0; i < 5; i++) await tx.query('INSERT INTO things (id, name) VALUES ($1, $2)', [randomUUID(), `in tx ${i}`]);
      }),
    ]);
    const read = await Promise.all(ids.map((id) => db.query<{ name: string }>('SELECT name FROM things WHERE id = $1', [id])));
    expect(read.map((r) => r.rows[0]?.name)).toEqual(ids.map((_, i) => `concurrent ${i}`));
    expect((await names()).filter((n) => n.startsWith('in tx '))).toHaveLength(5);
  });
});
