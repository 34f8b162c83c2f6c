/**
 * A pool of warm LibreOffice instances. Each instance is one `uno_bridge.py` process (Debian's
 * /usr/bin/python3, the one with `uno`) that starts its own soffice with a private profile and
 * serves JSON-line requests; the two share a process group, so ending an instance is one killpg.
 *
 * Why not unoserver: it speaks XML-RPC over TCP, which would need loopback inside the network
 * namespace, and its client is a fresh Python process per call (~100 ms, more than a 1-page
 * conversion). A persistent bridge on stdin/stdout costs a pipe round trip.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ConvertError, HOW_TO_ENABLE } from './errors.ts';
import { planConversion } from './options.ts';
import type { ConversionPlan } from './options.ts';
import { addPdfInfo, pdfaIdentification } from './pdf.ts';
import { sanitizeOoxml } from './sanitize.ts';
import type { Converter, ConverterStatus, ConvertOptions } from './types.ts';
import { FairQueue } from '../core/fair-queue.ts';
import { converterSettings, defaultPoolSize, type NetworkIsolation } from './settings.ts';
import { Instance, type InstanceHost, type Job } from './instance.ts';
import { hasPrlimit, libreOfficeAvailable, networkIsolationPrefix } from './probes.ts';
import { installExitHook, liveDirs } from './processes.ts';

export type { NetworkIsolation } from './settings.ts';
export { defaultPoolSize } from './settings.ts';
export { forgetLibreOfficeProbe, libreOfficeAvailable, networkIsolationPrefix } from './probes.ts';

export interface PoolOptions {
  /** Instances; default CONVERTER_POOL_SIZE or the CPU count. */
  size?: number;
  /** Waiting conversions beyond which convert() rejects with QUEUE_FULL; default CONVERTER_QUEUE_LIMIT or 64. */
  queueLimit?: number;
  /** Per-conversion deadline from dispatch; default CONVERTER_TIMEOUT_MS or 120 000. */
  timeoutMs?: number;
  /** Deadline for an instance to accept its UNO connection; default 60 000. */
  startTimeoutMs?: number;
  /** Restart an instance after this many conversions (LibreOffice grows); default CONVERTER_RECYCLE_AFTER or 1000. */
  recycleAfter?: number;
  /** soffice executable; default SOFFICE or 'soffice'. */
  soffice?: string;
  /** Python with `uno`; default UNO_PYTHON or '/usr/bin/python3'. */
  python?: string;
  /** default CONVERTER_NETWORK_ISOLATION or 'auto' (use a network namespace when the machine allows). */
  networkIsolation?: NetworkIsolation;
  /** Address-space limit (RLIMIT_AS, through prlimit) of each instance in MB; 0 = none; default
   *  the configured CONVERTER_MAX_MEMORY_MB. A conversion that needs more fails (the instance restarts). */
  maxMemoryMb?: number;
  /** Parent for the pool's temp dir (profiles, job files); default os.tmpdir(). */
  tmpDir?: string;
  log?: (msg: string) => void;
  /**
   * Tests only: convert the input as given, without sanitizeOoxml. Exists so the hardening test can
   * show that its document really does pull remote content when nothing stops it.
   */
  unsafeSkipSanitize?: boolean;
}

let poolCounter = 0;

export class LibreOfficePool implements Converter, InstanceHost {
  readonly kind = 'libreoffice' as const;
  readonly id = ++poolCounter;
  readonly size: number;
  readonly queueLimit: number;
  readonly timeoutMs: number;
  readonly startTimeoutMs: number;
  readonly recycleAfter: number;
  readonly soffice: string;
  readonly python: string;
  readonly isolation: string[] | null;
  readonly baseDir: string;
  readonly maxMemoryMb: number;
  /** `prlimit --as=N --` when a memory cap applies, else empty. */
  readonly memoryLimitPrefix: string[];
  private readonly log: (msg: string) => void;
  private readonly skipSanitize: boolean;
  private readonly instances: Instance[] = [];
  private readonly queue = new FairQueue<Job>();
  private jobSeq = 0;
  private started = false;
  /** Some instance has started once: a failing start is then a crash loop to wait out, not a missing install. */
  private everStarted = false;
  private stopping = false;
  private startPromise: Promise<void> | null = null;
  private startError: ConvertError | null = null;
  private keepAliveTimer: NodeJS.Timeout | null = null;
  private running = 0;

