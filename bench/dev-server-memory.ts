// The embedded Temporal dev server's memory under a steady load (issue 28 §3): `docgen start` on embedded
// defaults, synchronous docx generates at a fixed rate for a fixed time (a template URL and GraphQL data
// served on loopback, so no upload is needed per request), the dev server's resident memory sampled every
// 10 s. Stops by itself; loopback only.
//
//   node bench/dev-server-memory.ts [--minutes 10] [--rate 5]
//
// Prints the samples (time, workflows completed, dev server RSS, docgen RSS) and the dev server's growth
// per workflow over the first and the second half of the run: a bounded server levels off (the second
// half's slope falls towards zero), an unbounded one keeps its slope.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { docgenCredentials, docgenStartEnv, spawnDocgenStart } from '../test/support/docgen-start.ts';
import { client } from '../test/support/http.ts';
import { makeDocx } from '../test/support/office.ts';

const { values } = parseArgs({ options: { minutes: { type: 'string', default: '10' }, rate: { type: 'string', default: '5' } } });
const minutes = Number(values.minutes);
const rate = Number(values.rate);

function rssMb(pid: number): number {
  try {
    const kb = /VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb ? Math.round(Number(kb) / 1024) : NaN;
  } catch {
    return NaN;
  }
}

// The template and the data, on loopback.
const template = makeDocx(['Invoice {customer.name}', '{#items}{name}: {qty}{/items}']);
const files = http.createServer((req, res) => {
  if (req.url === '/t.docx') return void res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(Buffer.from(template));
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        data: {
          customer: { name: 'Ada' },
          items: [
            { name: 'a', qty: 1 },
            { name: 'b', qty: 2 },
          ],
        },
      }),
    );
  });
});
await new Promise<void>((r) => files.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-devmem-'));
const env = await docgenStartEnv(dataDir, {
  OUTBOUND_ALLOW: '127.0.0.1',
  PAGE_COUNT: 'document',
  CONVERTER: 'none',
  METRICS_PORT: undefined,
});
const svc = await spawnDocgenStart(env);
const { pid } = JSON.parse(fs.readFileSync(path.join(dataDir, 'temporal', 'dev-server.json'), 'utf8')) as { pid: number };
const api = client(await docgenCredentials(svc.env));
const body = {
  template: { url: `${base}/t.docx`, fileFormat: 'docx' },
  data: { loadMethod: 'GraphQL', urn: `${base}/graphql`, query: 'query { customer { name } items { name qty } }' },
  document: { name: 'soak', fileFormat: 'docx', deliveryMethod: 'Storage', path: 'root', timezone: 'UTC', locale: 'en-US' },
};

let done = 0;
const statuses: Record<string, number> = {};
const samples: { s: number; workflows: number; server: number; docgen: number }[] = [];
const t0 = Date.now();
const sample = () =>
  samples.push({ s: Math.round((Date.now() - t0) / 1000), workflows: done, server: rssMb(pid), docgen: rssMb(svc.child.pid ?? 0) });
sample();
const sampler = setInterval(sample, 10_000);
const inFlight = new Set<Promise<void>>();
const end = t0 + minutes * 60_000;
for (let i = 0; Date.now() < end; i++) {
  const p = api.call('POST', '/documents/document/generate', { json: body }).then(
    (r) => {
      statuses[r.status] = (statuses[r.status] ?? 0) + 1;
      done++;
    },
    () => void (statuses.error = (statuses.error ?? 0) + 1),
  );
  inFlight.add(p);
  void p.finally(() => inFlight.delete(p));
  const next = t0 + ((i + 1) * 1000) / rate;
  await new Promise((r) => setTimeout(r, Math.max(0, next - Date.now())));
}
await Promise.all(inFlight);
sample();
clearInterval(sampler);

console.log(`dev server memory, ${minutes} min at ${rate} generates/s (pid ${pid}); answers ${JSON.stringify(statuses)}`);
console.log('   s  workflows  server MB  docgen MB');
for (const x of samples)
  console.log(
    `${String(x.s).padStart(4)}  ${String(x.workflows).padStart(9)}  ${String(x.server).padStart(9)}  ${String(x.docgen).padStart(9)}`,
  );
const mid = samples[Math.floor(samples.length / 2)]!;
const first = samples[1] ?? samples[0]!;
const last = samples[samples.length - 1]!;
const slope = (a: typeof first, b: typeof first) =>
  b.workflows > a.workflows ? Math.round(((b.server - a.server) * 1024) / (b.workflows - a.workflows)) : NaN;
console.log(
  `growth: ${slope(first, mid)} KB/workflow in the first half, ${slope(mid, last)} KB/workflow in the second; ${first.server} -> ${last.server} MB`,
);

await svc.stop();
files.close();
fs.rmSync(dataDir, { recursive: true, force: true });
