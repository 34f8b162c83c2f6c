// Benchmark (not a test): the orchestration floor under docgen's figures. Temporal's dev server, started
// exactly as `docgen start` starts it (cli/temporal-dev.ts: SQLite file in WAL mode, eager workflow start
// and eager activities), and one worker in this process with docgen's lean workflow thread
// (worker/sandbox.ts), run workflows of no-op steps in docgen's shapes (bench/la-cost/workflows.ts),
// started eagerly as docgen does. Nothing of docgen (HTTP, auth, database, storage, engine, converter) runs.
//
// Latency: the median start -> result time per shape, and the time from the workflow task's start to the
// last local activity's scheduling (its marker's original_schedule_time: the worker's clock; the marker's
// complete_time is the workflow's own clock and cannot be used, see bench/breakdown.ts).
// Throughput: --n workflows of a shape, --concurrency at a time, like bench/async-throughput.ts; prints
// workflows/s and the CPU each workflow costs the server process and this process (worker + client).
//   node bench/la-cost/run.ts [--runs 30] [--n 400] [--concurrency 16]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { findTemporalCli, freePort, startDevServer } from '../../cli/temporal-dev.ts';
import { withLeanWorkflowThread } from '../../worker/sandbox.ts';
import { median, tsMs } from '../breakdown.ts';
import { processCpuMs } from '../processes.ts';

const { values } = parseArgs({
  options: { runs: { type: 'string', default: '30' }, n: { type: 'string', default: '400' }, concurrency: { type: 'string', default: '16' } },
});
const runs = Number(values.runs);
const n = Number(values.n);
const concurrency = Number(values.concurrency);
Runtime.install({ logger: new DefaultLogger('ERROR') });
const cli = findTemporalCli(process.env.TEMPORAL_CLI);
if (!cli) throw new Error('no Temporal CLI (set TEMPORAL_CLI)');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'la-cost-'));
const server = await startDevServer({ cli, port: await freePort(), dbFile: path.join(dir, 'temporal.db'), headless: true });

const ownCpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

type Shape = { type: 'sequential' | 'pairs' | 'pdf' | 'callback' | 'callbackActivity'; arg?: number; label: string };
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
  const connection = await NativeConnection.connect({ address: server.address });
  const taskQueue = 'la-cost';
  const worker = await withLeanWorkflowThread(false, () =>
    Worker.create({ connection, taskQueue, workflowsPath: new URL('./workflows.ts', import.meta.url).pathname, activities: { noop: async () => 1 } }),
  );
  const running = worker.run();
  const client = new Client({ connection });
  const start = (s: Shape, id: string) => client.workflow.start(s.type, { taskQueue, workflowId: id, args: s.arg === undefined ? [] : [s.arg], requestEagerStart: true });
  const la0 = os.loadavg();

  const latency: string[] = [];
  for (const s of latencyShapes) {
    const totals: number[] = [];
    const tails: number[] = [];
    for (let k = 0; k < runs + 2; k++) {
      const t0 = performance.now();
      const h = await start(s, `${s.type}-${s.arg ?? ''}-${k}-${Date.now()}`);
      await h.result();
      const total = performance.now() - t0;
      const events = (await h.fetchHistory()).events ?? [];
      const taskStarted = tsMs(events.find((e) => e.workflowTaskStartedEventAttributes)?.eventTime);
      const taskCompleted = tsMs(events.find((e) => e.workflowTaskCompletedEventAttributes)?.eventTime);
      const scheduled = events
        .filter((e) => e.markerRecordedEventAttributes)
        .map((e) => tsMs(JSON.parse(new TextDecoder().decode(e.markerRecordedEventAttributes?.details?.data?.payloads?.[0]?.data ?? new Uint8Array())).original_schedule_time));
      if (k < 2) continue; // warm-up
      totals.push(total);
      tails.push((scheduled.length ? scheduled[0]! : taskCompleted) - taskStarted);
    }
    latency.push(`| ${s.label} | ${median(totals).toFixed(1)} | ${median(tails).toFixed(1)} |`);
  }

  const throughput: string[] = [];
  for (const s of throughputShapes) {
    let next = 0;
    const serverCpu0 = processCpuMs(server.process.pid!);
    const ownCpu0 = ownCpuMs();
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        for (let i = next++; i < n; i = next++) await (await start(s, `tp-${s.type}-${i}-${Date.now()}`)).result();
      }),
    );
    const seconds = (performance.now() - t0) / 1000;
    const serverMs = (processCpuMs(server.process.pid!) - serverCpu0) / n;
    const ownMs = (ownCpuMs() - ownCpu0) / n;
    throughput.push(`| ${s.label} | ${(n / seconds).toFixed(1)} | ${serverMs.toFixed(1)} | ${ownMs.toFixed(1)} | ${(serverMs + ownMs).toFixed(1)} |`);
  }

  worker.shutdown();
  await running;
  await connection.close();
  console.log(`node ${process.version}, ${os.cpus().length} cores, load average ${la0.map((x) => x.toFixed(2)).join(' ')} -> ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
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
  await server.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}
