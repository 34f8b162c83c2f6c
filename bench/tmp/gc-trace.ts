import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { docgenCredentials, docgenStartEnv, repoRoot, spawnDocgenStart } from '../../test/support/docgen-start.ts';
import { client } from '../../test/support/http.ts';
import { invoiceRows } from '../../test/support/invoice-rows.ts';
const N = Number(process.argv[2] ?? 200);
const format = process.argv[3] ?? 'pdf';
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gc-'));
const env = await docgenStartEnv(dataDir, { RATE_LIMIT_PER_MINUTE: '0', NODE_OPTIONS: `--import ${path.join(repoRoot, 'bench/tmp/gc-observer.mjs')} ${process.env.EXTRA_NODE_OPTIONS ?? ''}`, GC_STATS_FILE: '/tmp/gcstats', LOG_LEVEL: 'warn' });
const svc = await spawnDocgenStart(env, { timeoutMs: 180_000 });
const api = client(await docgenCredentials({ ...svc.env, NODE_OPTIONS: '' }, 'gc'));
const tpl = fs.readFileSync(path.join(repoRoot, 'examples', 'invoice.docx'));
const t = await api.upload('template', [{ name: 'invoice.docx', bytes: tpl }]);
const rows = invoiceRows(N);
const d = await api.upload('data', [{ name: 'r.jsonl', bytes: rows.map((r) => JSON.stringify(r)).join('\n') }]);
const threads = () => { const out: Record<string, number> = {}; for (const t of fs.readdirSync(`/proc/${svc.child.pid}/task`)) { try { const st = fs.readFileSync(`/proc/${svc.child.pid}/task/${t}/stat`, 'utf8'); const comm = st.slice(st.indexOf('(') + 1, st.lastIndexOf(')')); const f = st.slice(st.lastIndexOf(')') + 2).split(' '); const k = comm.replace(/\d+$/, '#'); out[k] = (out[k] ?? 0) + (Number(f[11]) + Number(f[12])) * 10; } catch {} } return out; };
const th0 = threads();
const mark0 = JSON.parse(fs.readFileSync(`/tmp/gcstats.${svc.child.pid}`, 'utf8'));
const res = await api.call('POST', '/documents/document/generate/batch', { json: {
  template: { urn: t.body.result.data.files[0].id, loadMethod: 'Storage', fileFormat: 'docx', name: 'invoice.docx' },
  data: { urn: d.body.result.data.files[0].id, loadMethod: 'Storage' },
  document: { name: 'Invoice {number}', fileFormat: format, deliveryMethod: 'Storage', path: 'root', timezone: 'Europe/London', locale: 'en-GB' } } });
const id = res.body.result.data.batch.id;
for (;;) { const b = (await api.call('GET', `/documents/batch/${id}`)).body.result.data.batch; if (b.status !== 'running') { console.log(b.status, b.rowsDone); break; } await new Promise((r) => setTimeout(r, 500)); }
const before = mark0;
await new Promise((r) => setTimeout(r, 1500));
const after = JSON.parse(fs.readFileSync(`/tmp/gcstats.${svc.child.pid}`, 'utf8'));
console.log('before batch', JSON.stringify(before.stats));
for (const [k, v] of Object.entries(after.stats) as [string, { n: number; ms: number }][]) { const b0 = before.stats[k] ?? { n: 0, ms: 0 }; console.log(k, v.n - b0.n, 'GCs', (v.ms - b0.ms).toFixed(0), 'ms', ((v.ms - b0.ms) / N).toFixed(2), 'ms/row'); }
const th1 = threads(); for (const k of Object.keys(th1).sort((a, b) => (th1[b]! - (th0[b] ?? 0)) - (th1[a]! - (th0[a] ?? 0)))) console.log('thread', k, ((th1[k]! - (th0[k] ?? 0)) / N).toFixed(2), 'ms/row');
console.log('mem', JSON.stringify(after.mem));
await svc.stop();
process.exit(0);
