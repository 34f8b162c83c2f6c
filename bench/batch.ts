// Benchmark (not a test): batch throughput (issue 30). N rows of the invoice example (examples/invoice.docx,
// rows derived from examples/invoice.json: test/support/invoice-rows.ts), docx and pdf, one and two workers,
// each as one POST /documents/document/generate/batch; beside, in the same run:
//   - the bare pipeline in this process: the engine's render (and LibreOffice's conversion, or for docx the
//     page count the service meters), as many at once as the service's LibreOffice pool has instances;
//   - a carbone render loop (bench/carbone-peer.ts: carbone installed outside the repository) on the same
//     invoice with carbone's tags, as many requests at once as it has LibreOffice factories;
//   - the latency of another tenant's single sync generate (a pdf) alone and while the batch runs (p50/p95).
// The service: `docgen start` on PostgreSQL (Temporal dev server, API and one worker), plus a `docgen worker`
// for two workers; all processes from this run, CPU per document of each process tree from /proc.
// Formats: docx (pages counted exactly, PAGE_COUNT=auto), docx-document (PAGE_COUNT=document: the document's
// own statistic, nothing converted), pdf. With --compare <dir>, every docgen run again with the docgen of another
// checkout (the "before"), in the same run. With --cpu-prof <dir>, `docgen start` writes V8 CPU profiles there
// (node --cpu-prof) with each batch's span in windows.json; `node bench/profile-top.ts <dir>` reads only the
// samples taken while a batch ran.
//   npm run bench:batch [-- --rows 1000 --formats docx,docx-document,pdf --workers 1,2 --no-carbone --probes 15
//                          --compare ../before --cpu-prof /tmp/prof --slots N --window N --chunk-rows N]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { type ChildProcess, spawn } from 'node:child_process';
import { freePort } from '../cli/temporal-dev.ts';
import { createConverter, pageCount } from '../converter/index.ts';
import { render } from '../engine/index.ts';
import { inflateEntry, readZip, writeZip } from '../engine/zip.ts';
import { docgenCredentials, docgenStartEnv, repoRoot, spawnDocgenStart } from '../test/support/docgen-start.ts';
import { client } from '../test/support/http.ts';
import { invoiceRows } from '../test/support/invoice-rows.ts';
import { startPostgres } from '../test/support/postgres.ts';
import { startCarbonePeer } from './carbone-peer.ts';
import { cpuSpent, processTreeRoots, threadCpuMs, treeCpuMs } from './processes.ts';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '1000' },
    formats: { type: 'string', default: 'docx,docx-document,pdf' },
    compare: { type: 'string' },
    'cpu-prof': { type: 'string' },
    workers: { type: 'string', default: '1,2' },
    carbone: { type: 'boolean', default: true },
    'no-carbone': { type: 'boolean', default: false },
    probes: { type: 'string', default: '15' },
    'chunk-rows': { type: 'string' },
    window: { type: 'string' },
    slots: { type: 'string' },
  },
});
const N = Number(values.rows);
const FORMATS = values.formats.split(',').filter(Boolean);
for (const f of FORMATS)
  if (!['docx', 'docx-document', 'pdf'].includes(f)) throw new Error(`--formats: ${f} is not docx, docx-document or pdf`);
const COMPARE = values.compare ? path.resolve(values.compare) : undefined;
if (COMPARE && !fs.existsSync(path.join(COMPARE, 'cli', 'docgen.mjs'))) throw new Error(`--compare: ${COMPARE} is not a docgen checkout`);
const CPU_PROF = values['cpu-prof'] ? path.resolve(values['cpu-prof']) : undefined;
const WORKERS = values.workers.split(',').map(Number);
const PROBES = Number(values.probes);
const POOL = os.cpus().length; // the service's default CONVERTER_POOL_SIZE
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]! : NaN;
};
const f1 = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : '-');

const templateBytes = fs.readFileSync(path.join(repoRoot, 'examples', 'invoice.docx'));
const rows = invoiceRows(N);

