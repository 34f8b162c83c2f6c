import { PerformanceObserver, constants } from 'node:perf_hooks';
import fs from 'node:fs';
import { isMainThread } from 'node:worker_threads';
const kinds = { [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major', [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor', [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental', [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb' };
const flags = { [constants.NODE_PERFORMANCE_GC_FLAGS_FORCED]: 'forced', [constants.NODE_PERFORMANCE_GC_FLAGS_ALL_EXTERNAL_MEMORY]: 'external', [constants.NODE_PERFORMANCE_GC_FLAGS_SCHEDULE_IDLE]: 'idle', [constants.NODE_PERFORMANCE_GC_FLAGS_ALL_AVAILABLE_GARBAGE]: 'allgarbage' };
const stats = {};
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    const k = (kinds[e.detail?.kind] ?? e.detail?.kind) + (e.detail?.flags ? ':' + Object.entries(flags).filter(([f]) => e.detail.flags & Number(f)).map(([, n]) => n).join('+') : '');
    const s = (stats[k] ??= { n: 0, ms: 0 });
    s.n++; s.ms += e.duration;
  }
}).observe({ entryTypes: ['gc'] });
const file = process.env.GC_STATS_FILE;
if (file && isMainThread) setInterval(() => fs.writeFileSync(`${file}.${process.pid}`, JSON.stringify({ stats, mem: process.memoryUsage() })), 1000).unref();
