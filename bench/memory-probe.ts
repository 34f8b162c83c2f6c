// Preloaded (NODE_OPTIONS=--import) into the `docgen start` that bench/memory.ts runs, and only there: every
// DOCGEN_MEMORY_PROBE_MS (2 s) the main thread writes its process.memoryUsage(), V8's heap statistics and,
// for every worker thread alive (the Temporal SDK's workflow thread, the merge threads...), that thread's
// heap statistics to DOCGEN_MEMORY_PROBE_DIR/node-<pid>.json. Nothing else: the service under test is
// otherwise the real one (the probe changes no setting), so the same probe measures any checkout.
import fs from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import path from 'node:path';
import v8 from 'node:v8';
import type * as WorkerThreads from 'node:worker_threads';
import type { Worker as ThreadWorker } from 'node:worker_threads';

const require = createRequire(import.meta.url);
const threads = require('node:worker_threads') as typeof WorkerThreads;
const dir = process.env.DOCGEN_MEMORY_PROBE_DIR;

if (threads.isMainThread && dir) {
  const live = new Map<ThreadWorker, string>();
  const Original = threads.Worker;
  // Each thread, named by its script (merge-thread.ts, workflow-worker-thread.js...), while it lives.
  class Tracked extends Original {
    constructor(file: string | URL, options?: ConstructorParameters<typeof ThreadWorker>[1]) {
      super(file, options);
      const name = path.basename(file instanceof URL ? file.pathname : String(file));
      live.set(this, name);
      this.once('exit', () => live.delete(this));
    }
  }
  threads.Worker = Tracked;
  syncBuiltinESMExports();

  const mb = (n: number) => Math.round((n / 1048576) * 10) / 10;
  const file = path.join(dir, `node-${process.pid}.json`);
  const write = async () => {
    const m = process.memoryUsage();
    const h = v8.getHeapStatistics();
    // Each space: [used, committed] MB.
    const spaces = Object.fromEntries(
      v8.getHeapSpaceStatistics().map((s) => [s.space_name, [mb(s.space_used_size), mb(s.physical_space_size)]]),
    );
    const perThread: Record<string, { n: number; heapUsed: number; heapTotal: number; external: number }> = {};
    await Promise.all(
      [...live].map(async ([w, name]) => {
        try {
          const s = await (w as ThreadWorker & { getHeapStatistics(): Promise<v8.HeapInfo> }).getHeapStatistics();
          const t = (perThread[name] ??= { n: 0, heapUsed: 0, heapTotal: 0, external: 0 });
          t.n++;
          t.heapUsed += s.used_heap_size;
          t.heapTotal += s.total_heap_size;
          t.external += s.external_memory;
        } catch {
          // ended meanwhile
        }
      }),
    );
    const sample = {
      pid: process.pid,
      at: Date.now(),
      rss: mb(m.rss),
      heapUsed: mb(m.heapUsed),
      heapTotal: mb(m.heapTotal),
      external: mb(m.external),
      arrayBuffers: mb(m.arrayBuffers),
      mallocedMemory: mb(h.malloced_memory),
      nativeContexts: h.number_of_native_contexts,
      detachedContexts: h.number_of_detached_contexts,
      spaces,
      threads: Object.fromEntries(
        Object.entries(perThread).map(([k, t]) => [
          k,
          { n: t.n, heapUsed: mb(t.heapUsed), heapTotal: mb(t.heapTotal), external: mb(t.external) },
        ]),
      ),
    };
    fs.writeFileSync(`${file}.tmp`, JSON.stringify(sample));
    fs.renameSync(`${file}.tmp`, file);
  };
  setInterval(() => void write().catch(() => undefined), Number(process.env.DOCGEN_MEMORY_PROBE_MS ?? 2000)).unref();
}
