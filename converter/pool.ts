/**
 * A pool of warm LibreOffice instances. Each instance is one `uno_bridge.py` process (Debian's
 * /usr/bin/python3, the one with `uno`) that starts its own soffice with a private profile and
 * serves JSON-line requests; the two share a process group, so ending an instance is one killpg.
 *
 * Why not unoserver: it speaks XML-RPC over TCP, which would need loopback inside the network
 * namespace, and its client is a fresh Python process per call (~100 ms, more than a 1-page
 * conversion). A persistent bridge on stdin/stdout costs a pipe round trip.
 *
 * This file is the queue: admission (cost, sanitising, queue limit, budget, the caller's deadline),
 * dispatch, contention and running a job on an instance. Its parts:
 *   pool-policy.ts      who goes next and who yields (pure: shares, the spare as fairness lane, slice/contended limits)
 *   pool-accounting.ts  each subscription's recent LibreOffice time, budget and counters
 *   pool-job.ts         one job's files, request, interruption errors, what follows it, output checks, cleanup
 *   pool-instances.ts   the instances: start, restart with back-off, spares, readiness
 *   work-dirs.ts        the pool's work directory, and those killed processes left behind
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import { checkConversionCost } from '../engine/cost.ts';
import { TemplateError } from '../engine/errors.ts';
import type { TemplateLimits } from '../engine/limits.ts';
import { ConvertError, HOW_TO_ENABLE } from './errors.ts';
import { planConversion } from './options.ts';
import { templateLanguage } from './accessible.ts';
import type { ConversionPlan } from './options.ts';
import { sanitizeOoxml } from './sanitize.ts';
import { vettedOf } from './vetted.ts';
import type { Converter, ConverterStatus, ConvertOptions } from './types.ts';
import { FairQueue } from '../core/fair-queue.ts';
import { type ConverterLog, converterSettings, defaultPoolSize, type NetworkIsolation, type SandboxMode } from './settings.ts';
import type { Instance, InstanceHost } from './instance.ts';
import { InstanceSet } from './pool-instances.ts';
import { chooseIsolation, hasPrlimit, type Isolation, libreOfficeAvailable } from './probes.ts';
import { installExitHook, liveDirs } from './processes.ts';
import { makeWorkDir, sweepWorkDirsOnce } from './work-dirs.ts';
import { reportQueueWait } from './events.ts';
import { afterJob, armWait, interruptionError, jobFiles, jobRequest, type PoolJob, postProcess, removeJobFiles } from './pool-job.ts';
import { PoolAccounting, type SubscriptionUsage } from './pool-accounting.ts';

/** A job's input and output files up to this size are written, read and removed synchronously. */
const SMALL_FILE_BYTES = 1024 * 1024;

/** Removes a job's file (an unlink is a syscall of microseconds on the local job directory); one that is
 *  not there is no error. */
function unlinkIfThere(file: string): Promise<void> {
  try {
    fs.unlinkSync(file);
  } catch {
    /* not there */
  }
  return Promise.resolve();
}
import { contention, type Interruption, mayBorrow, mayStart, mayTakeSpare, type PolicySettings, runningOf } from './pool-policy.ts';

