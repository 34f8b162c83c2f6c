// Benchmark (not a test): time from `docgen start` to ready, and the latency of a small synchronous
// generate through the HTTP API, against in-process peers of the same template measured in the same run:
// the engine's render (docx), render + one warm LibreOffice conversion (pdf), and, with --carbone, a
// minimal HTTP server that renders the same template with carbone (bench/carbone-peer.ts).
// It then prints where the time of a generate goes, from the workflow histories of the timed runs
// (bench/breakdown.ts), and two HTTP probes: the floor (/v1/health, no auth) and an authenticated
// request that does one indexed lookup.
//   npm run bench [-- --runs 50 --starts 3 --formats docx,pdf --carbone]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { findTemporalCli, freePort } from '../cli/temporal-dev.ts';
import { convert, createConverter, type Converter } from '../converter/index.ts';
import { render } from '../engine/index.ts';
import { makeDocx } from '../test/support/office.ts';
import { docgenCredentials, docgenStartEnv, spawnDocgenStart } from '../test/support/docgen-start.ts';
import { client, generateBody } from '../test/support/http.ts';
import { median, medianSteps, type Step, stepsOf, wallNow } from './breakdown.ts';
import { generateWorkflowId } from '../api/temporal.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '50' },
    starts: { type: 'string', default: '3' },
    formats: { type: 'string', default: 'docx' },
    carbone: { type: 'boolean', default: false },
  },
});
const runs = Number(values.runs);
const starts = Number(values.starts);
const formats = values.formats.split(',').map((f) => f.trim());
for (const f of formats) if (f !== 'docx' && f !== 'pdf') throw new Error('--formats: docx and/or pdf');

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] ?? 0;
const iqr = (xs: number[]) => (pct(xs, 75) - pct(xs, 25)) / 2 / median(xs);

async function startOnce(dataDir: string, extra: Record<string, string>) {
  const cli = findTemporalCli(process.env.TEMPORAL_CLI);
  return spawnDocgenStart(await docgenStartEnv(dataDir, { ...extra, ...(cli ? { TEMPORAL_CLI: cli } : {}) }), { pollMs: 20, timeoutMs: 600_000 });
}

