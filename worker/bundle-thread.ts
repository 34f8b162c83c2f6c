// The workflow bundle, made on a thread of its own (worker/index.ts workflowBundle): webpack and the
// bundler's modules stay loaded in whichever heap ran them (~35 MB of V8 heap kept, ~150 MB of RSS grown
// while bundling, measured by `npm run bench:memory`), so they run here and go when the thread ends. The
// bundler's warnings and errors are sent back as lines for the process log.
import { parentPort, workerData } from 'node:worker_threads';
import { bundleWorkflowCode } from '@temporalio/worker';

export type BundleThreadReply =
  { ok: true; code: string; lines: BundleLogLine[] } | { ok: false; message: string; stack?: string | undefined; lines: BundleLogLine[] };
export interface BundleLogLine {
  level: 'warn' | 'error';
  message: string;
  meta?: Record<string, unknown>;
}

const lines: BundleLogLine[] = [];
const keep = (level: 'warn' | 'error') => (message: string, meta?: Record<string, unknown>) =>
  void lines.push({ level, message, ...(meta ? { meta: JSON.parse(JSON.stringify(meta)) as Record<string, unknown> } : {}) });
const noop = () => undefined;

const { workflowsPath } = workerData as { workflowsPath: string };
let reply: BundleThreadReply;
try {
  const { code } = await bundleWorkflowCode({
    workflowsPath,
    logger: { log: noop, trace: noop, debug: noop, info: noop, warn: keep('warn'), error: keep('error') },
  });
  reply = { ok: true, code, lines };
} catch (err) {
  reply = {
    ok: false,
    message: err instanceof Error ? err.message : String(err),
    stack: err instanceof Error ? err.stack : undefined,
    lines,
  };
}
parentPort?.postMessage(reply);