  constructor(opts: PoolOptions = {}) {
    this.size = opts.size ?? defaultPoolSize();
    const settings = converterSettings();
    this.queueLimit = opts.queueLimit ?? settings.queueLimit;
    this.timeoutMs = opts.timeoutMs ?? settings.timeoutMs;
    this.startTimeoutMs = opts.startTimeoutMs ?? 60_000;
    this.recycleAfter = opts.recycleAfter ?? settings.recycleAfter;
    this.soffice = opts.soffice ?? settings.soffice;
    this.python = opts.python ?? settings.unoPython;
    this.skipSanitize = opts.unsafeSkipSanitize === true;
    this.log = opts.log ?? ((m) => process.stderr.write(`[convert] ${m}\n`));
    const mode = opts.networkIsolation ?? settings.networkIsolation;
    if (mode !== 'auto' && mode !== 'required' && mode !== 'off') {
      throw new ConvertError('BAD_OPTIONS', `CONVERTER_NETWORK_ISOLATION must be auto, required or off, got '${String(mode)}'`);
    }
    this.isolation = mode === 'off' ? null : networkIsolationPrefix();
    if (mode === 'required' && !this.isolation) {
      throw new ConvertError('CONVERTER_UNAVAILABLE', 'network isolation is required but neither `unshare -n` nor `unshare -rn` works on this machine');
    }
    this.maxMemoryMb = opts.maxMemoryMb ?? settings.maxMemoryMb;
    this.memoryLimitPrefix = [];
    if (this.maxMemoryMb > 0) {
      if (hasPrlimit()) this.memoryLimitPrefix = ['prlimit', `--as=${this.maxMemoryMb * 1024 * 1024}`, '--'];
      else this.log(`prlimit is not installed: LibreOffice instances run without the ${this.maxMemoryMb} MB memory cap`);
    }
    this.baseDir = fs.mkdtempSync(path.join(opts.tmpDir ?? os.tmpdir(), 'docgen-convert-'));
    liveDirs.add(this.baseDir);
    installExitHook();
    for (let i = 0; i < this.size; i++) {
      this.instances.push(new Instance(this, i));
      // Each instance's job directory (see run), made once here rather than checked on every job.
      fs.mkdirSync(path.join(this.baseDir, 'jobs', String(i)), { recursive: true });
    }
  }

  start(): Promise<void> {
    if (this.stopping) return Promise.reject(new ConvertError('SHUTDOWN', 'the converter has been stopped'));
    if (!this.startPromise) {
      this.started = true;
      const avail = libreOfficeAvailable({ soffice: this.soffice, python: this.python });
      if (!avail.ok) {
        this.startError = new ConvertError('CONVERTER_UNAVAILABLE', `no converter available: ${avail.reason}; to enable one, ${HOW_TO_ENABLE}`);
        this.startPromise = Promise.reject(this.startError);
      } else {
        this.startPromise = Promise.allSettled(this.instances.map((inst) => this.startInstance(inst))).then((rs) => {
          if (!rs.some((r) => r.status === 'fulfilled')) {
            const first = rs.find((r): r is PromiseRejectedResult => r.status === 'rejected');
            this.startError = new ConvertError('CONVERTER_UNAVAILABLE', `no converter available: ${(first?.reason as Error | undefined)?.message ?? 'start failed'}; ${HOW_TO_ENABLE}`);
            this.failQueue(this.startError);
            throw this.startError;
          }
          // Some started: keep trying the others in the background.
          rs.forEach((r, i) => {
            const inst = this.instances[i]!;
            if (r.status === 'rejected' && !this.stopping) this.scheduleRestart(inst, inst.lastError ?? 'start failed');
          });
        });
      }
      this.startPromise.catch(() => {
        /* surfaced through ready()/convert() */
      });
    }
    return this.startPromise;
  }

  ready(): Promise<void> {
    return this.start();
  }

  private async startInstance(inst: Instance): Promise<void> {
    try {
      await inst.start();
      this.everStarted = true;
      this.log(`instance ${inst.index} ready (pid ${inst.proc?.pid}${this.isolation ? `, ${this.isolation.join(' ')}` : ', no network isolation'})`);
      if (this.stopping) await inst.kill();
      this.dispatch();
    } catch (e) {
      inst.failedStarts++;
      inst.state = 'dead';
      throw e;
    }
  }

