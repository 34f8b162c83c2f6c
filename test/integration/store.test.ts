// The store on both databases it supports: embedded PGlite and a real PostgreSQL server.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey, digestApiKey, ensureFirstUser, ensureSubscription, findApiKey } from '../../store/accounts.ts';
import { type Db, openDb } from '../../store/db.ts';
import {
  createBatch,
  type DeliveredRow,
  getBatch,
  listBatchRows,
  recordBatchRowsDelivered,
  requestBatchCancel,
} from '../../store/records/batches.ts';
import { recordConsumption, recordDocument, recordDocumentWithConsumption } from '../../store/records/documents.ts';
import { consumeFiles, fileLookups, getFile, insertFile } from '../../store/files.ts';
import { migrate } from '../../store/migrate.ts';
import { migrations } from '../../store/migrations/index.ts';
import { createPgDatabase } from '../support/stack.ts';
import { uploadRecord } from '../support/upload-record.ts';

// The PGlite data directory (~40 MB) goes when the file's tests end.
const pgliteDir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-store-'));
const backends = [
  { name: 'PGlite', open: async () => openDb({ dataDir: pgliteDir }) },
  { name: 'PostgreSQL', open: async () => openDb({ databaseUrl: await createPgDatabase() }) },
];

describe.each(backends)('store on $name', ({ name, open }) => {
  let db: Db;
  beforeAll(async () => {
    db = await open();
  });
  afterAll(async () => {
    await db?.close();
    if (name === 'PGlite') fs.rmSync(pgliteDir, { recursive: true, force: true });
  });

  it('applies every migration once, and again is a no-op', async () => {
    expect(await migrate(db)).toEqual(migrations.map((m) => m.version));
    expect(await migrate(db)).toEqual([]);
    const r = await db.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version');
    expect(r.rows.map((x) => x.version)).toEqual(migrations.map((m) => m.version));
  });

  it('creates subscriptions idempotently by name and keeps only API key digests', async () => {
    const a = await ensureSubscription(db, 'acme');
    expect(await ensureSubscription(db, 'acme')).toEqual(a);
    const user = await ensureFirstUser(db, a);
    expect(await ensureFirstUser(db, a)).toEqual(user);
    const key = await createApiKey(db, user);
    expect(key).toMatch(/^dgk_[A-Za-z0-9_-]{43}$/);
    const stored = await db.query<{ digest: string; prefix: string }>('SELECT digest, prefix FROM api_keys WHERE user_id = $1', [user.id]);
    expect(stored.rows).toEqual([{ digest: digestApiKey(key), prefix: key.slice(0, 10) }]);
    expect(JSON.stringify(stored.rows)).not.toContain(key.slice(10));
    expect(await findApiKey(db, key)).toMatchObject({ subscriptionId: a.id, userId: user.id });
    expect(await findApiKey(db, `${key}x`)).toBeUndefined();
    expect(await findApiKey(db, 'dgk_')).toBeUndefined();
  });

  it("never returns another subscription's file, nor an expired one", async () => {
    const a = await ensureSubscription(db, 'tenant-a');
    const b = await ensureSubscription(db, 'tenant-b');
    const ua = await ensureFirstUser(db, a);
    const id = randomUUID();
    const file = {
      subscriptionId: a.id,
      ownerId: ua.id,
      kind: 'template' as const,
      fileName: 't.docx',
      path: '',
      contentType: 'x',
      size: 10,
      sha256: 'ab',
      blobKey: `k/${id}`,
      expiresDate: null,
    };
    await insertFile(db, { ...file, id });
    expect((await getFile(db, a.id, id, ['template']))?.fileName).toBe('t.docx');
    expect(await getFile(db, b.id, id, ['template'])).toBeUndefined();
    expect(await getFile(db, a.id, id, ['data'])).toBeUndefined();
    expect(await getFile(db, a.id, 'not-a-uuid', ['template'])).toBeUndefined();
    const expired = randomUUID();
    await insertFile(db, { ...file, id: expired, expiresDate: new Date(Date.now() - 1000) });
    expect(await getFile(db, a.id, expired, ['template'])).toBeUndefined();
  });

  it('a consumed upload resolves for the run that consumed it only, and is consumed once', async () => {
    const a = await ensureSubscription(db, 'tenant-consume');
    const b = await ensureSubscription(db, 'tenant-consume-b');
    const ua = await ensureFirstUser(db, a);
    const id = randomUUID();
    await insertFile(db, {
      id,
      subscriptionId: a.id,
      ownerId: ua.id,
      kind: 'data',
      fileName: 'd.json',
      path: '',
      contentType: 'x',
      size: 2,
      sha256: 'ab',
      blobKey: `k/${id}`,
      expiresDate: null,
    });
    // Another subscription's run consumes nothing.
    expect(await consumeFiles(db, b.id, [id], ['data'], 'run-b')).toEqual([]);
    expect(await consumeFiles(db, a.id, [id, 'not-a-uuid'], ['data'], 'run-1')).toEqual([{ id, blobKey: `k/${id}` }]);
    expect(await consumeFiles(db, a.id, [id], ['data'], 'run-1')).toEqual([]);
    expect(await consumeFiles(db, a.id, [id], ['data'], 'run-2')).toEqual([]);
    expect((await getFile(db, a.id, id, ['data'], 'run-1'))?.fileName).toBe('d.json');
    expect(await getFile(db, a.id, id, ['data'], 'run-2')).toBeUndefined();
    expect(await getFile(db, a.id, id, ['data'])).toBeUndefined();
    expect(await getFile(db, b.id, id, ['data'], 'run-1')).toBeUndefined();
  });

  it('records a document and its metering once per operation, and rolls back a failed transaction', async () => {
    const s = await ensureSubscription(db, 'metering');
    const u = await ensureFirstUser(db, s);
    const doc = {
      subscriptionId: s.id,
      userId: u.id,
      operationId: 'op-1',
      title: 'a.docx',
      urn: randomUUID(),
      path: 'root',
      fileFormat: 'docx',
      deliveryMethod: 'Storage',
    };
    const first = await recordDocument(db, doc);
    expect(await recordDocument(db, { ...doc, title: 'retried.docx' })).toBe(first);
    await recordConsumption(db, s.id, u.id, 'op-1', [{ dimension: 'pages-generated', value: 3 }]);
    await recordConsumption(db, s.id, u.id, 'op-1', [{ dimension: 'pages-generated', value: 3 }]);
    const c = await db.query<{ value: number }>('SELECT value FROM consumption WHERE subscription_id = $1', [s.id]);
    expect(c.rows).toEqual([{ value: 3 }]);
    await expect(
      db.transaction(async (tx) => {
        await recordDocument(tx, { ...doc, operationId: 'op-2' });
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    const n = await db.query<{ n: string | number }>("SELECT count(*) AS n FROM documents WHERE operation_id = 'op-2'");
    expect(Number(n.rows[0]?.n)).toBe(0);
  });

  it('records a document with its metering in one statement: a retried record returns the first, and meters nothing new', async () => {
    const s = await ensureSubscription(db, 'metering-once');
    const u = await ensureFirstUser(db, s);
    const doc = {
      subscriptionId: s.id,
      userId: u.id,
      operationId: 'op-with',
      title: 'a.pdf',
      urn: randomUUID(),
      path: 'root',
      fileFormat: 'pdf',
      deliveryMethod: 'Storage',
      links: { viewAnonymousLink: 'https://example.test/v' },
    };
    const pages = [{ dimension: 'pages-generated', value: 4 }];
    const first = await recordDocumentWithConsumption(db, doc, pages);
    expect(first.metered).toEqual(pages);
    const again = await recordDocumentWithConsumption(db, { ...doc, title: 'retried.pdf' }, pages);
    expect(again).toEqual({ documentGuid: first.documentGuid, metered: [] });
    const c = await db.query<{ operation_id: string; value: number }>(
      'SELECT operation_id, value FROM consumption WHERE subscription_id = $1',
      [s.id],
    );
    expect(c.rows).toEqual([{ operation_id: 'op-with', value: 4 }]);
    const d = await db.query<{ title: string; n: string | number }>(
      'SELECT title, count(*) OVER () AS n FROM documents WHERE subscription_guid = $1',
      [s.id],
    );
    expect(d.rows.map((r) => [r.title, Number(r.n)])).toEqual([['a.pdf', 1]]);
    // Nothing to meter (a batch's combined output): the record alone.
    const bare = await recordDocumentWithConsumption(db, { ...doc, operationId: 'op-bare', urn: randomUUID() }, []);
    expect(bare.metered).toEqual([]);
    expect(bare.documentGuid).not.toBe(first.documentGuid);
  });

  it("stores a Storage write's file record in the document record's statement: it resolves once recorded, and a retry updates it", async () => {
    const s = await ensureSubscription(db, 'file-with-record');
    const u = await ensureFirstUser(db, s);
    const urn = randomUUID();
    const doc = {
      subscriptionId: s.id,
      userId: u.id,
      operationId: 'op-file',
      title: 'b.docx',
      urn,
      path: 'root',
      fileFormat: 'docx',
      deliveryMethod: 'Storage',
    };
    const file = {
      id: urn,
      subscriptionId: s.id,
      ownerId: u.id,
      kind: 'document' as const,
      fileName: 'b.docx',
      path: 'root',
      contentType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
      size: 10,
      sha256: 'a'.repeat(64),
      blobKey: `subscriptions/${s.id}/documents/${urn}`,
      expiresDate: null,
    };
    expect(await getFile(db, s.id, urn, ['document'])).toBeUndefined();
    const first = await recordDocumentWithConsumption(db, doc, [{ dimension: 'documents-generated', value: 1 }], file);
    expect(first.metered).toEqual([{ dimension: 'documents-generated', value: 1 }]);
    expect(await getFile(db, s.id, urn, ['document'])).toMatchObject({
      fileName: 'b.docx',
      size: 10,
      blobKey: file.blobKey,
      ownerId: u.id,
    });
    // A retried step wrote the bytes again: the same record, the file's size and digest as written last.
    const again = await recordDocumentWithConsumption(db, doc, [{ dimension: 'documents-generated', value: 1 }], {
      ...file,
      size: 12,
      sha256: 'b'.repeat(64),
    });
    expect(again).toEqual({ documentGuid: first.documentGuid, metered: [] });
    expect(await getFile(db, s.id, urn, ['document'])).toMatchObject({ size: 12, sha256: 'b'.repeat(64) });
    const n = await db.query<{ n: string | number }>('SELECT count(*) AS n FROM stored_files WHERE subscription_id = $1', [s.id]);
    expect(Number(n.rows[0]?.n)).toBe(1);
  });

  /** A subscription, its first user and a batch of `rowsTotal` docx rows to Storage. */
  async function storageBatch(name: string, rowsTotal: number) {
    const s = await ensureSubscription(db, name);
    const u = await ensureFirstUser(db, s);
    const batchId = randomUUID();
    await createBatch(db, {
      id: batchId,
      subscriptionId: s.id,
      userId: u.id,
      workflowId: `batch-${batchId}`,
      rowsTotal,
      fileFormat: 'docx',
      deliveryMethod: 'Storage',
    });
    return { s, u, batchId };
  }

  it("records a chunk's delivered batch rows in one statement, each once: a flush run again (overlapping rows) adds only the new ones", async () => {
    const { s, u, batchId } = await storageBatch('batch-flush', 3);
    const row = (n: number, pages: number): DeliveredRow => ({
      row: n,
      operationId: `${batchId}:row:${n}`,
      userId: u.id,
      urn: randomUUID(),
      name: `row-${n}.docx`,
      path: 'out',
      pages,
      fileFormat: 'docx',
      deliveryMethod: 'Storage',
      consumption: [
        { dimension: 'documents-generated', value: 1 },
        { dimension: 'pages-generated', value: pages },
      ],
    });
    const [r1, r2, r3] = [row(1, 2), row(2, 3), row(3, 1)];
    const first = await recordBatchRowsDelivered(db, s.id, batchId, [r1!, r2!]);
    expect([...first.inserted].sort()).toEqual([1, 2]);
    expect(first.metered).toHaveLength(4);
    expect(first.cancelRequested).toBe(false);
    await requestBatchCancel(db, s.id, batchId);
    // A retried chunk's flush: rows 1 and 2 again (another attempt's urn), row 3 new.
    const again = await recordBatchRowsDelivered(db, s.id, batchId, [{ ...r2!, urn: randomUUID() }, r3!]);
    expect([...again.inserted]).toEqual([3]);
    expect(again.metered).toEqual(r3!.consumption);
    expect(again.cancelRequested).toBe(true);
    const batch = await getBatch(db, s.id, batchId);
    expect(batch).toMatchObject({ rowsDone: 3, rowsFailed: 0, pages: 6 });
    const docs = await db.query<{ operation_id: string; urn: string; title: string }>(
      'SELECT operation_id, urn, title FROM documents WHERE subscription_guid = $1 ORDER BY title',
      [s.id],
    );
    expect(docs.rows).toEqual([r1, r2, r3].map((r) => ({ operation_id: r!.operationId, urn: r!.urn, title: r!.name })));
    const metered = await db.query<{ n: string | number; pages: string | number }>(
      "SELECT count(*) AS n, sum(value) FILTER (WHERE dimension = 'pages-generated') AS pages FROM consumption WHERE subscription_id = $1",
      [s.id],
    );
    expect([Number(metered.rows[0]?.n), Number(metered.rows[0]?.pages)]).toEqual([6, 6]);
    const entries = await listBatchRows(db, s.id, batchId, { skip: 0, top: 10 });
    expect(entries.rows.map((e) => [e.row, e.status, e.urn, e.pages])).toEqual([r1, r2, r3].map((r) => [r!.row, 'done', r!.urn, r!.pages]));
    // Nothing new: no counters moved, so no cancel read.
    expect(await recordBatchRowsDelivered(db, s.id, batchId, [r1!])).toEqual({ inserted: new Set(), metered: [] });
  });

  it("a batch's flush stores its rows' file records: each resolves from then on, and a flush run again updates it", async () => {
    const { s, u, batchId } = await storageBatch('batch-flush-files', 2);
    const other = await ensureSubscription(db, 'batch-flush-files-other');
    const row = (n: number, size: number): DeliveredRow => {
      const urn = `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
      return {
        row: n,
        operationId: `${batchId}:row:${n}`,
        userId: u.id,
        urn,
        name: `row-${n}.docx`,
        path: 'out',
        pages: 1,
        fileFormat: 'docx',
        deliveryMethod: 'Storage',
        consumption: [{ dimension: 'documents-generated', value: 1 }],
        file: {
          id: urn,
          subscriptionId: s.id,
          ownerId: u.id,
          kind: 'document',
          fileName: `row-${n}.docx`,
          path: 'out',
          contentType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
          size,
          sha256: String(size).repeat(64).slice(0, 64),
          blobKey: `subscriptions/${s.id}/documents/${urn}`,
          expiresDate: null,
        },
      };
    };
    const [r1, r2] = [row(1, 10), row(2, 20)];
    expect(await getFile(db, s.id, r1!.urn, ['document'])).toBeUndefined();
    await recordBatchRowsDelivered(db, s.id, batchId, [r1!, r2!]);
    for (const r of [r1!, r2!]) {
      expect(await getFile(db, s.id, r.urn, ['document'])).toMatchObject({
        id: r.urn,
        ownerId: u.id,
        kind: 'document',
        fileName: r.name,
        path: 'out',
        size: r.file!.size,
        sha256: r.file!.sha256,
        blobKey: r.file!.blobKey,
        expiresDate: null,
      });
      expect(await getFile(db, other.id, r.urn, ['document'])).toBeUndefined();
    }
    // A retried chunk wrote row 2 again: its record is updated, not doubled.
    await recordBatchRowsDelivered(db, s.id, batchId, [row(2, 21)]);
    expect(await getFile(db, s.id, r2!.urn, ['document'])).toMatchObject({ size: 21 });
    const n = await db.query<{ n: string | number }>('SELECT count(*) AS n FROM stored_files WHERE subscription_id = $1', [s.id]);
    expect(Number(n.rows[0]?.n)).toBe(2);
  });

  it('consumes uploads by id: only the live ones of the subscription, once', async () => {
    const s = await ensureSubscription(db, 'consume');
    const other = await ensureSubscription(db, 'consume-other');
    const u = await ensureFirstUser(db, s);
    const v = await ensureFirstUser(db, other);
    const [a, b, theirs] = [
      await uploadRecord(db, s.id, u.id, 'template'),
      await uploadRecord(db, s.id, u.id, 'template'),
      await uploadRecord(db, other.id, v.id, 'template'),
    ];
    const gone = await consumeFiles(db, s.id, [a.id, b.id, theirs.id, 'not-a-uuid', a.id], ['template', 'data'], 'run-1');
    expect(gone.map((f) => f.id).sort()).toEqual([a.id, b.id].sort());
    expect(await consumeFiles(db, s.id, [a.id, b.id], ['template', 'data'], 'run-1')).toEqual([]);
    expect(await getFile(db, s.id, a.id, ['template'])).toBeUndefined();
    expect((await getFile(db, s.id, a.id, ['template'], 'run-1'))?.id).toBe(a.id);
    expect((await getFile(db, other.id, theirs.id, ['template']))?.id).toBe(theirs.id);
  });

  it("lookups asked at once go in one statement, each answered as getFile answers it (another tenant's file absent)", async () => {
    const s = await ensureSubscription(db, 'lookups');
    const other = await ensureSubscription(db, 'lookups-other');
    const u = await ensureFirstUser(db, s);
    const v = await ensureFirstUser(db, other);
    const [template, data, theirs] = [
      await uploadRecord(db, s.id, u.id, 'template'),
      await uploadRecord(db, s.id, u.id, 'data'),
      await uploadRecord(db, other.id, v.id, 'template'),
    ];
    await consumeFiles(db, s.id, [data.id], ['data'], 'run-7');
    const statements: string[] = [];
    const counted = {
      query: (sql: string, params?: unknown[]) => (statements.push(sql), db.query(sql, params)),
      exec: (sql: string) => db.exec(sql),
    };
    const lookup = fileLookups(counted as Db);
    const asked = [
      { subscriptionId: s.id, id: template.id, kinds: ['template' as const] },
      { subscriptionId: s.id, id: data.id, kinds: ['data' as const], consumedBy: 'run-7' },
      { subscriptionId: s.id, id: data.id, kinds: ['data' as const] },
      { subscriptionId: s.id, id: theirs.id, kinds: ['template' as const] },
      { subscriptionId: other.id, id: theirs.id, kinds: ['template' as const] },
      { subscriptionId: s.id, id: template.id, kinds: ['data' as const] },
      { subscriptionId: s.id, id: 'not-a-uuid', kinds: ['template' as const] },
    ];
    const found = await Promise.all(asked.map((l) => lookup(l)));
    expect(statements).toHaveLength(1);
    expect(found.map((f) => f?.id)).toEqual([template.id, data.id, undefined, undefined, theirs.id, undefined, undefined]);
    for (const [i, l] of asked.entries()) expect(found[i]).toEqual(await getFile(db, l.subscriptionId, l.id, l.kinds, l.consumedBy));
    // Asked one after the other, each is a statement; a failed statement fails every lookup in it.
    await lookup(asked[0]!);
    expect(statements).toHaveLength(2);
    const failing = fileLookups({
      query: async () => Promise.reject(new Error('connection lost')),
      exec: async () => undefined,
    } as unknown as Db);
    const results = await Promise.allSettled([failing(asked[0]!), failing(asked[1]!)]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    // Many at once: at most perStatement in a statement.
    statements.length = 0;
    const three = fileLookups(counted as Db, 3);
    const many = await Promise.all(Array.from({ length: 7 }, () => three(asked[0]!)));
    expect(many.map((f) => f?.id)).toEqual(Array.from({ length: 7 }, () => template.id));
    expect(statements).toHaveLength(3);
  });
});

describe('migrations from several processes at once (a cluster starting)', () => {
  it('four connections migrating one fresh PostgreSQL database all succeed, each migration applied once', async () => {
    const url = await createPgDatabase();
    const dbs = await Promise.all(Array.from({ length: 4 }, () => openDb({ databaseUrl: url })));
    try {
      const results = await Promise.all(dbs.map((db) => migrate(db)));
      expect(results.flat().sort((a, b) => a - b)).toEqual(migrations.map((m) => m.version));
    } finally {
      await Promise.all(dbs.map((db) => db.close()));
    }
  });
});
