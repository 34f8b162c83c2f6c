// The Temporal SDK runs workflow code on its own thread, inside a vm context, with two debugging aids that
// cost more than our workflows themselves: a 5 s timeout on every call into the context (node's vm starts a
// watchdog thread per call with a timeout, and the SDK makes three or more calls per activation), and a
// promise hook that captures a source-mapped stack trace for every promise a workflow creates (shown in the
// Temporal UI's "Stack Trace" tab while a workflow runs). Measured on a sync docx generate (2 cores, dev
// server): ~10 ms of ~77 ms, and most of the workflow thread's CPU under load (`npm run bench`).
//
// Our workflows are short and ours (no tenant code runs in them; what a tenant controls runs in activities,
// under the engine's and the converter's own limits), so by default the worker starts that thread with
// worker/workflow-thread.ts preloaded, which turns both off there. WORKFLOW_DEBUG_AIDS=on keeps the SDK's
// behaviour (a workflow stuck in a loop fails its task after 5 s; stack traces in the UI, which are empty
// otherwise).
//
// The SDK gives no option for either, so this hooks the one place it starts that thread: while
// Worker.create runs, a `new Worker(<the SDK's workflow-worker-thread.js>)` gets the preload (`--import`) in its execArgv.
// If a later SDK starts the thread elsewhere, nothing is preloaded and only the speed is lost;
// test/integration/sandbox.test.ts notices (it reads a running workflow's stack trace).
import { createRequire } from 'node:module';
import type { Worker as ThreadWorker } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const PRELOAD = new URL('./workflow-thread.ts', import.meta.url).href;
const SDK_THREAD = /[\\/]@temporalio[\\/]worker[\\/]lib[\\/]workflow[\\/]workflow-worker-thread\.js$/;

type WorkerCtor = typeof ThreadWorker;

/** Runs `create` (the SDK's Worker.create) so that the workflow thread it starts gets the preload (unless
 *  `debugAids`) and, when `youngGenerationMb` is set, that cap on its V8 young generation (3 x V8_SEMI_SPACE_MB):
 *  otherwise V8 sizes it from the process's heap limit, up to 128 MB committed on a machine with a 4 GB heap
 *  limit, for a thread whose live heap is ~40 MB (`npm run bench:memory`). */
export async function withLeanWorkflowThread<T>(
  debugAids: boolean,
  create: () => Promise<T>,
  limits: { youngGenerationMb?: number | undefined } = {},
): Promise<T> {
  const young = limits.youngGenerationMb;
  if (debugAids && !young) return create();
  const resourceLimits = (options: ConstructorParameters<WorkerCtor>[1]) =>
    young ? { resourceLimits: { maxYoungGenerationSizeMb: young, ...options?.resourceLimits } } : {};
  const preload = ['--import', PRELOAD];
  // The CommonJS exports object of node:worker_threads, the one the SDK reads `Worker` from.
  const threads = require('node:worker_threads') as { Worker: WorkerCtor };
  const Original = threads.Worker;
  class LeanWorkflowThread extends Original {
    constructor(file: string | URL, options?: ConstructorParameters<WorkerCtor>[1]) {
      const path = file instanceof URL ? fileURLToPath(file) : String(file);
      if (!SDK_THREAD.test(path)) {
        super(file, options);
        return;
      }
      if (debugAids) {
        super(file, { ...options, ...resourceLimits(options) });
        return;
      }
      const inherited = options?.execArgv ?? threadArgv ?? process.execArgv;
      try {
        super(file, { ...options, ...resourceLimits(options), execArgv: [...inherited, ...preload] });
      } catch (e) {
        // A thread inherits the process's options when given none, but refuses V8 and process-wide ones
        // (`node --max-old-space-size=4096 ...`, `--no-wasm-code-gc`) when they are listed: those hold
        // for every thread anyway, so they are left out. (A failed super() leaves `this` unbound: a
        // second call is allowed.)
        const refused = invalidExecArgv(e);
        if (!refused) throw e;
        threadArgv = inherited.filter((arg) => !refused.has(arg));
        super(file, { ...options, ...resourceLimits(options), execArgv: [...threadArgv, ...preload] });
      }
    }
  }
  threads.Worker = LeanWorkflowThread;
  try {
    return await create();
  } finally {
    threads.Worker = Original;
  }
}

/** The process's options a workflow thread accepts, once a thread has refused some. */
let threadArgv: string[] | undefined;

/** The options named by node's ERR_WORKER_INVALID_EXEC_ARGV ("... invalid execArgv flags: a, b"). */
function invalidExecArgv(e: unknown): Set<string> | undefined {
  if ((e as { code?: unknown } | null)?.code !== 'ERR_WORKER_INVALID_EXEC_ARGV') return undefined;
  const listed = /flags: (.*)$/s.exec((e as Error).message)?.[1];
  return listed ? new Set(listed.split(', ')) : undefined;
}