  /** Called on every bridge exit: restarts the instance unless we are stopping or it was expected. */
  onInstanceExit(inst: Instance, why: string): void {
    const wasStarting = inst.state === 'starting';
    if (inst.state === 'stopping' || this.stopping) {
      inst.state = 'dead';
      return;
    }
    inst.state = 'dead';
    inst.lastError = why;
    if (wasStarting) return; // start() reports it and its caller decides
    this.scheduleRestart(inst, why);
  }

  private scheduleRestart(inst: Instance, why: string): void {
    if (this.stopping || inst.state === 'starting') return;
    inst.state = 'starting';
    inst.restarts++;
    const delay = inst.failedStarts === 0 ? 0 : Math.min(30_000, 500 * 2 ** inst.failedStarts);
    this.log(`restarting instance ${inst.index}${delay ? ` in ${delay} ms` : ''}: ${why}`);
    const timer = setTimeout(() => {
      if (this.stopping) return;
      this.startInstance(inst).catch((e: unknown) => {
        inst.lastError = (e as Error).message;
        // Only a LibreOffice that never started here is "not available": after that, failing starts are a
        // crash loop (killed, out of memory, a slow machine) that the back-off waits out, and the queued
        // jobs wait with it (each until its caller's deadline or cancellation).
        if (this.allFailing() && !this.everStarted) {
          this.failQueue(new ConvertError('CONVERTER_UNAVAILABLE', `no LibreOffice instance can start: ${inst.lastError}; ${HOW_TO_ENABLE}`));
        }
        this.scheduleRestart(inst, inst.lastError);
      });
    }, delay);
    timer.unref();
  }

  /** True when no instance is up and each has failed to start at least 3 times in a row. */
  private allFailing(): boolean {
    return this.instances.every((i) => i.state !== 'idle' && i.state !== 'busy' && i.failedStarts >= 3);
  }

  private async restart(inst: Instance, why: string): Promise<void> {
    // Marking it 'stopping' first makes onInstanceExit leave the restart to us.
    inst.state = 'stopping';
    await inst.kill();
    if (this.stopping) return;
    inst.state = 'dead';
    this.scheduleRestart(inst, why);
  }

  async convert(input: Uint8Array, options: ConvertOptions): Promise<Uint8Array> {
    const plan = planConversion(options);
    if (plan.to === plan.from) throw new ConvertError('UNSUPPORTED', 'same-format output is handled by convert(), not the pool');
    return (await this.enqueue(input, plan, options, false)) as Uint8Array;
  }

  /** The pages a PDF export of this docx/xlsx/pptx would have, from LibreOffice's layout without writing
   *  the PDF (about the cost of loading the document; the export itself is skipped). Same queue, limits,
   *  sanitising and failures as convert(). */
  async pageCount(input: Uint8Array, options: Omit<ConvertOptions, 'to'>): Promise<number> {
    const plan = planConversion({ ...options, to: 'pdf' });
    return (await this.enqueue(input, plan, options, true)) as number;
  }

  private async enqueue(input: Uint8Array, plan: ConversionPlan, options: Omit<ConvertOptions, 'to'>, count: boolean): Promise<Uint8Array | number> {
    if (this.stopping) throw new ConvertError('SHUTDOWN', 'the converter has been stopped');
    options.signal?.throwIfAborted();
    const bytes = this.skipSanitize ? input : sanitizeOoxml(input, plan.from).bytes;
    if (!this.started) this.start().catch(() => {});
    // Fail fast when nothing can start (not installed, or no instance ever started); otherwise the job
    // waits in the queue while the instances start or restart.
    if (this.startError) throw this.startError;
    if (this.allFailing() && !this.everStarted) {
      throw new ConvertError('CONVERTER_UNAVAILABLE', `no LibreOffice instance can start: ${this.instances[0]?.lastError ?? 'unknown'}; ${HOW_TO_ENABLE}`);
    }
    if (this.queue.size >= this.queueLimit) {
      throw new ConvertError('QUEUE_FULL', `converter queue is full (${this.queue.size} waiting, limit ${this.queueLimit}); retry later`);
    }
    const tenant = options.tenant ?? '';
    const timeoutMs = Math.max(1, Math.min(this.timeoutMs, options.timeoutMs ?? Infinity));
    return new Promise<Uint8Array | number>((resolve, reject) => {
      const job: Job = { id: ++this.jobSeq, tenant, timeoutMs, input: bytes, plan, ...(count ? { count } : {}), signal: options.signal, resolve, reject, settled: false };
      if (options.signal) {
        job.onAbort = () => {
          if (this.queue.remove(tenant, job)) {
            this.settle(job, new ConvertError('ABORTED', 'conversion cancelled while queued', { cause: options.signal?.reason }));
          }
          // A running job is handled in run(), which restarts the instance.
        };
        options.signal.addEventListener('abort', job.onAbort, { once: true });
      }
      this.queue.push(tenant, job);
      this.keepAlive();
      this.dispatch();
    });
  }

