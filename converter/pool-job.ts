// One job of the LibreOffice pool (converter/pool.ts queues and runs it): the ends of its wait in the
// queue, its files and its request to the bridge, what its interruption or failure means for the caller
// and for the instance, its output's checks, and the removal of what it leaves in the instance's job
// directory.
import fsp from 'node:fs/promises';
import path from 'node:path';
import { resolveLimits, type TemplateLimits } from '../engine/limits.ts';
import { escapeCsvFormulas } from './csv.ts';
import { ConvertError } from './errors.ts';
import type { Job } from './instance.ts';
import type { ConversionPlan } from './options.ts';
import { claimPdfaLevelA, setCatalogLanguage } from './pdf-accessible.ts';
import { addPdfInfo, checkPdfPages, pdfaIdentification } from './pdf.ts';
import type { Interruption } from './pool-policy.ts';
import type { ConvertOptions } from './types.ts';

/** A job as the pool keeps it: the caller's deadline, and the timer that ends its wait at that deadline. */
export interface PoolJob extends Job {
  /** When it entered the queue (Date.now()): its wait is reported when it starts (converter/events.ts). */
  queuedAt: number;
  /** The caller's time (ConvertOptions.timeoutMs) and when it ends; absent = none. */
  callerMs?: number;
  deadlineAt?: number;
  queueTimer?: NodeJS.Timeout;
  abandonTimer?: NodeJS.Timeout;
  dispatched?: boolean;
  /** Its document embeds fonts: the instance restarts after it (LibreOffice keeps them registered). */
  embedsFonts?: true;
  /** Its estimated pages (engine/cost.ts), when the estimate could read it. */
  pages?: number;
}

/** What ends a job's wait: `leave` takes it out of the queue (true if it was still there), `settle` answers
 *  its caller, `onAbandoned` follows an abandoned job's leaving (the waiting set changed). */
export interface WaitEnds {
  leave: () => boolean;
  settle: (err: ConvertError) => void;
  onAbandoned: () => void;
}

/** Arms the ends of a job's wait: its caller's cancellation, its caller's time (`callerMs`, which runs while
 *  it waits too) and the moment its caller stops waiting (`abandonAt`). */
export function armWait(
  job: PoolJob,
  options: Pick<ConvertOptions, 'signal' | 'abandonAt'>,
  callerMs: number | undefined,
  ends: WaitEnds,
): void {
  if (options.signal) {
    job.onAbort = () => {
      if (ends.leave()) {
        ends.settle(new ConvertError('ABORTED', 'conversion cancelled while queued', { cause: options.signal?.reason }));
      }
      // A running job is handled in run(), which restarts the instance.
    };
    options.signal.addEventListener('abort', job.onAbort, { once: true });
  }
  if (callerMs !== undefined) {
    // The caller's time runs while the job waits too (behind other work, or a restarting instance).
    job.callerMs = callerMs;
    job.deadlineAt = Date.now() + callerMs;
    job.queueTimer = setTimeout(() => {
      if (ends.leave())
        ends.settle(new ConvertError('TIMEOUT', `the conversion waited ${callerMs} ms for the converter, all the time its caller had`));
    }, callerMs);
    job.queueTimer.unref();
  }
  if (options.abandonAt !== undefined) {
    // The caller stops waiting then: what has not started by then is not run for it.
    job.abandonTimer = setTimeout(
      () => {
        if (ends.leave()) {
          ends.settle(
            new ConvertError('TIMEOUT', 'the caller stopped waiting (GENERATE_TIMEOUT_MS) before the conversion started; it was not run', {
              setting: 'GENERATE_TIMEOUT_MS',
            }),
          );
          ends.onAbandoned();
        }
      },
      Math.max(0, options.abandonAt - Date.now()),
    );
    job.abandonTimer.unref();
  }
}

/**
 * A job's files in its instance's directory. One directory per instance, made by the pool's constructor;
 * a job's files are named by its id (an instance runs one job at a time, and a late unlink of an earlier
 * job's files can never touch a later one's). A directory per job cost a mkdir and a recursive rm (lstat,
 * readdir, rmdir) on the event loop per count. Every job's files have the same names (a document asking
 * for its own file name, `=CELL("filename")`, learns nothing of other jobs); the next job on this instance
 * waits for their removal (Instance.jobCleanup).
 */
export function jobFiles(dir: string, plan: ConversionPlan): { inName: string; outName: string; inPath: string; outPath: string } {
  const inName = `document.${plan.from}`;
  const outName = `output.${plan.to}`;
  return { inName, outName, inPath: path.join(dir, inName), outPath: path.join(dir, outName) };
}

/** The bridge's request for `job`, its files named as the instance sees its job directory (`seen`). */
export function jobRequest(job: PoolJob, seen: string, inName: string, outName: string): Record<string, unknown> {
  const req: Record<string, unknown> = job.count
    ? { id: job.id, in: path.join(seen, inName), count: true }
    : { id: job.id, in: path.join(seen, inName), out: path.join(seen, outName), filter: job.plan.filter };
  if (job.plan.filterData) req.filterData = job.plan.filterData;
  if (job.plan.filterOptions !== undefined) req.filterOptions = job.plan.filterOptions;
  if (job.plan.csvSheet !== undefined) req.csvSheet = job.plan.csvSheet;
  if (job.plan.accessible?.title) req.title = job.plan.accessible.title;
  if (job.plan.accessible?.language) req.language = job.plan.accessible.language;
  return req;
}

