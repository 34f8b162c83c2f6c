// Benchmark (not a test): a small synchronous docx generate delivered to DriveA (the local fake of
// Microsoft Graph, test/fakes/graph, over HTTPS) against the same generate delivered to Storage, through
// `docgen start` and the HTTP API. Runs alternate between the two, so drift hits both alike. What it shows
// is the service's own cost of a DriveA delivery (token cache, folder lookups, upload, rename, journal),
// not Microsoft's latency.
//   node bench/drivea-latency.ts [--runs 20]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { findTemporalCli } from '../cli/temporal-dev.ts';
import { startGraphFake } from '../test/fakes/graph/server.ts';
import { docgenCredentials, docgenStartEnv, spawnDocgenStart } from '../test/support/docgen-start.ts';
import { TEST_CA_FILE } from '../test/support/https.ts';
import { client, generateBody } from '../test/support/http.ts';
import { makeDocx } from '../test/support/office.ts';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '20' } } });
const runs = Number(values.runs);
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] ?? 0) : ((s[m - 1] ?? 0) + (s[m] ?? 0)) / 2;
};
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] ?? 0;

const fake = await startGraphFake();
const drive = fake.addDrive('b!bench-drive');
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-bench-drivea-'));
const cli = findTemporalCli(process.env.TEMPORAL_CLI);
const svc = await spawnDocgenStart(
  await docgenStartEnv(dataDir, {
    ...(cli ? { TEMPORAL_CLI: cli } : {}),
    DRIVEA_GRAPH_URL: fake.graphUrl,
    DRIVEA_LOGIN_URL: fake.loginUrl,
    NODE_EXTRA_CA_CERTS: TEST_CA_FILE,
  }),
  { pollMs: 20, timeoutMs: 600_000 },
);
try {
  const api = client(await docgenCredentials(svc.env));
  const put = await api.call('PUT', '/common/connection/driveA', {
    json: { connection: { tenantId: fake.tenantId, clientId: fake.clientId, clientSecret: fake.clientSecret, driveId: drive } },
  });
  if (put.status >= 300) throw new Error(`connect failed: ${JSON.stringify(put.body)}`);
  const template = makeDocx(['Dear {customer.name},', 'Order {order} total {total}']);
  const data = { customer: { name: 'ACME & Co.' }, order: 'A-42', total: 99.5 };
  const times: Record<'Storage' | 'DriveA', number[]> = { Storage: [], DriveA: [] };
  for (let i = 0; i < runs + 3; i++) {
    for (const where of ['Storage', 'DriveA'] as const) {
      const t = await api.upload('template', [{ name: 't.docx', bytes: template }]);
      const d = await api.upload('data', [{ name: 'd.json', bytes: JSON.stringify(data) }]);
      const body = generateBody(t.body.result.data.files[0].id, d.body.result.data.files[0].id, {
        document: where === 'DriveA' ? { deliveryMethod: 'DriveA', path: 'Bench/Letters' } : {},
      });
      const t0 = performance.now();
      const res = await api.call('POST', '/documents/document/generate', { json: body });
      const t1 = performance.now();
      if (res.status !== 201) throw new Error(`${where} generate failed: ${JSON.stringify(res.body)}`);
      if (i >= 3) times[where].push(t1 - t0);
    }
  }
  const graphCalls = fake.log.filter((e) => e.path.startsWith('/v1.0/')).length;
  console.log(`node ${process.version}, ${os.cpus().length} cores, ${runs} runs each (after 3 warm-up pairs), alternating`);
  console.log('| delivery | median ms | p95 ms | min ms |');
  console.log('|---|---:|---:|---:|');
  for (const where of ['Storage', 'DriveA'] as const) {
    const xs = times[where];
    console.log(`| ${where} | ${median(xs).toFixed(0)} | ${pct(xs, 95).toFixed(0)} | ${Math.min(...xs).toFixed(0)} |`);
  }
  console.log(
    `Graph API calls per DriveA generate: ${(graphCalls / (runs + 3)).toFixed(1)}; token requests: ${fake.count('POST', '/oauth2/v2.0/token')}`,
  );
} finally {
  await svc.stop();
  await fake.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
