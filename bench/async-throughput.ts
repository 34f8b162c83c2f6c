// Benchmark (not a test): throughput of asynchronous generation. Starts the real `docgen start` (free
// ports, a temporary DOCGEN_DATA_DIR, embedded Temporal dev server and PGlite), runs a callback receiver
// in this process, fires N `POST /documents/document/generate/async` with a bounded number in flight and
// counts the callbacks. Reports workflows per second (N / first request -> last callback), request ->
// callback latency, the 201 acknowledgement latency, and checks that every generation called back exactly
// once (per webhook-id and per request), signed, with a success body. Exit code 1 on any discrepancy.
//   npm run bench:async [-- --n 200 --concurrency 16 --format docx|pdf]
// Uploaded templates and data files are consumed by the generate that names them, so one pair is uploaded
// per generation before the timed phase; uploads, warm-up and token creation are outside the timing.
// --with-uploads: each timed generation uploads its pair first (the whole flow a caller runs).
// --page-count auto|exact|document: the service's PAGE_COUNT (default: its own default, auto).
// It also prints the CPU each generation cost the service's processes (docgen, Temporal, LibreOffice).
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { findTemporalCli } from '../cli/temporal-dev.ts';
import { verifyCallback } from '../client/webhooks.ts';
import { docgenCredentials, docgenStartEnv, spawnDocgenStart } from '../test/support/docgen-start.ts';
import { client, generateBody } from '../test/support/http.ts';
import { makeDocx } from '../test/support/office.ts';
import { medianSteps, type Step, stepsOf } from './breakdown.ts';
import { cpuSpent, treeCpuMs } from './processes.ts';

const { values } = parseArgs({
  options: {
    n: { type: 'string', default: '200' },
    concurrency: { type: 'string', default: '16' },
    format: { type: 'string', default: 'docx' },
    warmup: { type: 'string', default: '3' },
    timeout: { type: 'string', default: '600' },
    grace: { type: 'string', default: '3' },
    'keep-data': { type: 'boolean', default: false },
    'with-uploads': { type: 'boolean', default: false },
    'page-count': { type: 'string' },
  },
});
const N = Number(values.n);
const CONCURRENCY = Number(values.concurrency);
const FORMAT = values.format;
const WARMUP = Number(values.warmup);
const TIMEOUT_MS = Number(values.timeout) * 1000;
const GRACE_MS = Number(values.grace) * 1000;
for (const [name, v, min] of [
  ['n', N, 1],
  ['concurrency', CONCURRENCY, 1],
  ['warmup', WARMUP, 0],
  ['timeout', TIMEOUT_MS, 1],
  ['grace', GRACE_MS, 0],
] as const) {
  if (!Number.isInteger(v) || v < min) throw new Error(`--${name} must be an integer >= ${min}`);
}
if (FORMAT !== 'docx' && FORMAT !== 'pdf') throw new Error('--format must be docx or pdf');

const CALLBACK_PATH = '/cb';
const BREAKDOWN_SAMPLE = 20;
const CALLBACK_BEARER = 'bench';

/** Nearest-rank percentile. */
const pct = (xs: number[], p: number) => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? NaN;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// --- the service --------------------------------------------------------------------------------------

interface Service {
  env: NodeJS.ProcessEnv;
  temporalAddress: string;
  /** Where the output is now, for logsSince. */
  mark(): number;
  /** Lines printed since `mark` (LOG_LEVEL=warn: warnings and errors only). */
  logsSince(mark: number): string[];
  tail(): string;
  stop(): Promise<number | null>;
  /** CPU ms of the service's process tree so far, per kind of process (bench/processes.ts). */
  cpu(): Map<string, number>;
}

let stopService: (() => Promise<unknown>) | undefined;