interface Result {
  name: string;
  docsPerSecond: number;
  seconds: number;
  cpu: Map<string, number>;
  /** docgen start's node process by thread (a docgen run). */
  threads?: Map<string, number>;
  note?: string;
}
const results: Result[] = [];

async function pool<T>(items: T[], n: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

// --- the bare pipeline, in this process -------------------------------------------------------------------
async function barePipeline(): Promise<void> {
  // No recycling during the run (the service's workers get the same setting below): a recycled instance's
  // CPU would leave the process tree's count with it.
  const converter = createConverter({ pool: { size: POOL, recycleAfter: 1_000_000 } });
  await converter.start();
  try {
    // Warm: the template cache, both LibreOffice instances.
    for (let i = 0; i < POOL * 2; i++)
      await converter.convert(await render(templateBytes, rows[i % rows.length], { locale: 'en-GB', timezone: 'Europe/London' }), {
        from: 'docx',
        to: 'pdf',
      });
    const variants: [string, (row: unknown) => Promise<unknown>][] = [];
    if (FORMATS.includes('docx') || FORMATS.includes('docx-document')) {
      variants.push(['bare: render (docx)', (row) => render(templateBytes, row, { locale: 'en-GB', timezone: 'Europe/London' })]);
    }
    if (FORMATS.includes('docx')) {
      variants.push([
        'bare: render + page count (docx, what the service meters)',
        async (row) =>
          pageCount(await render(templateBytes, row, { locale: 'en-GB', timezone: 'Europe/London' }), 'docx', {
            count: (b, o) => converter.pageCount!(b, o),
            render: null,
          }),
      ]);
    }
    if (FORMATS.includes('pdf')) {
      variants.push([
        'bare: render + convert (pdf)',
        async (row) =>
          converter.convert(await render(templateBytes, row, { locale: 'en-GB', timezone: 'Europe/London' }), { from: 'docx', to: 'pdf' }),
      ]);
    }
    for (const [name, job] of variants) {
      const before = treeCpuMs(process.pid);
      const t0 = performance.now();
      await pool(rows, POOL, async (row) => void (await job(row)));
      const seconds = (performance.now() - t0) / 1000;
      results.push({ name, docsPerSecond: N / seconds, seconds, cpu: cpuSpent(before, treeCpuMs(process.pid)) });
      console.error(`${name}: ${f1(N / seconds)} docs/s`);
    }
  } finally {
    await converter.stop();
  }
}

// --- docgen ---------------------------------------------------------------------------------------------
interface Service {
  env: NodeJS.ProcessEnv;
  start: { child: ChildProcess; stop(): Promise<unknown> };
  workers: ChildProcess[];
  pg: { stop(): Promise<void> };
  pgPid: () => number[];
  stop(): Promise<void>;
}

async function startService(workers: number, dataDir: string, root: string, pageCount: string, profDir?: string): Promise<Service> {
  const pg = await startPostgres(await freePort());
  const env = await docgenStartEnv(dataDir, {
    RATE_LIMIT_PER_MINUTE: '0',
    CONVERTER_RECYCLE_AFTER: '1000000',
    PAGE_COUNT: pageCount,
    ...(profDir ? { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --cpu-prof --cpu-prof-dir=${profDir}`.trim() } : {}),
    ...(values.slots ? { BATCH_SLOTS: values.slots } : {}),
    ...(values['chunk-rows'] ? { BATCH_CHUNK_ROWS: values['chunk-rows'] } : {}),
    ...(values.window ? { BATCH_WINDOW: values.window } : {}),
  });
  env.DATABASE_URL = pg.url;
  const start = await spawnDocgenStart(env, { timeoutMs: 180_000, root });
  const extra: ChildProcess[] = [];
  for (let i = 1; i < workers; i++) {
    const w = spawn(process.execPath, [path.join(root, 'cli', 'docgen.mjs'), 'worker'], {
      env: { ...start.env, TEMPORAL_ADDRESS: `127.0.0.1:${start.env.TEMPORAL_PORT}` },
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    w.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    w.stderr?.on('data', (d: Buffer) => (out += d.toString()));
    for (let t = 0; !out.includes('docgen worker polling'); t++) {
      if (w.exitCode !== null || t > 1800) throw new Error(`docgen worker did not start:\n${out}`);
      await sleep(100);
    }
    extra.push(w);
  }
  const pgPids = () => processTreeRoots('postgres');
  return {
    env: start.env,
    start: { child: start.child, stop: () => start.stop() },
    workers: extra,
    pg,
    pgPid: pgPids,
    async stop() {
      for (const w of extra) w.kill('SIGTERM');
      await Promise.all(extra.map((w) => new Promise((r) => (w.exitCode !== null ? r(null) : w.once('exit', r)))));
      await start.stop();
      await pg.stop();
    },
  };
}

/** Appends a batch's span to <profile dir>/windows.json (bench/profile-top.ts reads it). */
function recordWindow(profDir: string, window: { format: string; rows: number; fromUs: number; toUs: number }): void {
  const file = path.join(profDir, 'windows.json');
  const windows = fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as unknown[]) : [];
  fs.writeFileSync(file, JSON.stringify([...windows, window], null, 2));
}

function serviceCpu(svc: Service): Map<string, number> {
  const out = new Map<string, number>();
  const add = (label: string, m: Map<string, number>) => {
    for (const [group, ms] of m) out.set(`${label}: ${group}`, (out.get(`${label}: ${group}`) ?? 0) + ms);
  };
  add('docgen start (API + worker 1)', treeCpuMs(svc.start.child.pid!));
  svc.workers.forEach((w, i) => add(`docgen worker ${i + 2}`, treeCpuMs(w.pid!)));
  for (const pid of svc.pgPid()) add('PostgreSQL', treeCpuMs(pid));
  return out;
}

async function docgenRuns(): Promise<{ alone: number[]; during: number[] } | undefined> {
  let probes: { alone: number[]; during: number[] } | undefined;
  const docgens: [string, string][] = [['', repoRoot], ...(COMPARE ? [[' (before)', COMPARE] as [string, string]] : [])];
  // One service per page-count setting: docx and pdf on the default (exact counts), docx-document on its own.
  const groups: [string, string[]][] = [
    ['auto', FORMATS.filter((f) => f !== 'docx-document')],
    ['document', FORMATS.filter((f) => f === 'docx-document')],
  ];
  for (const workers of WORKERS)
    for (const [pageCount, formats] of groups) {
      if (formats.length === 0) continue;
      for (const [label, root] of docgens) {
        const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-bench-batch-'));
        const profDir = CPU_PROF ? path.join(CPU_PROF, `${label ? 'before' : 'after'}-${pageCount}-${workers}w`) : undefined;
        if (profDir) fs.mkdirSync(profDir, { recursive: true });
        const svc = await startService(workers, dataDir, root, pageCount, profDir);
        try {
          const api = client(await docgenCredentials(svc.env, 'bench-batch', root));
          const other = client(await docgenCredentials(svc.env, 'bench-other-tenant', root));
          const probe = async () => {
            const { templateUrn, dataUrn } = await other.uploadPair(templateBytes, rows[0]);
            const t0 = performance.now();
            const r = await other.call('POST', '/documents/document/generate', {
              json: {
                template: { urn: templateUrn, loadMethod: 'Storage', fileFormat: 'docx' },
                data: { urn: dataUrn, loadMethod: 'Storage' },
                document: {
                  name: 'probe',
                  fileFormat: 'pdf',
                  deliveryMethod: 'Storage',
                  path: 'root',
                  timezone: 'Europe/London',
                  locale: 'en-GB',
                },
              },
            });
            if (r.status !== 201) throw new Error(`probe generate: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
            return performance.now() - t0;
          };
          // Warm: a generate of each format, a tiny batch.
          for (let i = 0; i < 3; i++) await probe();
          const probing0 = workers === WORKERS[0] && !label && formats.includes('pdf');
          const alone: number[] = [];
          if (probing0) for (let i = 0; i < PROBES; i++) alone.push(await probe());
          for (const format of formats) {
            const fileFormat = format === 'pdf' ? 'pdf' : 'docx';
            const t = await api.upload('template', [{ name: 'invoice.docx', bytes: templateBytes }]);
            const d = await api.upload('data', [{ name: 'invoices.jsonl', bytes: rows.map((r) => JSON.stringify(r)).join('\n') }]);
            const cpuBefore = serviceCpu(svc);
            const threadsBefore = threadCpuMs(svc.start.child.pid!);
            const t0 = performance.now();
            const fromUs = process.hrtime.bigint() / 1000n;
            const res = await api.call('POST', '/documents/document/generate/batch', {
              json: {
                template: { urn: t.body.result.data.files[0].id, loadMethod: 'Storage', fileFormat: 'docx', name: 'invoice.docx' },
                data: { urn: d.body.result.data.files[0].id, loadMethod: 'Storage' },
                document: {
                  name: 'Invoice {number}',
                  fileFormat,
                  deliveryMethod: 'Storage',
                  path: 'root',
                  timezone: 'Europe/London',
                  locale: 'en-GB',
                },
              },
            });
            if (res.status !== 201) throw new Error(`batch: ${res.status} ${JSON.stringify(res.body).slice(0, 500)}`);
            const id = res.body.result.data.batch.id as string;
            const during: number[] = [];
            let progress: Record<string, any> = {};
            const probing = probing0 && format === 'pdf';
            let probeRun = Promise.resolve();
            for (;;) {
              progress = (await api.call('GET', `/documents/batch/${id}`)).body.result.data.batch;
              if (progress.status !== 'running') break;
              // Another tenant's single generate while the batch runs (once the batch is under way).
              if (probing && during.length < PROBES && progress.rowsDone > 10)
                probeRun = probeRun.then(async () => void during.push(await probe()));
              await sleep(probing ? 400 : 250);
            }
            const seconds = (performance.now() - t0) / 1000;
            // The batch's span on the monotonic clock V8's profiles use: profile-top.ts counts only samples in it.
            if (profDir) recordWindow(profDir, { format, rows: N, fromUs: Number(fromUs), toUs: Number(process.hrtime.bigint() / 1000n) });
            await probeRun;
            const cpu = cpuSpent(cpuBefore, serviceCpu(svc));
            const threads = cpuSpent(threadsBefore, threadCpuMs(svc.start.child.pid!));
            if (progress.status !== 'completed' || progress.rowsDone !== N)
              throw new Error(`batch ended ${JSON.stringify(progress).slice(0, 500)}`);
            const what = format === 'docx-document' ? 'docx, PAGE_COUNT=document' : format === 'docx' ? 'docx, exact page count' : 'pdf';
            results.push({
              name: `docgen${label} batch: ${what}, ${workers} worker${workers > 1 ? 's' : ''}`,
              docsPerSecond: N / seconds,
              seconds,
              cpu,
              threads,
            });
            console.error(`docgen${label} batch ${what} ${workers} worker(s): ${f1(N / seconds)} docs/s`);
            if (probing) probes = { alone, during };
          }
        } finally {
          await svc.stop();
          fs.rmSync(dataDir, { recursive: true, force: true });
        }
      }
    }
  return probes;
}

// --- carbone --------------------------------------------------------------------------------------------
/** The invoice with carbone's tags: {d.x} for {x}, the item row repeated with [i]/[i+1], no logo, no filters. */
function carboneInvoice(): Uint8Array {
  const entries = readZip(templateBytes);
  return writeZip(
    [...entries.values()].map((e) => {
      if (e.name !== 'word/document.xml') return { name: e.name, entry: e };
      let xml = inflateEntry(e).toString('utf8');
      xml = xml.replace(/<w:p>(?:(?!<w:p>).)*?\{%logo\}.*?<\/w:p>/s, '');
      // The items row: tags to carbone's array syntax, then the same row again with [i+1].
      xml = xml.replace(/<w:tr>(?:(?!<w:tr>).)*?\{#items\}.*?<\/w:tr>/s, (row) => {
        const r = row
          .replace('{#items}', '')
          .replace('{/items}', '')
          .replace(/\{(\w+)(?: \|[^}]*)?\}/g, '{d.items[i].$1}');
        return `${r}${r.replace(/\[i\]/g, '[i+1]')}`;
      });
      xml = xml.replace(/\{#notes\}\{\.\}\{\/notes\}/, '');
      xml = xml.replace(/\{\(items[^}]*\}|\{items \|[^}]*\}/g, '{d.total}');
      xml = xml.replace(/\{(?!d\.)([\w.]+)(?: \|[^}]*)?\}/g, '{d.$1}');
      return { name: e.name, data: new Uint8Array(Buffer.from(xml, 'utf8')) };
    }),
  );
}

