// Exactly once, with real processes (issue 30): a 1,000-row batch of invoices runs on `docgen api` and two
// `docgen worker`s (PostgreSQL, the run's Temporal server); workers are SIGKILLed at random moments and
// replaced, and the API is killed and started again mid-batch. At the end: exactly one document per row (one
// record, one stored file, one metering each), no other document, and nothing left in scratch. Two shapes:
// pdf rows with the merged PDF, whose page count is the sum of the rows' (read by poppler's pdfinfo), the rows
// waiting in scratch for it; and docx rows alone, each written straight to its Storage key and recorded a few
// at a time by its chunk (activities/batch/chunk.ts), so a kill falls between a row's write and its record.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { processEnv } from '../support/async-e2e.ts';
import { docgenCredentials, repoRoot } from '../support/docgen-start.ts';
import { client } from '../support/http.ts';
import { invoiceRows } from '../support/invoice-rows.ts';
import { runDocgen, stopProcess } from '../support/service-process.ts';

const ROWS = 1_000;
/** Worker kills during the batch (each replaced at once), and one API restart after the second. */
const KILLS = 4;

const shapes = [
  { shape: 'pdf rows and the merged PDF', fileFormat: 'pdf', combined: true },
  { shape: 'docx rows written straight to Storage, recorded a few at a time', fileFormat: 'docx', combined: false },
];

