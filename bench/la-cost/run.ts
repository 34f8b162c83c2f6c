// Benchmark (not a test): the orchestration floor under docgen's figures (floor.ts: Temporal's dev server as
// `docgen start` runs it, a worker with docgen's lean workflow thread, no-op steps in docgen's shapes).
// `npm run bench` runs the shapes of a sync generate beside docgen in the same run; this runs them all.
//
// Latency: the median start -> result time per shape, and the time from the workflow task's start to the
// first local activity's scheduling (its marker's original_schedule_time: the worker's clock; the marker's
// complete_time is the workflow's own clock and cannot be used, see bench/breakdown.ts).
// Throughput: --n workflows of a shape, --concurrency at a time, like bench/async-throughput.ts; prints
// workflows/s and the CPU each workflow costs the server process and this process (worker + client).
//   node bench/la-cost/run.ts [--runs 30] [--n 400] [--concurrency 16]
import os from 'node:os';
import { parseArgs } from 'node:util';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { median } from '../breakdown.ts';
import { processCpuMs } from '../processes.ts';
import { type Shape, startFloor } from './floor.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '30' },
    n: { type: 'string', default: '400' },
    concurrency: { type: 'string', default: '16' },
  },
});
const runs = Number(values.runs);
const n = Number(values.n);
const concurrency = Number(values.concurrency);
Runtime.install({ logger: new DefaultLogger('ERROR') });
const floor = await startFloor();

const ownCpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

const latencyShapes: Shape[] = [
  { type: 'sequential', arg: 0, label: 'no step' },
  { type: 'sequential', arg: 1, label: '1 local activity' },
  { type: 'sequential', arg: 2, label: '2 local activities (a sync docx generate)' },
  { type: 'sequential', arg: 4, label: '4 local activities' },
  { type: 'sequential', arg: 8, label: '8 local activities' },
  { type: 'pairs', arg: 8, label: '8 local activities, two at a time' },
  { type: 'pdf', label: 'local activity, activity, local activity (a conversion as an activity, as in an async pdf generate)' },
  { type: 'callback', label: '3 local activities (a sync pdf generate; an async docx generate with its callback)' },
  { type: 'callbackActivity', label: '2 local activities, then an activity (the same with the callback as an activity, before)' },
];
const throughputShapes: Shape[] = [latencyShapes[2]!, latencyShapes[7]!, latencyShapes[8]!];

try {
  const la0 = os.loadavg();

  const latency: string[] = [];
  for (const s of latencyShapes) {
    const totals: number[] = [];
    const tails: number[] = [];
    for (let k = 0; k < runs + 2; k++) {
      const r = await floor.run(s);
      if (k < 2) continue; // warm-up
      totals.push(r.totalMs);
      tails.push(r.creationMs);
    }
    latency.push(`| ${s.label} | ${median(totals).toFixed(1)} | ${median(tails).toFixed(1)} |`);
  }

  const throughput: string[] = [];
  for (const s of throughputShapes) {
    let next = 0;
    const serverCpu0 = processCpuMs(floor.serverPid);
    const ownCpu0 = ownCpuMs();
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        for (let i = next++; i < n; i = next++) await floor.start(s, `tp-${s.type}-${i}-${Date.now()}`);
      }),
    );
    const seconds = (performance.now() - t0) / 1000;
    const serverMs = (processCpuMs(floor.serverPid) - serverCpu0) / n;
    const ownMs = (ownCpuMs() - ownCpu0) / n;
    throughput.push(
      `| ${s.label} | ${(n / seconds).toFixed(1)} | ${serverMs.toFixed(1)} | ${ownMs.toFixed(1)} | ${(serverMs + ownMs).toFixed(1)} |`,
    );
  }

  console.log(
    `node ${process.version}, ${os.cpus().length} cores, load average ${la0.map((x) => x.toFixed(2)).join(' ')} -> ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
  );
  console.log('');
  console.log(`Latency, one workflow at a time (medians of ${runs} runs):`);
  console.log('');
  console.log('| shape | start -> result ms | workflow task started -> first local activity scheduled ms |');
  console.log('|---|---:|---:|');
  for (const r of latency) console.log(r);
  console.log('');
  console.log(`Throughput, ${n} workflows, ${concurrency} at a time (CPU per workflow from /proc and process.cpuUsage):`);
  console.log('');
  console.log('| shape | workflows/s | server CPU ms/workflow | worker + client CPU ms/workflow | total CPU ms/workflow |');
  console.log('|---|---:|---:|---:|---:|');
  for (const r of throughput) console.log(r);
} finally {
  await floor.stop();
}
