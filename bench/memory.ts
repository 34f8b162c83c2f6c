// Benchmark (not a test): the resident memory of `docgen start` on embedded defaults (API + worker + Temporal
// dev server + PGlite + LibreOffice pool) under a steady soak of synchronous generates, per process, over time.
//
//   npm run bench:memory [-- --minutes 3 --rate 5 --warm 40 --every 30 --root /other/checkout --env K=V,K2=V2]
//
// A fresh data directory; the ready line; a warm-up (--warm generates, docx and pdf alternately, two at a
// time); then --rate generates/s for --minutes (docx and pdf alternately, open loop: each sent on its
// schedule, whatever the ones before it do), a template URL and GraphQL data served on loopback. Printed:
// RSS per process group (docgen's node process; the Temporal dev server; LibreOffice: soffice.bin,
// oosplash and the Python bridges, with the instance count) at ready, warm, every --every s of the soak, at
// its end and after 30 s idle; and the node process's own breakdown from bench/memory-probe.ts (preloaded
// into that process only): V8 heap used/total of the main thread, external and array buffers (PGlite's WASM
// memory is an array buffer), malloc'd memory, and each worker thread's heap (the Temporal SDK's workflow
// thread, the merge threads). --root runs another checkout's `docgen start` (a "before") with this probe;
// --env adds settings to its environment.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { docgenCredentials, docgenStartEnv, repoRoot, spawnDocgenStart } from '../test/support/docgen-start.ts';
import { client } from '../test/support/http.ts';
import { makeDocx } from '../test/support/office.ts';
import { processTree } from './processes.ts';

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '3' },
    rate: { type: 'string', default: '5' },
    warm: { type: 'string', default: '40' },
    every: { type: 'string', default: '30' },
    root: { type: 'string', default: repoRoot },
    env: { type: 'string', default: '' },
    label: { type: 'string', default: '' },
  },
});
const MINUTES = Number(values.minutes);
const RATE = Number(values.rate);
const EVERY = Number(values.every) * 1000;
const root = path.resolve(values.root);
const extraEnv = Object.fromEntries(
  values.env
    .split(',')
    .filter(Boolean)
    .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
);

interface ProcMem {
  rss: number;
  anon: number;
  file: number;
}
function procMem(pid: number): ProcMem | undefined {
  try {
    const s = fs.readFileSync(`/proc/${pid}/status`, 'latin1');
    const kb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(s)?.[1] ?? 0) / 1024;
    return { rss: kb('VmRSS'), anon: kb('RssAnon'), file: kb('RssFile') + kb('RssShmem') };
  } catch {
    return undefined;
  }
}

