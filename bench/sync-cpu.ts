// Benchmark (not a test): what one synchronous generate costs in CPU, per thread of docgen's process and per
// process of the service (issue 40). `docgen start` on its embedded defaults (PGlite, a directory for Storage,
// the Temporal dev server); N generates of a small docx one after another, each CPU figure read from /proc
// just before and just after each generate (uploads outside), so it is the generate's own (plus what runs in
// the background meanwhile: a few ms of pollers). A wall-clock sampling profiler charges a thread's waits for
// the CPU to the call it was in; these are the kernel's counts. With --compare <dir>, the docgen of another
// checkout runs beside it, its generates alternating with this one's.
//   node bench/sync-cpu.ts [--runs 40] [--format docx|pdf] [--compare ../before]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { findTemporalCli, freePort } from '../cli/temporal-dev.ts';
import { makeDocx } from '../test/support/office.ts';
import { type DocgenStart, docgenCredentials, docgenStartEnv, repoRoot, spawnDocgenStart } from '../test/support/docgen-start.ts';
import { client, generateBody } from '../test/support/http.ts';
import { cpuSpent, threadCpuMs, treeCpuMs } from './processes.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '40' },
    format: { type: 'string', default: 'docx' },
    compare: { type: 'string' },
  },
});
const runs = Number(values.runs);
const format = values.format;
if (format !== 'docx' && format !== 'pdf') throw new Error('--format: docx or pdf');
const compare = values.compare ? path.resolve(values.compare) : undefined;
if (compare && !fs.existsSync(path.join(compare, 'cli', 'docgen.mjs'))) throw new Error(`--compare: ${compare} is not a docgen checkout`);
const WARM = 10;

interface Service {
  label: string;
  root: string;
  dir: string;
  svc: DocgenStart;
  api: ReturnType<typeof client>;
  latency: number[];
  threads: Map<string, number>;
  processes: Map<string, number>;
}

const add = (into: Map<string, number>, from: Map<string, number>) => {
  for (const [k, v] of from) into.set(k, (into.get(k) ?? 0) + v);
};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function start(label: string, root: string): Promise<Service> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-bench-sync-cpu-'));
  const cli = findTemporalCli(process.env.TEMPORAL_CLI);
  const env = await docgenStartEnv(dir, {
    RATE_LIMIT_PER_MINUTE: '0',
    METRICS_PORT: String(await freePort()),
    ...(cli ? { TEMPORAL_CLI: cli } : {}),
  });
  const svc = await spawnDocgenStart(env, { pollMs: 20, timeoutMs: 600_000, root });
  const api = client(await docgenCredentials(svc.env, undefined, root));
  return { label, root, dir, svc, api, latency: [], threads: new Map(), processes: new Map() };
}

const services: Service[] = [];
try {
  for (const [label, root] of [['after', repoRoot], ...(compare ? [['before', compare]] : [])] as [string, string][])
    services.push(await start(label, root));
  const template = makeDocx(['Dear {customer.name},', 'Order {order} total {total}']);
  const data = { customer: { name: 'ACME & Co.' }, order: 'A-42', total: 99.5 };
  for (let i = 0; i < runs + WARM; i++) {
    for (const s of i % 2 ? [...services].reverse() : services) {
      const t = await s.api.upload('template', [{ name: 't.docx', bytes: template }]);
      const d = await s.api.upload('data', [{ name: 'd.json', bytes: JSON.stringify(data) }]);
      const body = generateBody(t.body.result.data.files[0].id, d.body.result.data.files[0].id, { document: { fileFormat: format } });
      // What the uploads set off settles before the generate's window opens.
      await pause(30);
      const pid = s.svc.child.pid!;
      const [threads, processes] = [threadCpuMs(pid), treeCpuMs(pid)];
      const t0 = performance.now();
      const res = await s.api.call('POST', '/documents/document/generate', { json: body });
      const ms = performance.now() - t0;
      if (res.status !== 201) throw new Error(`generate (${s.label}): ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
      if (i < WARM) continue;
      s.latency.push(ms);
      add(s.threads, cpuSpent(threads, threadCpuMs(pid)));
      add(s.processes, cpuSpent(processes, treeCpuMs(pid)));
    }
  }
  const f = (ms: number) => (ms / runs).toFixed(1);
  const cols = services.map((s) => `${s.label}${services.length > 1 ? ` (${path.relative(process.cwd(), s.root) || '.'})` : ''}`);
  console.log(
    `\nCPU of one sync ${format} generate (ms; sum over ${runs} generates after ${WARM} warm-up ones, / ${runs}), ${os.cpus().length} cores, load ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}\n`,
  );
  console.log(`| | ${cols.join(' | ')} |`);
  console.log(`|---|${cols.map(() => '---:').join('|')}|`);
  console.log(`| latency, median (ms) | ${services.map((s) => median(s.latency).toFixed(1)).join(' | ')} |`);
  const keys = (pick: (s: Service) => Map<string, number>) => [...new Set(services.flatMap((s) => [...pick(s).keys()]))];
  for (const k of keys((s) => s.threads))
    console.log(`| docgen's node, ${k} | ${services.map((s) => f(s.threads.get(k) ?? 0)).join(' | ')} |`);
  for (const k of keys((s) => s.processes))
    console.log(`| process: ${k} | ${services.map((s) => f(s.processes.get(k) ?? 0)).join(' | ')} |`);
} finally {
  for (const s of services) {
    await s.svc.stop();
    fs.rmSync(s.dir, { recursive: true, force: true });
  }
}
