// The worker: hosts the workflows and activities. `docgen start` runs it in-process next to the API;
// `docgen worker` runs it alone for scale-out.
import { fork } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type NativeConnection, Runtime, Worker, type WorkflowBundle } from '@temporalio/worker';
import { type ActivityDeps, createActivities } from '../activities/index.ts';
import { batchTaskQueue } from '../core/batch.ts';
import { officeTaskQueue } from '../core/task-queues.ts';
import { type Logger, processLogger } from '../telemetry/log.ts';
import { activityMetrics } from '../telemetry/metrics.ts';
import { failedRowsLog } from './batch-log.ts';
import { readCachedBundle, writeCachedBundle } from './bundle-cache.ts';
import type { BundleReply } from './bundle-process.ts';
import { activityLogContext, coreLogFilter, temporalLogger } from './logging.ts';
import { withLeanWorkflowThread } from './sandbox.ts';

const workflowsPath = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));
const BUNDLE_PROCESS = fileURLToPath(new URL('./bundle-process.ts', import.meta.url));

let runtimeInstalled = false;

/** The Temporal runtime of this process, logging through `logger` (worker/logging.ts): the SDK's own lines,
 *  the workflow and activity loggers, and the Rust core's logs, forwarded instead of printed as coloured
 *  text. */
export function installRuntime(logger: Logger = processLogger(), opts: { metricsBindAddress?: string } = {}): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  Runtime.install({
    logger: temporalLogger(logger, 'worker'),
    // docgen stops in its own order on SIGINT/SIGTERM (cli/main.ts): the API drains its requests first,
    // while the worker still runs the workflows they wait for; the SDK's own handler would shut the worker
    // down at once, and a sync generate with a step left to run would then never answer.
    shutdownSignals: [],
    telemetryOptions: {
      logging: { filter: coreLogFilter(logger.level), forward: {} },
      // The SDK's runtime metrics (polls, task latencies, slots, sticky cache...) in Prometheus text.
      ...(opts.metricsBindAddress
        ? { metrics: { prometheus: { bindAddress: opts.metricsBindAddress, useSecondsForDurations: true, countersTotalSuffix: true } } }
        : {}),
    },
  });
}

let bundle: Promise<WorkflowBundle> | undefined;
let bundleCacheDir: string | null | undefined;

/** WORKFLOW_BUNDLE_CACHE (config/env.ts), set by whatever starts a worker: a directory, `off` (null here), or
 *  unset (undefined: ~/.cache/docgen/workflow-bundles). */
export function configureWorkflowBundleCache(setting: string | undefined): void {
  bundleCacheDir = setting === undefined || setting === '' ? undefined : setting === 'off' ? null : path.resolve(setting);
}

function workflowBundleCacheDir(): string | null {
  return bundleCacheDir === undefined ? path.join(os.homedir(), '.cache', 'docgen', 'workflow-bundles') : bundleCacheDir;
}

/** Bundling takes seconds; do it once per process, in a child process (worker/bundle-process.ts) so that
 *  webpack's modules and the bundler's native memory are not kept by this one, and keep the bundle on disk
 *  for the next process while the files it was made from do not change (worker/bundle-cache.ts). Its
 *  warnings go to the log; its progress does not. */
export function workflowBundle(logger: Logger = processLogger()): Promise<WorkflowBundle> {
  bundle ??= cachedBundle(temporalLogger(logger, 'bundler'));
  return bundle;
}

async function cachedBundle(log: ReturnType<typeof temporalLogger>): Promise<WorkflowBundle> {
  const dir = workflowBundleCacheDir();
  const kept = dir ? readCachedBundle(dir, workflowsPath) : undefined;
  if (kept !== undefined) return { code: kept };
  const cwd = process.cwd();
  const made = await bundleInChild(log, cwd);
  if (dir && !writeCachedBundle(dir, workflowsPath, made.code, cwd))
    log.info(`the workflow bundle could not be kept in ${dir} (WORKFLOW_BUNDLE_CACHE): the next process bundles again`);
  return made;
}