export type { NetworkIsolation, SandboxMode } from './settings.ts';
export { defaultPoolSize } from './settings.ts';
export type { SubscriptionUsage } from './pool-accounting.ts';
export { forgetLibreOfficeProbe, libreOfficeAvailable, networkIsolationPrefix, sandboxAvailable } from './probes.ts';

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
  /** default CONVERTER_SANDBOX or 'auto' (each instance in a bwrap filesystem sandbox when the machine allows). */
  sandbox?: SandboxMode;
  /** Address-space limit (RLIMIT_AS, through prlimit) of each instance in MB; 0 = none; default
   *  the configured CONVERTER_MAX_MEMORY_MB. A conversion that needs more fails (the instance restarts). */
  maxMemoryMb?: number;
  /** Parent for the pool's temp dir (profiles, job files); default os.tmpdir(). */
  tmpDir?: string;
  /** Instances one subscription (`ConvertOptions.tenant`) may hold at once; 0 = all but one (at least
   *  one). Default CONVERTER_SUBSCRIPTION_INSTANCES. Conversions without a tenant (scripts) are not capped. */
  subscriptionInstances?: number;
  /** Time limit of a conversion while another subscription waits for an instance; default
   *  CONVERTER_CONTENDED_TIMEOUT_MS or 30 000. */
  contendedTimeoutMs?: number;
  /** Time limit of a conversion while a subscription that used less LibreOffice time recently waits for
   *  an instance; default CONVERTER_SLICE_MS or 2 000. */
  sliceMs?: number;
  /** Warm instances beside `size` that take over at once from an instance stopped by a time limit;
   *  default CONVERTER_SPARE_INSTANCES (0 for a pool made directly without configuring). */
  spareInstances?: number;
  /** The fairness lane takes documents estimated at most this many pages; default CONVERTER_SPARE_MAX_PAGES or 20. */
  spareMaxPages?: number;
  /** Half-life of the recent LibreOffice time that orders waiting subscriptions; default
   *  CONVERTER_FAIR_HALF_LIFE_MS or 60 000. */
  fairHalfLifeMs?: number;
  /** LibreOffice time one subscription may use per `budgetWindowMs` while others use the pool too; 0 =
   *  half of the pool's time in the window. Default CONVERTER_SUBSCRIPTION_BUDGET_MS. */
  budgetMs?: number;
  /** Default CONVERTER_BUDGET_WINDOW_MS or 600 000. */
  budgetWindowMs?: number;
  /** Cost limits (engine/cost.ts) of the documents handed to the pool; default the configured ones. */
  limits?: Partial<TemplateLimits>;
  log?: ConverterLog;
  /**
   * Tests only: convert the input as given, without sanitizeOoxml. Exists so the hardening test can
   * show that its document really does pull remote content when nothing stops it.
   */
  unsafeSkipSanitize?: boolean;
}

let poolCounter = 0;

