// One warm LibreOffice instance: a uno_bridge.py process that starts its own soffice (same process group),
// speaks JSON lines on stdin/stdout, and is restarted when it dies, times out or has served its share.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fsp from 'node:fs/promises';
import path from 'node:path';
import readline from 'node:readline';
import type { Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { ConvertError } from './errors.ts';
import type { ConversionPlan } from './options.ts';
import type { InstanceStatus } from './types.ts';
import { groupAlive, liveGroups, trackGroup } from './processes.ts';
import type { Isolation } from './probes.ts';
import { instanceEnv, SANDBOX_JOB_DIR, sandboxArgs } from './sandbox.ts';
import { instanceFonts } from './fonts.ts';
import { converterSettings } from './settings.ts';

const BRIDGE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'uno_bridge.py');

export interface Job {
  id: number;
  tenant: string;
  timeoutMs: number;
  input: Uint8Array;
  plan: ConversionPlan;
  /** Count the pages a PDF export would have instead of converting (the result is a number). */
  count?: boolean;
  signal: AbortSignal | undefined;
  resolve: (out: Uint8Array | number) => void;
  reject: (e: Error) => void;
  settled: boolean;
  onAbort?: () => void;
}

export interface Reply {
  id?: number;
  ok?: boolean;
  ms?: number;
  /** The page count of a `count` request. */
  pages?: number;
  error?: string;
  fatal?: boolean;
  ready?: boolean;
  pid?: number;
}

/** What an instance needs of the pool that owns it. */
export interface InstanceHost {
  readonly id: number;
  readonly baseDir: string;
  readonly soffice: string;
  readonly python: string;
  readonly startTimeoutMs: number;
  /** The bwrap sandbox, or the network-namespace command prefix (unshare -n), or neither. */
  readonly isolation: Isolation;
  /** The memory-cap command prefix (prlimit --as=...), or empty. */
  readonly memoryLimitPrefix: string[];
  onInstanceExit(instance: Instance, why: string): void;
}

export class Instance {
  readonly index: number;
  state: InstanceStatus['state'] = 'dead';
  proc: ChildProcess | null = null;
  conversions = 0;
  sinceStart = 0;
  restarts = 0;
  lastError: string | null = null;
  failedStarts = 0;
  /** The removal of the previous job's files; the next job starts when it is done. */
  jobCleanup: Promise<unknown> = Promise.resolve();
  private generation = 0;
  private waiting = new Map<number, (r: Reply) => void>();
  private exitWaiters: Array<() => void> = [];
  private readonly pool: InstanceHost;

  constructor(pool: InstanceHost, index: number) {
    this.pool = pool;
    this.index = index;
  }

  get profileDir(): string {
    return path.join(this.pool.baseDir, `profile-${this.index}`);
  }

  /** Where the pool writes this instance's job files (made by the pool). */
  get jobDir(): string {
    return path.join(this.pool.baseDir, 'jobs', String(this.index));
  }

  /** The job directory as the instance sees it: /job in its sandbox, else the host path. */
  get jobDirInside(): string {
    return this.pool.isolation.sandbox ? SANDBOX_JOB_DIR : this.jobDir;
  }

