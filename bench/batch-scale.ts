// Benchmark (not a test): the scale of one batch (issue 40). One batch of N rows (default 100,000) of the invoice
// example to docx with PAGE_COUNT=document, on `docgen start` with its embedded defaults (PGlite, a directory
// for Storage, the Temporal dev server) unless --postgres. It prints:
//   - the time from the 201 to the first row recorded and to the first document in Storage;
//   - the rate of every tenth of the batch (rows per second between the times it passed 10 %, 20 %, ...), read
//     from the batch's progress (GET /documents/batch/{id}) every 250 ms, so the last tenth can be compared
//     with the first;
//   - the RSS of each process of the service (docgen's node, the Temporal dev server, LibreOffice, PostgreSQL)
//     at the start of the batch, at every tenth and at the end.
//   npm run bench:batch-scale [-- --rows 100000 --postgres --page-count document]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { freePort } from '../cli/temporal-dev.ts';
import { docgenCredentials, docgenStartEnv, repoRoot, spawnDocgenStart } from '../test/support/docgen-start.ts';
import { client } from '../test/support/http.ts';
import { invoiceRows } from '../test/support/invoice-rows.ts';
import { startPostgres } from '../test/support/postgres.ts';
import { processTreeRoots, treeRss } from './processes.ts';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '100000' },
    postgres: { type: 'boolean', default: false },
    'page-count': { type: 'string', default: 'document' },
  },
});
const N = Number(values.rows);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const f1 = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : '-');

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-bench-scale-'));
const pg = values.postgres ? await startPostgres(await freePort()) : undefined;
const env = await docgenStartEnv(dataDir, {
  RATE_LIMIT_PER_MINUTE: '0',
  PAGE_COUNT: values['page-count'],
  BATCH_MAX_ROWS: String(Math.max(N, 100_000)),
  UPLOAD_MAX_BYTES: String(1024 * 1024 * 1024),
});
if (pg) env.DATABASE_URL = pg.url;
const svc = await spawnDocgenStart(env, { timeoutMs: 180_000 });
/** RSS in MB of the service's processes by what they are (bench/processes.ts treeRss), and PostgreSQL's. */
function rssByGroup(): Record<string, number> {
  const r = treeRss(svc.child.pid!);
  const out: Record<string, number> = { 'docgen (node)': r.node, 'Temporal dev server': r.temporal, LibreOffice: r.office };
  if (pg) out.PostgreSQL = processTreeRoots('postgres').reduce((sum, pid) => sum + treeRss(pid).service, 0);
  return out;
}
try {
  const api = client(await docgenCredentials(svc.env, 'bench-scale'));
  const template = fs.readFileSync(path.join(repoRoot, 'examples', 'invoice.docx'));
  const t = await api.upload('template', [{ name: 'invoice.docx', bytes: template }]);
  console.error(
    `bench:batch-scale: ${N} rows, ${os.cpus().length} cores, load ${os
      .loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}`,
  );
  const rows = invoiceRows(N)
    .map((r) => JSON.stringify(r))
    .join('\n');
  const d = await api.upload('data', [{ name: 'invoices.jsonl', bytes: rows }]);
  if (d.status !== 201) throw new Error(`data upload: ${d.status} ${JSON.stringify(d.body).slice(0, 300)}`);
  const storage = path.join(dataDir, 'storage');
  const samples: { at: number; done: number }[] = [];
  const rss: { label: string; mb: Record<string, number> }[] = [{ label: 'before the batch', mb: rssByGroup() }];
  const t0 = performance.now();
  const res = await api.call('POST', '/documents/document/generate/batch', {
    json: {
      template: { urn: t.body.result.data.files[0].id, loadMethod: 'Storage', fileFormat: 'docx', name: 'invoice.docx' },
      data: { urn: d.body.result.data.files[0].id, loadMethod: 'Storage' },
      document: {
        name: 'Invoice {number}',
        fileFormat: 'docx',
        deliveryMethod: 'Storage',
        path: 'root',
        timezone: 'Europe/London',
        locale: 'en-GB',
      },
    },
  });
  if (res.status !== 201) throw new Error(`batch: ${res.status} ${JSON.stringify(res.body).slice(0, 500)}`);
  const answered = performance.now();
  const id = res.body.result.data.batch.id as string;
  let firstRow: number | undefined;
  let firstDocument: number | undefined;
  let progress: Record<string, any> = {};
  let nextTenth = 1;
  const documentsDir = () => {
    // Storage keeps documents under subscriptions/<id>/documents/ (connectors/storage/location.ts).
    const subs = path.join(storage, 'subscriptions');
    if (!fs.existsSync(subs)) return false;
    return fs.readdirSync(subs).some((s) => {
      const dir = path.join(subs, s, 'documents');
      return fs.existsSync(dir) && fs.readdirSync(dir).some((f) => !f.endsWith('.tmp'));
    });
  };
  for (;;) {
    if (firstDocument === undefined && documentsDir()) firstDocument = performance.now() - answered;
    progress = (await api.call('GET', `/documents/batch/${id}`)).body.result.data.batch;
    const now = performance.now();
    const done = progress.rowsDone + progress.rowsFailed;
    samples.push({ at: now, done });
    if (firstRow === undefined && done > 0) firstRow = now - answered;
    while (nextTenth <= 10 && done >= (nextTenth * N) / 10) {
      rss.push({ label: `${nextTenth * 10} %`, mb: rssByGroup() });
      nextTenth++;
    }
    if (progress.status !== 'running') break;
    await sleep(firstDocument === undefined ? 50 : 250);
  }
  const seconds = (performance.now() - t0) / 1000;
  if (progress.status !== 'completed' || progress.rowsDone !== N) throw new Error(`batch ended ${JSON.stringify(progress).slice(0, 500)}`);
  // The time each tenth was passed (first sample at or past it), and the rate within it.
  const passed = (n: number) => samples.find((s) => s.done >= n)?.at ?? NaN;
  console.log('');
  console.log(
    `docgen batch scale: ${N} invoice rows to docx (PAGE_COUNT=${values['page-count']}), ${values.postgres ? 'PostgreSQL' : 'PGlite'}, node ${process.version}, ${os.cpus().length} cores, load after ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
  );
  console.log(
    `201 in ${f1(answered - t0)} ms; first row recorded ${f1(firstRow ?? NaN)} ms after it, first document in Storage ${f1(firstDocument ?? NaN)} ms after it; whole batch ${f1(seconds)} s = ${f1(N / seconds)} rows/s`,
  );
  console.log('');
  console.log('| tenth | rows/s | ' + Object.keys(rss.at(-1)!.mb).join(' MB | ') + ' MB |');
  console.log(
    '|---|---:|' +
      Object.keys(rss.at(-1)!.mb)
        .map(() => '---:|')
        .join(''),
  );
  console.log(
    `| before | | ${Object.keys(rss.at(-1)!.mb)
      .map((k) => f1(rss[0]!.mb[k] ?? 0))
      .join(' | ')} |`,
  );
  for (let k = 1; k <= 10; k++) {
    const from = k === 1 ? answered : passed(((k - 1) * N) / 10);
    const to = passed((k * N) / 10);
    const rate = N / 10 / ((to - from) / 1000);
    const mb = rss[k]?.mb ?? {};
    console.log(
      `| ${k * 10} % | ${f1(rate)} | ${Object.keys(rss.at(-1)!.mb)
        .map((g) => f1(mb[g] ?? 0))
        .join(' | ')} |`,
    );
  }
} finally {
  await svc.stop();
  await pg?.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
process.exit(0);
