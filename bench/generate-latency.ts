// Benchmark (not a test): time from `docgen start` to ready, and the latency of a small synchronous
// generate through the HTTP API, against what is under it, measured in the same run and interleaved with
// it so that every figure sees the same load:
// - the orchestration floor of the same workflow shape (bench/la-cost/floor.ts: Temporal's dev server as
//   `docgen start` runs it, no-op local activities: 2 for a docx generate, 3 for a pdf one);
// - in-process peers of the same template: the engine's render, then LibreOffice's part of a generate on one
//   warm instance (the page count of a docx, the conversion of a pdf), and, with --carbone, a minimal HTTP
//   server rendering it with carbone;
// - with --compare <dir>, the docgen of another checkout (e.g. a worktree of main: the "before").
// It then prints docgen's own share of a generate (its total, less the floor of its shape, less LibreOffice's
// part measured in-process) and where it goes, from the workflow histories of the timed runs
// (bench/breakdown.ts) and the worker's step metrics, and two HTTP probes: the floor of HTTP (/v1/health,
// no auth) and an authenticated request that does one indexed lookup.
// Last, the goals of issue 40 for a sync generate, each a figure of this run: docgen's own share of a docx
// generate <= 10 ms, and a sync pdf generate <= 1.5x carbone's (with --carbone).
// With --cpu-prof <dir>, each `docgen start` writes V8 CPU profiles to <dir>/<after|before> (node --cpu-prof;
// read them with `node bench/profile-top.ts <dir>/after --skip-ms <ms of start-up>`).
//   npm run bench [-- --runs 50 --starts 3 --formats docx,pdf --carbone --compare ../main --cpu-prof /tmp/prof]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import type { Credentials } from '../api/auth/credentials.ts';
import { findTemporalCli, freePort } from '../cli/temporal-dev.ts';
import { convert, createConverter, type Converter, pageCount } from '../converter/index.ts';
import { render } from '../engine/index.ts';
import { makeDocx } from '../test/support/office.ts';
import { type DocgenStart, docgenCredentials, docgenStartEnv, repoRoot, spawnDocgenStart } from '../test/support/docgen-start.ts';
import { client, generateBody } from '../test/support/http.ts';
import { median, medianSteps, type Step, stepsOf, wallNow } from './breakdown.ts';
import { type FloorRun, type Shape, startFloor } from './la-cost/floor.ts';
import { generateWorkflowId } from '../api/temporal.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '50' },
    starts: { type: 'string', default: '3' },
    formats: { type: 'string', default: 'docx,pdf' },
    carbone: { type: 'boolean', default: false },
    compare: { type: 'string' },
    'cpu-prof': { type: 'string' },
  },
});
const runs = Number(values.runs);
const starts = Number(values.starts);
const formats = values.formats.split(',').map((f) => f.trim());
for (const f of formats) if (f !== 'docx' && f !== 'pdf') throw new Error('--formats: docx and/or pdf');
const compare = values.compare ? path.resolve(values.compare) : undefined;
const cpuProf = values['cpu-prof'] ? path.resolve(values['cpu-prof']) : undefined;
if (compare && !fs.existsSync(path.join(compare, 'cli', 'docgen.mjs'))) throw new Error(`--compare: ${compare} is not a docgen checkout`);
Runtime.install({ logger: new DefaultLogger('ERROR') });

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] ?? 0;
/** Half the interquartile range, in ms: the spread printed beside a median. */
const spread = (xs: number[]) => (pct(xs, 75) - pct(xs, 25)) / 2;
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/** The workflow shape of a sync generate: prepareGeneration and writeAndRecord, with the conversion between. */
const SHAPES: Record<string, Shape> = {
  docx: { type: 'sequential', arg: 2, label: '2 local activities' },
  pdf: { type: 'sequential', arg: 3, label: '3 local activities' },
};