/** A running job: when it started, and how to stop it (its time limit, the caller, contention). */
interface Active {
  job: PoolJob;
  /** Its job's subscription (the policy's and the accounting's view of it). */
  tenant: string;
  inst: Instance;
  startedAt: number;
  stopped: boolean;
  stop: (why: Interruption) => void;
}

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
  readonly isolation: Isolation;
  readonly baseDir: string;
  /** The removal of stale work directories started with the first pool of the process (work-dirs.ts). */
  readonly swept: Promise<string[]>;
  readonly maxMemoryMb: number;
  /** Instances one subscription may hold at once. */
  readonly perSubscription: number;
  readonly contendedTimeoutMs: number;
  readonly sliceMs: number;
  readonly spareMaxPages: number;
  readonly fairHalfLifeMs: number;
  readonly budgetMs: number;
  readonly budgetWindowMs: number;
  readonly limits: Partial<TemplateLimits> | undefined;
  /** `prlimit --as=N --` when a memory cap applies, else empty. */
  readonly memoryLimitPrefix: string[];
  private readonly log: ConverterLog;
  private readonly skipSanitize: boolean;
  /** The instances: starts, restarts, spares, readiness (converter/pool-instances.ts). */
  private readonly instances: InstanceSet;
  private readonly queue = new FairQueue<PoolJob>();
  private readonly active = new Set<Active>();
  /** Who goes next, who yields (converter/pool-policy.ts). */
  private readonly policy: PolicySettings;
  /** Recent LibreOffice time, budgets and counters per subscription (converter/pool-accounting.ts). */
  private readonly accounting: PoolAccounting;
  private contentionTimer: NodeJS.Timeout | undefined;
  private jobSeq = 0;
  private started = false;
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
    this.log = opts.log ?? settings.log ?? ((m) => process.stderr.write(`[convert] ${m}\n`));
    this.isolation = chooseIsolation(opts.sandbox ?? settings.sandbox, opts.networkIsolation ?? settings.networkIsolation, {
      python: this.python,
      soffice: this.soffice,
    });
    if (this.isolation.sandboxUnavailable)
      this.log(`LibreOffice instances run without a filesystem sandbox: ${this.isolation.sandboxUnavailable}`);
    this.maxMemoryMb = opts.maxMemoryMb ?? settings.maxMemoryMb;
    const share = opts.subscriptionInstances ?? settings.subscriptionInstances;
    this.perSubscription = share > 0 ? Math.min(share, this.size) : Math.max(1, this.size - 1);
    this.contendedTimeoutMs = opts.contendedTimeoutMs ?? settings.contendedTimeoutMs;
    this.sliceMs = opts.sliceMs ?? settings.sliceMs;
    this.spareMaxPages = opts.spareMaxPages ?? settings.spareMaxPages;
    this.fairHalfLifeMs = opts.fairHalfLifeMs ?? settings.fairHalfLifeMs;
    this.budgetWindowMs = opts.budgetWindowMs ?? settings.budgetWindowMs;
    const budget = opts.budgetMs ?? settings.budgetMs;
    this.budgetMs = budget > 0 ? budget : (this.size * this.budgetWindowMs) / 2;
    this.limits = opts.limits ?? settings.limits;
    this.policy = {
      perSubscription: this.perSubscription,
      timeoutMs: this.timeoutMs,
      contendedTimeoutMs: this.contendedTimeoutMs,
      sliceMs: this.sliceMs,
    };
    this.accounting = new PoolAccounting(
      { fairHalfLifeMs: this.fairHalfLifeMs, budgetMs: this.budgetMs, budgetWindowMs: this.budgetWindowMs },
      { running: () => this.active, queuedTenants: () => this.queue.tenants(), queuedOf: (tenant) => this.queue.sizeOf(tenant) },
    );
    this.memoryLimitPrefix = [];
    if (this.maxMemoryMb > 0) {
      if (hasPrlimit()) this.memoryLimitPrefix = ['prlimit', `--as=${this.maxMemoryMb * 1024 * 1024}`, '--'];
      else
        this.log(`prlimit is not installed: LibreOffice instances run without the ${this.maxMemoryMb} MB memory cap`, {
          level: 'warn',
          maxMemoryMb: this.maxMemoryMb,
        });
    }
    const tmpDir = opts.tmpDir ?? os.tmpdir();
    this.baseDir = makeWorkDir(tmpDir);
    liveDirs.add(this.baseDir);
    installExitHook();
    // What killed processes left in the temp dir (their profiles, their jobs' documents): removed in the
    // background, once per process (converter/work-dirs.ts).
    this.swept = sweepWorkDirsOnce(tmpDir).then((removed) => {
      if (removed.length > 0)
        this.log(`removed ${removed.length} work directories of converters whose process ended without removing them`, {
          removed: removed.length,
        });
      return removed;
    });
    const spare = opts.spareInstances ?? settings.spareInstances;
    this.instances = new InstanceSet(
      {
        host: this,
        log: this.log,
        stopping: () => this.stopping,
        onReady: () => this.dispatch(),
        onCannotStart: (err) => this.failQueue(err),
      },
      this.size,
      spare,
    );
  }

  start(): Promise<void> {
    if (this.stopping) return Promise.reject(new ConvertError('SHUTDOWN', 'the converter has been stopped'));
    if (!this.startPromise) {
      this.started = true;
      const avail = libreOfficeAvailable({ soffice: this.soffice, python: this.python });
      if (!avail.ok) {
        this.startError = new ConvertError(
          'CONVERTER_UNAVAILABLE',
          `no converter available: ${avail.reason}; to enable one, ${HOW_TO_ENABLE}`,
        );
        this.startPromise = Promise.reject(this.startError);
      } else {
        // Some started: the others keep trying in the background (InstanceSet.startAll).
        this.startPromise = this.instances.startAll().then((rs) => {
          if (!rs.some((r) => r.status === 'fulfilled')) {
            const first = rs.find((r): r is PromiseRejectedResult => r.status === 'rejected');
            this.startError = new ConvertError(
              'CONVERTER_UNAVAILABLE',
              `no converter available: ${(first?.reason as Error | undefined)?.message ?? 'start failed'}; ${HOW_TO_ENABLE}`,
            );
            this.failQueue(this.startError);
            throw this.startError;
          }
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

  /** Called on every bridge exit: restarts the instance unless we are stopping or it was expected. */
  onInstanceExit(inst: Instance, why: string): void {
    this.instances.onExit(inst, why);
  }

  async convert(input: Uint8Array, options: ConvertOptions): Promise<Uint8Array> {
    const plan = withTemplateLanguage(planConversion(options), input);
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

  private async enqueue(
    input: Uint8Array,
    plan: ConversionPlan,
    options: Omit<ConvertOptions, 'to'>,
    count: boolean,
  ): Promise<Uint8Array | number> {
    if (this.stopping) throw new ConvertError('SHUTDOWN', 'the converter has been stopped');
    options.signal?.throwIfAborted();
    // Bytes the merge vetted (vetted.ts) were sanitized and cost-checked by it: its findings stand. Others:
    // the cost estimate first (one pass, cheaper than the sanitizer's parse of a costly document).
    const known = vettedOf(input);
    const pages = known ? known.pages : this.checkCost(input);
    const sanitized = known
      ? { bytes: input, embedsFonts: known.embedsFonts }
      : this.skipSanitize
        ? { bytes: input, embedsFonts: false }
        : sanitizeOoxml(input, plan.from);
    const bytes = sanitized.bytes;
    if (!this.started) this.start().catch(() => {});
    // Fail fast when nothing can start (not installed, or no instance ever started); otherwise the job
    // waits in the queue while the instances start or restart.
    if (this.startError) throw this.startError;
    if (this.instances.cannotStart()) {
      throw new ConvertError(
        'CONVERTER_UNAVAILABLE',
        `no LibreOffice instance can start: ${this.instances.all[0]?.lastError ?? 'unknown'}; ${HOW_TO_ENABLE}`,
      );
    }
    if (this.queue.size >= this.queueLimit) {
      throw new ConvertError('QUEUE_FULL', `converter queue is full (${this.queue.size} waiting, limit ${this.queueLimit}); retry later`);
    }
    const tenant = options.tenant ?? '';
    this.accounting.checkBudget(tenant);
    const callerMs = options.timeoutMs === undefined ? undefined : Math.max(1, options.timeoutMs);
    return new Promise<Uint8Array | number>((resolve, reject) => {
      const job: PoolJob = {
        id: ++this.jobSeq,
        queuedAt: Date.now(),
        tenant,
        timeoutMs: Math.min(this.timeoutMs, callerMs ?? Infinity),
        input: bytes,
        plan,
        ...(count ? { count } : {}),
        ...(sanitized.embedsFonts ? { embedsFonts: true as const } : {}),
        ...(pages !== undefined ? { pages } : {}),
        signal: options.signal,
        resolve,
        reject,
        settled: false,
      };
      armWait(job, options, callerMs, {
        leave: () => this.queue.remove(tenant, job),
        settle: (err) => this.settle(job, err),
        onAbandoned: () => this.checkContention(),
      });
      this.queue.push(tenant, job);
      this.keepAlive();
      this.dispatch();
      // Still waiting while other subscriptions hold the instances it may use (not its own share's doing).
      if (
        !job.dispatched &&
        !job.settled &&
        tenant &&
        runningOf(this.active, tenant) < this.perSubscription &&
        [...this.active].some((a) => a.job.tenant !== tenant)
      ) {
        this.accounting.noteWaitedForOthers(tenant);
      }
    });
  }

  /** Refuses a document whose estimated cost is past a limit (engine/cost.ts): the merge checks the
   *  documents it makes, this the others (a manage's conversion of a file from a drive). */
  private checkCost(bytes: Uint8Array): number | undefined {
    try {
      return checkConversionCost(bytes, this.limits).pages;
    } catch (e) {
      if (e instanceof TemplateError && e.errors.some((x) => x.id === 'limit_exceeded')) {
        throw new ConvertError('TOO_COMPLEX', `the document is too costly to convert: ${e.message}`, { cause: e });
      }
      // Not a package it can read: the sanitizer or LibreOffice says what is wrong with it.
      return undefined;
    }
  }

  /** What `tenant` did with the pool (diagnostics and tests). */
  subscriptionUsage(tenant: string): SubscriptionUsage {
    return this.accounting.usageOfTenant(tenant);
  }

  private settle(job: PoolJob, result: Uint8Array | number | Error): void {
    if (job.settled) return;
    job.settled = true;
    clearTimeout(job.queueTimer);
    clearTimeout(job.abandonTimer);
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

  /** Starts waiting jobs on idle instances: first the subscription that used the least LibreOffice time
   *  recently (fair queuing by service time, not by request count; round-robin among equals), none beyond
   *  its share but a short job borrowed while no other subscription waits (mayBorrow). */
  private dispatch(): void {
    while (this.queue.size > 0) {
      const now = Date.now();
      const rank = (tenant: string) => this.accounting.recentMs(tenant, now);
      // A short job (its estimated pages): the fairness lane takes only those, and only those are borrowed.
      const short = (tenant: string) => (this.queue.itemsOf(tenant)[0]?.pages ?? Infinity) <= this.spareMaxPages;
      const inst = this.instances.idle();
      if (inst) {
        const tenants = this.queue.tenants();
        const borrows = (tenant: string) =>
          mayBorrow(
            this.instances.hasSpare(),
            tenants.some((t) => t !== tenant),
            short(tenant),
          );
        const job = this.queue.shift((tenant) => mayStart(this.policy, this.active, tenant) || borrows(tenant), rank);
        if (!job) break;
        void this.run(inst, job);
        continue;
      }
      // Every instance busy: an idle spare is the fairness lane (mayTakeSpare).
      const spare = this.instances.idleSpare();
      if (!spare) break;
      const holders = [...this.active].filter((a) => !this.instances.isSpare(a.inst)).map((a) => a.job.tenant);
      // A short job only: the lane must not hold a long one while another waits.
      const lighter = (tenant: string) => short(tenant) && mayTakeSpare(this.policy, this.active, holders, rank, tenant);
      const job = this.queue.shift(lighter, rank);
      if (!job) break;
      void this.run(spare, job);
    }
    this.checkContention();
  }

  /** Stops the running conversions that must yield to a waiting subscription (pool-policy.ts contention),
   *  and checks again when the next one reaches its limit. Called whenever the queue or the running set
   *  changes. */
  private checkContention(): void {
    clearTimeout(this.contentionTimer);
    this.contentionTimer = undefined;
    if (this.stopping) return;
    const now = Date.now();
    const restarting = this.instances.restarting();
    const { stop, nextAt } = contention(this.policy, this.queue.tenants(), [...this.active], restarting, now, (t, at) =>
      this.accounting.recentMs(t, at),
    );
    for (const { run, why } of stop) run.stop(why);
    if (nextAt < Infinity) {
      this.contentionTimer = setTimeout(() => this.checkContention(), Math.max(1, nextAt - now));
      this.contentionTimer.unref();
    }
  }

  private async run(inst: Instance, job: PoolJob): Promise<void> {
    inst.state = 'busy';
    this.running++;
    job.dispatched = true;
    clearTimeout(job.queueTimer);
    clearTimeout(job.abandonTimer);
    const startedAt = Date.now();
    // The caller's remaining time when it is shorter than the pool's limit (it has waited in the queue).
    const callerLeft = job.deadlineAt === undefined ? Infinity : job.deadlineAt - startedAt;
    const limitMs = Math.max(1, Math.min(this.timeoutMs, callerLeft));
    const setting = callerLeft < this.timeoutMs ? undefined : 'CONVERTER_TIMEOUT_MS';
    const active: Active = { job, tenant: job.tenant, inst, startedAt, stopped: false, stop: () => {} };
    this.active.add(active);
    reportQueueWait(job.tenant, startedAt - job.queuedAt);
    this.accounting.noteStarted(job.tenant);
    // The instance's job directory; the job's files have the same names as every job's (pool-job.ts jobFiles).
    const dir = inst.jobDir;
    const { inName, outName, inPath, outPath } = jobFiles(dir, job.plan);
    let restartWhy: string | null = null;
    let stoppedByLimit = false;
    let failed = false;
    let timer: NodeJS.Timeout | undefined;
    let abortListener: (() => void) | undefined;
    try {
      await inst.jobCleanup;
      // Its limits run from dispatch, the input's write included.
      const interrupted = new Promise<Interruption>((resolve) => {
        active.stop = (why) => {
          active.stopped = true;
          resolve(why);
        };
        timer = setTimeout(() => active.stop('timeout'), limitMs);
        if (job.signal) {
          abortListener = () => active.stop('aborted');
          if (job.signal.aborted) abortListener();
          else job.signal.addEventListener('abort', abortListener, { once: true });
        }
      });
      // A job's files are in the instance's local job directory: small ones are written, read and removed
      // in this thread (a third of the CPU of the same calls through libuv's pool), large ones through it.
      if (job.input.byteLength <= SMALL_FILE_BYTES) fs.writeFileSync(inPath, job.input);
      else await fsp.writeFile(inPath, job.input);
      const req = jobRequest(job, inst.jobDirInside, inName, outName);
      const reply = active.stopped ? await interrupted : await Promise.race([inst.request(req), interrupted]);
      stoppedByLimit = reply === 'timeout' || reply === 'contended' || reply === 'slice';
      if (typeof reply === 'string') {
        const stopped = interruptionError(reply, job, { limitMs, setting, startedAt }, this);
        restartWhy = stopped.restartWhy;
        throw stopped.error;
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
        if (!Number.isInteger(reply.pages) || reply.pages! < 0)
          throw new ConvertError('CONVERSION_FAILED', 'LibreOffice returned no page count');
        this.settle(job, reply.pages!);
        return;
      }
      const out = new Uint8Array(fs.statSync(outPath).size <= SMALL_FILE_BYTES ? fs.readFileSync(outPath) : await fsp.readFile(outPath));
      this.settle(job, postProcess(out, job.plan, this.limits));
    } catch (e) {
      failed = true;
      let err = e instanceof ConvertError ? e : new ConvertError('CONVERSION_FAILED', (e as Error).message, { cause: e });
      if (this.stopping) err = new ConvertError('SHUTDOWN', 'the converter was stopped during the conversion', { cause: err });
      this.settle(job, err);
    } finally {
      clearTimeout(timer);
      if (abortListener) job.signal?.removeEventListener('abort', abortListener);
      this.running--;
      this.active.delete(active);
      this.accounting.recordRun(job.tenant, Date.now() - startedAt);
      // The instance's next job waits for these (Instance.jobCleanup): it finds nothing of this one in the
      // job directory its sandbox shows. The removal is set before any restart, whose new instance may take
      // the next job at once.
      // A page count writes no output: only its input goes (a failed unlink costs a thrown error).
      const unlinks = Promise.all((job.count ? [inPath] : [inPath, outPath]).map(unlinkIfThere));
      // Not 'busy' any more means the bridge already exited and onInstanceExit is restarting it;
      // a second restart here would kill the replacement while it starts.
      let restarted: Promise<void> | undefined;
      if (inst.state === 'busy') {
        const next = afterJob(job, restartWhy, stoppedByLimit, inst.sinceStart, this.recycleAfter);
        if (next.promoteSpare) this.instances.promoteSpare(inst);
        if (next.restart) restarted = this.instances.restart(inst, next.restart);
        else inst.state = 'idle';
      }
      // What a failed job left goes too (pool-job.ts removeJobFiles): everything once LibreOffice is stopped.
      const officeStopped = restarted !== undefined || (inst.state !== 'idle' && inst.state !== 'busy');
      inst.jobCleanup = failed ? unlinks.then(() => restarted).then(() => removeJobFiles(dir, officeStopped)) : unlinks;
      await restarted;
      if (failed) await inst.jobCleanup;
      this.keepAlive();
      this.dispatch();
    }
  }

  status(): ConverterStatus {
    return {
      kind: 'libreoffice',
      // A spare takes no work until an instance is stopped by a time limit: it does not make the pool ready.
      ready: this.instances.ready(),
      started: this.started,
      queued: this.queue.size,
      queueLimit: this.queueLimit,
      running: this.running,
      instances: this.instances.statuses(),
      networkIsolation: this.isolation.sandbox
        ? this.isolation.offline
          ? 'bwrap --unshare-net'
          : 'none'
        : (this.isolation.networkPrefix?.join(' ') ?? 'none'),
      sandbox: this.isolation.sandbox ? 'bwrap' : 'none',
      isolation: this.isolation.description,
    };
  }

  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    clearTimeout(this.contentionTimer);
    this.failQueue(new ConvertError('SHUTDOWN', 'the converter is shutting down'));
    await this.instances.killAll();
    if (this.keepAliveTimer) clearInterval(this.keepAliveTimer);
    this.keepAliveTimer = null;
    await fsp.rm(this.baseDir, { recursive: true, force: true }).catch(() => {});
    liveDirs.delete(this.baseDir);
  }

  /** Test hook: the pid of the bridge of instance i (its process group id). */
  instancePid(i: number): number | null {
    return this.instances.all[i]?.proc?.pid ?? null;
  }
}

/** An accessible export sets the document's language only where the template sets none (its own wins). */
function withTemplateLanguage(plan: ConversionPlan, input: Uint8Array): ConversionPlan {
  if (plan.accessible?.language === undefined || plan.from === 'xlsx') return plan;
  if (templateLanguage(input, plan.from) === undefined) return plan;
  const { language: _language, ...accessible } = plan.accessible;
  return { ...plan, accessible };
}