async function carboneLoop(): Promise<void> {
  const template = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-bench-carbone-tpl-')), 'invoice.docx');
  fs.writeFileSync(template, carboneInvoice());
  const peer = await startCarbonePeer({ template, factories: POOL });
  try {
    const data = rows.map((r) => ({ ...r, total: 0 }));
    for (const format of [...new Set(FORMATS.map((f) => (f === 'pdf' ? 'pdf' : 'docx')))]) {
      const pid = peer.pid;
      const before = treeCpuMs(pid);
      const t0 = performance.now();
      await pool(data, POOL, async (row) => {
        const res = await fetch(`${peer.url}/render`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ data: row, convertTo: format }),
        });
        if (!res.ok) throw new Error(`carbone: ${res.status} ${await res.text()}`);
        await res.arrayBuffer();
      });
      const seconds = (performance.now() - t0) / 1000;
      results.push({
        name: `carbone loop: ${format} (${POOL} factories, ${POOL} at once)`,
        docsPerSecond: N / seconds,
        seconds,
        cpu: cpuSpent(before, treeCpuMs(pid)),
        note: 'no logo image, no filters',
      });
      console.error(`carbone ${format}: ${f1(N / seconds)} docs/s`);
    }
  } finally {
    await peer.stop();
  }
}

// --- run ------------------------------------------------------------------------------------------------
const loadBefore = os.loadavg();
console.error(
  `bench:batch: ${N} rows, formats ${FORMATS.join(', ')}, workers ${WORKERS.join(', ')}, ${os.cpus().length} cores, load ${loadBefore.map((x) => x.toFixed(1)).join(' ')}`,
);
await barePipeline();
const probes = await docgenRuns();
if (values.carbone && !values['no-carbone']) {
  try {
    await carboneLoop();
  } catch (err) {
    console.error(`carbone loop skipped: ${(err as Error).message}`);
  }
}

