// `docgen start` never leaves its Temporal dev server behind, and a dev server that an earlier start on
// the same data directory left running does not block the next start ("port ... is taken"): the next
// start replaces it. A process on the port that is not docgen's is never touched.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { startDevServer } from '../../cli/temporal-dev.ts';
import { docgenStartEnv, spawnDocgenStart } from '../support/docgen-start.ts';

/** Live (non-zombie) processes whose command line is a dev server on this database file. */
function devServersOn(dbFile: string): number[] {
  const found: number[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'latin1');
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
      const argv = fs.readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
      if (argv.includes('start-dev') && argv.includes(dbFile)) found.push(Number(name));
    } catch {
      /* ended while we looked */
    }
  }
  return found;
}

async function until(what: string, check: () => boolean, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('docgen start and its Temporal dev server', () => {
  const dirs: string[] = [];
  const tmp = () => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-devserver-'));
    dirs.push(d);
    return d;
  };
  afterAll(() => {
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it('SIGKILLed: its dev server goes too, and the next start on the same data directory and ports comes up', async () => {
    const dataDir = tmp();
    const dbFile = path.join(dataDir, 'temporal', 'temporal.db');
    const env = await docgenStartEnv(dataDir, { TEMPORAL_CLI: inject('temporalCli') });
    const first = await spawnDocgenStart(env);
    try {
      expect(devServersOn(dbFile)).toHaveLength(1);
    } finally {
      await first.stop('SIGKILL');
    }
    await until('the dev server of the killed docgen exits', () => devServersOn(dbFile).length === 0);

    const second = await spawnDocgenStart(first.env);
    try {
      expect(second.output()).not.toContain('is taken');
      expect(devServersOn(dbFile)).toHaveLength(1);
      const res = await fetch(`http://127.0.0.1:${env.PORT}/v1/openapi.json`);
      expect(res.status).toBe(200);
    } finally {
      expect(await second.stop('SIGTERM')).toBe(0);
    }
    expect(devServersOn(dbFile)).toEqual([]);
    expect(fs.existsSync(path.join(dataDir, 'temporal', 'dev-server.json'))).toBe(false);
    // Two starts of the whole service (each up to 120 s on a loaded machine).
  }, 300_000);

  it('replaces a dev server left running on its data directory (recorded in the pid file)', async () => {
    const dataDir = tmp();
    const dbFile = path.join(dataDir, 'temporal', 'temporal.db');
    const env = await docgenStartEnv(dataDir, { TEMPORAL_CLI: inject('temporalCli') });
    // What an earlier start leaves when its guard could not act: a dev server on the configured port,
    // recorded in the data directory's pid file.
    const leftover = await startDevServer({
      cli: inject('temporalCli'),
      port: Number(env.TEMPORAL_PORT),
      uiPort: Number(env.TEMPORAL_UI_PORT),
      dbFile,
      pidFile: path.join(dataDir, 'temporal', 'dev-server.json'),
    });
    const leftoverPid = leftover.process.pid;
    try {
      const started = await spawnDocgenStart(env);
      try {
        expect(started.output()).toContain(`Stopping the Temporal dev server an earlier docgen start left running (pid ${leftoverPid}`);
        expect(leftover.process.exitCode !== null || leftover.process.signalCode !== null).toBe(true);
        const now = devServersOn(dbFile);
        expect(now).toHaveLength(1);
        expect(now[0]).not.toBe(leftoverPid);
      } finally {
        const code = await started.stop('SIGTERM');
        expect(
          code,
          `docgen start's exit (signal ${started.child.signalCode ?? 'none'}); its last output:\n${started.output().slice(-3000)}`,
        ).toBe(0);
      }
    } finally {
      await leftover.stop();
    }
  }, 300_000);

  it("the tests' harness: an API port taken after the environment was made, docgen starts again on fresh ports", async () => {
    const env = await docgenStartEnv(tmp(), { TEMPORAL_CLI: inject('temporalCli') });
    // What another process's outgoing connection does to a port picked free a moment before.
    const squatter = net.createServer((s) => s.end());
    await new Promise<void>((r) => squatter.listen(Number(env.PORT), '127.0.0.1', r));
    try {
      const started = await spawnDocgenStart(env);
      try {
        expect(started.env.PORT).not.toBe(env.PORT);
        expect((await fetch(`http://127.0.0.1:${started.env.PORT}/v1/health`)).status).toBe(200);
      } finally {
        await started.stop();
      }
    } finally {
      await new Promise((r) => squatter.close(r));
    }
  }, 300_000);

  it('never touches a process on the port that is not its dev server', async () => {
    const dataDir = tmp();
    const env = await docgenStartEnv(dataDir, { TEMPORAL_CLI: inject('temporalCli') });
    const squatter = net.createServer((s) => s.end());
    await new Promise<void>((r) => squatter.listen(Number(env.TEMPORAL_PORT), '127.0.0.1', r));
    // A stale pid file naming a process that is not a dev server (this test's own process).
    fs.mkdirSync(path.join(dataDir, 'temporal'), { recursive: true });
    fs.writeFileSync(
      path.join(dataDir, 'temporal', 'dev-server.json'),
      JSON.stringify({ pid: process.pid, startTime: '1', port: Number(env.TEMPORAL_PORT) }),
    );
    try {
      await expect(spawnDocgenStart(env, { timeoutMs: 60_000 })).rejects.toThrow(`port ${env.TEMPORAL_PORT} is taken`);
      expect(squatter.listening).toBe(true);
    } finally {
      await new Promise((r) => squatter.close(r));
    }
  });
});
