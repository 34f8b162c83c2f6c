// Prometheus metrics of one process (prom-client): HTTP requests of the API, activity durations by step,
// conversions (every one, batch rows included) and their queue wait, batch rows, the merge threads, the
// converter pool, metering. docs/operations.md lists them with the dashboard and alert rules that use them. `startMetricsServer` serves them on METRICS_PORT together with the
// Temporal SDK's own runtime metrics (Core's exporter listens on a private loopback port; its text is
// appended), so each process has exactly one port to scrape.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { onReadinessReport, type ReadinessCheck, runReadiness } from './health.ts';

export const registry = new Registry();

const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

export const httpRequests = new Counter({
  name: 'docgen_http_requests_total',
  help: 'API requests answered, by route pattern, method and status',
  labelNames: ['route', 'method', 'status'] as const,
  registers: [registry],
});

export const httpDuration = new Histogram({
  name: 'docgen_http_request_duration_seconds',
  help: 'API request latency (first byte in to last byte out), by route pattern, method and status',
  labelNames: ['route', 'method', 'status'] as const,
  buckets: SECONDS,
  registers: [registry],
});

export const activityDuration = new Histogram({
  name: 'docgen_activity_duration_seconds',
  help: 'Duration of one activity attempt, or of one step inside a grouped activity (e.g. merge inside prepareGeneration), by activity and outcome (ok, failed)',
  labelNames: ['activity', 'outcome'] as const,
  buckets: SECONDS,
  registers: [registry],
});

export const metering = new Counter({
  name: 'docgen_metering_total',
  help: 'Metered consumption recorded by this process (once per operation and dimension), by dimension',
  labelNames: ['dimension'] as const,
  registers: [registry],
});

export const conversions = new Counter({
  name: 'docgen_conversions_total',
  help: 'Conversions handed to the converter (LibreOffice or Gotenberg), single generates and batch rows alike, by source and target format and outcome (ok, failed)',
  labelNames: ['from', 'to', 'outcome'] as const,
  registers: [registry],
});

export const conversionDuration = new Histogram({
  name: 'docgen_conversion_duration_seconds',
  help: 'Time of one conversion from the call to the result (queue wait included), by target format and outcome',
  labelNames: ['to', 'outcome'] as const,
  buckets: SECONDS,
  registers: [registry],
});

export const conversionFailures = new Counter({
  name: 'docgen_conversion_failures_total',
  help: 'Failed conversions by target format and reason (the converter error code: TIMEOUT, QUEUE_FULL, OVER_BUDGET, TOO_COMPLEX, CRASHED...; ERROR for anything else)',
  labelNames: ['to', 'reason'] as const,
  registers: [registry],
});

export const converterQueueWait = new Histogram({
  name: 'docgen_converter_queue_wait_seconds',
  help: 'Time a job (a conversion, or a layout page count) waited for a free LibreOffice instance, by subscription (one series per subscription that used the pool since the process started)',
  labelNames: ['subscription'] as const,
  buckets: [0.001, 0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60],
  registers: [registry],
});

export const batchRows = new Counter({
  name: 'docgen_batch_rows_total',
  help: 'Batch rows recorded by this worker, by outcome (done, failed); counted as each row is recorded, once per row',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

export const ready = new Gauge({
  name: 'docgen_ready',
  help: 'Readiness of this process by check (database, temporal, storage, converter): 1 ready, 0 not, as of the last readiness run (every scrape of /metrics runs one)',
  labelNames: ['check'] as const,
  registers: [registry],
});
onReadinessReport((report) => {
  for (const [check, r] of Object.entries(report.checks)) ready.set({ check }, r.ready ? 1 : 0);
});

/** One conversion's outcome (converter/events.ts onConversion). */
export function observeConversion(e: { from: string; to: string; seconds: number; failure?: string }): void {
  const outcome = e.failure ? 'failed' : 'ok';
  conversions.inc({ from: e.from, to: e.to, outcome });
  conversionDuration.observe({ to: e.to, outcome }, e.seconds);
  if (e.failure) conversionFailures.inc({ to: e.to, reason: e.failure });
}

/** One conversion's wait for an instance (converter/events.ts onQueueWait). */
export function observeQueueWait(e: { tenant: string; seconds: number }): void {
  converterQueueWait.observe({ subscription: e.tenant || 'none' }, e.seconds);
}

/** Counts one batch row as its entry is recorded (activities/batch/chunk.ts), so a long chunk's rows show
 *  as they go and the rows of a chunk attempt that fails later are counted too. */
export function countBatchRow(outcome: 'done' | 'failed'): void {
  batchRows.inc({ outcome });
}

/** Called by the API for every answered request. */
export function observeRequest(route: string, method: string, status: number, seconds: number): void {
  const labels = { route, method, status: String(status) };
  httpRequests.inc(labels);
  httpDuration.observe(labels, seconds);
}

/** Counts consumption rows that were actually inserted (a retried step inserts nothing). */
export function countMetering(items: { dimension: string; value: number }[]): void {
  for (const c of items) metering.inc({ dimension: c.dimension }, c.value);
}

/** Times one activity attempt, or one step inside a grouped activity (activities/generation.ts), under its
 *  own name. */
export async function timedStep<T>(activity: string, run: () => Promise<T>): Promise<T> {
  const end = activityDuration.startTimer({ activity });
  try {
    const result = await run();
    end({ outcome: 'ok' });
    return result;
  } catch (err) {
    end({ outcome: 'failed' });
    throw err;
  }
}

/** Times every activity attempt (normal and local) of the worker it is given to. */
export const activityMetrics: ActivityInterceptorsFactory = (ctx) => ({
  inbound: {
    execute: (input, next) => timedStep(ctx.info.activityType, () => next(input)),
  },
});

export interface PoolSnapshot {
  size: number;
  busy: number;
  queued: number;
  restarts: number;
  ready: boolean;
}

let poolGaugesRegistered = false;
/** Gauges read from the converter at scrape time (the worker process only). */
export function registerConverterMetrics(snapshot: () => PoolSnapshot | null): void {
  if (poolGaugesRegistered) return;
  poolGaugesRegistered = true;
  const gauge = (name: string, help: string, pick: (s: PoolSnapshot) => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        const s = snapshot();
        this.set(s ? pick(s) : 0);
      },
    });
  gauge('docgen_converter_pool_size', 'LibreOffice instances in the pool (Gotenberg: 0)', (s) => s.size);
  gauge('docgen_converter_busy', 'Conversions running now', (s) => s.busy);
  gauge('docgen_converter_queued', "Conversions waiting in the pool's queue", (s) => s.queued);
  gauge('docgen_converter_restarts', 'LibreOffice instance restarts since the process started (crash, hang, recycle)', (s) => s.restarts);
  gauge('docgen_converter_ready', '1 when the converter can take work', (s) => (s.ready ? 1 : 0));
}