  private settle(job: Job, result: Uint8Array | number | Error): void {
    if (job.settled) return;
    job.settled = true;
    if (job.onAbort) job.signal?.removeEventListener('abort', job.onAbort);
    if (result instanceof Error) job.reject(result);
    else job.resolve(result);
    this.keepAlive();
  }

  private failQueue(err: Error): void {
    for (const job of this.queue.drain()) this.settle(job, err);
  }

  /** A ref'd timer while work is queued or running keeps a script alive until its result arrives. */
  private keepAlive(): void {
    const busy = this.queue.size > 0 || this.running > 0;
    if (busy && !this.keepAliveTimer) this.keepAliveTimer = setInterval(() => {}, 1 << 30);
    else if (!busy && this.keepAliveTimer) {
      clearInterval(this.keepAliveTimer);
      this.keepAliveTimer = null;
    }
  }

  private dispatch(): void {
    while (this.queue.size > 0) {
      const inst = this.instances.find((i) => i.state === 'idle');
      if (!inst) return;
      const job = this.queue.shift()!;
      void this.run(inst, job);
    }
  }

  private async run(inst: Instance, job: Job): Promise<void> {
    inst.state = 'busy';
    this.running++;
    // One directory per instance, made by the constructor; a job's files are named by its id (an instance
    // runs one job at a time, and a late unlink of an earlier job's files can never touch a later one's). A
    // directory per job cost a mkdir and a recursive rm (lstat, readdir, rmdir) on the event loop per count.
    const dir = path.join(this.baseDir, 'jobs', String(inst.index));
    const inPath = path.join(dir, `${job.id}-in.${job.plan.from}`);
    const outPath = path.join(dir, `${job.id}-out.${job.plan.to}`);
    let restartWhy: string | null = null;
    let failed = false;
    let timer: NodeJS.Timeout | undefined;
    let abortListener: (() => void) | undefined;
    try {
      await fsp.writeFile(inPath, job.input);
      const interrupted = new Promise<'timeout' | 'aborted'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), job.timeoutMs);
        if (job.signal) {
          abortListener = () => resolve('aborted');
          if (job.signal.aborted) abortListener();
          else job.signal.addEventListener('abort', abortListener, { once: true });
        }
      });
      const req: Record<string, unknown> = job.count ? { id: job.id, in: inPath, count: true } : { id: job.id, in: inPath, out: outPath, filter: job.plan.filter };
      if (job.plan.filterData) req.filterData = job.plan.filterData;
      if (job.plan.filterOptions !== undefined) req.filterOptions = job.plan.filterOptions;
      if (job.plan.csvSheet !== undefined) req.csvSheet = job.plan.csvSheet;
      const reply = await Promise.race([inst.request(req), interrupted]);
      if (reply === 'timeout') {
        restartWhy = `conversion ${job.id} exceeded ${job.timeoutMs} ms`;
        throw new ConvertError('TIMEOUT', `conversion timed out after ${job.timeoutMs} ms; the LibreOffice instance was restarted`);
      }
      if (reply === 'aborted') {
        restartWhy = `conversion ${job.id} cancelled`;
        throw new ConvertError('ABORTED', 'conversion cancelled', { cause: job.signal?.reason });
      }
      if (!reply.ok) {
        if (reply.fatal) {
          restartWhy = reply.error ?? 'crashed';
          throw new ConvertError('CRASHED', `LibreOffice crashed while converting: ${reply.error}`);
        }
        throw new ConvertError('CONVERSION_FAILED', `LibreOffice could not convert the document: ${reply.error}`);
      }
      inst.conversions++;
      inst.sinceStart++;
      if (job.count) {
        if (!Number.isInteger(reply.pages) || reply.pages! < 0) throw new ConvertError('CONVERSION_FAILED', 'LibreOffice returned no page count');
        this.settle(job, reply.pages!);
        return;
      }
      const out = new Uint8Array(await fsp.readFile(outPath));
      this.settle(job, this.postProcess(out, job.plan));
    } catch (e) {
      failed = true;
      let err = e instanceof ConvertError ? e : new ConvertError('CONVERSION_FAILED', (e as Error).message, { cause: e });
      if (this.stopping) err = new ConvertError('SHUTDOWN', 'the converter was stopped during the conversion', { cause: err });
      this.settle(job, err);
    } finally {
      clearTimeout(timer);
      if (abortListener) job.signal?.removeEventListener('abort', abortListener);
      this.running--;
      for (const f of [inPath, outPath]) fsp.unlink(f).catch(() => {});
      // Not 'busy' any more means the bridge already exited and onInstanceExit is restarting it;
      // a second restart here would kill the replacement while it starts.
      if (inst.state === 'busy') {
        if (restartWhy) await this.restart(inst, restartWhy);
        else if (inst.sinceStart >= this.recycleAfter) await this.restart(inst, `recycling after ${inst.sinceStart} conversions`);
        else inst.state = 'idle';
      }
      // A failed job may leave more than its two files: a csv export's per-sheet files, and an export killed
      // mid-write (timeout, cancel, crash) LibreOffice's lock file (`.~lock.<name>#`) and its temporary
      // (`lu*.tmp`), which names no job. Everything named by this or an earlier job goes; what names no job
      // goes when no LibreOffice runs in this directory (the instance is restarting). A later job's files,
      // once this instance is idle again and another takes it, stay.
      if (failed) await removeJobFiles(dir, job.id, inst.state !== 'idle' && inst.state !== 'busy');
      this.keepAlive();
      this.dispatch();
    }
  }

  private postProcess(out: Uint8Array, plan: ConversionPlan): Uint8Array {
    if (plan.to !== 'pdf') return out;
    if (out.byteLength < 8 || Buffer.from(out.subarray(0, 5)).toString('latin1') !== '%PDF-') {
      throw new ConvertError('CONVERSION_FAILED', 'LibreOffice produced no PDF');
    }
    if (plan.pdfaPart !== undefined) {
      const id = pdfaIdentification(out);
      if (!id || id.part !== plan.pdfaPart) {
        throw new ConvertError('CONVERSION_FAILED', `requested PDF/A-${plan.pdfaPart} but the output identifies as ${id ? `PDF/A-${id.part}${id.conformance}` : 'no PDF/A'}`);
      }
    }
    return plan.embedded ? addPdfInfo(out, plan.embedded) : out;
  }

  status(): ConverterStatus {
    return {
      kind: 'libreoffice',
      ready: this.instances.some((i) => i.state === 'idle' || i.state === 'busy'),
      started: this.started,
      queued: this.queue.size,
      queueLimit: this.queueLimit,
      running: this.running,
      instances: this.instances.map((i) => ({ ...i.status(), failedStarts: i.failedStarts })),
      networkIsolation: this.isolation ? this.isolation.join(' ') : 'none',
    };
  }

  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.failQueue(new ConvertError('SHUTDOWN', 'the converter is shutting down'));
    await Promise.all(this.instances.map(async (i) => {
      i.state = 'stopping';
      await i.kill();
      i.state = 'dead';
    }));
    if (this.keepAliveTimer) clearInterval(this.keepAliveTimer);
    this.keepAliveTimer = null;
    await fsp.rm(this.baseDir, { recursive: true, force: true }).catch(() => {});
    liveDirs.delete(this.baseDir);
  }

  /** Test hook: the pid of the bridge of instance i (its process group id). */
  instancePid(i: number): number | null {
    return this.instances[i]?.proc?.pid ?? null;
  }
}

const JOB_FILE = /^(?:\.~lock\.)?(\d+)-/;

async function removeJobFiles(dir: string, jobId: number, officeStopped: boolean): Promise<void> {
  const names = await fsp.readdir(dir).catch(() => [] as string[]);
  const gone = names.filter((n) => {
    const owner = JOB_FILE.exec(n);
    return owner ? Number(owner[1]) <= jobId : officeStopped;
  });
  await Promise.all(gone.map((n) => fsp.rm(path.join(dir, n), { force: true, recursive: true }).catch(() => {})));
}
