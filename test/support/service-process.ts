// Runs the real `docgen` command as a child process, the way the README tells a user to.
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { inject } from 'vitest';
import type { Credentials } from '../../api/auth/credentials.ts';
import { docgenBin as bin, docgenCredentials, docgenStartEnv, repoRoot, spawnDocgenStart } from './docgen-start.ts';

export { repoRoot };

export interface StartedService {
  env: NodeJS.ProcessEnv;
  child: ChildProcess;
  output: () => string;
  dataDir: string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  credentials(subscription?: string): Promise<Credentials>;
}

export async function startDocgen(extraEnv: Record<string, string> = {}): Promise<StartedService> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-e2e-'));
  const started = await spawnDocgenStart(await docgenStartEnv(dataDir, { TEMPORAL_CLI: inject('temporalCli'), ...extraEnv }));
  const { env } = started;
  return {
    env,
    child: started.child,
    dataDir,
    output: started.output,
    stop: started.stop,
    credentials: (subscription?: string) => docgenCredentials(env, subscription),
  };
}

/** Runs `docgen <args>` as a child process; `started` resolves once its output contains `ready`. */
export function runDocgen(args: string[], env: NodeJS.ProcessEnv, ready: string) {
  const child = spawn(process.execPath, [bin, ...args], { env, cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  const started = (async () => {
    const deadline = Date.now() + 90_000;
    while (!out.includes(ready)) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`docgen ${args[0]} did not start:\n${out}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  return { child, exited, started, output: () => out };
}

export async function stopProcess(
  p: { child: ChildProcess; exited: Promise<number | null> },
  signal: NodeJS.Signals = 'SIGTERM',
): Promise<number | null> {
  if (p.child.exitCode === null) p.child.kill(signal);
  return p.exited;
}