const find = (prefix: string, includes: string) => results.find((r) => r.name.startsWith(prefix) && r.name.includes(includes));
const bareRender = find('bare: render (docx)', '');
const bareCount = find('bare: render + page count', '');
const barePdf = find('bare: render + convert', '');
/** What a docgen run is compared with: the bare pipeline doing the same work. */
const baseOf = (r: Result) => {
  if (r.name.startsWith('bare')) return undefined;
  if (r.name.startsWith('carbone')) return r.name.includes('pdf') ? barePdf : bareRender; // carbone's docx meters no pages
  if (r.name.includes('PAGE_COUNT=document')) return bareRender;
  return r.name.includes('pdf') ? barePdf : bareCount;
};
const cpuPerDoc = (r: Result) => [...r.cpu.values()].reduce((a, b) => a + b, 0) / N;
/** CPU per document outside LibreOffice (its soffice processes and their UNO bridges), the same groups in
 *  docgen's runs and the bare pipeline's. */
const outsideLibreOffice = (r: Result) => [...r.cpu].filter(([group]) => !/LibreOffice/.test(group)).reduce((a, [, ms]) => a + ms, 0) / N;
console.log('');
console.log(
  `docgen batch benchmark: ${N} invoice rows (examples/invoice.docx), node ${process.version}, ${os.cpus().length} cores, load average before ${loadBefore.map((x) => x.toFixed(2)).join(' ')}, after ${os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}`,
);
console.log('');
console.log('| run | documents/s | seconds | vs bare pipeline | CPU ms per document (process tree: group) |');
console.log('|---|---:|---:|---:|---|');
for (const r of results) {
  const base = baseOf(r);
  const ratio = base ? (r.docsPerSecond / base.docsPerSecond).toFixed(2) : '';
  const cpu = [...r.cpu]
    .filter(([, ms]) => ms / N >= 0.05)
    .sort((a, b) => b[1] - a[1])
    .map(([g, ms]) => `${g} ${f1(ms / N)}`)
    .join('; ');
  console.log(
    `| ${r.name}${r.note ? ` (${r.note})` : ''} | ${f1(r.docsPerSecond)} | ${f1(r.seconds)} | ${ratio} | total ${f1(cpuPerDoc(r))}: ${cpu} |`,
  );
}
// Issue 40's goals, each a ratio of this run: throughput against the bare pipeline and carbone's loop, and
// docgen's own CPU per row (every process of the service but LibreOffice: API, worker, PostgreSQL, Temporal)
// beyond what the bare pipeline spends on the same row outside LibreOffice (the render, the converter's
// client). LibreOffice's own work is left out of both: it is the same work, and its CPU varies between runs
// by more than the goal (34-46 ms a pdf row on one machine in one hour).
const carbone = (format: string) => results.find((r) => r.name.startsWith('carbone') && r.name.includes(`: ${format} `));
const goals: string[][] = [];
for (const r of results.filter((x) => x.name.startsWith('docgen'))) {
  const base = baseOf(r);
  const peer = carbone(r.name.includes('pdf') ? 'pdf' : 'docx');
  const rows: [string, number | undefined, string][] = [];
  if (r.name.includes('pdf')) {
    rows.push(['vs carbone pdf loop', peer && r.docsPerSecond / peer.docsPerSecond, '>= 1.0']);
    rows.push(['vs bare render + convert', base && r.docsPerSecond / base.docsPerSecond, '>= 0.9']);
  } else if (r.name.includes('PAGE_COUNT=document')) {
    rows.push(['vs carbone docx loop', peer && r.docsPerSecond / peer.docsPerSecond, '>= 1.0']);
  } else {
    rows.push(['vs bare render + page count', base && r.docsPerSecond / base.docsPerSecond, '>= 0.9']);
  }
  for (const [what, x, goal] of rows) goals.push([r.name, what, x === undefined ? '-' : x.toFixed(2), goal]);
  if (base) goals.push([r.name, "docgen's own CPU per row (ms)", f1(outsideLibreOffice(r) - outsideLibreOffice(base)), '<= 2']);
}
console.log('');
console.log("docgen start's node process (API + worker 1) by thread, CPU ms per document:");
const threadNames = [...new Set(results.flatMap((r) => [...(r.threads?.keys() ?? [])]))];
console.log(`| run | ${threadNames.join(' | ')} |`);
console.log(`|---|${threadNames.map(() => '---:|').join('')}`);
for (const r of results.filter((x) => x.threads))
  console.log(`| ${r.name} | ${threadNames.map((t) => f1((r.threads!.get(t) ?? 0) / N)).join(' | ')} |`);
console.log('');
console.log("Issue 40's goals (ratios of this run):");
console.log('| run | measure | value | goal |');
console.log('|---|---|---:|---|');
for (const g of goals) console.log(`| ${g.join(' | ')} |`);
if (probes) {
  console.log('');
  console.log(
    `Another tenant's single sync generate (invoice -> pdf) during the 1-worker pdf batch vs alone (${probes.alone.length} / ${probes.during.length} requests):`,
  );
  console.log(`| | p50 ms | p95 ms |`);
  console.log('|---|---:|---:|');
  console.log(`| alone | ${f1(pct(probes.alone, 50))} | ${f1(pct(probes.alone, 95))} |`);
  console.log(`| during the batch | ${f1(pct(probes.during, 50))} | ${f1(pct(probes.during, 95))} |`);
}
console.log(
  JSON.stringify({
    bench: 'batch',
    rows: N,
    results: results.map((r) => ({
      name: r.name,
      docsPerSecond: Number(r.docsPerSecond.toFixed(2)),
      cpuMsPerDoc: Object.fromEntries([...r.cpu].map(([g, ms]) => [g, Number((ms / N).toFixed(2))])),
    })),
    probes,
  }),
);
process.exit(0);
