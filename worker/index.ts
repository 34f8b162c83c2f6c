// The worker: hosts the workflows and activities. `docgen start` runs it in-process next to the API;
// `docgen worker` runs it alone for scale-out.
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, DefaultLogger, type NativeConnection, Runtime, Worker, type WorkflowBundle } from '@temporalio/worker';
import { type ActivityDeps, createActivities } from '../activities/index.ts';
import { officeTaskQueue } from '../core/task-queues.ts';
import { activityMetrics } from '../telemetry/metrics.ts';
import { withLeanWorkflowThread } from './sandbox.ts';

const workflowsPath = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

let runtimeInstalled = false;

/** The SDK logs every state change at INFO; keep that for debugging and show warnings otherwise. Expected
 *  caller failures (a broken template) are logged by the SDK as warnings, so `silent` also hides those. */
export function installRuntime(logLevel: string, opts: { metricsBindAddress?: string } = {}): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  const level = logLevel === 'debug' || logLevel === 'trace' ? 'INFO' : logLevel === 'silent' || logLevel === 'fatal' || logLevel === 'error' ? 'ERROR' : 'WARN';
  Runtime.install({
    logger: new DefaultLogger(level),
    // docgen stops in its own order on SIGINT/SIGTERM (cli/main.ts): the API drains its requests first,
    // while the worker still runs the workflows they wait for; the SDK's own handler would shut the worker
    // down at once, and a sync generate with a step left to run would then never answer.
    shutdownSignals: [],
    telemetryOptions: {
      logging: { filter: { core: level, other: level } },
      // The SDK's runtime metrics (polls, task latencies, slots, sticky cache...) in Prometheus text.
      ...(opts.metricsBindAddress
        ? { metrics: { prometheus: { bindAddress: opts.metricsBindAddress, useSecondsForDurations: true, countersTotalSuffix: true } } }
        : {}),
    },
  });
}

let bundle: Promise<WorkflowBundle> | undefined;
/** Bundling takes seconds; do it once per process. */
export function workflowBundle(): Promise<WorkflowBundle> {
  bundle ??= bundleWorkflowCode({ workflowsPath, logger: quietBundlerLogger });
  return bundle;
}

const noop = () => undefined;
const quietBundlerLogger = { trace: noop, debug: noop, info: noop, warn: console.warn, error: console.error, log: noop };

export interface WorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  deps: ActivityDeps;
  logLevel?: string;
  /** How long a shutdown waits for running activities before cancelling them. */
  shutdownGraceTime?: string;
  /** Concurrent activities taken from the office task queue (the conversions of async generations). */
  officeSlots: number;
  /** Keep the SDK's workflow-sandbox timeout and stack traces (WORKFLOW_DEBUG_AIDS=on; worker/sandbox.ts). */
  workflowDebugAids?: boolean;
}

export interface RunningWorker {
  worker: Worker;
  /** Resolves when the worker has stopped (after `shutdown()`), rejects if it crashed. */
  done: Promise<void>;
  shutdown(): Promise<void>;
}

export async function startWorker(opts: WorkerOptions): Promise<RunningWorker> {
  installRuntime(opts.logLevel ?? 'info');
  const activities = createActivities(opts.deps);
  const shutdownGraceTime = (opts.shutdownGraceTime ?? '30 seconds') as '30 seconds';
  const code = await workflowBundle();
  const worker = await withLeanWorkflowThread(opts.workflowDebugAids ?? false, () =>
    Worker.create({
      connection: opts.connection,
      namespace: opts.namespace,
      taskQueue: opts.taskQueue,
      workflowBundle: code,
      activities,
      interceptors: { activity: [activityMetrics] },
      shutdownGraceTime,
    }),
  );
  // Activities only, and no more at once than the converter takes: the backlog waits in Temporal.
  const office = await Worker.create({
    connection: opts.connection,
    namespace: opts.namespace,
    taskQueue: officeTaskQueue(opts.taskQueue),
    activities: { convertDocument: activities.convertDocument },
    interceptors: { activity: [activityMetrics] },
    maxConcurrentActivityTaskExecutions: opts.officeSlots,
    shutdownGraceTime,
  });
  const done = Promise.all([worker.run(), office.run()]).then(() => undefined);
  await Promise.all([waitRunning(worker), waitRunning(office)]);
  return {
    worker,
    done,
    async shutdown() {
      for (const w of [worker, office]) if (w.getState() === 'RUNNING') w.shutdown();
      await done;
    },
  };
}

async function waitRunning(worker: Worker): Promise<void> {
  for (let i = 0; i < 200 && worker.getState() !== 'RUNNING'; i++) {
    await new Promise((r) => setTimeout(r, 25));
  }
}