async function bundleInChild(log: ReturnType<typeof temporalLogger>, cwd: string): Promise<WorkflowBundle> {
  // The parent's V8 flags (execArgv) and environment; no stdin; stdout and stderr shared (it writes none).
  // webpack names each module by its path from `cwd` (worker/bundle-cache.ts reads them so).
  const child = fork(BUNDLE_PROCESS, [workflowsPath], { cwd, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  try {
    const reply = await new Promise<BundleReply>((resolve, reject) => {
      child.once('message', (m) => resolve(m as BundleReply));
      child.once('error', reject);
      child.once('exit', (code, signal) => reject(new Error(`the workflow bundler's process exited (${signal ?? code}) without a bundle`)));
    });
    for (const line of reply.lines) log[line.level](line.message, line.meta);
    if (!reply.ok) throw Object.assign(new Error(reply.message), reply.stack ? { stack: reply.stack } : {});
    return { code: reply.code };
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill();
  }
}

export interface WorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  deps: ActivityDeps;
  /** The process log (telemetry/log.ts); default the process logger. */
  logger?: Logger;
  /** How long a shutdown waits for running activities before cancelling them. */
  shutdownGraceTime?: string;
  /** Concurrent activities taken from the office task queue (the conversions of async generations). */
  officeSlots: number;
  /** Concurrent chunk activities taken from the batch task queue (BATCH_SLOTS; default 2). */
  batchSlots?: number;
  /** Keep the SDK's workflow-sandbox timeout and stack traces (WORKFLOW_DEBUG_AIDS=on; worker/sandbox.ts). */
  workflowDebugAids?: boolean;
  /** Young generation of the SDK's workflow thread, in MB (3 x V8_SEMI_SPACE_MB); V8's default when unset or 0. */
  workflowThreadYoungMb?: number;
}

export interface RunningWorker {
  worker: Worker;
  /** Resolves when the worker has stopped (after `shutdown()`), rejects if it crashed. */
  done: Promise<void>;
  shutdown(): Promise<void>;
}

export async function startWorker(opts: WorkerOptions): Promise<RunningWorker> {
  installRuntime(opts.logger);
  const activities = createActivities(opts.deps);
  const shutdownGraceTime = (opts.shutdownGraceTime ?? '30 seconds') as '30 seconds';
  const code = await workflowBundle(opts.logger);
  const worker = await withLeanWorkflowThread(
    opts.workflowDebugAids ?? false,
    () =>
      Worker.create({
        connection: opts.connection,
        namespace: opts.namespace,
        taskQueue: opts.taskQueue,
        workflowBundle: code,
        activities,
        interceptors: { activity: [activityMetrics, activityLogContext] },
        shutdownGraceTime,
      }),
    { youngGenerationMb: opts.workflowThreadYoungMb },
  );
  // Activities only, and no more at once than the converter takes: the backlog waits in Temporal.
  const office = await Worker.create({
    connection: opts.connection,
    namespace: opts.namespace,
    taskQueue: officeTaskQueue(opts.taskQueue),
    activities: { convertDocument: activities.convertDocument },
    interceptors: { activity: [activityMetrics, activityLogContext] },
    maxConcurrentActivityTaskExecutions: opts.officeSlots,
    shutdownGraceTime,
  });
  // Batch chunks, a few at once: a batch's rows queue in Temporal, and single generates (main queue) keep
  // their activity slots, merge threads and LibreOffice instances.
  const batch = await Worker.create({
    connection: opts.connection,
    namespace: opts.namespace,
    taskQueue: batchTaskQueue(opts.taskQueue),
    activities: { generateBatchChunk: activities.generateBatchChunk, combineBatch: activities.combineBatch },
    interceptors: { activity: [activityMetrics, failedRowsLog(opts.deps.db, opts.logger ?? processLogger())] },
    maxConcurrentActivityTaskExecutions: opts.batchSlots ?? 2,
    // A chunk's heartbeat carries its progress (activities/batch/chunk.ts ChunkHeartbeat), which the Temporal
    // UI shows on the pending activity: sent at most every 2 s rather than every 80% of the heartbeat
    // timeout, so a batch shows its rows as they go (one call per running chunk, no history events).
    maxHeartbeatThrottleInterval: '2 seconds',
    shutdownGraceTime,
  });
  const workers = [worker, office, batch];
  const done = Promise.all(workers.map((w) => w.run())).then(() => undefined);
  await Promise.all(workers.map(waitRunning));
  return {
    worker,
    done,
    async shutdown() {
      for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
      await done;
    },
  };
}

async function waitRunning(worker: Worker): Promise<void> {
  for (let i = 0; i < 200 && worker.getState() !== 'RUNNING'; i++) {
    await new Promise((r) => setTimeout(r, 25));
  }
}
