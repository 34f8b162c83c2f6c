// Merges run on a pool of worker threads, never on the worker's (or the API's) event loop. Each thread has
// a V8 heap cap (MERGE_MAX_MEMORY_MB) and each job a time limit (MERGE_TIMEOUT_MS): a template or data
// built to exhaust memory or CPU kills its thread, not the process, and its job fails with a limit error
// that the merge activity reports as a non-retryable 400 TEMPLATE_TOO_COMPLEX. Waiting jobs are served
// round-robin per subscription (core/fair-queue.ts), and one subscription runs on at most
// MERGE_SUBSCRIPTION_THREADS threads (default all but one), so one tenant's burst of costly merges leaves a
// thread to the others.
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { FairQueue } from '../core/fair-queue.ts';
import { DEFAULT_TEMPLATE_LIMITS, type TemplateErrorEntry, type TemplateLimits } from '../engine/index.ts';
import { markVetted, type Vetted } from '../converter/index.ts';

const THREAD = new URL('./merge-thread.ts', import.meta.url);

export interface MergePoolOptions {
  /** Threads, i.e. merges at once; default the CPU count. */
  threads?: number;
  /** Threads one subscription's merges may hold at once; 0 (default) = all but one (at least one). */
  subscriptionThreads?: number;
  /** Time limit of one merge. */
  timeoutMs?: number;
  /** V8 heap cap of each thread (old generation), in MB. */
  maxMemoryMb?: number;
  limits?: TemplateLimits;
  /** An idle thread (other than the first, kept warm) ends after this long, so the heap a big merge grew
   *  goes back to the system. */
  idleMs?: number;
  /** Image URLs are fetched by the thread with these outbound settings. */
  outbound?: { allow: readonly string[]; timeoutMs: number; maxResponseBytes: number };
}

export const DEFAULT_MERGE_TIMEOUT_MS = 30_000;
export const DEFAULT_MERGE_MAX_MEMORY_MB = 1_024;

export interface MergeJobOptions {
  locale: string;
  timezone: string;
  variables?: { name: string; value: unknown; type: string }[];
  embedded?: string;
  /** Templates for the include directive, by name. */
  relatedItems?: Record<string, Uint8Array>;
  /** A tag whose data is missing is a template error (missing_value) instead of a warning. */
  strict?: boolean;
}

/** A merged document, and the tags that rendered empty for want of data (the engine's missing_value
 *  warnings, each tag once, located). */
export interface MergeOutput {
  output: Uint8Array;
  warnings: TemplateErrorEntry[];
}

export interface MergeThreadJob {
  id: number;
  /** The template array's number in this process: a thread keeps the templates it was sent (merge-thread.ts),
   *  so a batch's rows (one array) send their template once per thread, not copied and hashed with every row. */
  templateId: number;
  /** The template's bytes, when the thread may not have them. */
  template?: Uint8Array;
  data: Uint8Array;
  options: MergeJobOptions;
}

export type MergeThreadReply =
  | { id: number; ok: true; output: Uint8Array; warnings: TemplateErrorEntry[]; vetted: Vetted }
  | { id: number; ok: false; message: string; templateErrors?: TemplateErrorEntry[] }
  /** The thread no longer holds the template its job named (it keeps a bounded set): sent again with it. */
  | { id: number; ok: false; missingTemplate: true };

/** The merge hit the pool's memory or time limit; the thread was ended. */
export class MergeLimitError extends Error {
  override name = 'MergeLimitError';
  readonly limit: 'memory' | 'time';
  constructor(limit: 'memory' | 'time', message: string) {
    super(message);
    this.limit = limit;
  }
}

/** The template or data is wrong (the engine's TemplateError, rebuilt on this side of the thread). */
export class MergeTemplateError extends Error {
  override name = 'MergeTemplateError';
  readonly errors: TemplateErrorEntry[];
  constructor(message: string, errors: TemplateErrorEntry[]) {
    super(message);
    this.errors = errors;
  }
}

interface Job {
  id: number;
  tenant: string;
  payload: MergeThreadJob;
  /** The template's bytes (the payload carries them only to a thread that may lack them). */
  template: Uint8Array;
  /** Sent again with the template's bytes after the thread said it no longer held them. */
  resent?: boolean;
  signal: AbortSignal | undefined;
  /** This job's time limit: the pool's (MERGE_TIMEOUT_MS) unless the caller gave a shorter or longer one. */
  timeoutMs: number;
  resolve: (out: MergeOutput) => void;
  reject: (err: Error) => void;
  onAbort?: () => void;
}

interface Slot {
  worker: Worker | null;
  /** The thread has loaded the engine (its start-up does not count against a job's time limit). */
  ready: boolean;
  job: Job | null;
  timer: NodeJS.Timeout | undefined;
  /** Set when the pool ended the thread on purpose (time limit, cancellation): the exit is expected. */
  ending: Error | null;
  idle: NodeJS.Timeout | undefined;
  /** The templates this thread was sent (by templateId), since it started: it may still hold them. */
  sent: Set<number>;
}

