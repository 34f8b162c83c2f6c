// Runs the real `docgen` command as a child process, the way the README tells a user to.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { inject } from 'vitest';
import type { Credentials } from '../../api/auth/credentials.ts';
import { freePort } from '../../cli/temporal-dev.ts';

const execFileP = promisify(execFile);
export const repoRoot = path.resolve(import.meta.dirname, '..', '..');
const bin = path.join(repoRoot, 'cli', 'docgen.mjs');

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
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(await freePort()),
    TEMPORAL_PORT: String(await freePort()),
    TEMPORAL_UI_PORT: String(await freePort()),
    DOCGEN_DATA_DIR: dataDir,
    TEMPORAL_CLI: inject('temporalCli'),
    LOG_LEVEL: 'warn',
    ...extraEnv,
  };
  delete env.DATABASE_URL;
  delete env.TEMPORAL_ADDRESS;
  const child = spawn(process.execPath, [bin, 'start'], { env, cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const deadline = Date.now() + 120_000;
  while (!out.includes('docgen is ready.')) {
    if (child.exitCode !== null) throw new Error(`docgen start exited with ${child.exitCode}:\n${out}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`docgen start was not ready in time:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    env,
    child,
    dataDir,
    output: () => out,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode === null) child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), 40_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
    async credentials(subscription?: string) {
      const args = [bin, 'credentials', '--json', ...(subscription ? ['--subscription', subscription] : [])];
      const { stdout } = await execFileP(process.execPath, args, { env, cwd: repoRoot });
      return JSON.parse(stdout) as Credentials;
    },
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

export async function stopProcess(p: { child: ChildProcess; exited: Promise<number | null> }, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  if (p.child.exitCode === null) p.child.kill(signal);
  return p.exited;
}