async function startService(dataDir: string): Promise<Service> {
  const temporalCli = findTemporalCli(process.env.TEMPORAL_CLI);
  // One API key sends the whole burst (uploads and generates): the per-key rate limit would turn that into
  // 429s, and this measures the pipeline's throughput, not the limiter.
  const env = await docgenStartEnv(dataDir, {
    OUTBOUND_ALLOW: '127.0.0.1',
    RATE_LIMIT_PER_MINUTE: '0',
    ...(temporalCli ? { TEMPORAL_CLI: temporalCli } : {}),
    ...(values['page-count'] ? { PAGE_COUNT: values['page-count'] } : {}),
  });
  const started = await spawnDocgenStart(env, { timeoutMs: 180_000 });
  stopService = () => started.stop();
  await sleep(200); // the banner printed with the ready line
  return {
    env: started.env,
    temporalAddress: `127.0.0.1:${started.env.TEMPORAL_PORT}`,
    mark: () => started.output().length,
    logsSince: (mark) =>
      started
        .output()
        .slice(mark)
        .split('\n')
        .map((l) => l.replace(/\x1b\[[0-9;]*m/g, '').trim())
        .filter(Boolean),
    tail: () => started.output().slice(-4000),
    stop: () => started.stop(),
    cpu: () => treeCpuMs(started.child.pid!),
  };
}

// --- the callback receiver ----------------------------------------------------------------------------

interface Delivery {
  at: number;
  path: string;
  webhookId: string;
  authorization: string;
  signatureOk: boolean;
  body: Record<string, any> | undefined;
  raw: string;
}

async function startCallbackReceiver(secret: () => string | undefined) {
  const deliveries: Delivery[] = [];
  const listeners = new Set<() => void>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = performance.now();
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: Record<string, any> | undefined;
      try {
        body = JSON.parse(raw) as Record<string, any>;
      } catch {
        body = undefined;
      }
      const s = secret();
      deliveries.push({
        at,
        path: (req.url ?? '/').split('?')[0] ?? '/',
        webhookId: String(req.headers['webhook-id'] ?? ''),
        authorization: String(req.headers.authorization ?? ''),
        // A large tolerance: a slow run must not read as a bad signature.
        signatureOk: s !== undefined && verifyCallback(s, req.headers, raw, { toleranceSeconds: 3600 }),
        body,
        raw,
      });
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok');
      for (const l of listeners) l();
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    deliveries,
    /** Resolves true once `done()` holds, false after `timeoutMs`. */
    until(done: () => boolean, timeoutMs: number): Promise<boolean> {
      if (done()) return Promise.resolve(true);
      return new Promise((resolve) => {
        const check = () => {
          if (done()) finish(true);
        };
        const timer = setTimeout(() => finish(false), timeoutMs);
        const finish = (v: boolean) => {
          clearTimeout(timer);
          listeners.delete(check);
          resolve(v);
        };
        listeners.add(check);
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// --- the run --------------------------------------------------------------------------------------------

interface Job {
  i: number;
  body: Omit<ReturnType<typeof generateBody>, 'externalContext'> & { externalContext: Record<string, unknown> };
  sentAt?: number;
  ackAt?: number;
  status?: number;
  operationId?: string;
  failure?: string;
}

async function pool<T>(items: T[], concurrency: number, fn: (item: T) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) {
        const item = items[next++] as T;
        await fn(item);
      }
    }),
  );
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-bench-async-'));
let webhookSecret: string | undefined;
const receiver = await startCallbackReceiver(() => webhookSecret);
let exitCode: number;
const onSignal = (sig: NodeJS.Signals) => {
  console.error(`\n${sig}: stopping the service`);
  void (stopService?.() ?? Promise.resolve()).finally(() => process.exit(130));
};
process.once('SIGINT', onSignal);
process.once('SIGTERM', onSignal);

try {
  const loadBefore = os.loadavg();
  const t0Start = performance.now();
  const svc = await startService(dataDir);
  const startMs = performance.now() - t0Start;
  const api = client(await docgenCredentials(svc.env));

  const tok = await api.call('POST', '/common/client/token', { json: { sub: CALLBACK_BEARER, iss: receiver.url, dest: CALLBACK_PATH } });
  if (tok.status !== 200) throw new Error(`client token: ${tok.status} ${JSON.stringify(tok.body)}`);
  const clientToken = tok.body.result.data.token as string;
  webhookSecret = tok.body.result.data.webhookSecret as string | undefined;

  const template = makeDocx(['Dear {customer.name},', 'Order {order} total {total}', '{#items}{name}: {qty}{/items}']);
  const dataOf = (i: number) => ({
    customer: { name: `ACME & Co. #${i}` },
    order: `A-${i}`,
    total: 99.5 + i,
    items: [{ name: 'widget', qty: i }],
  });
  const document = { name: `bench-${FORMAT}`, fileFormat: FORMAT };

  const logMark = svc.mark();
  // Prepare: one template and one data upload per generation (a generate consumes both).
  const p0 = performance.now();
  const warmJobs: Job[] = Array.from({ length: WARMUP }, (_, k) => ({ i: -(k + 1), body: undefined as never }));
  const jobs: Job[] = Array.from({ length: N }, (_, i) => ({ i, body: undefined as never }));
  const prepare = async (job: Job) => {
    const t = await api.upload('template', [{ name: `t${job.i}.docx`, bytes: template }]);
    const d = await api.upload('data', [{ name: `d${job.i}.json`, bytes: JSON.stringify(dataOf(job.i)) }]);
    if (t.status !== 201 || d.status !== 201)
      throw new Error(`upload failed: ${t.status} ${JSON.stringify(t.body)} / ${d.status} ${JSON.stringify(d.body)}`);
    const body = generateBody(t.body.result.data.files[0].id as string, d.body.result.data.files[0].id as string, { document });
    job.body = { ...body, externalContext: job.i < 0 ? { warmup: -job.i } : { i: job.i } };
  };
  await pool(values['with-uploads'] ? warmJobs : [...warmJobs, ...jobs], Math.max(CONCURRENCY, 4), prepare);
  const prepareMs = performance.now() - p0;

  const send = async (job: Job) => {
    job.sentAt = performance.now();
    try {
      const res = await api.call('POST', '/documents/document/generate/async', {
        json: job.body,
        headers: { 'x-client-authorization': clientToken },
      });
      job.ackAt = performance.now();
      job.status = res.status;
      job.operationId = res.headers.get('x-operation-id') ?? undefined;
      if (res.status !== 201) job.failure = `${res.status} ${JSON.stringify(res.body).slice(0, 300)}`;
    } catch (err) {
      job.ackAt = performance.now();
      job.failure = `request error: ${(err as Error).message}`;
    }
  };
  const ctxKey = (ctx: unknown) => {
    const c = (ctx ?? {}) as { i?: unknown; warmup?: unknown };
    return typeof c.i === 'number' ? c.i : typeof c.warmup === 'number' ? -c.warmup : undefined;
  };
  const arrived = (i: number) => receiver.deliveries.some((d) => ctxKey(d.body?.externalContext) === i);

  // Warm-up: a few sequential generations (first render, first callback connection, LibreOffice for pdf).
  for (const job of warmJobs) {
    await send(job);
    if (job.failure) throw new Error(`warm-up generate failed: ${job.failure}`);
    if (!(await receiver.until(() => arrived(job.i), 120_000))) throw new Error('warm-up callback did not arrive within 120 s');
  }
  await sleep(500);
  const warmDeliveries = receiver.deliveries.length;
  const loadAtStart = os.loadavg();

  // Timed phase.
  const cpuAtStart = svc.cpu();
  const t0 = performance.now();
  await pool(jobs, CONCURRENCY, values['with-uploads'] ? async (job) => send(await prepare(job).then(() => job)) : send);
  const tAcked = performance.now();
  const accepted = jobs.filter((j) => j.status === 201);
  const timedDeliveries = () => receiver.deliveries.slice(warmDeliveries);
  const allArrived = () => {
    const seen = new Set(timedDeliveries().map((d) => ctxKey(d.body?.externalContext)));
    return accepted.every((j) => seen.has(j.i));
  };
  const complete = await receiver.until(allArrived, TIMEOUT_MS);
  const loadAtEnd = os.loadavg();
  // What the service spent per generation: the ceiling the machine puts on throughput is cores / this.
  const cpuPerWorkflow = [...cpuSpent(cpuAtStart, svc.cpu())].filter(([, ms]) => ms > 0).map(([group, ms]) => ({ group, ms: ms / N }));
  const cpuTotal = cpuPerWorkflow.reduce((a, c) => a + c.ms, 0);
  // Stragglers and duplicates: keep listening a little longer.
  await sleep(GRACE_MS);

  // --- analysis ---
  const deliveries = timedDeliveries();
  const byWebhookId = new Map<string, Delivery[]>();
  const byIndex = new Map<number, Delivery[]>();
  const problems: string[] = [];
  for (const d of deliveries) {
    byWebhookId.set(d.webhookId, [...(byWebhookId.get(d.webhookId) ?? []), d]);
    const k = ctxKey(d.body?.externalContext);
    if (k === undefined || k < 0) {
      problems.push(`callback without a known externalContext (webhook-id ${d.webhookId || '(none)'}): ${d.raw.slice(0, 200)}`);
      continue;
    }
    byIndex.set(k, [...(byIndex.get(k) ?? []), d]);
  }
  const duplicateIds = [...byWebhookId].filter(([, ds]) => ds.length > 1);
  const duplicateIndexes = [...byIndex].filter(([, ds]) => ds.length > 1);
  const missing = jobs.filter((j) => !byIndex.has(j.i));
  const missingAccepted = missing.filter((j) => j.status === 201);
  const requestFailures = jobs.filter((j) => j.failure);
  const errorEnvelopes = deliveries.filter((d) => !d.body || d.body.error || !d.body.result);
  const badSignatures = deliveries.filter((d) => !d.signatureOk);
  const badAuth = deliveries.filter((d) => d.authorization !== `Bearer ${CALLBACK_BEARER}`);
  const badPath = deliveries.filter((d) => d.path !== CALLBACK_PATH);
  const mismatched = jobs.filter((j) => {
    const d = byIndex.get(j.i)?.[0];
    return d && (d.body?.operationId !== j.operationId || d.webhookId !== `msg_${j.operationId}`);
  });
  const urns = deliveries.map((d) => d.body?.result?.data?.document?.urn as string | undefined).filter((u): u is string => Boolean(u));
  const duplicateUrns = urns.length - new Set(urns).size;
  const wrongFormat = deliveries.filter((d) => d.body?.result && d.body.result.data?.document?.fileFormat !== FORMAT);

  const firstCallbackOf = (j: Job) => byIndex.get(j.i)?.[0]?.at;
  const e2e = jobs.flatMap((j) =>
    j.sentAt !== undefined && firstCallbackOf(j) !== undefined ? [(firstCallbackOf(j) as number) - j.sentAt] : [],
  );
  const ack = accepted.map((j) => (j.ackAt as number) - (j.sentAt as number));
  const lastCallback = Math.max(...jobs.map((j) => firstCallbackOf(j) ?? -Infinity));
  const firstCallback = Math.min(...jobs.map((j) => firstCallbackOf(j) ?? Infinity));
  const wallMs = Number.isFinite(lastCallback) ? lastCallback - t0 : NaN;
  // Only meaningful when every generation called back.
  const wps = missing.length === 0 ? N / (wallMs / 1000) : NaN;
  // The worker's drain rate once every request is queued (no more API work competing for the CPU).
  const afterAcks = jobs.filter((j) => (firstCallbackOf(j) ?? -Infinity) > tAcked).length;
  const drainPerSecond = afterAcks / ((lastCallback - tAcked) / 1000);

  // Cross-checks in the service: one document record per generation, workflow outcomes in Temporal.
  const docs = await api.call('GET', '/documents/document/list?top=1');
  const documentRecords = docs.status === 200 ? (docs.body.result.data.rowCount as number) : undefined;
  const workflows: Record<string, number> = {};
  const sampledSteps: Step[][] = [];
  try {
    const connection = await Connection.connect({ address: svc.temporalAddress });
    try {
      const temporal = new Client({ connection });
      for (const status of ['Running', 'Completed', 'Failed', 'TimedOut', 'Terminated']) {
        const c = await temporal.workflow.count(`WorkflowType = 'generateDocumentAsync' AND ExecutionStatus = '${status}'`);
        if (c.count > 0) workflows[status] = c.count;
      }
      // Where the time goes: the histories of up to BREAKDOWN_SAMPLE generations spread over the run.
      const sample = jobs.filter((j) => j.operationId && firstCallbackOf(j) !== undefined);
      const step = Math.max(1, Math.floor(sample.length / BREAKDOWN_SAMPLE));
      for (let k = 0; k < sample.length; k += step) {
        const j = sample[k] as Job;
        const history = await temporal.workflow.getHandle(`generate-async-${j.operationId}`).fetchHistory();
        sampledSteps.push(
          stepsOf(history, performance.timeOrigin + (j.sentAt as number), performance.timeOrigin + (firstCallbackOf(j) as number)),
        );
      }
    } finally {
      await connection.close();
    }
  } catch (err) {
    workflows.unavailable = 1;
    console.error(`(temporal count failed: ${(err as Error).message})`);
  }
  const serviceLogs = svc.logsSince(logMark);

  if (!complete) problems.push(`timed out after ${TIMEOUT_MS / 1000} s waiting for callbacks`);
  if (missing.length)
    problems.push(
      `${missing.length} generation(s) without a callback (${missingAccepted.length} of them acknowledged 201): i = ${missing
        .slice(0, 20)
        .map((j) => j.i)
        .join(', ')}`,
    );
  if (duplicateIds.length)
    problems.push(
      `${duplicateIds.length} webhook-id(s) delivered more than once: ${duplicateIds
        .slice(0, 5)
        .map(([id, ds]) => `${id} x${ds.length}`)
        .join(', ')}`,
    );
  if (duplicateIndexes.length)
    problems.push(
      `${duplicateIndexes.length} request(s) called back more than once: ${duplicateIndexes
        .slice(0, 5)
        .map(([i, ds]) => `i=${i} x${ds.length} (ids ${[...new Set(ds.map((d) => d.webhookId))].join(' ')})`)
        .join(', ')}`,
    );
  if (requestFailures.length)
    problems.push(`${requestFailures.length} request(s) not acknowledged 201, e.g. ${requestFailures[0]?.failure}`);
  if (errorEnvelopes.length)
    problems.push(`${errorEnvelopes.length} callback(s) carried an error envelope, e.g. ${errorEnvelopes[0]?.raw.slice(0, 400)}`);
  if (badSignatures.length) problems.push(`${badSignatures.length} callback(s) with a webhook-signature that does not verify`);
  if (badAuth.length) problems.push(`${badAuth.length} callback(s) without Authorization: Bearer ${CALLBACK_BEARER}`);
  if (badPath.length) problems.push(`${badPath.length} callback(s) to another path than ${CALLBACK_PATH}`);
  if (mismatched.length)
    problems.push(`${mismatched.length} callback(s) whose operationId / webhook-id does not match the request's x-operation-id`);
  if (duplicateUrns) problems.push(`${duplicateUrns} document urn(s) reported by more than one callback`);
  if (wrongFormat.length) problems.push(`${wrongFormat.length} callback(s) with a document format other than ${FORMAT}`);
  if (documentRecords !== undefined && documentRecords !== N + WARMUP)
    problems.push(`document list rowCount ${documentRecords}, expected ${N + WARMUP} (N + warm-up)`);
  if (documentRecords === undefined) problems.push(`document list failed: ${docs.status}`);
  if ((workflows.Completed ?? 0) !== N + WARMUP && !workflows.unavailable)
    problems.push(`Temporal: ${JSON.stringify(workflows)} generateDocumentAsync runs, expected ${N + WARMUP} Completed`);
  exitCode = problems.length ? 1 : 0;

  // --- report ---
  const f = (ms: number) => (Number.isFinite(ms) ? (ms < 10 ? ms.toFixed(1) : ms.toFixed(0)) : '-');
  const la = (l: number[]) => l.map((x) => x.toFixed(2)).join(' ');
  console.log('');
  console.log(`docgen async throughput: node ${process.version}, ${os.cpus().length} cores, ${os.cpus()[0]?.model ?? ''}`);
  console.log(
    `n=${N} concurrency=${CONCURRENCY} format=${FORMAT} (docx template -> ${FORMAT}${FORMAT === 'pdf' ? ' via LibreOffice' : ''}), warm-up ${WARMUP}, grace ${GRACE_MS / 1000} s${values['page-count'] ? `, PAGE_COUNT=${values['page-count']}` : ''}`,
  );
  const prepared = values['with-uploads'] ? WARMUP : N + WARMUP;
  console.log(
    `service ready in ${f(startMs)} ms; prepared ${2 * prepared} uploads in ${f(prepareMs)} ms (not timed)${values['with-uploads'] ? '; each timed generation uploads its pair first' : ''}`,
  );
  console.log(`load average (1/5/15 min): before start ${la(loadBefore)} | timed phase start ${la(loadAtStart)} | end ${la(loadAtEnd)}`);
  console.log('');
  console.log('| measure | value |');
  console.log('|---|---:|');
  console.log(`| workflows/s (N / first request -> last callback) | ${Number.isFinite(wps) ? wps.toFixed(2) : '- (callbacks missing)'} |`);
  console.log(`| wall time, first request -> last callback | ${f(wallMs)} ms |`);
  console.log(
    `| all requests acknowledged after | ${f(tAcked - t0)} ms (${(accepted.length / ((tAcked - t0) / 1000)).toFixed(1)} acks/s) |`,
  );
  console.log(
    `| callbacks/s after the last ack (drain) | ${Number.isFinite(drainPerSecond) && afterAcks > 0 ? `${drainPerSecond.toFixed(2)} (${afterAcks} callbacks)` : '-'} |`,
  );
  console.log(`| first callback after | ${f(firstCallback - t0)} ms |`);
  console.log(`| request -> callback p50 / p95 / max | ${f(pct(e2e, 50))} / ${f(pct(e2e, 95))} / ${f(pct(e2e, 100))} ms |`);
  console.log(`| request -> 201 ack p50 / p95 / max | ${f(pct(ack, 50))} / ${f(pct(ack, 95))} / ${f(pct(ack, 100))} ms |`);
  console.log(`| requests acknowledged 201 | ${accepted.length} / ${N} |`);
  console.log(`| callbacks received (deliveries) | ${deliveries.length} |`);
  console.log(`| distinct webhook-ids / requests called back | ${byWebhookId.size} / ${byIndex.size} |`);
  console.log(`| missing callbacks | ${missing.length} |`);
  console.log(`| duplicated webhook-ids / requests called back twice+ | ${duplicateIds.length} / ${duplicateIndexes.length} |`);
  console.log(`| error envelopes / bad signatures | ${errorEnvelopes.length} / ${badSignatures.length} |`);
  console.log(`| document records (expected ${N + WARMUP}) | ${documentRecords ?? '-'} |`);
  console.log(
    `| Temporal generateDocumentAsync runs | ${
      Object.entries(workflows)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ') || '-'
    } |`,
  );
  console.log(`| service log lines (warn+) from uploads to the end | ${serviceLogs.length} |`);
  console.log('');
  console.log(
    `CPU per generation in the timed phase (the service's processes, from /proc; ${os.cpus().length} cores at 100% allow at most ${((os.cpus().length * 1000) / cpuTotal).toFixed(1)} workflows/s at this cost):`,
  );
  console.log('');
  console.log('| process | CPU ms per generation |');
  console.log('|---|---:|');
  for (const c of cpuPerWorkflow.sort((a, b) => b.ms - a.ms)) console.log(`| ${c.group} | ${f(c.ms)} |`);
  console.log(`| total | ${f(cpuTotal)} |`);
  console.log('');
  if (serviceLogs.length) {
    console.log('service log (first 5 lines):');
    for (const l of serviceLogs.slice(0, 5)) console.log(`  ${l.slice(0, 400)}`);
    console.log('');
  }
  if (sampledSteps.length) {
    console.log(
      `Where the time of one generation goes (medians over ${sampledSteps.length} sampled runs, from their histories; under load`,
    );
    console.log('most of it is waiting: for the API, a workflow task slot, a merge thread or a LibreOffice instance):');
    console.log('');
    console.log('| step | median ms |');
    console.log('|---|---:|');
    for (const st of medianSteps(sampledSteps))
      console.log(
        `| ${st.name.replace('WorkflowExecutionCompleted -> response received (result fetch, response, HTTP)', 'WorkflowExecutionCompleted -> callback received')}${st.n < sampledSteps.length ? ` (in ${st.n} runs)` : ''} | ${f(st.median)} |`,
      );
    console.log(
      `| request -> callback (these runs) | ${f(
        pct(
          sampledSteps.map((r) => r.reduce((a, b) => a + b.ms, 0)),
          50,
        ),
      )} |`,
    );
    console.log('');
  }
  console.log(
    problems.length
      ? `FAILED:\n${problems.map((p) => `  - ${p}`).join('\n')}`
      : 'OK: every generation called back exactly once, signed, with a success body.',
  );
  console.log(
    JSON.stringify({
      bench: 'async-throughput',
      n: N,
      concurrency: CONCURRENCY,
      format: FORMAT,
      withUploads: values['with-uploads'],
      pageCount: values['page-count'] ?? 'default',
      uploadsPerSecondUntimed: prepareMs > 0 ? Number(((2 * prepared) / (prepareMs / 1000)).toFixed(1)) : null,
      cores: os.cpus().length,
      loadavg: { before: loadBefore, start: loadAtStart, end: loadAtEnd },
      workflowsPerSecond: Number.isFinite(wps) ? Number(wps.toFixed(3)) : null,
      wallMs: Math.round(wallMs),
      cpuMsPerWorkflow: Object.fromEntries([
        ...cpuPerWorkflow.map((c) => [c.group, Number(c.ms.toFixed(2))]),
        ['total', Number(cpuTotal.toFixed(2))],
      ]),
      ackedAllMs: Math.round(tAcked - t0),
      drainPerSecond: afterAcks > 0 ? Number(drainPerSecond.toFixed(3)) : null,
      callbackMs: { p50: Math.round(pct(e2e, 50)), p95: Math.round(pct(e2e, 95)), max: Math.round(pct(e2e, 100)) },
      ackMs: { p50: Number(pct(ack, 50).toFixed(1)), p95: Number(pct(ack, 95).toFixed(1)), max: Number(pct(ack, 100).toFixed(1)) },
      accepted: accepted.length,
      deliveries: deliveries.length,
      missing: missing.length,
      duplicateWebhookIds: duplicateIds.length,
      duplicateRequests: duplicateIndexes.length,
      errorEnvelopes: errorEnvelopes.length,
      badSignatures: badSignatures.length,
      documentRecords,
      workflows,
      serviceLogLines: serviceLogs.length,
      ok: problems.length === 0,
    }),
  );
  if (!complete) console.error(`service output (tail):\n${svc.tail()}`);
} catch (err) {
  exitCode = 1;
  console.error(err);
} finally {
  await stopService?.();
  await receiver.close();
  if (values['keep-data']) console.error(`data kept in ${dataDir}`);
  else fs.rmSync(dataDir, { recursive: true, force: true });
}
process.exit(exitCode);
