import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { BlobRef } from '../connectors/storage/blob-store.ts';
import { type ConvertOptions, convert, isConvertError } from '../converter/index.ts';
import type { ActivityDeps } from './deps.ts';
import { callerFailure } from '../core/failures.ts';
import { bytesFormatOf } from '../core/formats.ts';

export interface ConvertInput {
  source: BlobRef;
  from: string;
  to: string;
  outputKey: string;
  contentType: string;
  pdf?: ConvertOptions['pdf'];
  csv?: ConvertOptions['csv'];
  embedded?: Record<string, string>;
  /** Epoch ms when the caller stops waiting (a sync generate): no conversion runs or retries past it. */
  deadline?: number;
  /** Waiting conversions are served round-robin per subscription. */
  subscriptionId?: string;
}

export function convertActivity(deps: ActivityDeps) {
  /** A normal activity for an async generate and manage (long, bound to the LibreOffice pool: it
   *  heartbeats) and a local one for a sync generate (workflows/steps.ts); a cancelled or timed-out attempt
   *  kills its conversion. */
  return async function convertDocument(input: ConvertInput): Promise<BlobRef> {
    const ctx = Context.current();
    const timeoutMs = remainingBudget(input.deadline);
    const bytes = await deps.blobs.get(input.source.key);
    const beat = ctx.info.isLocal ? undefined : setInterval(() => ctx.heartbeat(), 2_000);
    let out: Uint8Array;
    try {
      out = await convert(bytes, {
        // A native format's bytes are its Office twin (exported from DriveB, or merged from the export).
        from: bytesFormatOf(input.from),
        to: input.to,
        signal: ctx.cancellationSignal,
        ...(timeoutMs !== undefined ? { timeoutMs } : {}),
        ...(input.subscriptionId ? { tenant: input.subscriptionId } : {}),
        ...(input.pdf ? { pdf: input.pdf } : {}),
        ...(input.csv ? { csv: input.csv } : {}),
        ...(input.embedded ? { embedded: input.embedded } : {}),
      } as ConvertOptions, deps.converter);
    } catch (err) {
      if (isConvertError(err)) {
        if (!err.retryable) {
          throw callerFailure(err.code === 'CONVERTER_UNAVAILABLE' ? 'NOT_SUPPORTED' : 'VALIDATION_ERROR', err.message);
        }
        if (err.code === 'TIMEOUT' && input.deadline !== undefined && Date.now() >= input.deadline - 1_000) throw budgetSpent();
        // Crashes, timeouts, a full queue: another attempt (maybe on another worker) can succeed.
        throw ApplicationFailure.create({ type: `CONVERT_${err.code}`, message: err.message, nonRetryable: false });
      }
      throw err;
    } finally {
      clearInterval(beat);
    }
    const put = await deps.blobs.put(input.outputKey, out);
    return { key: input.outputKey, sha256: put.sha256, size: put.size, contentType: input.contentType };
  };
}

/** Time left before `deadline`, or undefined without one; a spent budget is a final failure. */
export function remainingBudget(deadline: number | undefined): number | undefined {
  if (deadline === undefined) return undefined;
  const left = deadline - Date.now();
  if (left <= 1_000) throw budgetSpent();
  return left;
}

/** The synchronous caller has been answered 504: nothing may run or retry for it any more. */
function budgetSpent(): ApplicationFailure {
  return ApplicationFailure.create({
    type: 'GENERATION_TIMEOUT',
    message: 'the caller stopped waiting (GENERATE_TIMEOUT_MS); the conversion is not run or retried',
    nonRetryable: true,
  });
}
