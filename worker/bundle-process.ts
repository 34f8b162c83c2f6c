// The workflow bundle, made in a child process of its own (worker/index.ts workflowBundle): webpack's modules
// and the native memory of its TypeScript loader (swc) stay with whichever process ran them, and a thread's
// native allocations are not given back to the system when the thread ends: bundling in-process, or on a
// thread, left ~140 MB more RSS in the worker for good (`npm run bench:memory`). The bundler's warnings and
// errors are sent back as lines for the process log.
import { bundleWorkflowCode } from '@temporalio/worker';

export type BundleReply =
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

const workflowsPath = process.argv[2];
let reply: BundleReply;
try {
  if (!workflowsPath) throw new Error('no workflows path given');
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
process.send?.(reply, () => process.disconnect());
