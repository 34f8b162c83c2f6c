// Composes the service from its parts: database, blob store, Temporal connection, worker and API.
// `docgen start` runs all of it (plus a Temporal dev server) in one process; `docgen api` and
// `docgen worker` run one half each against a shared PostgreSQL and Temporal cluster.
import fs from 'node:fs';
import { Client } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import type { FastifyInstance } from 'fastify';
import { buildApp, logSerializers } from '../api/app.ts';
import { ensureUploadSweeper } from '../api/temporal.ts';
import {
  configureConverter,
  type ConverterLog,
  converterAvailable,
  converterStatus as poolStatus,
  defaultPoolSize,
  getDefaultConverter,
  onConversion,
  onQueueWait,
  shutdownConverter,
  startConverter,
} from '../converter/index.ts';
import { createTokenVerifier } from '../security/tokens.ts';
import { baseUrl, type Config, connectorSettingsOf, converterSettingsOf, templateLimits } from '../config/env.ts';
import { MergePool } from '../activities/merge-pool.ts';
import { outboundPolicy } from '../connectors/http/address-policy.ts';
import { openBlobStore } from '../connectors/storage/open.ts';
import { type Db, openDb } from '../store/db.ts';
import { migrate } from '../store/migrate.ts';
import { officeTaskQueue } from '../core/task-queues.ts';
import type { ReadinessCheck } from '../telemetry/health.ts';
import { createLogger, type Logger } from '../telemetry/log.ts';
import {
  type MetricsServer,
  observeConversion,
  observeQueueWait,
  observeRequest,
  registerConverterMetrics,
  registerMergeMetrics,
  startMetricsServer,
} from '../telemetry/metrics.ts';
import { configureWorkflowBundleCache, installRuntime, type RunningWorker, startWorker } from '../worker/index.ts';
import { freePort } from './temporal-dev.ts';
import { ensureSearchAttributes } from '../worker/search-attributes.ts';

export interface ServiceOptions {
  config: Config;
  temporalAddress: string;
  api: boolean;
  worker: boolean;
  adminToken?: string;
  /** The process log (telemetry/log.ts): the worker's, the converter's and, unless `logger` says otherwise,
   *  the API's lines. Default: JSON lines on stdout at LOG_LEVEL. */
  log?: Logger;
  /** The API's log instead: false = none, or Fastify logger options (tests). */
  logger?: boolean | Record<string, unknown>;
}

export interface RunningService {
  db: Db;
  app?: FastifyInstance;
  worker?: RunningWorker;
  /** The API's base URL without /v1, once listening. */
  baseUrl: string;
  /** One line for the start-up banner: is pdf/csv conversion available, and if not, how to enable it. */
  converterStatus: string;
  /** http://host:port of this process's metrics endpoint (METRICS_PORT), when enabled. */
  metricsUrl?: string;
  stop(): Promise<void>;
}

