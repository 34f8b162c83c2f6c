// The scale-out topology on real engines, as processes with the same variables as docker-compose.yml:
// PostgreSQL, the production Temporal server on it (started by scripts/temporal-server.sh), an S3 server
// (versitygw), two `docgen api` and two `docgen worker` processes, each with its own data directory (no
// shared directory). N asynchronous generations (pdf and docx) while one worker is SIGKILLed and one API
// restarted: every acknowledged request gets exactly one callback and one document. Prints throughput and
// p95. Run: `npx vitest run --config test/cluster/vitest.config.ts` (.ci/run does; CLUSTER_N sets N).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freePort } from '../../cli/temporal-dev.ts';
import { startReceiver, type Receiver } from '../integration/async/receiver.ts';
import { docgenCredentials } from '../support/docgen-start.ts';
import { client } from '../support/http.ts';
import { makeDocx } from '../support/office.ts';
import { s3Env, s3Settings } from '../support/s3.ts';
import { runDocgen, stopProcess } from '../support/service-process.ts';
import { createPgDatabase } from '../support/stack.ts';
import { startTemporalServer, type TemporalServer } from '../support/temporal-server.ts';

const N = Number(process.env.CLUSTER_N ?? 40);
const CONCURRENCY = 8;

type Proc = ReturnType<typeof runDocgen>;

class Unavailable extends Error {}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