/** docgen_activity_duration_seconds sum and count per activity (outcome ok) from the service's metrics. */
async function activityTotals(port: number): Promise<Map<string, { sum: number; count: number }>> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const out = new Map<string, { sum: number; count: number }>();
  for (const m of text.matchAll(/^docgen_activity_duration_seconds_(sum|count)\{activity="([^"]+)",outcome="ok"\} (\S+)$/gm)) {
    const t = out.get(m[2]!) ?? { sum: 0, count: 0 };
    t[m[1] as 'sum' | 'count'] = Number(m[3]);
    out.set(m[2]!, t);
  }
  return out;
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-bench-'));
let converter: Converter | undefined;
let carbone: { url: string; stop(): Promise<void> } | undefined;
try {
  const loadBefore = os.loadavg();
  // Start-up: the first start creates the databases (cold); later starts reuse them (warm).
  const readies: number[] = [];
  // One API key sends every request: the per-key rate limit is not what this measures.
  // The worker's metrics give the time of each step inside the grouped local activities.
  const extra = { RATE_LIMIT_PER_MINUTE: '0', METRICS_PORT: String(await freePort()) };
  let svc = await startOnce(dataDir, extra);
  const first = svc.readyMs;
  for (let i = 1; i < starts; i++) {
    await svc.stop();
    svc = await startOnce(dataDir, extra);
    readies.push(svc.readyMs);
  }
  const creds = await docgenCredentials(svc.env);
  const api = client(creds);
  const template = makeDocx(['Dear {customer.name},', 'Order {order} total {total}']);
  const data = { customer: { name: 'ACME & Co.' }, order: 'A-42', total: 99.5 };
  if (formats.includes('pdf')) {
    // The in-process pdf peer: the same engine and one warm LibreOffice instance, no HTTP, no Temporal.
    converter = createConverter({ kind: 'libreoffice', pool: { size: 1, log: () => {} } });
    await converter.start();
  }
  if (values.carbone) {
    const { startCarbonePeer } = await import('./carbone-peer.ts');
    carbone = await startCarbonePeer();
  }

  interface Result { api: number[]; peer: number[]; carbone: number[]; steps: Step[][]; ids: { id: string; sentAt: number; receivedAt: number }[]; inner: Map<string, { sum: number; count: number }> }
  const results: Record<string, Result> = {};
  const healthMs: number[] = [];
  const authMs: number[] = [];
  for (const format of formats) {
    const r: Result = { api: [], peer: [], carbone: [], steps: [], ids: [], inner: new Map() };
    results[format] = r;
    const before = await activityTotals(Number(svc.env.METRICS_PORT));
    for (let i = 0; i < runs + 5; i++) {
      // Uploads are outside the timed region: the figure is the generate call alone.
      const t = await api.upload('template', [{ name: 't.docx', bytes: template }]);
      const d = await api.upload('data', [{ name: 'd.json', bytes: JSON.stringify(data) }]);
      const body = generateBody(t.body.result.data.files[0].id, d.body.result.data.files[0].id, { document: { fileFormat: format } });
      const sentAt = wallNow();
      const a0 = performance.now();
      const res = await api.call('POST', '/documents/document/generate', { json: body });
      const a1 = performance.now();
      const receivedAt = wallNow();
      if (res.status !== 201) throw new Error(`generate failed: ${JSON.stringify(res.body)}`);
      const e0 = performance.now();
      const merged = await render(template, data, { locale: 'fr-FR', timezone: 'Europe/Paris' });
      if (format === 'pdf') await convert(merged, { from: 'docx', to: 'pdf' }, converter);
      const e1 = performance.now();
      let c = NaN;
      if (carbone) {
        const c0 = performance.now();
        const cr = await fetch(`${carbone.url}/render`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ data, convertTo: format }) });
        const out = new Uint8Array(await cr.arrayBuffer());
        c = performance.now() - c0;
        if (cr.status !== 200 || out.byteLength === 0) throw new Error(`carbone peer answered ${cr.status}`);
      }
      // The HTTP probes, interleaved with the generates so they see the same load.
      const h0 = performance.now();
      await fetch(`${creds.baseUrl}/health`);
      const h1 = performance.now();
      await api.call('GET', `/common/user/contact/00000000-0000-4000-8000-000000000000/get`);
      const h2 = performance.now();
      if (i >= 5) {
        r.api.push(a1 - a0);
        r.peer.push(e1 - e0);
        if (carbone) r.carbone.push(c);
        healthMs.push(h1 - h0);
        authMs.push(h2 - h1);
        r.ids.push({ id: res.headers.get('x-operation-id') ?? '', sentAt, receivedAt });
      }
    }
    for (const [name, t] of await activityTotals(Number(svc.env.METRICS_PORT))) {
      const b = before.get(name) ?? { sum: 0, count: 0 };
      if (t.count > b.count) r.inner.set(name, { sum: t.sum - b.sum, count: t.count - b.count });
    }
  }
  const loadEnd = os.loadavg();

  // The histories, read after the timed phase.
  const connection = await Connection.connect({ address: `127.0.0.1:${svc.env.TEMPORAL_PORT}` });
  try {
    const temporal = new Client({ connection });
    for (const r of Object.values(results)) {
      for (const { id, sentAt, receivedAt } of r.ids) {
        const history = await temporal.workflow.getHandle(generateWorkflowId(creds.subscriptionId, id)).fetchHistory();
        r.steps.push(stepsOf(history, sentAt, receivedAt));
      }
    }
  } finally {
    await connection.close();
  }
  await svc.stop();

  const f = (n: number) => (Number.isFinite(n) ? n.toFixed(n < 10 ? 2 : 0) : '-');
  const row = (label: string, xs: number[]) => `| ${label} | ${f(median(xs))} | ${f(pct(xs, 95))} | ${(iqr(xs) * 100).toFixed(0)}% |`;
  const la = (l: number[]) => l.map((x) => x.toFixed(2)).join(' ');
  console.log(`node ${process.version}, ${os.cpus().length} cores, ${runs} generate runs per format`);
  console.log(`load average (1/5/15 min): before ${la(loadBefore)} | end ${la(loadEnd)}`);
  console.log('');
  console.log('| measure | median ms | p95 ms | ±IQR/2 |');
  console.log('|---|---:|---:|---:|');
  console.log(`| docgen start -> ready, first start (creates databases) | ${f(first)} | | |`);
  if (readies.length) console.log(row(`docgen start -> ready, warm (${readies.length} restarts)`, readies));
  for (const [format, r] of Object.entries(results)) {
    console.log(row(`sync ${format} generate via HTTP API`, r.api));
    console.log(row(format === 'pdf' ? 'peer: engine render + warm LibreOffice conversion in-process' : 'peer: engine render in-process', r.peer));
    if (carbone) console.log(row(`peer: carbone HTTP server (${format})`, r.carbone));
  }
  console.log(row('probe: GET /v1/health (HTTP, no auth)', healthMs));
  console.log(row('probe: authenticated GET of an absent contact (HTTP + auth + 1 lookup)', authMs));
  console.log('');
  for (const [format, r] of Object.entries(results)) {
    console.log(`${format}: API median / in-process peer median = ${(median(r.api) / median(r.peer)).toFixed(2)}; orchestration overhead ${f(median(r.api) - median(r.peer))} ms`);
    if (carbone) console.log(`${format}: docgen / carbone (medians) = ${(median(r.api) / median(r.carbone)).toFixed(2)}`);
  }
  for (const [format, r] of Object.entries(results)) {
    console.log('');
    console.log(`Where a sync ${format} generate's time goes (medians over ${r.steps.length} runs, from the workflow histories):`);
    console.log('');
    console.log('| step | median ms |');
    console.log('|---|---:|');
    for (const s of medianSteps(r.steps)) console.log(`| ${s.name}${s.n < r.steps.length ? ` (in ${s.n} runs)` : ''} | ${f(s.median)} |`);
    console.log(`| total (client) | ${f(median(r.api))} |`);
    console.log('');
    console.log(`Each step's mean time in the worker (from docgen_activity_duration_seconds, warm-up runs included; a grouped activity's steps are inside its time):`);
    console.log('');
    console.log('| activity or step | calls | mean ms |');
    console.log('|---|---:|---:|');
    for (const [name, t] of r.inner) console.log(`| ${name} | ${t.count} | ${f((t.sum / t.count) * 1000)} |`);
  }
} finally {
  await converter?.stop();
  await carbone?.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
