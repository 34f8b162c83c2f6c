// A chunk of rows (a normal activity on the batch task queue), one after another. Each row is final once
// recorded (done or failed); the heartbeat carries the last row recorded, so a retry (another worker, after
// a crash) starts after it and no row is recorded twice (a row written but not yet recorded is written again,
// at the same urn). Storage rows are recorded a few at a time (FLUSH_ROWS). A cancel is read between rows.
import { ApplicationFailure } from '@temporalio/activity';
import { batchPageKey, type BatchRun } from '../../core/batch.ts';
import type { Row } from '../../core/rows.ts';
import { batchCancelRequested, type DeliveredRow, getBatch, recordBatchRowFailed, recordedRows } from '../../store/records/batches.ts';
import { countBatchRow } from '../../telemetry/metrics.ts';
import { heartbeat } from '../heartbeat.ts';
import { activity, type BatchDeps, beatWhileRunning } from './deps.ts';
import { describeFailure, isFinal, type RowSteps } from './rows.ts';

export interface ChunkInput {
  run: BatchRun;
  /** The chunk's first page, and how many pages it takes (1 when absent): its rows, in order. */
  page: number;
  pages?: number;
  /** 1-based number of the first page's first row. */
  firstRow: number;
  /** Rows in the chunk's pages. */
  count: number;
}

export interface ChunkResult {
  done: number;
  failed: number;
  /** The batch's done and failed rows so far (all chunks): progress, and stopAfterFailures. */
  batchDone: number;
  batchFailed: number;
}

/** A chunk's heartbeat details: where a retry resumes, and the chunk's progress, which the Temporal UI shows
 *  on the pending activity from the first row on (the workflow hears of a chunk only when it ends). */
export interface ChunkHeartbeat {
  /** The last row recorded (done or failed): a retry starts after it. */
  lastRow: number;
  /** Rows of this chunk recorded so far, by every attempt, of `of`. */
  recorded: number;
  of: number;
  /** How many of them failed, as the attempts' heartbeats tell. */
  failed: number;
}

/** After this many attempts of a chunk, a row that still fails with an unexpected error is recorded as
 *  failed instead of failing the chunk again (one poisoned row must not hold the batch). */
const POISON_ATTEMPT = 3;

/** A chunk's heartbeat after a row, at most this often (the progress it carries is throttled by the SDK anyway). */
const HEARTBEAT_EVERY_MS = 1_000;

/** Rows written straight to their key are recorded together (one statement) once this many wait, or the
 *  first of them has waited this long: the statement's cost is paid per flush, and a row's record, its
 *  progress and a cancel's reading are at most that late. */
const FLUSH_ROWS = 16;
const FLUSH_MS = 250;

const text = new TextDecoder();