export async function startService(opts: ServiceOptions): Promise<RunningService> {
  const { config } = opts;
  const log = opts.log ?? createLogger({ level: config.logLevel, name: 'docgen' });
  // The converter reads no environment: its settings come from the validated configuration.
  configureConverter({ ...converterSettingsOf(config), log: converterLog(log) });
  if (!config.databaseUrl && !(opts.api && opts.worker)) {
    throw new Error(
      'The embedded database (PGlite) serves one process only: run `docgen start`, or set DATABASE_URL to a PostgreSQL server to run `docgen api` and `docgen worker` separately.',
    );
  }
  fs.mkdirSync(config.dataDir, { recursive: true });
  const db = await openDb({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    pgliteSharedBuffersMb: config.pgliteSharedBuffersMb,
  });
  const cleanups: (() => Promise<void>)[] = [async () => db.close()];
  const stop = async () => {
    for (const fn of cleanups.reverse()) await fn().catch(() => undefined);
    cleanups.length = 0;
  };
  try {
    await migrate(db);
    const blobs = openBlobStore(config);
    // One connection for the worker and the API's client: with both in one process, a synchronous generate
    // starts eagerly on the local worker (no extra round trip through the task queue).
    // The SDK's exporter listens on a private loopback port; our metrics server appends its text.
    const coreMetricsPort = config.metricsPort === undefined ? undefined : await freePort();
    installRuntime(log, coreMetricsPort ? { metricsBindAddress: `127.0.0.1:${coreMetricsPort}` } : {});
    const connection = await NativeConnection.connect({ address: opts.temporalAddress });
    cleanups.push(async () => connection.close());
    await ensureSearchAttributes(connection, config.temporalNamespace);
    const readiness: Record<string, ReadinessCheck> = {
      database: async () => {
        await db.query('SELECT 1');
        return db.kind === 'postgres' ? 'PostgreSQL' : 'embedded PGlite';
      },
      temporal: async () => {
        await connection.workflowService.describeNamespace({ namespace: config.temporalNamespace });
        return `${opts.temporalAddress} namespace ${config.temporalNamespace}`;
      },
      storage: () => blobs.check(),
      converter: opts.worker ? localConverterCheck : officeWorkersCheck(connection, config),
    };
    let worker: RunningWorker | undefined;
    let converterStatus = 'not in this process';
    if (opts.worker) {
      const mergePool = new MergePool({
        threads: config.mergeThreads,
        subscriptionThreads: config.mergeSubscriptionThreads,
        timeoutMs: config.mergeTimeoutMs,
        maxMemoryMb: config.mergeMaxMemoryMb,
        limits: templateLimits(config),
        outbound: { allow: config.outboundAllow, timeoutMs: config.outboundTimeoutMs, maxResponseBytes: config.outboundMaxBytes },
      });
      mergePool.warm();
      cleanups.push(async () => mergePool.close());
      configureWorkflowBundleCache(config.workflowBundleCache);
      worker = await startWorker({
        connection,
        namespace: config.temporalNamespace,
        taskQueue: config.taskQueue,
        deps: {
          db,
          blobs,
          outbound: {
            policy: outboundPolicy(config.outboundAllow),
            timeoutMs: config.outboundTimeoutMs,
            maxResponseBytes: config.outboundMaxBytes,
          },
          merge: mergePool,
          connectors: connectorSettingsOf(config),
          pageCount: config.pageCount,
          // Created here, started below with the worker: the activities convert with this instance.
          ...(converterAvailable().available ? { converter: getDefaultConverter() } : {}),
        },
        logger: log,
        officeSlots: config.converterSlots || 2 * defaultPoolSize(),
        batchSlots: config.batchSlots || 2 * defaultPoolSize(),
        shutdownGraceTime: `${config.workerDrainSeconds} seconds`,
        workflowDebugAids: config.workflowDebugAids === 'on',
        workflowThreadYoungMb: 3 * config.v8SemiSpaceMb,
      });
      const w = worker;
      cleanups.push(async () => w.shutdown());
      registerMergeMetrics(() => mergePool.status());
      // Every conversion of this process (generates and batch rows alike) and its wait for an instance.
      const unsubscribe = [onConversion(observeConversion), onQueueWait(observeQueueWait)];
      cleanups.push(async () => unsubscribe.forEach((off) => off()));
      registerConverterMetrics(() => {
        const st = poolStatus();
        if (!st) return null;
        return {
          size: st.instances.filter((i) => !i.spare).length,
          busy: st.running,
          queued: st.queued,
          restarts: st.instances.reduce((n, i) => n + i.restarts, 0),
          ready: st.ready,
        };
      });
      // The LibreOffice pool starts with the worker (warm instances are the point); without LibreOffice
      // the worker still serves docx/xlsx/pptx outputs and pdf/csv requests get a 400 saying why.
      if (converterAvailable().available) {
        converterStatus = await startConverter().then(
          (s) =>
            `${s.kind}, ${s.instances.filter((i) => !i.spare).length} warm instance(s)${s.instances.some((i) => i.spare) ? ` + ${s.instances.filter((i) => i.spare).length} spare` : ''}, isolation: ${s.isolation}`,
          (err: unknown) => `failed to start: ${err instanceof Error ? err.message : String(err)}`,
        );
        cleanups.splice(1, 0, async () => shutdownConverter());
      } else {
        const c = converterAvailable();
        converterStatus = `not available (${c.reason}); ${c.howToEnable}`;
      }
    }
    let app: FastifyInstance | undefined;
    let url = baseUrl(config);
    if (opts.api) {
      const client = new Client({ connection, namespace: config.temporalNamespace });
      app = await buildApp({
        config,
        db,
        blobs,
        temporal: {
          client,
          taskQueue: config.taskQueue,
          generateTimeoutMs: config.generateTimeoutMs,
          eagerStart: opts.worker,
          ...(opts.worker ? { converter: converterAvailable } : {}),
        },
        verifyToken: await createTokenVerifier(db, config),
        readiness,
        ...(config.metricsPort !== undefined ? { onResponse: observeRequest } : {}),
        baseUrl: () => url,
        ...(opts.adminToken ? { adminToken: opts.adminToken } : {}),
        logger: opts.logger ?? log.child({ component: 'api' }, { serializers: logSerializers }),
      });
      await ensureUploadSweeper({ client, taskQueue: config.taskQueue }, { intervalMs: config.uploadSweepSeconds * 1000, batch: 200 });
      await app.listen({ port: config.port, host: config.host });
      const addr = app.server.address();
      if (addr && typeof addr === 'object') url = baseUrl(config, addr.port);
      const a = app;
      cleanups.push(async () => {
        // Drain: no new requests (new connections are refused, a request arriving on an open connection
        // gets 503), every request in flight runs to its answer. Fastify closes the connections that are
        // idle when close() starts; a keep-alive connection whose response was still finishing then would
        // hold close() for the whole keep-alive timeout (~72 s), so the ones that became idle keep being
        // closed. Connections still busy after the drain grace (the longest a request may legitimately
        // take: a synchronous generate's GENERATE_TIMEOUT_MS, plus a margin) are closed.
        const sweep = setInterval(() => a.server.closeIdleConnections(), 100);
        const force = setTimeout(() => a.server.closeAllConnections(), drainGraceMs(config));
        try {
          await a.close();
        } finally {
          clearInterval(sweep);
          clearTimeout(force);
        }
      });
    }
    let metrics: MetricsServer | undefined;
    if (config.metricsPort !== undefined) {
      metrics = await startMetricsServer({
        host: config.metricsHost,
        port: config.metricsPort,
        readiness,
        ...(coreMetricsPort ? { coreMetricsUrl: `http://127.0.0.1:${coreMetricsPort}/metrics` } : {}),
      });
      const m = metrics;
      cleanups.push(async () => m.close());
    }
    return {
      db,
      ...(metrics ? { metricsUrl: metrics.url } : {}),
      ...(app ? { app } : {}),
      ...(worker ? { worker } : {}),
      get baseUrl() {
        return url;
      },
      converterStatus,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** The converter's events as lines of the process log. */
function converterLog(log: Logger): ConverterLog {
  const converter = log.child({ component: 'converter' });
  return (msg, fields = {}) => {
    const { level = 'info', ...rest } = fields;
    converter[level](rest, msg);
  };
}

/** How long stopping the API waits for requests in flight before closing their connections. */
export function drainGraceMs(config: Pick<Config, 'generateTimeoutMs'>): number {
  return config.generateTimeoutMs + 5_000;
}

/** In a process with the worker: the local converter has a warm instance (or Gotenberg answers). No
 *  converter installed is not a failure: pdf/csv requests then answer 400 saying how to enable one. */
async function localConverterCheck(): Promise<string> {
  const available = converterAvailable();
  if (!available.available) return `not available (${available.reason}): pdf and csv outputs answer 400`;
  const st = poolStatus();
  if (!st) throw new Error('the converter has not started');
  if (!st.ready)
    throw new Error(
      `${st.kind}: no instance can take work (${st.instances.map((i) => `${i.state}${i.lastError ? `: ${i.lastError}` : ''}`).join('; ')})`,
    );
  return `${st.kind}, ${st.instances.filter((i) => i.state === 'idle' || i.state === 'busy').length}/${st.instances.length} instance(s) up, ${st.queued} queued, isolation: ${st.isolation}`;
}

/** In an API-only process the converters live in the workers: some worker must poll the office queue. */
function officeWorkersCheck(connection: NativeConnection, config: Config): ReadinessCheck {
  return async () => {
    const queue = officeTaskQueue(config.taskQueue);
    const r = await connection.workflowService.describeTaskQueue({
      namespace: config.temporalNamespace,
      taskQueue: { name: queue },
      taskQueueType: 2, // TASK_QUEUE_TYPE_ACTIVITY
    });
    const pollers = r.pollers?.length ?? 0;
    if (pollers === 0) throw new Error(`no worker polls ${queue}: start \`docgen worker\``);
    return `${pollers} worker poller(s) on ${queue}`;
  };
}