export class MergePool {
  readonly threads: number;
  /** Threads one subscription may hold at once. */
  readonly perSubscription: number;
  readonly timeoutMs: number;
  readonly maxMemoryMb: number;
  readonly limits: TemplateLimits;
  readonly idleMs: number;
  private readonly outbound: { allow: string[]; timeoutMs: number; maxResponseBytes: number };
  private readonly slots: Slot[];
  private readonly queue = new FairQueue<Job>();
  private seq = 0;
  private closed = false;

  constructor(opts: MergePoolOptions = {}) {
    this.threads = opts.threads && opts.threads > 0 ? opts.threads : os.availableParallelism();
    const share = opts.subscriptionThreads ?? 0;
    this.perSubscription = share > 0 ? Math.min(share, this.threads) : Math.max(1, this.threads - 1);
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_MERGE_TIMEOUT_MS;
    this.maxMemoryMb = opts.maxMemoryMb ?? DEFAULT_MERGE_MAX_MEMORY_MB;
    this.limits = opts.limits ?? { ...DEFAULT_TEMPLATE_LIMITS };
    this.idleMs = opts.idleMs ?? 30_000;
    const o = opts.outbound ?? { allow: [], timeoutMs: 15_000, maxResponseBytes: 10 * 1024 * 1024 };
    this.outbound = { allow: [...o.allow], timeoutMs: o.timeoutMs, maxResponseBytes: o.maxResponseBytes };
    this.slots = Array.from({ length: this.threads }, () => ({
      worker: null,
      ready: false,
      job: null,
      timer: undefined,
      ending: null,
      idle: undefined,
      sent: new Set(),
    }));
  }

  /** Renders in a thread; rejects with MergeTemplateError, MergeLimitError or a plain Error (a bug).
   *  `timeoutMs` replaces the pool's time limit for this job alone. */
  merge(
    tenant: string,
    template: Uint8Array,
    data: Uint8Array,
    options: MergeJobOptions,
    signal?: AbortSignal,
    timeoutMs = this.timeoutMs,
  ): Promise<MergeOutput> {
    if (this.closed) return Promise.reject(new Error('the merge pool is closed'));
    signal?.throwIfAborted();
    return new Promise<MergeOutput>((resolve, reject) => {
      const id = ++this.seq;
      const payload = { id, templateId: templateIdOf(template), data: ownBuffer(data), options: withOwnBuffers(options) };
      const job: Job = { id, tenant, payload, template, signal, timeoutMs, resolve, reject };
      if (signal) {
        job.onAbort = () => {
          if (this.queue.remove(tenant, job)) reject(new Error('merge cancelled while queued'));
          else {
            const slot = this.slots.find((s) => s.job === job);
            if (slot) this.end(slot, new Error('merge cancelled'));
          }
        };
        signal.addEventListener('abort', job.onAbort, { once: true });
      }
      this.queue.push(tenant, job);
      this.dispatch();
    });
  }

  /** Starts every thread now (a service at start-up), so the first merges do not wait for one to load. */
  warm(): void {
    for (const slot of this.slots) if (!slot.worker && !this.closed) this.spawn(slot);
  }

