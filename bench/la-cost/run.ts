// Benchmark (not a test): what one local activity costs the workflow, with nothing of docgen in the way.
// A Temporal dev server (in memory) and one worker in this process; a workflow runs n no-op local
// activities, one after another or two at a time (Promise.all), started eagerly as docgen does. Prints the
// median start -> result time per shape, and the time from the workflow task's start to the last
// activity's scheduling (its marker's original_schedule_time: the worker's clock; the marker's
// complete_time is the workflow's own clock and cannot be used, see bench/breakdown.ts).
//   node bench/la-cost/run.ts [--runs 8]
import { type ChildProcess, spawn } from 'node:child_process';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { Client } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { findTemporalCli, freePort } from '../../cli/temporal-dev.ts';
import { median, tsMs } from '../breakdown.ts';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '8' } } });
const runs = Number(values.runs);
Runtime.install({ logger: new DefaultLogger('ERROR') });
const cli = findTemporalCli(process.env.TEMPORAL_CLI);
if (!cli) throw new Error('no Temporal CLI (set TEMPORAL_CLI)');
const port = await freePort();
const server: ChildProcess = spawn(cli, ['server', 'start-dev', '--headless', '--ip', '127.0.0.1', '--port', String(port), '--log-level', 'error', '--dynamic-config-value', 'system.enableEagerWorkflowStart=true'], { stdio: 'ignore' });
try {
  let connection: NativeConnection | undefined;
  for (let i = 0; i < 100 && !connection; i++) {
    connection = await NativeConnection.connect({ address: `127.0.0.1:${port}` }).catch(async () => {
      await new Promise((r) => setTimeout(r, 200));
      return undefined;
    });
  }
  if (!connection) throw new Error('the dev server did not start');
  const worker = await Worker.create({ connection, taskQueue: 'la-cost', workflowsPath: new URL('./workflows.ts', import.meta.url).pathname, activities: { noop: async () => 1 } });
  const running = worker.run();
  const client = new Client({ connection });
  const rows: string[] = [];
  const la0 = os.loadavg();
  for (const [type, n] of [['sequential', 0], ['sequential', 1], ['sequential', 2], ['sequential', 4], ['sequential', 8], ['pairs', 8]] as const) {
    const totals: number[] = [];
    const tails: number[] = [];
    for (let k = 0; k < runs + 2; k++) {
      const t0 = performance.now();
      const h = await client.workflow.start(type, { taskQueue: 'la-cost', workflowId: `${type}-${n}-${k}-${Date.now()}`, args: [n], requestEagerStart: true });
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
      tails.push((scheduled.length ? Math.max(...scheduled) : taskCompleted) - taskStarted);
    }
    rows.push(`| ${type} | ${n} | ${median(totals).toFixed(1)} | ${median(tails).toFixed(1)} |`);
  }
  worker.shutdown();
  await running;
  await connection.close();
  console.log(`node ${process.version}, ${os.cpus().length} cores, load average ${la0.map((x) => x.toFixed(2)).join(' ')} -> ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}, ${runs} runs per row`);
  console.log('');
  console.log('| shape | local activities | start -> result median ms | workflow task started -> last activity scheduled median ms |');
  console.log('|---|---:|---:|---:|');
  for (const r of rows) console.log(r);
} finally {
  server.kill();
}