/** RSS (MB) of the service's processes by group; LibreOffice's instances counted (soffice.bin). */
function groups(rootPid: number) {
  const out = { node: 0, nodeAnon: 0, temporal: 0, office: 0, officeInstances: 0, other: 0 };
  const temporal = new Set<number>();
  for (const p of processTree(rootPid)) {
    const m = procMem(p.pid);
    let cmd: string;
    try {
      cmd = fs.readFileSync(`/proc/${p.pid}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    if (!m) continue;
    if (p.pid === rootPid) {
      out.node += m.rss;
      out.nodeAnon += m.anon;
    } else if (temporal.has(p.ppid) || cmd.includes('server\0start-dev')) {
      temporal.add(p.pid);
      out.temporal += m.rss;
    } else if (/soffice|oosplash|uno_bridge|python/.test(cmd)) {
      out.office += m.rss;
      if (/^soffice\.bin/.test(p.comm)) out.officeInstances++;
    } else out.other += m.rss;
  }
  return out;
}

// The template and the data, on loopback (no upload per request).
const template = makeDocx(['Invoice {customer.name}', '{#items}{name}: {qty}{/items}']);
const files = http.createServer((req, res) => {
  if (req.url === '/t.docx') return void res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(Buffer.from(template));
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({ data: { customer: { name: 'Ada' }, items: Array.from({ length: 20 }, (_, i) => ({ name: `item ${i}`, qty: i })) } }),
    );
  });
});
await new Promise<void>((r) => files.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
const body = (fileFormat: 'docx' | 'pdf') => ({
  template: { url: `${base}/t.docx`, fileFormat: 'docx' },
  data: { loadMethod: 'GraphQL', urn: `${base}/graphql`, query: 'query { customer { name } items { name qty } }' },
  document: { name: 'soak', fileFormat, deliveryMethod: 'Storage', path: 'root', timezone: 'UTC', locale: 'en-US' },
});

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-bench-memory-'));
const probeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-bench-memory-probe-'));
const env = await docgenStartEnv(dataDir, { OUTBOUND_ALLOW: '127.0.0.1', ...extraEnv });
const probeEnv = {
  ...env,
  NODE_OPTIONS: `${env.NODE_OPTIONS ?? ''} --import ${new URL('./memory-probe.ts', import.meta.url).href}`.trim(),
  DOCGEN_MEMORY_PROBE_DIR: probeDir,
};
const svc = await spawnDocgenStart(probeEnv, { root, timeoutMs: 300_000 });
const pid = svc.child.pid!;
const credentialsEnv = { ...svc.env };
delete credentialsEnv.NODE_OPTIONS;
delete credentialsEnv.DOCGEN_MEMORY_PROBE_DIR;
const api = client(await docgenCredentials(credentialsEnv, undefined, root));

interface Probe {
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
  mallocedMemory: number;
  nativeContexts: number;
  threads: Record<string, { n: number; heapUsed: number; heapTotal: number; external: number }>;
  spaces: Record<string, [number, number]>;
}
const probe = (): Probe | undefined => {
  try {
    return JSON.parse(fs.readFileSync(path.join(probeDir, `node-${pid}.json`), 'utf8')) as Probe;
  } catch {
    return undefined;
  }
};

const rows: { when: string; done: number; g: ReturnType<typeof groups>; p: Probe | undefined }[] = [];
const sample = (when: string) => rows.push({ when, done: completed, g: groups(pid), p: probe() });

let completed = 0;
const statuses: Record<string, number> = {};
const latencies: Record<string, number[]> = { docx: [], pdf: [] };
const generate = async (fmt: 'docx' | 'pdf') => {
  const t = performance.now();
  try {
    const r = await api.call('POST', '/documents/document/generate', { json: body(fmt) });
    statuses[`${fmt} ${r.status}`] = (statuses[`${fmt} ${r.status}`] ?? 0) + 1;
    if (r.status >= 200 && r.status < 300) latencies[fmt]!.push(performance.now() - t);
  } catch (e) {
    statuses[`${fmt} error`] = (statuses[`${fmt} error`] ?? 0) + 1;
    void e;
  }
  completed++;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

try {
  await sleep(3000); // a probe sample
  sample('ready');
  const warm = Number(values.warm);
  for (let i = 0; i < warm; i += 2) await Promise.all([generate('docx'), generate('pdf')]);
  await sleep(3000);
  sample('warm');
  const t0 = Date.now();
  const end = t0 + MINUTES * 60_000;
  const inFlight = new Set<Promise<void>>();
  let nextSample = t0 + EVERY;
  for (let i = 0; Date.now() < end; i++) {
    const p = generate(i % 2 === 0 ? 'docx' : 'pdf');
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
    if (Date.now() >= nextSample) {
      sample(`soak ${Math.round((Date.now() - t0) / 1000)} s`);
      nextSample += EVERY;
    }
    await sleep(Math.max(0, t0 + ((i + 1) * 1000) / RATE - Date.now()));
  }
  await Promise.all(inFlight);
  sample('end');
  await sleep(32_000);
  sample('idle 30 s');
} finally {
  await svc.stop();
  files.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
  fs.rmSync(probeDir, { recursive: true, force: true });
}

const r0 = (n: number | undefined) => (n === undefined || Number.isNaN(n) ? '-' : String(Math.round(n)));
const pct = (xs: number[], q: number) =>
  xs.length ? [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))]! : NaN;
console.log(
  `\ndocgen start memory${values.label ? ` (${values.label})` : ''}: ${root}, ${MINUTES} min at ${RATE} sync generates/s (docx and pdf alternately)` +
    `${values.env ? `, env ${values.env}` : ''}; answers ${JSON.stringify(statuses)}; ` +
    `docx p50/p95 ${r0(pct(latencies.docx!, 0.5))}/${r0(pct(latencies.docx!, 0.95))} ms, pdf ${r0(pct(latencies.pdf!, 0.5))}/${r0(pct(latencies.pdf!, 0.95))} ms`,
);
console.log('RSS in MB. node = the docgen process (all its threads; anon = its anonymous memory), LO = LibreOffice (instances).');
console.log(
  'when        | docs | total | node (anon) | Temporal | LO (n)    | other || heapUsed/Total | external | arrayBuf | malloc | ctx | threads: heapUsed/Total (n)',
);
for (const { when, done, g, p } of rows) {
  const total = g.node + g.temporal + g.office + g.other;
  const threads = p
    ? Object.entries(p.threads)
        .map(([k, t]) => `${k.replace(/\.(ts|js)$/, '')} ${r0(t.heapUsed)}/${r0(t.heapTotal)} (${t.n})`)
        .join(', ')
    : '-';
  console.log(
    [
      when.padEnd(11),
      String(done).padStart(4),
      r0(total).padStart(5),
      `${r0(g.node).padStart(4)} (${r0(g.nodeAnon).padStart(4)})`.padEnd(11),
      r0(g.temporal).padStart(8),
      `${r0(g.office).padStart(4)} (${g.officeInstances})`.padEnd(9),
      r0(g.other).padStart(5),
      `| ${p ? `${r0(p.heapUsed)}/${r0(p.heapTotal)}` : '-'}`.padEnd(15),
      r0(p?.external).padStart(8),
      r0(p?.arrayBuffers).padStart(8),
      r0(p?.mallocedMemory).padStart(6),
      String(p?.nativeContexts ?? '-').padStart(3),
      threads,
    ].join(' | '),
  );
}
const last = rows.findLast((r) => r.p)?.p;
if (last)
  console.log(
    `main thread's V8 heap by space at "${rows.findLast((r) => r.p)!.when}", used/committed MB: ` +
      Object.entries(last.spaces)
        .filter(([, [, c]]) => c >= 1)
        .map(([k, [u, c]]) => `${k.replace(/_space$/, '')} ${r0(u)}/${r0(c)}`)
        .join(', '),
  );