  /** What waits and what runs, per tenant (tests and diagnostics). */
  status(): { queued: number; running: number; threads: number } {
    return { queued: this.queue.size, running: this.slots.filter((s) => s.job).length, threads: this.slots.filter((s) => s.worker).length };
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.drain()) this.finish(job, new Error('the merge pool is closed'));
    await Promise.all(
      this.slots.map(async (s) => {
        const w = s.worker;
        s.worker = null;
        if (s.job) this.finish(s.job, new Error('the merge pool is closed'));
        s.job = null;
        clearTimeout(s.timer);
        clearTimeout(s.idle);
        await w?.terminate();
      }),
    );
  }

  private dispatch(): void {
    for (const slot of this.slots) {
      if (this.queue.size === 0) return;
      if (slot.job) continue;
      const job = this.queue.shift((tenant) => this.slots.filter((s) => s.job?.tenant === tenant).length < this.perSubscription);
      if (!job) return;
      slot.job = job;
      clearTimeout(slot.idle);
      const worker = slot.worker ?? this.spawn(slot);
      worker.ref();
      if (slot.ready) this.start(slot);
    }
  }

  /** Sends the slot's job to its (ready) thread and starts the job's clock. */
  private start(slot: Slot): void {
    if (!slot.job || !slot.worker) return;
    const limit = slot.job.timeoutMs;
    const setting = limit === this.timeoutMs ? 'MERGE_TIMEOUT_MS' : "this merge's own limit";
    slot.timer = setTimeout(
      () => this.end(slot, new MergeLimitError('time', `the merge took longer than ${limit} ms; the limit is ${limit} ms (${setting})`)),
      limit,
    );
    this.send(slot, slot.job, false);
  }

  /** Posts the slot's job to its thread, with the template's bytes unless the thread was sent them before
   *  (`resend`: the thread answered that it no longer holds them). */
  private send(slot: Slot, job: Job, resend: boolean): void {
    const key = job.payload.templateId;
    const known = !resend && slot.sent.has(key);
    if (!known) {
      if (slot.sent.size >= 1_000) slot.sent.clear();
      slot.sent.add(key);
    }
    slot.worker?.postMessage(known ? job.payload : { ...job.payload, template: ownBuffer(job.template) });
  }

  private spawn(slot: Slot): Worker {
    const worker = new Worker(THREAD, {
      workerData: { limits: this.limits, outbound: this.outbound },
      resourceLimits: { maxOldGenerationSizeMb: this.maxMemoryMb },
      // The thread's own console output goes to the process's.
      stdout: false,
      stderr: false,
    });
    slot.worker = worker;
    slot.ready = false;
    slot.ending = null;
    slot.sent = new Set();
    worker.unref();
    worker.on('message', (reply: MergeThreadReply | { ready: true }) => {
      if ('ready' in reply) {
        slot.ready = true;
        this.start(slot);
        return;
      }
      const job = slot.job;
      if (!job || job.id !== reply.id) return;
      // Sent again with its bytes, once: a second answer so is a bug, not a loop.
      if (!reply.ok && 'missingTemplate' in reply && !job.resent) {
        job.resent = true;
        this.send(slot, job, true);
        return;
      }
      this.release(slot);
      if (reply.ok)
        this.finish(job, {
          // Sanitized and cost-checked by the thread: a conversion of these bytes does not parse them again.
          output: markVetted(reply.output instanceof Uint8Array ? reply.output : new Uint8Array(reply.output), reply.vetted),
          warnings: reply.warnings,
        });
      else if ('missingTemplate' in reply) this.finish(job, new Error('the merge failed: its thread lost the template sent with it'));
      else if (reply.templateErrors) this.finish(job, new MergeTemplateError(reply.message, reply.templateErrors));
      else this.finish(job, new Error(`the merge failed: ${reply.message}`));
      this.dispatch();
    });
    // 'error' precedes 'exit' when the thread dies of its own (out of memory, an uncaught exception).
    let died: Error | null = null;
    worker.on('error', (err: Error & { code?: string }) => {
      died =
        err.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? new MergeLimitError(
              'memory',
              `the merge needed more than ${this.maxMemoryMb} MB of memory; the limit is ${this.maxMemoryMb} MB (MERGE_MAX_MEMORY_MB)`,
            )
          : new Error(`the merge thread failed: ${err.message}`);
    });
    worker.on('exit', () => {
      if (slot.worker !== worker) return;
      slot.worker = null;
      slot.ready = false;
      const job = slot.job;
      const why = slot.ending ?? died ?? new Error('the merge thread exited');
      this.release(slot);
      if (job) this.finish(job, why);
      if (!this.closed) this.dispatch();
    });
    return worker;
  }

  /** Ends a running job's thread; the exit handler fails the job with `why` and starts the next one. */
  private end(slot: Slot, why: Error): void {
    if (!slot.worker || !slot.job) return;
    clearTimeout(slot.timer);
    slot.ending = why;
    void slot.worker.terminate();
  }

  private release(slot: Slot): void {
    clearTimeout(slot.timer);
    slot.timer = undefined;
    slot.job = null;
    slot.worker?.unref();
    clearTimeout(slot.idle);
    const worker = slot.worker;
    // The first thread stays warm for the next merge.
    if (worker && slot !== this.slots[0]) {
      slot.idle = setTimeout(() => {
        if (slot.worker === worker && !slot.job) void worker.terminate();
      }, this.idleMs);
      slot.idle.unref();
    }
  }

  private finish(job: Job, result: MergeOutput | Error): void {
    if (job.onAbort) job.signal?.removeEventListener('abort', job.onAbort);
    if (result instanceof Error) job.reject(result);
    else job.resolve(result);
  }
}

/** Template arrays by number: a batch merges the same array for every row. The bytes of an array handed to
 *  merge() are not changed afterwards (blobs read from a store, a batch's template). Nothing is hashed on
 *  this thread: the merge thread hashes what it is sent, once. */
const templateIds = new WeakMap<Uint8Array, number>();
let lastTemplateId = 0;

function templateIdOf(template: Uint8Array): number {
  let id = templateIds.get(template);
  if (id === undefined) {
    id = ++lastTemplateId;
    templateIds.set(template, id);
  }
  return id;
}

/** `bytes` on a buffer of their own. postMessage clones a view's whole buffer: a small Buffer (Buffer.from of
 *  a row's JSON) is a view of Node's 64 KB allocation pool, so each merge copied 64 KB to its thread (0.14 ms
 *  per message on an idle core, ten times a copy of the bytes themselves). */
function ownBuffer(bytes: Uint8Array): Uint8Array {
  return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : new Uint8Array(bytes);
}

function withOwnBuffers(options: MergeJobOptions): MergeJobOptions {
  if (!options.relatedItems) return options;
  return { ...options, relatedItems: Object.fromEntries(Object.entries(options.relatedItems).map(([k, v]) => [k, ownBuffer(v)])) };
}
