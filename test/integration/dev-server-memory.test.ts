// The embedded Temporal dev server keeps DEV_SERVER_STATE_CACHE_RUNS workflows' state in memory, not the
// 8096 (closed runs included, for up to an hour) it keeps by default, which grew its memory by ~50 KB per
// workflow under a soak (issue 28; bench/dev-server-memory.ts measures it). Read from the server's own
// metrics: the cache's size, and what it holds after more runs than that.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEV_SERVER_STATE_CACHE_RUNS, type DevServer, freePort, startDevServer } from '../../cli/temporal-dev.ts';

describe('the embedded dev server bounds the workflow state it keeps in memory', () => {
  let dir: string;
  let server: DevServer;
  let metricsPort: number;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-devmem-'));
    metricsPort = await freePort();
    // As `docgen start` runs it: a SQLite file in the data directory.
    server = await startDevServer({
      cli: inject('temporalCli'),
      port: await freePort(),
      headless: true,
      dbFile: path.join(dir, 'temporal.db'),
      metricsPort,
    });
  });
  afterAll(async () => {
    await server?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  const stateCache = async (metric: 'cache_size' | 'cache_usage') => {
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith(`${metric}{cache_type="mutablestate",service_name="history"}`));
    expect(line, `${metric} of the mutable-state cache`).toBeDefined();
    return Number(line!.split(' ').at(-1));
  };

  it('its mutable-state cache holds at most DEV_SERVER_STATE_CACHE_RUNS runs, however many there were', async () => {
    const runs = DEV_SERVER_STATE_CACHE_RUNS + 100;
    const connection = await Connection.connect({ address: server.address });
    try {
      const client = new Client({ connection });
      // Started, never run (no worker polls this queue): each run's state enters the cache.
      for (let i = 0; i < runs; i += 50) {
        await Promise.all(
          Array.from({ length: Math.min(50, runs - i) }, (_, j) =>
            client.workflow.start('noSuchWorkflow', { taskQueue: 'dev-server-memory', workflowId: `devmem-${i + j}` }),
          ),
        );
      }
    } finally {
      await connection.close();
    }
    // The server reports its caches' gauges on its own schedule: read them once the runs are in.
    await expect.poll(() => stateCache('cache_usage'), { timeout: 30_000, interval: 500 }).toBeGreaterThan(DEV_SERVER_STATE_CACHE_RUNS / 2);
    expect(await stateCache('cache_usage')).toBeLessThanOrEqual(DEV_SERVER_STATE_CACHE_RUNS);
    expect(await stateCache('cache_size')).toBe(DEV_SERVER_STATE_CACHE_RUNS);
  });
});