describe.each(shapes)('batch durability ($shape): workers killed and the API restarted during a 1,000-row batch', (variant) => {
  let setup: Awaited<ReturnType<typeof processEnv>>;
  const procs: ReturnType<typeof runDocgen>[] = [];
  let db: pg.Client;

  beforeAll(async () => {
    setup = await processEnv(inject('temporalAddress'), {
      // A killed worker's chunk is noticed after 3 s without a heartbeat (default 20 s), and retried elsewhere.
      BATCH_HEARTBEAT_SECONDS: '3',
      BATCH_CHUNK_ROWS: '25',
      BATCH_WINDOW: '4',
      BATCH_CHUNKS_PER_RUN: '10',
      CONVERTER_POOL_SIZE: '1',
      RATE_LIMIT_PER_MINUTE: '0',
    });
    const { default: Pg } = await import('pg');
    db = new Pg.Client({ connectionString: setup.env.DATABASE_URL });
  });
  afterAll(async () => {
    for (const p of procs) await stopProcess(p, 'SIGKILL');
    await db?.end().catch(() => undefined);
    setup?.cleanup();
  });

  it('leaves exactly one document per row (and one merged PDF with every page)', { timeout: 600_000 }, async () => {
    const { env } = setup;
    const worker = () => {
      const w = runDocgen(['worker'], env, 'docgen worker polling');
      procs.push(w);
      return w;
    };
    let api = runDocgen(['api'], env, 'docgen api listening');
    procs.push(api);
    const workers = [worker(), worker()];
    await Promise.all([api.started, ...workers.map((w) => w.started)]);
    await db.connect();
    const creds = await docgenCredentials(env, 'batch-durable');
    const sdk = client(creds);

    const template = await sdk.upload('template', [
      { name: 'invoice.docx', bytes: fs.readFileSync(path.join(repoRoot, 'examples', 'invoice.docx')) },
    ]);
    const data = await sdk.upload('data', [
      {
        name: 'invoices.jsonl',
        bytes: invoiceRows(ROWS)
          .map((r) => JSON.stringify(r))
          .join('\n'),
      },
    ]);
    expect(template.status).toBe(201);
    expect(data.status).toBe(201);
    const body = {
      template: { urn: template.body.result.data.files[0].id, loadMethod: 'Storage', fileFormat: 'docx', name: 'invoice.docx' },
      data: { urn: data.body.result.data.files[0].id, loadMethod: 'Storage' },
      document: {
        name: 'Invoice {number}',
        fileFormat: variant.fileFormat,
        deliveryMethod: 'Storage',
        path: 'root',
        timezone: 'Europe/London',
        locale: 'en-GB',
      },
      ...(variant.combined ? { combined: { format: 'pdf', name: 'invoices', path: 'root', deliveryMethod: 'Storage' } } : {}),
    };
    const headers = { 'idempotency-key': `durable-batch-${variant.fileFormat}` };
    const started = await sdk.call('POST', '/documents/document/generate/batch', { json: body, headers });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const id = started.body.result.data.batch.id as string;

    const progress = async () =>
      (await sdk.call('GET', `/documents/batch/${id}`)).body?.result?.data?.batch as
        { status: string; rowsDone: number; rowsFailed: number } | undefined;
    // Kill a random worker at random moments while rows are being generated (after some rows, before the end).
    const kills: { at: number; rowsDone: number }[] = [];
    for (let k = 0; k < KILLS; k++) {
      await new Promise((r) => setTimeout(r, 1_500 + Math.random() * 3_500));
      const p = await progress();
      if (!p || p.status !== 'running') break;
      const victim = Math.floor(Math.random() * workers.length);
      expect(await stopProcess(workers[victim]!, 'SIGKILL')).toBe(null);
      kills.push({ at: Date.now(), rowsDone: p.rowsDone });
      workers[victim] = worker();
      await workers[victim].started;
      if (k === 1) {
        // The API dies and comes back; the batch goes on without it, and a retry of the request (same
        // Idempotency-Key, same body) answers the same batch.
        expect(await stopProcess(api, 'SIGKILL')).toBe(null);
        api = runDocgen(['api'], env, 'docgen api listening');
        procs.push(api);
        await api.started;
        const retried = await sdk.call('POST', '/documents/document/generate/batch', { json: body, headers });
        expect(retried.status, JSON.stringify(retried.body)).toBe(201);
        expect(retried.body.result.data.batch.id).toBe(id);
      }
    }
    expect(kills.length).toBeGreaterThanOrEqual(2);

    let final: Record<string, any> | undefined;
    const deadline = Date.now() + 480_000;
    while (Date.now() < deadline) {
      final = await progress();
      if (final && final.status !== 'running') break;
      await new Promise((r) => setTimeout(r, 1_000));
    }
    expect(final).toMatchObject({ status: 'completed', rowsTotal: ROWS, rowsDone: ROWS, rowsFailed: 0 });

    const one = async (sql: string, params: unknown[]) => Number((await db.query<{ n: number }>(sql, params)).rows[0]?.n);
    // Every row recorded once, with its own document record, stored file and metering.
    const rows = await one("SELECT count(DISTINCT row_number)::int AS n FROM batch_rows WHERE batch_id = $1 AND status = 'done'", [id]);
    const records = await one('SELECT count(*)::int AS n FROM documents WHERE operation_id LIKE $1', [`${id}:row:%`]);
    const distinctRecords = await one('SELECT count(DISTINCT operation_id)::int AS n FROM documents WHERE operation_id LIKE $1', [
      `${id}:row:%`,
    ]);
    const files = await one(
      "SELECT count(*)::int AS n FROM stored_files WHERE kind = 'document' AND id::text IN (SELECT urn FROM documents WHERE operation_id LIKE $1)",
      [`${id}:row:%`],
    );
    const metered = await one(
      "SELECT count(*)::int AS n FROM consumption WHERE operation_id LIKE $1 AND dimension = 'documents-generated'",
      [`${id}:row:%`],
    );
    // No document outside the rows and the combined output (a row written twice would be a second file).
    const allFiles = await one("SELECT count(*)::int AS n FROM stored_files WHERE kind = 'document'", []);
    const combined = await one('SELECT count(*)::int AS n FROM documents WHERE operation_id = $1', [`${id}:combined`]);
    const rowPages = await one("SELECT sum(pages)::int AS n FROM batch_rows WHERE batch_id = $1 AND status = 'done'", [id]);
    const figures = {
      rows: ROWS,
      rowsRecorded: rows,
      documents: records,
      duplicates: records - distinctRecords,
      missing: ROWS - distinctRecords,
      storedFiles: files,
      metered,
      allStoredDocuments: allFiles,
      combined,
      kills,
    };
    console.log(`batch durability: ${JSON.stringify(figures)}`);
    expect(figures).toMatchObject({
      rowsRecorded: ROWS,
      documents: ROWS,
      duplicates: 0,
      missing: 0,
      storedFiles: ROWS,
      metered: ROWS,
      allStoredDocuments: ROWS + (variant.combined ? 1 : 0),
      combined: variant.combined ? 1 : 0,
    });

    // The batch's pages are its rows' (each row's count metered once).
    const meteredPages = await one(
      "SELECT sum(value)::int AS n FROM consumption WHERE operation_id LIKE $1 AND dimension = 'pages-generated'",
      [`${id}:row:%`],
    );
    expect(final!.pages).toBe(rowPages);
    expect(meteredPages).toBe(rowPages);
    if (variant.combined) {
      // The merged PDF: every row's pages (poppler reads the count; the batch checked it against the rows' too).
      const merged = await sdk.download(final!.combined.urn);
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'batch-durable-'));
      try {
        fs.writeFileSync(path.join(dir, 'm.pdf'), merged.bytes);
        const pages = Number(/Pages:\s+(\d+)/.exec(execFileSync('pdfinfo', [path.join(dir, 'm.pdf')]).toString())?.[1]);
        console.log(`batch durability: merged PDF ${pages} pages, rows ${rowPages} pages`);
        expect(pages).toBe(rowPages);
        expect(final!.combined.pages).toBe(rowPages);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    }
    // The batch's scratch (row pages, row PDFs, the merge) is gone.
    const scratch = path.join(setup.dataDir, 'storage', 'scratch', `batch-${id}`);
    expect(
      fs.existsSync(scratch)
        ? fs.readdirSync(scratch, { recursive: true }).filter((f) => !fs.statSync(path.join(scratch, String(f))).isDirectory())
        : [],
    ).toEqual([]);
  });
});