export function chunks(deps: BatchDeps, rows: RowSteps) {
  async function generateBatchChunk(input: ChunkInput): Promise<ChunkResult> {
    const { run } = input;
    const ctx = activity();
    const signal = ctx?.cancellationSignal;
    const last = input.firstRow + input.count - 1;
    const before = ctx?.info.heartbeatDetails as Partial<ChunkHeartbeat> | undefined;
    const resumeAfter = Number(before?.lastRow ?? 0);
    const recorded = await recordedRows(deps.db, run.subscriptionId, run.batchId, input.firstRow, last);
    const pages = input.pages ?? 1;
    const lines: string[] = [];
    for (let p = input.page; p < input.page + pages; p++) {
      for (const line of text.decode(await deps.blobs.get(batchPageKey(run.workflowId, p))).split('\n')) if (line !== '') lines.push(line);
    }
    if (lines.length !== input.count)
      throw new Error(
        `page${pages > 1 ? `s ${input.page}-${input.page + pages - 1}` : ` ${input.page}`} of batch ${run.batchId} hold${pages > 1 ? '' : 's'} ${lines.length} rows, not ${input.count}`,
      );
    const result = { done: 0, failed: 0 };
    let lastRow = Math.max(resumeAfter, input.firstRow - 1);
    const failedBefore = Number(before?.failed ?? 0);
    const details = (): ChunkHeartbeat => ({
      lastRow,
      recorded: lastRow - input.firstRow + 1,
      of: input.count,
      failed: failedBefore + result.failed,
    });
    // At once (the first heartbeat is sent unthrottled: the UI shows the chunk's place and size), and also
    // while one row takes long (a slow conversion).
    if (ctx) heartbeat(ctx, details());
    const stopBeating = beatWhileRunning(ctx, details);
    // Whether a cancel was asked for, as the last record read it (undefined: read it before the next row).
    let cancelRequested: boolean | undefined;
    // Rows written straight to their key (Storage) whose records wait for one statement (flush): a retry
    // after a crash starts after the last row recorded, so a row written but not yet recorded is made and
    // written again (same urn, same key) and recorded once.
    const waiting: DeliveredRow[] = [];
    let waitingSince = 0;
    const flush = async () => {
      if (waiting.length === 0) return;
      const delivered = waiting.splice(0);
      const recorded = await rows.recordDelivered(run, delivered);
      for (const r of delivered) if (recorded.inserted.has(r.row)) countBatchRow('done');
      cancelRequested = recorded.cancelRequested;
      result.done += delivered.length;
      lastRow = delivered[delivered.length - 1]!.row;
    };
    // The SDK sends heartbeats to the server at most every few seconds; a row's heartbeat is given to it at
    // most every HEARTBEAT_EVERY_MS (beatWhileRunning covers a long row), not for every row.
    let lastBeat = Date.now();
    try {
      for (let i = 0; i < lines.length; i++) {
        const rowNumber = input.firstRow + i;
        if (rowNumber <= resumeAfter || recorded.has(rowNumber)) continue;
        // Cancelled (the batch was cancelled, or the worker is stopping): stop before a row starts; a row
        // whose write has begun is finished below, so nothing is left half-written.
        if (signal?.aborted)
          throw ApplicationFailure.create({ type: 'CANCELLED', message: 'the batch chunk was cancelled', nonRetryable: false });
        // A cancel asked for through the API is read here, between rows: Temporal's cancellation reaches
        // the chunk only with a heartbeat's answer (throttled), by when many rows would have started. The
        // last record read it in its statement (a flush's: within FLUSH_ROWS rows or FLUSH_MS); otherwise one query.
        if (cancelRequested ?? (await batchCancelRequested(deps.db, run.subscriptionId, run.batchId))) break;
        cancelRequested = undefined;
        const row = JSON.parse(lines[i]!) as Row;
        let made: Awaited<ReturnType<RowSteps['generateRow']>> | undefined;
        let failure: ReturnType<typeof describeFailure> | undefined;
        try {
          made = await rows.generateRow(run, rowNumber, row, signal);
        } catch (err) {
          if (signal?.aborted) throw err;
          if (!isFinal(err) && (ctx?.info.attempt ?? 1) < POISON_ATTEMPT) throw err;
          failure = describeFailure(err);
        }
        // Counted as it is recorded, by the attempt that recorded it (a chunk that fails later, or a retry
        // that finds the row's record, counts it once). A flush that fails fails the chunk (its rows are
        // made again by the retry), never the row in hand.
        if (made && 'delivered' in made) {
          if (waiting.length === 0) waitingSince = Date.now();
          waiting.push(made.delivered);
          // Read again at the flush.
          cancelRequested = false;
          if (waiting.length >= FLUSH_ROWS || Date.now() - waitingSince >= FLUSH_MS) await flush();
        } else {
          await flush();
          if (made) {
            if (made.inserted) countBatchRow('done');
            cancelRequested = made.cancelRequested;
            result.done++;
          } else {
            const f = failure!;
            const recorded = await recordBatchRowFailed(deps.db, run.subscriptionId, run.batchId, rowNumber, f.code, f.message);
            if (recorded.inserted) countBatchRow('failed');
            cancelRequested = recorded.cancelRequested;
            result.failed++;
          }
          lastRow = rowNumber;
        }
        if (ctx && Date.now() - lastBeat >= HEARTBEAT_EVERY_MS) {
          heartbeat(ctx, details());
          lastBeat = Date.now();
        }
      }
      await flush();
    } finally {
      stopBeating();
      // Rows written before a failure or a cancel are recorded on the way out (their documents are at their
      // keys); when that fails too, the retry makes them again.
      if (waiting.length > 0) await flush().catch(() => undefined);
    }
    const batch = await getBatch(deps.db, run.subscriptionId, run.batchId);
    return { ...result, batchDone: batch?.rowsDone ?? result.done, batchFailed: batch?.rowsFailed ?? result.failed };
  }

  return { generateBatchChunk };
}