  /** Spawns the bridge and resolves once soffice accepts; rejects (and cleans up) otherwise. */
  async start(): Promise<void> {
    this.state = 'starting';
    this.generation++;
    const tmp = path.join(this.pool.baseDir, `lo-tmp-${this.index}`);
    // A killed predecessor leaves its temp files behind.
    await fsp.rm(tmp, { recursive: true, force: true });
    await fsp.mkdir(tmp, { recursive: true });
    // The sandbox mounts the profile, so it must exist before the bridge seeds it.
    await fsp.mkdir(this.profileDir, { recursive: true });
    const pipe = `docgen-${process.pid}-${this.pool.id}-${this.index}-${this.generation}`;
    const args = [
      BRIDGE,
      '--soffice',
      this.pool.soffice,
      '--profile',
      this.profileDir,
      '--tmp',
      tmp,
      '--pipe',
      pipe,
      '--start-timeout',
      String(this.pool.startTimeoutMs / 1000),
    ];
    // The memory cap applies to the bridge and the soffice it starts (limits are inherited); inside it, the
    // sandbox (or the network namespace alone).
    const iso = this.pool.isolation;
    // Its fonts: docgen's substitutions and the deployment's font directory (converter/fonts.ts).
    const fonts = await instanceFonts(tmp, this.profileDir, converterSettings().fontsDir);
    const confine = iso.sandbox
      ? sandboxArgs(
          { profile: this.profileDir, tmp, job: this.jobDir, bridge: BRIDGE },
          { network: !iso.offline, extraReadOnly: iso.readOnly, fontsDir: fonts.fontsDir },
        )
      : (iso.networkPrefix ?? []);
    const prefix = [...this.pool.memoryLimitPrefix, ...confine];
    const cmd = prefix.length > 0 ? prefix[0]! : this.pool.python;
    const argv = prefix.length > 0 ? [...prefix.slice(1), this.pool.python, ...args] : args;
    const proc = spawn(cmd, argv, {
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...instanceEnv(process.env, tmp), ...fonts.env },
    });
    this.proc = proc;
    if (proc.pid) trackGroup(proc.pid);
    // The pool holds the event loop open only while it has work (see LibreOfficePool.keepAlive),
    // so a script that called convert() can exit normally when done.
    proc.unref();
    for (const s of [proc.stdin, proc.stdout, proc.stderr]) (s as unknown as Socket | null)?.unref?.();
    let stderr = '';
    proc.stderr?.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-4000);
    });
    proc.stdin?.on('error', () => {
      /* EPIPE when the bridge died; the exit handler reports it */
    });
    const rl = readline.createInterface({ input: proc.stdout });
    let onReady: ((r: Reply) => void) | null = null;
    rl.on('line', (line) => {
      let msg: Reply;
      try {
        msg = JSON.parse(line) as Reply;
      } catch {
        return;
      }
      if (onReady && 'ready' in msg) {
        onReady(msg);
        return;
      }
      const w = msg.id === undefined ? undefined : this.waiting.get(msg.id);
      if (w) {
        this.waiting.delete(msg.id!);
        w(msg);
      }
    });
    proc.once('exit', (code, signal) => {
      if (proc.pid) {
        // soffice may outlive the bridge (the group survives its leader).
        try {
          process.kill(-proc.pid, 'SIGKILL');
        } catch {
          /* gone */
        }
        liveGroups.delete(proc.pid);
      }
      if (this.proc === proc) this.proc = null;
      const why = `LibreOffice instance exited (${signal ?? `code ${code}`})${stderr.trim() ? `: ${lastLines(stderr)}` : ''}`;
      for (const w of this.waiting.values()) w({ ok: false, error: why, fatal: true });
      this.waiting.clear();
      onReady?.({ ready: false, error: why });
      for (const w of this.exitWaiters.splice(0)) w();
      this.pool.onInstanceExit(this, why);
    });
    const ready = await new Promise<Reply>((resolve) => {
      const timer = setTimeout(
        () => resolve({ ready: false, error: `did not start within ${this.pool.startTimeoutMs} ms` }),
        this.pool.startTimeoutMs + 2000,
      );
      onReady = (r) => {
        clearTimeout(timer);
        onReady = null;
        resolve(r);
      };
    });
    if (!ready.ready) {
      this.lastError = ready.error ?? 'start failed';
      await this.kill();
      throw new ConvertError('CONVERTER_UNAVAILABLE', `LibreOffice instance ${this.index} failed to start: ${this.lastError}`);
    }
    this.sinceStart = 0;
    this.failedStarts = 0;
    this.state = 'idle';
  }

  request(req: Record<string, unknown>): Promise<Reply> {
    const proc = this.proc;
    if (!proc || !proc.stdin) return Promise.resolve({ ok: false, error: 'instance not running', fatal: true });
    const id = req.id as number;
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      proc.stdin!.write(JSON.stringify(req) + '\n');
    });
  }

  /** Ends the whole process group (bridge + soffice) and waits for the bridge to be reaped. */
  async kill(): Promise<void> {
    const proc = this.proc;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise<void>((r) => this.exitWaiters.push(r));
    // The child is unref'd while idle; without this, `await pool.stop()` as the last thing a
    // script does would let the event loop run dry before the exit event arrives.
    proc.ref();
    try {
      process.kill(-proc.pid!, 'SIGKILL');
    } catch {
      /* gone */
    }
    await exited;
    // SIGKILL is asynchronous: wait until soffice.bin is really gone so a stopped pool holds no
    // memory and a restarted instance never overlaps its predecessor on 2 cores.
    const deadline = Date.now() + 3000;
    while (groupAlive(proc.pid!) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  }

  status(): InstanceStatus {
    return {
      index: this.index,
      state: this.state,
      pid: this.proc?.pid ?? null,
      conversions: this.conversions,
      restarts: this.restarts,
      lastError: this.lastError,
    };
  }
}

function lastLines(s: string): string {
  return s
    .trim()
    .split('\n')
    .filter((l) => !/javaldx/.test(l))
    .slice(-3)
    .join(' | ');
}