/** What a stopped job tells its caller, and why its instance restarts. */
export function interruptionError(
  why: Interruption,
  job: PoolJob,
  ran: { limitMs: number; setting: string | undefined; startedAt: number },
  limits: { contendedTimeoutMs: number; sliceMs: number },
): { restartWhy: string; error: ConvertError } {
  const { limitMs, setting, startedAt } = ran;
  if (why === 'timeout') {
    // The pool's own limit: the document's cost, final. The caller's remaining time: its deadline.
    return {
      restartWhy: `conversion ${job.id} exceeded ${limitMs} ms`,
      error: setting
        ? new ConvertError('TIMEOUT', `the conversion took longer than ${limitMs} ms; the limit is ${limitMs} ms (${setting})`, { setting })
        : new ConvertError('TIMEOUT', `the conversion did not finish in the ${job.callerMs} ms its caller had`),
    };
  }
  if (why === 'contended') {
    const ms = Date.now() - startedAt;
    return {
      restartWhy: `conversion ${job.id} stopped after ${ms} ms: another subscription waits`,
      error: new ConvertError(
        'TIMEOUT',
        `the conversion ran ${ms} ms while another subscription waited for the converter; the limit is ${limits.contendedTimeoutMs} ms then (CONVERTER_CONTENDED_TIMEOUT_MS)`,
        { setting: 'CONVERTER_CONTENDED_TIMEOUT_MS' },
      ),
    };
  }
  if (why === 'slice') {
    const ms = Date.now() - startedAt;
    return {
      restartWhy: `conversion ${job.id} stopped after ${ms} ms: a subscription that used less of the converter waits`,
      error: new ConvertError(
        'TIMEOUT',
        `the conversion ran ${ms} ms while another subscription that used less of the converter recently waited for it; the limit is ${limits.sliceMs} ms then (CONVERTER_SLICE_MS)`,
        { setting: 'CONVERTER_SLICE_MS' },
      ),
    };
  }
  return {
    restartWhy: `conversion ${job.id} cancelled`,
    error: new ConvertError('ABORTED', 'conversion cancelled', { cause: job.signal?.reason }),
  };
}

/** What happens to an instance after a job: an idle spare takes its place, it restarts (and why), or neither. */
export function afterJob(
  job: PoolJob,
  restartWhy: string | null,
  stoppedByLimit: boolean,
  sinceStart: number,
  recycleAfter: number,
): { promoteSpare: boolean; restart: string | null } {
  // Stopped by a time limit (the pool's own stop): an idle spare takes its place at once, and it
  // restarts as the spare. A crash waits for its restart, as before.
  if (restartWhy) return { promoteSpare: stoppedByLimit, restart: restartWhy };
  // LibreOffice keeps a document's embedded fonts registered for the whole process after it closes:
  // the next job (maybe another subscription's) must not lay out with them. A warm spare takes over.
  if (job.embedsFonts)
    return { promoteSpare: true, restart: 'its document embedded fonts, which LibreOffice keeps after the document closes' };
  if (sinceStart >= recycleAfter) return { promoteSpare: false, restart: `recycling after ${sinceStart} conversions` };
  return { promoteSpare: false, restart: null };
}

/** The checks and additions of a conversion's output: csv formula escaping, a PDF's pages, PDF/A and info keys. */
export function postProcess(out: Uint8Array, plan: ConversionPlan, limits: Partial<TemplateLimits> | undefined): Uint8Array {
  if (plan.csvEscape) return escapeCsvFormulas(out, plan.csvEscape.separator, plan.csvEscape.encoding);
  if (plan.to !== 'pdf') return out;
  if (out.byteLength < 8 || Buffer.from(out.subarray(0, 5)).toString('latin1') !== '%PDF-') {
    throw new ConvertError('CONVERSION_FAILED', 'LibreOffice produced no PDF');
  }
  checkPdfPages(out, resolveLimits(limits).maxPages);
  if (plan.pdfaPart !== undefined) {
    const id = pdfaIdentification(out);
    if (!id || id.part !== plan.pdfaPart) {
      throw new ConvertError(
        'CONVERSION_FAILED',
        `requested PDF/A-${plan.pdfaPart} but the output identifies as ${id ? `PDF/A-${id.part}${id.conformance}` : 'no PDF/A'}`,
      );
    }
  }
  // An accessible pdf: the language docgen set in the catalog (Impress writes the office's own), and a PDF/A
  // file at level A with the PDF/UA identification declared (pdf-accessible.ts).
  let claimed = plan.accessible?.language ? setCatalogLanguage(out, plan.accessible.language) : out;
  if (plan.accessible && plan.pdfaPart !== undefined) claimed = claimPdfaLevelA(claimed);
  return plan.embedded ? addPdfInfo(claimed, plan.embedded) : claimed;
}

/** The files a job leaves under its names (document.*, output.*, their lock files). */
const JOB_FILE = /^(?:\.~lock\.)?(?:document|output)[.-]/;

/**
 * A failed job may leave more than its two files: a csv export's per-sheet files, and an export killed
 * mid-write (timeout, cancel, crash) LibreOffice's lock file (`.~lock.<name>#`) and its temporary
 * (`lu*.tmp`). Only this job's files are in the directory (an instance runs one job at a time, and the
 * next waits for this removal): once LibreOffice is stopped (restarted) everything goes; while it runs
 * (it refused the document), what the job's names name.
 */
export async function removeJobFiles(dir: string, officeStopped: boolean): Promise<void> {
  const names = await fsp.readdir(dir).catch(() => [] as string[]);
  const gone = names.filter((n) => officeStopped || JOB_FILE.test(n));
  await Promise.all(gone.map((n) => fsp.rm(path.join(dir, n), { force: true, recursive: true }).catch(() => {})));
}