describe(`cluster: 2 api + 2 worker processes, production Temporal server, S3 storage, ${N} async generations`, () => {
  let temporal: TemporalServer;
  let receiver: Receiver;
  let common: NodeJS.ProcessEnv;
  const dirs: string[] = [];
  const apis: { env: NodeJS.ProcessEnv; proc: Proc; url: string }[] = [];
  const workers: { env: NodeJS.ProcessEnv; proc: Proc }[] = [];

  async function processEnv(role: string, extra: Record<string, string> = {}): Promise<NodeJS.ProcessEnv> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `docgen-cluster-${role}-`));
    dirs.push(dir);
    return { ...common, DOCGEN_DATA_DIR: dir, METRICS_PORT: String(await freePort()), ...extra };
  }
  const startApi = (env: NodeJS.ProcessEnv) => runDocgen(['api'], env, 'docgen api listening');
  const startWorker = (env: NodeJS.ProcessEnv) => runDocgen(['worker'], env, 'docgen worker polling');

  beforeAll(async () => {
    temporal = await startTemporalServer(inject('postgresUrl'), inject('temporalCli'));
    receiver = await startReceiver();
    common = {
      ...process.env,
      DATABASE_URL: await createPgDatabase(),
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_NAMESPACE: 'default',
      TEMPORAL_TASK_QUEUE: `cluster-${randomUUID()}`,
      ...s3Env(await s3Settings('cluster')),
      OUTBOUND_ALLOW: '127.0.0.1',
      CALLBACK_RETRY_SCHEDULE: '0,500,1000,2000,5000,10000,20000',
      CONVERTER_POOL_SIZE: '1',
      LOG_LEVEL: 'warn',
    };
    for (let i = 0; i < 2; i++) {
      const env = await processEnv(`worker${i}`);
      workers.push({ env, proc: startWorker(env) });
    }
    for (let i = 0; i < 2; i++) {
      const port = await freePort();
      const env = await processEnv(`api${i}`, { PORT: String(port) });
      apis.push({ env, proc: startApi(env), url: `http://127.0.0.1:${port}` });
    }
    await Promise.all([...workers, ...apis].map((p) => p.proc.started));
  }, 300_000);

  afterAll(async () => {
    for (const p of [...apis, ...workers]) await stopProcess(p.proc, 'SIGKILL');
    await receiver?.close();
    await temporal?.stop();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it('the schema script is idempotent and every process reports ready', async () => {
    expect(await temporal.run('schema')).toContain('temporal schema ready');
    expect(await temporal.run('namespace')).toContain('namespace default exists');
    for (const a of apis) {
      expect((await fetch(`${a.url}/v1/ready`)).status).toBe(200);
      // The public probe names no address; the details are on the (private) metrics port.
      const r = await fetch(`http://127.0.0.1:${a.env.METRICS_PORT}/ready`);
      const body = (await r.json()) as { checks: Record<string, { detail: string }> };
      expect(r.status, JSON.stringify(body)).toBe(200);
      expect(body.checks.temporal!.detail).toContain(temporal.address);
      expect(body.checks.storage!.detail).toMatch(/^s3:\/\//);
      expect(body.checks.converter!.detail).toMatch(/worker poller\(s\)/);
    }
    for (const w of workers) {
      const r = await fetch(`http://127.0.0.1:${w.env.METRICS_PORT}/ready`);
      expect(r.status, await r.clone().text()).toBe(200);
    }
  });

  it('every acknowledged request gets exactly one callback and one document, through a worker kill and an API restart', async () => {
    const creds = await docgenCredentials(apis[0]!.env, 'cluster');
    const sdks = apis.map((a) => client({ ...creds, baseUrl: `${a.url}/v1` }));
    const token = await sdks[0]!.call('POST', '/common/client/token', { json: { sub: 'cluster-secret', iss: receiver.url, dest: '/cb' } });
    expect(token.status, JSON.stringify(token.body)).toBe(200);
    const clientToken = token.body.result.data.token as string;

    const acknowledged = new Map<number, { sentAt: number; format: string }>();
    let refused = 0;
    let next = 0;
    let killed = false;
    let restarted: Promise<void> | undefined;
    const started = Date.now();

    /** One request: uploads and the async generate on one API; a connection failure (the API being
     *  restarted) retries everything on the other API with the same Idempotency-Key. */
    async function one(i: number): Promise<void> {
      const format = i % 2 === 0 ? 'pdf' : 'docx';
      const key = `cluster-${i}`;
      for (let attempt = 0; attempt < 4; attempt++) {
        const sdk = sdks[(i + attempt) % 2]!;
        const sentAt = Date.now();
        try {
          const t = await sdk.upload('template', [{ name: 't.docx', bytes: makeDocx([`Request ${i}: {who}`]) }]);
          const d = await sdk.upload('data', [{ name: 'd.json', bytes: JSON.stringify({ who: `client ${i}` }) }]);
          if (t.status === 503 || d.status === 503) throw new Unavailable(`upload ${t.status}/${d.status}`);
          if (t.status !== 201 || d.status !== 201) throw new Error(`upload ${t.status}/${d.status}`);
          const queued = await sdk.call('POST', '/documents/document/generate/async', {
            headers: { 'x-client-authorization': clientToken, 'idempotency-key': key },
            json: {
              template: { urn: t.body.result.data.files[0].id, loadMethod: 'Storage', fileFormat: 'docx' },
              data: { urn: d.body.result.data.files[0].id, loadMethod: 'Storage' },
              document: { name: `doc-${i}`, fileFormat: format, deliveryMethod: 'Storage', path: 'root', timezone: 'UTC', locale: 'en-US' },
              externalContext: { i },
            },
          });
          if (queued.status === 201) {
            acknowledged.set(i, { sentAt, format });
            return;
          }
          if (queued.status === 503) throw new Unavailable('generate/async 503');
          throw new Error(`generate/async ${queued.status} ${JSON.stringify(queued.body)}`);
        } catch (err) {
          // Only the API being restarted is expected: a connection failure (fetch's TypeError: refused,
          // reset, broken pipe) or Fastify's 503 while it closes. Anything else is a bug.
          if (!(err instanceof Unavailable) && !(err instanceof TypeError && err.message === 'fetch failed')) throw err;
          refused++;
          await new Promise((r) => setTimeout(r, 200));
        }
      }
    }

    async function lane(): Promise<void> {
      while (next < N) {
        const i = next++;
        await one(i);
        // The faults, while requests are in flight.
        if (!killed && acknowledged.size >= Math.floor(N / 3)) {
          killed = true;
          expect(await stopProcess(workers[1]!.proc, 'SIGKILL')).toBe(null);
        }
        if (!restarted && acknowledged.size >= Math.floor(N / 2)) {
          restarted = (async () => {
            await stopProcess(apis[1]!.proc, 'SIGTERM');
            apis[1]!.proc = startApi(apis[1]!.env);
            await apis[1]!.proc.started;
          })();
          restarted.catch(() => undefined); // awaited below; a failure is reported there
        }
      }
    }
    await Promise.all(Array.from({ length: CONCURRENCY }, () => lane()));
    await restarted;
    expect(killed).toBe(true);

    // Every acknowledged request calls back (the killed worker's steps time out and run on the other).
    await receiver.waitFor('/cb', acknowledged.size, 300_000);
    const finished = Date.now();
    await new Promise((r) => setTimeout(r, 3_000)); // stragglers would be duplicates
    const deliveries = receiver.at('/cb');
    const byRequest = new Map<number, { at: number; body: any; id: string }[]>();
    for (const d of deliveries) {
      const body = JSON.parse(d.body) as { externalContext?: { i: number } };
      const i = body.externalContext?.i ?? -1;
      byRequest.set(i, [...(byRequest.get(i) ?? []), { at: d.at, body, id: String(d.headers['webhook-id']) }]);
    }
    const duplicates = [...byRequest.values()].filter((v) => v.length > 1).length;
    const latencies = [...acknowledged].map(([i, a]) => (byRequest.get(i)?.[0]?.at ?? Number.NaN) - a.sentAt);
    const seconds = (finished - started) / 1000;

    // Documents: one record per request, one object per document in the bucket.
    const docs = await sdks[0]!.call('GET', '/documents/document/list?top=1000');
    expect(docs.status).toBe(200);
    const figures = {
      requests: N,
      accepted: acknowledged.size,
      refusedConnections: refused,
      callbacks: deliveries.length,
      documents: docs.body.result.data.rowCount as number,
      duplicates,
      seconds: Number(seconds.toFixed(1)),
      workflowsPerSecond: Number((acknowledged.size / seconds).toFixed(2)),
      p50Ms: percentile(latencies, 50),
      p95Ms: percentile(latencies, 95),
    };
    console.log(`cluster figures: ${JSON.stringify(figures)}`);

    expect(acknowledged.size).toBe(N); // every request was acknowledged by one API or the other
    expect(duplicates).toBe(0);
    expect([...byRequest.keys()].sort((a, b) => a - b)).toEqual([...acknowledged.keys()].sort((a, b) => a - b));
    expect(figures.documents).toBe(acknowledged.size);
    for (const [i, [delivery]] of byRequest) {
      expect(delivery!.body.result?.statusCode, JSON.stringify(delivery!.body)).toBe(201);
      const doc = delivery!.body.result.data.document;
      expect(doc.name).toBe(`doc-${i}.${acknowledged.get(i)!.format}`);
    }
    // Each document downloads from either API (the bytes live in the bucket, not on a machine).
    for (const i of [0, 1, N - 1]) {
      const urn = byRequest.get(i)![0]!.body.result.data.document.urn as string;
      const file = await sdks[(i + 1) % 2]!.download(urn);
      expect(file.status).toBe(200);
      expect(Buffer.from(file.bytes.subarray(0, 4)).toString('latin1')).toBe(i % 2 === 0 ? '%PDF' : 'PK\u0003\u0004');
    }
    // The surviving worker's metrics saw the conversions.
    const metrics = await (await fetch(`http://127.0.0.1:${workers[0]!.env.METRICS_PORT}/metrics`)).text();
    expect(metrics).toMatch(/^docgen_activity_duration_seconds_count\{activity="convertDocument",outcome="ok"\} [1-9]/m);
  }, 600_000);
});