interface Timed {
  api: number[];
  steps: Step[][];
  ids: { id: string; sentAt: number; receivedAt: number }[];
  /** Mean time in the worker per step (docgen_activity_duration_seconds), warm-up runs included. */
  inner: Map<string, { sum: number; count: number }>;
}

interface Service {
  label: string;
  root: string;
  svc: DocgenStart;
  creds: Credentials;
  api: ReturnType<typeof client>;
  first: number;
  readies: number[];
  results: Record<string, Timed>;
}

async function startOnce(root: string, dataDir: string, extra: Record<string, string>) {
  const cli = findTemporalCli(process.env.TEMPORAL_CLI);
  return spawnDocgenStart(await docgenStartEnv(dataDir, { ...extra, ...(cli ? { TEMPORAL_CLI: cli } : {}) }), {
    pollMs: 20,
    timeoutMs: 600_000,
    root,
  });
}

/** Starts a checkout's docgen `starts` times on one data directory (the first creates the databases). One
 *  API key sends every request: the per-key rate limit is not what this measures; the worker's metrics
 *  give the time of each step inside the grouped local activities. */
async function startService(label: string, root: string, dataDir: string): Promise<Service> {
  const profDir = cpuProf ? path.join(cpuProf, label) : undefined;
  if (profDir) fs.mkdirSync(profDir, { recursive: true });
  const extra = {
    RATE_LIMIT_PER_MINUTE: '0',
    METRICS_PORT: String(await freePort()),
    ...(profDir ? { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --cpu-prof --cpu-prof-dir=${profDir}`.trim() } : {}),
  };
  let svc = await startOnce(root, dataDir, extra);
  const first = svc.readyMs;
  const readies: number[] = [];
  for (let i = 1; i < starts; i++) {
    await svc.stop();
    svc = await startOnce(root, dataDir, extra);
    readies.push(svc.readyMs);
  }
  const creds = await docgenCredentials(svc.env, undefined, root);
  return { label, root, svc, creds, api: client(creds), first, readies, results: {} };
}

/** docgen_activity_duration_seconds sum and count per activity (outcome ok) from the service's metrics. */
async function activityTotals(s: Service): Promise<Map<string, { sum: number; count: number }>> {
  const text = await (await fetch(`http://127.0.0.1:${s.svc.env.METRICS_PORT}/metrics`)).text();
  const out = new Map<string, { sum: number; count: number }>();
  for (const m of text.matchAll(/^docgen_activity_duration_seconds_(sum|count)\{activity="([^"]+)",outcome="ok"\} (\S+)$/gm)) {
    const t = out.get(m[2]!) ?? { sum: 0, count: 0 };
    t[m[1] as 'sum' | 'count'] = Number(m[3]);
    out.set(m[2]!, t);
  }
  return out;
}

const dirs: string[] = [];
const services: Service[] = [];
let converter: Converter | undefined;
let carbone: { url: string; stop(): Promise<void> } | undefined;
let floor: Awaited<ReturnType<typeof startFloor>> | undefined;
try {
  const loadBefore = os.loadavg();
  for (const [label, root] of [['after', repoRoot], ...(compare ? [['before', compare]] : [])] as [string, string][]) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-bench-'));
    dirs.push(dir);
    services.push(await startService(label, root, dir));
  }
  floor = await startFloor();
  const template = makeDocx(['Dear {customer.name},', 'Order {order} total {total}']);
  const data = { customer: { name: 'ACME & Co.' }, order: 'A-42', total: 99.5 };
  // The in-process peer: the same engine and one warm LibreOffice instance, no HTTP, no Temporal.
  converter = createConverter({ kind: 'libreoffice', pool: { size: 1, log: () => {} } });
  await converter.start();
  if (values.carbone) {
    const { startCarbonePeer } = await import('./carbone-peer.ts');
    carbone = await startCarbonePeer();
  }

  type Peers = { engine: number[]; libreOffice: number[]; carbone: number[]; floor: FloorRun[] };
  const peers: Record<string, Peers> = {};
  const healthMs: number[] = [];
  const authMs: number[] = [];
  const main = services[0]!;
  for (const format of formats) {
    const p: Peers = { engine: [], libreOffice: [], carbone: [], floor: [] };
    peers[format] = p;
    for (const s of services) s.results[format] = { api: [], steps: [], ids: [], inner: new Map() };
    let before = new Map<string, Map<string, { sum: number; count: number }>>();
    for (let i = 0; i < runs + 5; i++) {
      const warm = i >= 5;
      // The worker's step times count from the end of the warm-up.
      if (i === 5) before = new Map(await Promise.all(services.map(async (s) => [s.label, await activityTotals(s)] as const)));
      // Alternate which docgen goes first, so neither always follows the other.
      for (const s of i % 2 ? [...services].reverse() : services) {
        // Uploads are outside the timed region: the figure is the generate call alone.
        const t = await s.api.upload('template', [{ name: 't.docx', bytes: template }]);
        const d = await s.api.upload('data', [{ name: 'd.json', bytes: JSON.stringify(data) }]);
        const body = generateBody(t.body.result.data.files[0].id, d.body.result.data.files[0].id, { document: { fileFormat: format } });
        const sentAt = wallNow();
        const a0 = performance.now();
        const res = await s.api.call('POST', '/documents/document/generate', { json: body });
        const a1 = performance.now();
        const receivedAt = wallNow();
        if (res.status !== 201) throw new Error(`generate (${s.label}) failed: ${JSON.stringify(res.body)}`);
        if (warm) {
          s.results[format]!.api.push(a1 - a0);
          s.results[format]!.ids.push({ id: res.headers.get('x-operation-id') ?? '', sentAt, receivedAt });
        }
      }
      const shaped = await floor.run(SHAPES[format]!);
      const e0 = performance.now();
      const merged = await render(template, data, { locale: 'fr-FR', timezone: 'Europe/Paris' });
      const l0 = performance.now();
      if (format === 'pdf') await convert(merged, { from: 'docx', to: 'pdf' }, converter);
      else await pageCount(merged, 'docx', { render: null, count: (b, o) => converter!.pageCount!(b, o) });
      const e1 = performance.now();
      let c = NaN;
      if (carbone) {
        const c0 = performance.now();
        const cr = await fetch(`${carbone.url}/render`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ data, convertTo: format }),
        });
        const out = new Uint8Array(await cr.arrayBuffer());
        c = performance.now() - c0;
        if (cr.status !== 200 || out.byteLength === 0) throw new Error(`carbone peer answered ${cr.status}`);
      }
      // The HTTP probes, interleaved with the generates so they see the same load.
      const h0 = performance.now();
      await fetch(`${main.creds.baseUrl}/health`);
      const h1 = performance.now();
      await main.api.call('GET', `/common/user/contact/00000000-0000-4000-8000-000000000000/get`);
      const h2 = performance.now();
      if (warm) {
        p.floor.push(shaped);
        p.engine.push(e1 - e0);
        p.libreOffice.push(e1 - l0);
        if (carbone) p.carbone.push(c);
        healthMs.push(h1 - h0);
        authMs.push(h2 - h1);
      }
    }
    for (const s of services) {
      for (const [name, t] of await activityTotals(s)) {
        const b = before.get(s.label)!.get(name) ?? { sum: 0, count: 0 };
        if (t.count > b.count) s.results[format]!.inner.set(name, { sum: t.sum - b.sum, count: t.count - b.count });
      }
    }
  }
  const loadEnd = os.loadavg();

  // The histories, read after the timed phase.
  for (const s of services) {
    const connection = await Connection.connect({ address: `127.0.0.1:${s.svc.env.TEMPORAL_PORT}` });
    try {
      const temporal = new Client({ connection });
      for (const r of Object.values(s.results)) {
        for (const { id, sentAt, receivedAt } of r.ids)
          r.steps.push(
            stepsOf(await temporal.workflow.getHandle(generateWorkflowId(s.creds.subscriptionId, id)).fetchHistory(), sentAt, receivedAt),
          );
      }
    } finally {
      await connection.close();
    }
    await s.svc.stop();
  }

  const f = (n: number) => (Number.isFinite(n) ? n.toFixed(Math.abs(n) < 10 ? 1 : 0) : '-');
  const ms = (xs: number[]) => `${f(median(xs))} ± ${f(spread(xs))}`;
  const row = (label: string, xs: number[]) => `| ${label} | ${f(median(xs))} | ${f(pct(xs, 95))} | ${f(spread(xs))} |`;
  const la = (l: number[]) => l.map((x) => x.toFixed(2)).join(' ');
  const named = (s: Service) => (services.length > 1 ? ` (${s.label}: ${path.relative(process.cwd(), s.root) || '.'})` : '');
  console.log(`node ${process.version}, ${os.cpus().length} cores, ${runs} generate runs per format${compare ? ' per docgen' : ''}`);
  console.log(`load average (1/5/15 min): before ${la(loadBefore)} | end ${la(loadEnd)}`);
  console.log('');
  console.log('| measure | median ms | p95 ms | ±IQR/2 ms |');
  console.log('|---|---:|---:|---:|');
  for (const s of services) {
    console.log(`| docgen start -> ready, first start (creates databases)${named(s)} | ${f(s.first)} | | |`);
    if (s.readies.length) console.log(row(`docgen start -> ready, warm (${s.readies.length} restarts)${named(s)}`, s.readies));
  }
  for (const format of formats) {
    const p = peers[format]!;
    for (const s of services) console.log(row(`sync ${format} generate via HTTP API${named(s)}`, s.results[format]!.api));
    console.log(
      row(
        `floor: ${SHAPES[format]!.label}, start -> result (Temporal alone, the shape of a sync ${format} generate)`,
        p.floor.map((r) => r.totalMs),
      ),
    );
    console.log(row(`peer: engine render + warm LibreOffice ${format === 'pdf' ? 'conversion' : 'page count'} in-process`, p.engine));
    console.log(row(`of which LibreOffice's ${format === 'pdf' ? 'conversion' : 'page count'}`, p.libreOffice));
    if (carbone) console.log(row(`peer: carbone HTTP server (${format})`, p.carbone));
  }
  console.log(row('probe: GET /v1/health (HTTP, no auth)', healthMs));
  console.log(row('probe: authenticated GET of an absent contact (HTTP + auth + 1 lookup)', authMs));

  for (const format of formats) {
    const p = peers[format]!;
    const floorTotal = median(p.floor.map((r) => r.totalMs));
    const floorCreation = p.floor.map((r) => r.creationMs);
    console.log('');
    console.log(
      `docgen's own share of a sync ${format} generate: its total, less the floor of its shape and LibreOffice's part (medians ± IQR/2 ms over ${runs} runs, the floor and LibreOffice measured beside them in this process):`,
    );
    console.log('');
    console.log(`| | ${services.map((s) => s.label).join(' | ')} |`);
    console.log(`|---|${services.map(() => '---:|').join('')}`);
    const cells = (fn: (s: Service, r: Timed) => string) => `${services.map((s) => fn(s, s.results[format]!)).join(' | ')} |`;
    const libreOffice = () => median(p.libreOffice);
    const stepOf = (r: Timed, match: (name: string) => boolean) =>
      r.steps.map((run) => run.filter((st) => match(st.name)).reduce((a, st) => a + st.ms, 0));
    const isStep = (name: string) => name.startsWith('local activity ');
    console.log(`| total (client) | ${cells((_s, r) => ms(r.api))}`);
    console.log(`| floor of its shape (${SHAPES[format]!.label}, start -> result) | ${cells(() => f(floorTotal))}`);
    console.log(
      `| LibreOffice: ${format === 'pdf' ? 'the conversion' : 'the page count'} (in-process, one warm instance) | ${cells(() => ms(p.libreOffice))}`,
    );
    console.log(
      `| **docgen's own share** (total - floor - LibreOffice) | ${cells((_s, r) => `**${f(median(r.api) - floorTotal - libreOffice())}**`)}`,
    );
    console.log(`| of which HTTP + auth + checks + start call | ${cells((_s, r) => ms(stepOf(r, (n) => n.startsWith('HTTP + auth'))))}`);
    console.log(
      `| of which creating the workflow (first task -> first step), over the floor's ${f(median(floorCreation))} | ${cells((_s, r) => `+${f(median(stepOf(r, (n) => n.startsWith('first workflow task'))) - median(floorCreation))}`)}`,
    );
    console.log(`| of which the steps, less LibreOffice's part | ${cells((_s, r) => f(median(stepOf(r, isStep)) - libreOffice()))}`);
    console.log(
      `| of which result fetch + response (part of it the floor's) | ${cells((_s, r) => ms(stepOf(r, (n) => n.startsWith('WorkflowExecutionCompleted'))))}`,
    );
    for (const s of services) {
      const r = s.results[format]!;
      console.log('');
      console.log(
        `Where a sync ${format} generate's time goes${named(s)} (medians over ${r.steps.length} runs, from the workflow histories):`,
      );
      console.log('');
      console.log('| step | median ms |');
      console.log('|---|---:|');
      for (const st of medianSteps(r.steps))
        console.log(`| ${st.name}${st.n < r.steps.length ? ` (in ${st.n} runs)` : ''} | ${f(st.median)} |`);
      console.log(`| total (client) | ${f(median(r.api))} |`);
      console.log('');
      console.log(
        `Each step's mean time in the worker${named(s)} (docgen_activity_duration_seconds over the timed runs; a grouped activity's steps are inside its time, and may overlap):`,
      );
      console.log('');
      console.log('| activity or step | calls | mean ms |');
      console.log('|---|---:|---:|');
      for (const [name, t] of r.inner) console.log(`| ${name} | ${t.count} | ${f((t.sum / t.count) * 1000)} |`);
    }
    console.log('');
    console.log(
      `${format}: docgen (${main.label}) / in-process peer (medians) = ${(median(main.results[format]!.api) / median(p.engine)).toFixed(2)}${carbone ? `; docgen / carbone = ${(median(main.results[format]!.api) / median(p.carbone)).toFixed(2)}` : ''}; mean of the floor's runs ${f(mean(p.floor.map((r) => r.totalMs)))}`,
    );
  }
  // The goals (issue 40), per docgen measured.
  console.log('');
  console.log('Goals (issue 40), medians of this run:');
  console.log('');
  console.log(`| goal | ${services.map((s) => s.label).join(' | ')} |`);
  console.log(`|---|${services.map(() => '---:|').join('')}`);
  const verdict = (ok: boolean) => (ok ? 'met' : 'not met');
  if (peers.docx) {
    const p = peers.docx;
    const own = (s: Service) => median(s.results.docx!.api) - median(p.floor.map((r) => r.totalMs)) - median(p.libreOffice);
    console.log(
      `| docgen's own share of a sync docx generate <= 10 ms | ${services.map((s) => `${f(own(s))} ms (${verdict(own(s) <= 10)})`).join(' | ')} |`,
    );
  }
  if (peers.pdf && carbone) {
    const c = median(peers.pdf.carbone);
    const ratio = (s: Service) => median(s.results.pdf!.api) / c;
    console.log(
      `| sync pdf generate / carbone's pdf <= 1.5x | ${services.map((s) => `${ratio(s).toFixed(2)}x (${verdict(ratio(s) <= 1.5)})`).join(' | ')} |`,
    );
  }
} finally {
  for (const s of services) await s.svc.stop();
  await floor?.stop();
  await converter?.stop();
  await carbone?.stop();
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
}