export interface MergeSnapshot {
  queued: number;
  running: number;
  threads: number;
}

let mergeSnapshot: (() => MergeSnapshot | null) | undefined;
/** Gauges read from the merge-thread pool at scrape time (the worker process only); a later call (a
 *  service started again in one process) replaces the pool they read. */
export function registerMergeMetrics(snapshot: () => MergeSnapshot | null): void {
  const registered = mergeSnapshot !== undefined;
  mergeSnapshot = snapshot;
  if (registered) return;
  const gauge = (name: string, help: string, pick: (s: MergeSnapshot) => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        const s = mergeSnapshot?.() ?? null;
        this.set(s ? pick(s) : 0);
      },
    });
  gauge('docgen_merge_queued', 'Merges waiting for a merge thread', (s) => s.queued);
  gauge('docgen_merge_running', 'Merges running now', (s) => s.running);
  gauge('docgen_merge_threads', 'Merge threads started (MERGE_THREADS)', (s) => s.threads);
}

let defaultsCollected = false;

export interface MetricsServer {
  url: string;
  close(): Promise<void>;
}

/** Serves GET /metrics (and /health, /ready for processes without the API, such as `docgen worker`). */
export async function startMetricsServer(opts: {
  host: string;
  port: number;
  /** Where the Temporal SDK's Prometheus exporter listens (loopback), appended to /metrics. */
  coreMetricsUrl?: string;
  readiness: Record<string, ReadinessCheck>;
}): Promise<MetricsServer> {
  if (!defaultsCollected) {
    defaultsCollected = true;
    collectDefaultMetrics({ register: registry });
  }
  const server = http.createServer((req, res) => {
    const url = (req.url ?? '/').split('?')[0];
    const answer = async () => {
      if (req.method !== 'GET') return send(res, 405, 'text/plain', 'GET only\n');
      if (url === '/metrics') {
        // docgen_ready as of now: the checks are bounded in time (telemetry/health.ts).
        await runReadiness(opts.readiness);
        let text = await registry.metrics();
        if (opts.coreMetricsUrl) {
          const core = await fetch(opts.coreMetricsUrl, { signal: AbortSignal.timeout(2_000) }).then(
            (r) => (r.ok ? r.text() : ''),
            () => '',
          );
          text += core.endsWith('\n') || core === '' ? core : `${core}\n`;
        }
        return send(res, 200, registry.contentType, text);
      }
      if (url === '/health') return send(res, 200, 'application/json', JSON.stringify({ status: 'ok' }));
      if (url === '/ready') {
        const report = await runReadiness(opts.readiness);
        return send(res, report.notReady.length ? 503 : 200, 'application/json', JSON.stringify(report));
      }
      return send(res, 404, 'text/plain', 'not found: /metrics, /health, /ready\n');
    };
    answer().catch((err: unknown) => send(res, 500, 'text/plain', `${err instanceof Error ? err.message : String(err)}\n`));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = opts.host === '0.0.0.0' || opts.host === '::' ? '127.0.0.1' : opts.host;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function send(res: http.ServerResponse, status: number, type: string, body: string): void {
  if (res.headersSent) return;
  res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
  res.end(body);
}
