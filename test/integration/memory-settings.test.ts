// The memory settings of `docgen start` (issue 40; `npm run bench:memory` measures what they save): each is
// checked where it takes hold. PGlite's page cache (PGLITE_SHARED_BUFFERS_MB) as the database reports it;
// V8's semi-space (V8_SEMI_SPACE_MB) on the service commands' node process, which cli/docgen.mjs restarts in
// place with the flag (and MALLOC_ARENA_MAX=2 unless set), and on the Temporal SDK's workflow thread.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import type { Worker } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';
import { openDb } from '../../store/db.ts';
import { withLeanWorkflowThread } from '../../worker/sandbox.ts';

const root = path.resolve(import.meta.dirname, '../..');
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

describe('memory settings of docgen start', () => {
  it('the embedded database has PGLITE_SHARED_BUFFERS_MB of shared buffers, and PGlite its own 128 MB without it', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-memset-'));
    dirs.push(dir);
    const db = await openDb({ dataDir: dir, pgliteSharedBuffersMb: 16 });
    try {
      expect((await db.query<{ shared_buffers: string }>('SHOW shared_buffers')).rows[0]?.shared_buffers).toBe('16MB');
    } finally {
      await db.close();
    }
    const again = await openDb({ dataDir: dir });
    try {
      expect((await again.query<{ shared_buffers: string }>('SHOW shared_buffers')).rows[0]?.shared_buffers).toBe('128MB');
    } finally {
      await again.close();
    }
  });

  it('docgen start, api and worker run with --max-semi-space-size=V8_SEMI_SPACE_MB (same pid); other commands and 0 do not', () => {
    // A preload prints each image's pid and V8 flags; `docgen worker` without DATABASE_URL then stops at once.
    const preload = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-memset-')), 'show.mjs');
    dirs.push(path.dirname(preload));
    fs.writeFileSync(
      preload,
      'process.stderr.write(`image ${process.pid} [${process.execArgv.join(" ")}] ${process.env.MALLOC_ARENA_MAX ?? "-"}\\n`);\n',
    );
    const run = (args: string[], extra: Record<string, string> = {}) => {
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        NODE_OPTIONS: `--import ${preload}`,
        DOCGEN_DATA_DIR: path.dirname(preload),
        ...extra,
      };
      delete env.DATABASE_URL;
      delete env.V8_SEMI_SPACE_MB;
      delete env.MALLOC_ARENA_MAX;
      Object.assign(env, extra);
      const r = spawnSync(process.execPath, [path.join(root, 'cli', 'docgen.mjs'), ...args], {
        cwd: root,
        env,
        encoding: 'utf8',
        timeout: 60_000,
      });
      return [...r.stderr.matchAll(/^image (\d+) \[(.*)\] (\S+)$/gm)].map((m) => ({ pid: Number(m[1]), argv: m[2]!, arenas: m[3]! }));
    };
    const worker = run(['worker']);
    expect(worker).toHaveLength(2);
    expect(worker[1]!.pid).toBe(worker[0]!.pid);
    expect(worker.map(({ argv, arenas }) => [argv, arenas])).toEqual([
      ['', '-'],
      ['--max-semi-space-size=8', '2'],
    ]);
    expect(run(['start'], { V8_SEMI_SPACE_MB: '4', MALLOC_ARENA_MAX: '8', PORT: 'x' }).map((i) => [i.argv, i.arenas])).toEqual([
      ['', '8'],
      ['--max-semi-space-size=4', '8'],
    ]);
    expect(run(['api'], { V8_SEMI_SPACE_MB: '0' }).map((i) => [i.argv, i.arenas])).toEqual([
      ['', '-'],
      ['', '2'],
    ]);
    expect(run(['worker'], { V8_SEMI_SPACE_MB: '0', MALLOC_ARENA_MAX: '4' }).map((i) => i.argv)).toEqual(['']);
    expect(run(['config', '--markdown']).map((i) => i.argv)).toEqual(['']);
  });

  it("the Temporal SDK's workflow thread gets the young generation asked for, with or without the debug aids", async () => {
    const sdkThread = createRequire(import.meta.url).resolve('@temporalio/worker/lib/workflow/workflow-worker-thread.js');
    for (const debugAids of [false, true]) {
      const limits = await withLeanWorkflowThread(
        debugAids,
        async () => {
          const threads = createRequire(import.meta.url)('node:worker_threads') as { Worker: typeof Worker };
          const t = new threads.Worker(sdkThread);
          const l = t.resourceLimits;
          await t.terminate();
          return l;
        },
        { youngGenerationMb: 24 },
      );
      expect(limits?.maxYoungGenerationSizeMb, `debug aids ${debugAids}`).toBe(24);
    }
  });
});
