// The orchestration floor (benchmarks only): Temporal's dev server, started exactly as `docgen start` starts
// it (cli/temporal-dev.ts: SQLite file in WAL mode, eager workflow start and eager activities), and one
// worker in this process with docgen's lean workflow thread (worker/sandbox.ts), running workflows of no-op
// steps in docgen's shapes (workflows.ts), started eagerly as docgen does. Nothing of docgen (HTTP, auth,
// database, storage, engine, converter) runs: what a shape costs here, docgen's workflows cannot go under.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { findTemporalCli, freePort, startDevServer } from '../../cli/temporal-dev.ts';
import { withLeanWorkflowThread } from '../../worker/sandbox.ts';
import { tsMs } from '../breakdown.ts';

export interface Shape {
  type: 'sequential' | 'pairs' | 'pdf' | 'callback' | 'callbackActivity';
  arg?: number;
  label: string;
}

export interface FloorRun {
  /** Start -> result, as the client sees it. */
  totalMs: number;
  /** The workflow task's start -> the first local activity scheduled (creating the workflow in the
   *  worker's sandbox), from the history (bench/breakdown.ts explains the clocks). */
  creationMs: number;
}

export interface Floor {
  run(shape: Shape): Promise<FloorRun>;
  /** Starts a workflow of the shape and waits for its result, nothing measured. */
  start(shape: Shape, id: string): Promise<unknown>;
  serverPid: number;
  stop(): Promise<void>;
}

export async function startFloor(): Promise<Floor> {
  const cli = findTemporalCli(process.env.TEMPORAL_CLI);
  if (!cli) throw new Error('no Temporal CLI (set TEMPORAL_CLI)');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'la-cost-'));
  const server = await startDevServer({ cli, port: await freePort(), dbFile: path.join(dir, 'temporal.db'), headless: true });
  const connection = await NativeConnection.connect({ address: server.address });
  const taskQueue = 'la-cost';
  const worker = await withLeanWorkflowThread(false, () =>
    Worker.create({
      connection,
      taskQueue,
      workflowsPath: new URL('./workflows.ts', import.meta.url).pathname,
      activities: { noop: async () => 1 },
    }),
  );
  const running = worker.run();
  const client = new Client({ connection });
  let n = 0;
  const start = (s: Shape, id = `${s.type}-${s.arg ?? ''}-${n++}-${Date.now()}`) =>
    client.workflow.start(s.type, { taskQueue, workflowId: id, args: s.arg === undefined ? [] : [s.arg], requestEagerStart: true });
  return {
    serverPid: server.process.pid!,
    async start(s, id) {
      return (await start(s, id)).result();
    },
    async run(s) {
      const t0 = performance.now();
      const h = await start(s);
      await h.result();
      const totalMs = performance.now() - t0;
      const events = (await h.fetchHistory()).events ?? [];
      const taskStarted = tsMs(events.find((e) => e.workflowTaskStartedEventAttributes)?.eventTime);
      const taskCompleted = tsMs(events.find((e) => e.workflowTaskCompletedEventAttributes)?.eventTime);
      const scheduled = events
        .filter((e) => e.markerRecordedEventAttributes)
        .map((e) =>
          tsMs(
            JSON.parse(new TextDecoder().decode(e.markerRecordedEventAttributes?.details?.data?.payloads?.[0]?.data ?? new Uint8Array()))
              .original_schedule_time,
          ),
        );
      return { totalMs, creationMs: (scheduled.length ? scheduled[0]! : taskCompleted) - taskStarted };
    },
    async stop() {
      worker.shutdown();
      await running;
      await connection.close();
      await server.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
