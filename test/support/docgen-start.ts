// Runs the real `docgen start` as a child process, the way the README tells a user to, and waits for its
// "docgen is ready." line. No vitest imports: the benchmarks use it too.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import type { Credentials } from '../../api/auth/credentials.ts';
import { freePort } from '../../cli/temporal-dev.ts';

export const repoRoot = path.resolve(import.meta.dirname, '..', '..');
export const docgenBin = path.join(repoRoot, 'cli', 'docgen.mjs');

/** `docgen credentials --json [--subscription S]` in the service's environment (`root`: the checkout whose
 *  docgen runs; this one by default). */
export async function docgenCredentials(env: NodeJS.ProcessEnv, subscription?: string, root = repoRoot): Promise<Credentials> {
  const args = [path.join(root, 'cli', 'docgen.mjs'), 'credentials', '--json', ...(subscription ? ['--subscription', subscription] : [])];
  const { stdout } = await promisify(execFile)(process.execPath, args, { env, cwd: root });
  return JSON.parse(stdout) as Credentials;
}

export interface DocgenStart {
  env: NodeJS.ProcessEnv;
  child: ChildProcess;
  /** Spawn to the ready line. */
  readyMs: number;
  /** Everything it printed so far (stdout and stderr). */
  output(): string;
  /** Signals it once (SIGTERM by default), SIGKILL after `killAfterMs` (120 s: a drain on a loaded machine is
   *  slow, not stuck); resolves with the exit code (null when a signal ended it: see `child.signalCode`). */
  stop(signal?: NodeJS.Signals, killAfterMs?: number): Promise<number | null>;
}

/** The environment of a `docgen start` on embedded defaults: free ports, its own data directory, no
 *  external database or Temporal server; `extra` last. */
export async function docgenStartEnv(dataDir: string, extra: Record<string, string | undefined> = {}): Promise<NodeJS.ProcessEnv> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(await freePort()),
    TEMPORAL_PORT: String(await freePort()),
    TEMPORAL_UI_PORT: String(await freePort()),
    DOCGEN_DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    // A test never runs apt-get: CI installs LibreOffice first (.ci/install-converter.sh).
    CONVERTER_AUTO_INSTALL: 'false',
    ...extra,
  };
  delete env.DATABASE_URL;
  delete env.TEMPORAL_ADDRESS;
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete env[k];
  return env;
}

/** Runs `docgen start` and waits for its ready line. A port that was free when the environment was made can
 *  be taken by the time docgen listens (another process's outgoing connection gets it as its ephemeral port;
 *  the Temporal dev server then exits saying "address already in use"): then it starts again, up to twice, on
 *  fresh ports; the returned `env` is the one that worked. */
export async function spawnDocgenStart(
  env: NodeJS.ProcessEnv,
  opts: {
    timeoutMs?: number;
    pollMs?: number;
    /** The checkout whose docgen runs (a benchmark's "before"); this one by default. */ root?: string;
  } = {},
): Promise<DocgenStart> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await spawnOnce(env, opts);
    } catch (err) {
      if (attempt >= 3 || !(err instanceof Error) || !/EADDRINUSE|address already in use/.test(err.message)) throw err;
      env = { ...env };
      for (const key of ['PORT', 'TEMPORAL_PORT', 'TEMPORAL_UI_PORT', 'METRICS_PORT']) if (env[key]) env[key] = String(await freePort());
    }
  }
}

async function spawnOnce(env: NodeJS.ProcessEnv, opts: { timeoutMs?: number; pollMs?: number; root?: string }): Promise<DocgenStart> {
  const t0 = performance.now();
  const root = opts.root ?? repoRoot;
  const child = spawn(process.execPath, [path.join(root, 'cli', 'docgen.mjs'), 'start'], {
    env,
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let stopping: Promise<number | null> | undefined;
  const stop = (signal: NodeJS.Signals = 'SIGTERM', killAfterMs = 120_000) =>
    (stopping ??= (async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const timer = setTimeout(() => {
        out += `\n[test harness: no exit ${killAfterMs} ms after ${signal}; SIGKILL]\n`;
        child.kill('SIGKILL');
      }, killAfterMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    })());
  const deadline = Date.now() + (opts.timeoutMs ?? 120_000);
  while (!out.includes('docgen is ready.')) {
    if (child.exitCode !== null) throw new Error(`docgen start exited with ${child.exitCode}:\n${out}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`docgen start was not ready in time:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, opts.pollMs ?? 50));
  }
  return { env, child, readyMs: performance.now() - t0, output: () => out, stop };
}
