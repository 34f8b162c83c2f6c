// The embedded Temporal server: the Temporal CLI's dev server, found on this machine or installed with
// `go install` (the only route on machines that reach nothing but package registries).
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Connection } from '@temporalio/client';

export const TEMPORAL_CLI_MODULE = 'github.com/temporalio/cli/cmd/temporal@v1.5.1';
export const INSTALL_HINT = `go install ${TEMPORAL_CLI_MODULE}`;

function isExecutable(p: string): boolean {
  try {
    fs.accessSync(p, fs.constants.X_OK);
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

function goBinDir(): string | undefined {
  try {
    const gobin = execFileSync('go', ['env', 'GOBIN'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    if (gobin) return gobin;
    const gopath = execFileSync('go', ['env', 'GOPATH'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    return gopath ? path.join(gopath.split(path.delimiter)[0] ?? gopath, 'bin') : undefined;
  } catch {
    return undefined;
  }
}

/** TEMPORAL_CLI, then PATH, then Go's bin directory. */
export function findTemporalCli(explicit?: string): string | undefined {
  if (explicit) {
    if (isExecutable(explicit)) return explicit;
    throw new Error(`TEMPORAL_CLI=${explicit} is not an executable file`);
  }
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir && isExecutable(path.join(dir, 'temporal'))) return path.join(dir, 'temporal');
  }
  const candidates = [goBinDir(), path.join(os.homedir(), 'go', 'bin')].filter((d): d is string => Boolean(d));
  for (const dir of candidates) {
    if (isExecutable(path.join(dir, 'temporal'))) return path.join(dir, 'temporal');
  }
  return undefined;
}

/** Finds the CLI or installs it with Go; without Go, fails naming the command to run. */
export function ensureTemporalCli(explicit: string | undefined, log: (line: string) => void): string {
  const found = findTemporalCli(explicit);
  if (found) return found;
  let hasGo = true;
  try {
    execFileSync('go', ['version'], { stdio: 'ignore' });
  } catch {
    hasGo = false;
  }
  if (!hasGo) {
    throw new Error(
      `The Temporal CLI was not found (TEMPORAL_CLI, PATH, Go's bin directory) and Go is not installed to build it.\n` +
        `Install Go, then run: ${INSTALL_HINT}\nor set TEMPORAL_ADDRESS to an existing Temporal server.`,
    );
  }
  log(`Temporal CLI not found: installing it with \`${INSTALL_HINT}\` (first run only, a few minutes)...`);
  execFileSync('go', ['install', TEMPORAL_CLI_MODULE], { stdio: ['ignore', 'inherit', 'inherit'] });
  const installed = findTemporalCli();
  if (!installed) throw new Error(`\`${INSTALL_HINT}\` finished but no temporal binary was found in Go's bin directory`);
  return installed;
}

export async function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, host, () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

export async function portInUse(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export interface DevServer {
  address: string;
  uiUrl?: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

export interface DevServerOptions {
  cli: string;
  port: number;
  uiPort?: number;
  /** Persistent SQLite file; omit for an in-memory server (tests). */
  dbFile?: string;
  headless?: boolean;
  namespace?: string;
  logFile?: string;
}

export async function startDevServer(opts: DevServerOptions): Promise<DevServer> {
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(opts.port), '--namespace', opts.namespace ?? 'default', '--log-level', 'warn'];
  if (opts.dbFile) {
    fs.mkdirSync(path.dirname(opts.dbFile), { recursive: true });
    // WAL with synchronous=NORMAL survives a process crash (what a dev machine sees) without an fsync per
    // commit, which otherwise costs ~20-40 ms on every workflow and activity task.
    args.push('--db-filename', opts.dbFile, '--sqlite-pragma', 'journal_mode=wal', '--sqlite-pragma', 'synchronous=normal');
  }
  // Eager dispatch: a workflow started by a client sharing a worker's connection, and activities scheduled
  // by a workflow task, start on that worker at once instead of waiting for a poll.
  args.push('--dynamic-config-value', 'system.enableActivityEagerExecution=true', '--dynamic-config-value', 'system.enableEagerWorkflowStart=true');
  if (opts.headless || opts.uiPort === undefined) args.push('--headless');
  else args.push('--ui-port', String(opts.uiPort), '--ui-ip', '127.0.0.1');
  const out = opts.logFile ? fs.openSync(opts.logFile, 'a') : 'ignore';
  const child = spawn(opts.cli, args, { stdio: ['ignore', out, out], detached: false });
  const address = `127.0.0.1:${opts.port}`;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let lastError: unknown;
  const deadline = Date.now() + 60_000;
  for (;;) {
    const early = await Promise.race([exited, new Promise<'wait'>((r) => setTimeout(() => r('wait'), 200))]);
    if (early !== 'wait') {
      throw new Error(`the Temporal dev server exited with code ${early}${opts.logFile ? ` (see ${opts.logFile})` : ''}`);
    }
    try {
      const conn = await Connection.connect({ address, connectTimeout: 1_000 });
      try {
        await conn.workflowService.describeNamespace({ namespace: opts.namespace ?? 'default' });
        break;
      } finally {
        await conn.close();
      }
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the Temporal dev server did not become ready in 60 s: ${String(lastError)}`);
    }
  }
  return {
    address,
    ...(opts.uiPort !== undefined && !opts.headless ? { uiUrl: `http://127.0.0.1:${opts.uiPort}` } : {}),
    process: child,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
