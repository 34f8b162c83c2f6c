// How long `docgen start` takes to recover from a SIGKILL (issue 28 §3): its Temporal dev server goes down
// with it (setpriv's parent-death signal), so a restart starts the server again on its SQLite file, then the
// worker and the API, and the runs in flight at the kill finish on the new worker once their lost tasks
// time out. Synchronous docx generates at a steady rate, each with its own Idempotency-Key, then a burst of
// ten, and 150 ms into it the service is SIGKILLed and started again at once on the same data directory and
// ports; every request that got no answer is sent again with its key until it answers. Loopback only.
//
//   node bench/start-kill-recovery.ts [--rounds 3] [--rate 5] [--pdf]
//
// --pdf: pdf outputs, so the restart also starts the LibreOffice pool (docx outputs: no converter).
//
// Prints, per round, from the kill: the restart's ready line, the first new generate answered, and the last
// request in flight at the kill answered (its run finished), with how many were in flight.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { docgenCredentials, docgenStartEnv, type DocgenStart, spawnDocgenStart } from '../test/support/docgen-start.ts';
import { client } from '../test/support/http.ts';
import { makeDocx } from '../test/support/office.ts';

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '3' }, rate: { type: 'string', default: '5' }, pdf: { type: 'boolean', default: false } },
});
const rounds = Number(values.rounds);
const rate = Number(values.rate);

const template = makeDocx(['Invoice {customer.name}']);
const files = http.createServer((req, res) => {
  if (req.url === '/t.docx') return void res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(Buffer.from(template));
  req.resume();
  req.on('end', () =>
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: { customer: { name: 'Ada' } } })),
  );
});
await new Promise<void>((r) => files.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
const body = {
  template: { url: `${base}/t.docx`, fileFormat: 'docx' },
  data: { loadMethod: 'GraphQL', urn: `${base}/graphql`, query: 'query { customer { name } }' },
  document: {
    name: 'kill',
    fileFormat: values.pdf ? 'pdf' : 'docx',
    deliveryMethod: 'Storage',
    path: 'root',
    timezone: 'UTC',
    locale: 'en-US',
  },
};

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-killrec-'));
let svc: DocgenStart = await spawnDocgenStart(
  await docgenStartEnv(dataDir, { OUTBOUND_ALLOW: '127.0.0.1', PAGE_COUNT: 'document', CONVERTER: values.pdf ? undefined : 'none' }),
);
const api = client(await docgenCredentials(svc.env));
const send = (key: string) => api.call('POST', '/documents/document/generate', { json: body, headers: { 'idempotency-key': key } });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const s = (ms: number) => (ms / 1000).toFixed(1);

console.log(
  `docgen start SIGKILLed under ${rate} sync ${values.pdf ? 'pdf' : 'docx'} generates/s, restarted at once (${rounds} rounds); seconds from the kill:`,
);
console.log('round  ready  first new 201  last in-flight 201  in flight');
for (let round = 1; round <= rounds; round++) {
  // Steady load for a few seconds, then the kill while requests are in flight.
  const pending = new Map<string, Promise<number>>();
  const loadFor = 3_000 + Math.random() * 2_000;
  const t0 = Date.now();
  while (Date.now() - t0 < loadFor) {
    const key = randomUUID();
    pending.set(
      key,
      send(key).then(
        (r) => r.status,
        () => 0,
      ),
    );
    await sleep(1000 / rate);
  }
  // A burst, so that runs are in flight (started, their steps running) when the kill comes.
  for (let i = 0; i < 10; i++) {
    const key = randomUUID();
    pending.set(
      key,
      send(key).then(
        (r) => r.status,
        () => 0,
      ),
    );
  }
  await sleep(150);
  await svc.stop('SIGKILL');
  const killed = Date.now();
  const statuses = await Promise.all(pending.values());
  const inFlight = [...pending.keys()].filter((_, i) => statuses[i] !== 201);
  svc = await spawnDocgenStart(svc.env);
  const ready = Date.now() - killed;
  // A new request, and each one the kill cut, sent again with its key until it answers 201.
  const until201 = async (key: string): Promise<number> => {
    for (;;) {
      const r = await send(key).catch(() => undefined);
      if (r?.status === 201) return Date.now() - killed;
      await sleep(250);
    }
  };
  const [firstNew, ...cut] = await Promise.all([until201(randomUUID()), ...inFlight.map(until201)]);
  const lastCut = cut.length > 0 ? Math.max(...cut) : NaN;
  console.log(
    `${String(round).padStart(5)}  ${s(ready).padStart(5)}  ${s(firstNew!).padStart(13)}  ${s(lastCut).padStart(18)}  ${String(inFlight.length).padStart(9)}`,
  );
}
await svc.stop();
files.close();
fs.rmSync(dataDir, { recursive: true, force: true });
