// Benchmark (not a test): time from `docgen start` to ready, and the latency of a small synchronous docx
// generate through the HTTP API, against the engine's in-process render of the same template as the peer
// (the ratio is what orchestration - HTTP, auth, Temporal, storage, metering - adds).
//   npm run bench [-- --runs 50 --warm-start]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { findTemporalCli } from '../cli/temporal-dev.ts';
import { render } from '../engine/index.ts';
import { makeDocx } from '../test/support/office.ts';
import { docgenCredentials, docgenStartEnv, spawnDocgenStart } from '../test/support/docgen-start.ts';
import { client, generateBody } from '../test/support/http.ts';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '50' }, starts: { type: 'string', default: '3' } } });
const runs = Number(values.runs);
const starts = Number(values.starts);

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] ?? 0) : ((s[m - 1] ?? 0) + (s[m] ?? 0)) / 2;
};
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] ?? 0;
const iqr = (xs: number[]) => (pct(xs, 75) - pct(xs, 25)) / 2 / median(xs);

async function startOnce(dataDir: string) {
  const cli = findTemporalCli(process.env.TEMPORAL_CLI);
  return spawnDocgenStart(await docgenStartEnv(dataDir, cli ? { TEMPORAL_CLI: cli } : {}), { pollMs: 20, timeoutMs: 600_000 });
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-bench-'));
try {
  // Start-up: the first start creates the databases (cold); later starts reuse them (warm).
  const readies: number[] = [];
  let svc = await startOnce(dataDir);
  const first = svc.readyMs;
  for (let i = 1; i < starts; i++) {
    await svc.stop();
    svc = await startOnce(dataDir);
    readies.push(svc.readyMs);
  }
  const api = client(await docgenCredentials(svc.env));
  const template = makeDocx(['Dear {customer.name},', 'Order {order} total {total}']);
  const data = { customer: { name: 'ACME & Co.' }, order: 'A-42', total: 99.5 };

  const apiMs: number[] = [];
  const engineMs: number[] = [];
  for (let i = 0; i < runs + 5; i++) {
    // Uploads are outside the timed region: the figure is the generate call alone.
    const t = await api.upload('template', [{ name: 't.docx', bytes: template }]);
    const d = await api.upload('data', [{ name: 'd.json', bytes: JSON.stringify(data) }]);
    const body = generateBody(t.body.result.data.files[0].id, d.body.result.data.files[0].id);
    const a0 = performance.now();
    const res = await api.call('POST', '/documents/document/generate', { json: body });
    const a1 = performance.now();
    if (res.status !== 201) throw new Error(`generate failed: ${JSON.stringify(res.body)}`);
    const e0 = performance.now();
    await render(template, data, { locale: 'fr-FR', timezone: 'Europe/Paris' });
    const e1 = performance.now();
    if (i >= 5) {
      apiMs.push(a1 - a0);
      engineMs.push(e1 - e0);
    }
  }
  await svc.stop();

  const f = (n: number) => n.toFixed(n < 10 ? 2 : 0);
  console.log(`node ${process.version}, ${os.cpus().length} cores, ${runs} generate runs`);
  console.log('');
  console.log('| measure | median ms | p95 ms | ±IQR/2 |');
  console.log('|---|---:|---:|---:|');
  console.log(`| docgen start -> ready, first start (creates databases) | ${f(first)} | | |`);
  if (readies.length) console.log(`| docgen start -> ready, warm (${readies.length} restarts) | ${f(median(readies))} | ${f(pct(readies, 95))} | ${(iqr(readies) * 100).toFixed(0)}% |`);
  console.log(`| sync docx generate via HTTP API | ${f(median(apiMs))} | ${f(pct(apiMs, 95))} | ${(iqr(apiMs) * 100).toFixed(0)}% |`);
  console.log(`| peer: engine render in-process | ${f(median(engineMs))} | ${f(pct(engineMs, 95))} | ${(iqr(engineMs) * 100).toFixed(0)}% |`);
  console.log('');
  console.log(`orchestration overhead (API median - render median): ${f(median(apiMs) - median(engineMs))} ms`);
} finally {
  fs.rmSync(dataDir, { recursive: true, force: true });
}
