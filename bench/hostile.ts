// Benchmark (not a test): the hostile cases of issue 11 against the real `docgen start` on default
// settings. For each case: what the service answers and how long it takes, the peak RSS of the service's
// processes (docgen + LibreOffice; the Temporal dev server apart) and the p50/p95 latency of another
// tenant's sync generates (pdf by default) while the attack runs; first the same traffic without attack.
//   npm run bench:hostile [-- --format pdf|docx --quiet-seconds 20]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { docgenCredentials, docgenStartEnv, spawnDocgenStart } from '../test/support/docgen-start.ts';
import { client, generateBody } from '../test/support/http.ts';
import { makeDocx, para } from '../test/integration/convert/fixtures.ts';
import { processTree } from './processes.ts';

const { values } = parseArgs({ options: { format: { type: 'string', default: 'pdf' }, 'quiet-seconds': { type: 'string', default: '20' } } });
const FORMAT = values.format;

/** RSS (MB) of a process and its descendants, split by whether the command is the Temporal CLI; `node`
 *  is the docgen process alone, `office` its LibreOffice processes. */
function treeRss(root: number): { service: number; temporal: number; node: number; office: number } {
  const out = { service: 0, temporal: 0, node: 0, office: 0 };
  // The dev server and everything under it count as Temporal; a parent comes before its children.
  const temporal = new Set<number>();
  for (const p of processTree(root)) {
    let rss: number;
    let cmd: string;
    try {
      rss = Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${p.pid}/status`, 'latin1'))?.[1] ?? 0) / 1024;
      cmd = fs.readFileSync(`/proc/${p.pid}/cmdline`, 'utf8');
    } catch {
      continue; // gone
    }
    if (p.pid === root) out.node = rss;
    if (temporal.has(p.ppid) || cmd.includes('server\0start-dev')) {
      temporal.add(p.pid);
      out.temporal += rss;
    } else out.service += rss;
    if (cmd.includes('soffice') || cmd.includes('oosplash') || cmd.includes('uno_bridge')) out.office += rss;
  }
  return out;
}

function pct(ms: number[], p: number): number {
  const s = [...ms].sort((a, b) => a - b);
  return Math.round(s[Math.min(s.length - 1, Math.floor(s.length * p))] ?? 0);
}

function numbered(n: number): string {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(`<w:p><w:r><w:t>${i}</w:t></w:r></w:p>`);
  return out.join('');
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-bench-hostile-'));
const svc = await spawnDocgenStart(await docgenStartEnv(dataDir), { timeoutMs: 300_000 });
const pid = svc.child.pid!;
const zero = { service: 0, temporal: 0, node: 0, office: 0 };
let peak = { ...zero };
const sampler = setInterval(() => {
  const r = treeRss(pid);
  peak = { service: Math.max(peak.service, r.service), temporal: Math.max(peak.temporal, r.temporal), node: Math.max(peak.node, r.node), office: Math.max(peak.office, r.office) };
}, 200);
const mb = (r: typeof zero) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, Math.round(v)]));

try {
  const a = client(await docgenCredentials(svc.env, 'tenant-a'));
  const b = client(await docgenCredentials(svc.env, 'tenant-b'));
  const small = makeDocx(para('Hello {name}'));

  async function otherTenant(until: () => boolean) {
    const ms: number[] = [];
    const statuses = new Map<number, number>();
    while (!until() || ms.length < 3) {
      const t = await a.upload('template', [{ name: 'a.docx', bytes: small }]);
      const d = await a.upload('data', [{ name: 'a.json', bytes: '{"name":"A"}' }]);
      const t0 = performance.now();
      const g = await a.call('POST', '/documents/document/generate', {
        json: generateBody(t.body.result.data.files[0].id, d.body.result.data.files[0].id, { document: { fileFormat: FORMAT } }),
      });
      ms.push(performance.now() - t0);
      statuses.set(g.status, (statuses.get(g.status) ?? 0) + 1);
    }
    return { n: ms.length, p50: pct(ms, 0.5), p95: pct(ms, 0.95), statuses: Object.fromEntries(statuses) };
  }

  async function phase(name: string, attack: () => Promise<string>) {
    peak = { ...zero };
    let done = false;
    const traffic = otherTenant(() => done);
    const t0 = performance.now();
    let answer: string;
    try {
      answer = await attack();
    } finally {
      done = true;
    }
    const ms = Math.round(performance.now() - t0);
    const other = await traffic;
    const idle = treeRss(pid);
    console.log(JSON.stringify({ case: name, answer, ms, peakRssMb: mb(peak), rssMbAfter: mb(idle), otherTenant: other }));
  }

  const describe = (r: { status: number; body: any }) =>
    `${r.status} ${r.body?.error?.innerErrors?.[0]?.code ?? r.body?.result?.message ?? ''} ${String(r.body?.error?.message ?? '').slice(0, 160)}`.trim();

  async function generate(template: Uint8Array, data: string, format = FORMAT) {
    const t = await b.upload('template', [{ name: 'b.docx', bytes: template }]);
    if (t.status !== 201) return `upload: ${describe(t)}`;
    const d = await b.upload('data', [{ name: 'b.json', bytes: data }]);
    if (d.status !== 201) return `data upload: ${describe(d)}`;
    const g = await b.call('POST', '/documents/document/generate', {
      json: generateBody(t.body.result.data.files[0].id, d.body.result.data.files[0].id, { document: { fileFormat: format } }),
    });
    return describe(g);
  }

  const quiet = Number(values['quiet-seconds']) * 1000;
  await phase(`no attack (${quiet / 1000} s of tenant A's ${FORMAT} generates)`, async () => {
    await new Promise((r) => setTimeout(r, quiet));
    return '-';
  });

  const flood = makeDocx(numbered(4_000_000) + para('{name}'));
  await phase(`upload: ${(flood.length / 1e6).toFixed(1)} MB docx, 4,000,000 paragraphs`, async () => describe(await b.upload('template', [{ name: 'flood.docx', bytes: flood }])));

  const spaces = ' '.repeat(25_000);
  const ws = makeDocx(`<w:p><w:r><w:t xml:space="preserve">${Array.from({ length: 10_000 }, (_, i) => `${spaces}${i}`).join('')}</w:t></w:r></w:p>`);
  await phase(`upload: ${(ws.length / 1e6).toFixed(2)} MB docx inflating to 250 MB of whitespace`, async () => describe(await b.upload('template', [{ name: 'ws.docx', bytes: ws }])));

  const million = makeDocx(para('{name}') + '<w:p><w:r><w:t>x</w:t></w:r></w:p>'.repeat(1_000_000));
  await phase(`generate ${FORMAT}: ${(million.length / 1e6).toFixed(1)} MB docx, 1,000,000 paragraphs`, () => generate(million, '{"name":"B"}'));

  const loopJson = JSON.stringify({ items: Array.from({ length: 1_000_000 }, (_, i) => ({ n: i })) });
  await phase(`generate ${FORMAT}: ${(loopJson.length / 1e6).toFixed(1)} MB JSON, 1,000,000 loop items`, () =>
    generate(makeDocx(para('{#items}') + para('item {n}') + para('{/items}')), loopJson));

  await phase(`two concurrent generates ${FORMAT} of the 1,000,000-paragraph docx`, async () =>
    (await Promise.all([generate(million, '{"name":"B"}'), generate(million, '{"name":"B"}')])).join(' | '));

  // Idle RSS after 300 uploads (each used to start a sleeping retention workflow that stayed in the worker's
  // workflow cache; now one sweeper serves them all).
  await new Promise((r) => setTimeout(r, 5_000));
  const before = treeRss(pid).service;
  for (let i = 0; i < 300; i++) await a.upload('data', [{ name: 'x.json', bytes: '{}' }]);
  await new Promise((r) => setTimeout(r, 5_000));
  console.log(JSON.stringify({ idleRssMbBefore300Uploads: Math.round(before), idleRssMbAfter300Uploads: mb(treeRss(pid)) }));
  // Merge threads end after 30 s idle.
  await new Promise((r) => setTimeout(r, 35_000));
  console.log(JSON.stringify({ idleRssMb35sLater: mb(treeRss(pid)) }));
} finally {
  clearInterval(sampler);
  await svc.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
