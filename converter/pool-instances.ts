// The LibreOffice pool's instances (converter/pool.ts): starting them, restarting them (with back-off
// after failed starts), the warm spares that take over from an instance stopped by a time limit, and
// whether any can take work. What runs on them and in which order is the pool's.
import fs from 'node:fs';
import path from 'node:path';
import { ConvertError, HOW_TO_ENABLE } from './errors.ts';
import { Instance, type InstanceHost } from './instance.ts';
import type { ConverterLog } from './settings.ts';
import type { InstanceStatus } from './types.ts';

/** What the instance set needs of its pool. */
export interface InstanceSetHost {
  /** The host of each instance (the pool: its directories, commands, isolation). */
  readonly host: InstanceHost;
  readonly log: ConverterLog;
  stopping(): boolean;
  /** An instance is ready: dispatch waiting jobs. */
  onReady(): void;
  /** No instance can start and none ever did: fail the waiting jobs. */
  onCannotStart(err: ConvertError): void;
}

export class InstanceSet {
  readonly all: Instance[] = [];
  /** Instances kept idle (not dispatched to) to take over from one stopped by a time limit. */
  private readonly spares = new Set<Instance>();
  /** Some instance has started once: a failing start is then a crash loop to wait out, not a missing install. */
  everStarted = false;
  private readonly pool: InstanceSetHost;

  /** `size` instances that take work and `spare` spares; each instance's job directory is made here, once,
   *  rather than checked on every job. */
  constructor(pool: InstanceSetHost, size: number, spare: number) {
    this.pool = pool;
    for (let i = 0; i < size + spare; i++) {
      this.all.push(new Instance(pool.host, i));
      if (i >= size) this.spares.add(this.all[i]!);
      fs.mkdirSync(path.join(pool.host.baseDir, 'jobs', String(i)), { recursive: true });
    }
  }

  /** The pool keeps a spare (CONVERTER_SPARE_INSTANCES > 0). */
  hasSpare(): boolean {
    return this.spares.size > 0;
  }

  isSpare(inst: Instance): boolean {
    return this.spares.has(inst);
  }

  /** An idle instance that takes work (not a spare). */
  idle(): Instance | undefined {
    return this.all.find((i) => i.state === 'idle' && !this.spares.has(i));
  }

  idleSpare(): Instance | undefined {
    return [...this.spares].find((i) => i.state === 'idle');
  }

  /** Instances that take work and are starting (they will take waiting jobs soon). */
  restarting(): number {
    return this.all.filter((i) => i.state === 'starting' && !this.spares.has(i)).length;
  }

  /** A spare takes no work until an instance is stopped by a time limit: it does not make the pool ready. */
  ready(): boolean {
    return this.all.some((i) => !this.spares.has(i) && (i.state === 'idle' || i.state === 'busy'));
  }

  statuses(): InstanceStatus[] {
    return this.all.map((i) => ({ ...i.status(), failedStarts: i.failedStarts, ...(this.spares.has(i) ? { spare: true } : {}) }));
  }

  /** Starts every instance; once one has started, the others that failed keep trying in the background.
   *  Resolves to each start's outcome. */
  async startAll(): Promise<PromiseSettledResult<void>[]> {
    const rs = await Promise.allSettled(this.all.map((inst) => this.start(inst)));
    if (rs.some((r) => r.status === 'fulfilled')) {
      rs.forEach((r, i) => {
        const inst = this.all[i]!;
        if (r.status === 'rejected' && !this.pool.stopping()) this.scheduleRestart(inst, inst.lastError ?? 'start failed');
      });
    }
    return rs;
  }

  private async start(inst: Instance): Promise<void> {
    try {
      await inst.start();
      this.everStarted = true;
      const isolation = this.pool.host.isolation.description;
      this.pool.log(`instance ${inst.index} ready (pid ${inst.proc?.pid}, isolation: ${isolation})`, {
        instance: inst.index,
        pid: inst.proc?.pid,
        isolation,
      });
      if (this.pool.stopping()) await inst.kill();
      this.pool.onReady();
    } catch (e) {
      inst.failedStarts++;
      inst.state = 'dead';
      throw e;
    }
  }

  /** Called on every bridge exit: restarts the instance unless we are stopping or it was expected. */
  onExit(inst: Instance, why: string): void {
    const wasStarting = inst.state === 'starting';
    if (inst.state === 'stopping' || this.pool.stopping()) {
      inst.state = 'dead';
      return;
    }
    inst.state = 'dead';
    inst.lastError = why;
    if (wasStarting) return; // start() reports it and its caller decides
    this.scheduleRestart(inst, why);
  }

  private scheduleRestart(inst: Instance, why: string): void {
    if (this.pool.stopping() || inst.state === 'starting') return;
    inst.state = 'starting';
    inst.restarts++;
    const delay = inst.failedStarts === 0 ? 0 : Math.min(30_000, 500 * 2 ** inst.failedStarts);
    this.pool.log(`restarting instance ${inst.index}${delay ? ` in ${delay} ms` : ''}: ${why}`, {
      level: 'warn',
      instance: inst.index,
      delayMs: delay,
      reason: why,
    });
    const timer = setTimeout(() => {
      if (this.pool.stopping()) return;
      this.start(inst).catch((e: unknown) => {
        inst.lastError = (e as Error).message;
        // Only a LibreOffice that never started here is "not available": after that, failing starts are a
        // crash loop (killed, out of memory, a slow machine) that the back-off waits out, and the queued
        // jobs wait with it (each until its caller's deadline or cancellation).
        if (this.cannotStart()) {
          this.pool.onCannotStart(
            new ConvertError('CONVERTER_UNAVAILABLE', `no LibreOffice instance can start: ${inst.lastError}; ${HOW_TO_ENABLE}`),
          );
        }
        this.scheduleRestart(inst, inst.lastError);
      });
    }, delay);
    timer.unref();
  }

  /** No instance is up, each has failed to start at least 3 times in a row, and none ever started. */
  cannotStart(): boolean {
    return this.all.every((i) => i.state !== 'idle' && i.state !== 'busy' && i.failedStarts >= 3) && !this.everStarted;
  }

  /** Stops `inst` and starts it again. */
  async restart(inst: Instance, why: string): Promise<void> {
    // Marking it 'stopping' first makes onExit leave the restart to us.
    inst.state = 'stopping';
    await inst.kill();
    if (this.pool.stopping()) return;
    inst.state = 'dead';
    this.scheduleRestart(inst, why);
  }

  /** An idle spare takes `inst`'s place (dispatched to from now on); `inst` becomes the spare. */
  promoteSpare(inst: Instance): void {
    if (this.spares.has(inst)) return;
    const spare = this.idleSpare();
    if (!spare) return;
    this.spares.delete(spare);
    this.spares.add(inst);
    this.pool.log(`instance ${spare.index} takes over from instance ${inst.index}, which restarts as the spare`, {
      instance: spare.index,
      replaces: inst.index,
    });
  }

  /** Ends every instance (the pool is stopping). */
  async killAll(): Promise<void> {
    await Promise.all(
      this.all.map(async (i) => {
        i.state = 'stopping';
        await i.kill();
        i.state = 'dead';
      }),
    );
  }
}
