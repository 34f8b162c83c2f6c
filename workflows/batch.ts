// Batches: one template, thousands of rows, one document per row and/or one combined output.
//   batchAdmission  the API waits on it (like a sync generate): prepares the batch (templates copied, rows
//                   read into pages and counted, the first rows merged and named); a problem is the
//                   request's 400 and nothing else starts. Otherwise it starts generateBatch (abandoned: it
//                   outlives its parent) and answers at once.
//   generateBatch   a sliding window of chunk activities on the batch task queue, each a run of the rows'
//                   pages (chunkRows rows each; a long batch's chunks take several: core/batch.ts chunkPages),
//                   continue-as-new every chunksPerRun chunks (state: the next page; counters and
//                   failures live in the database), then the combined output, the batch's end (uploads
//                   consumed once) and the summary callback. A failed row never fails the batch; cancelling
//                   stops after the rows in progress, which finish (rows done stay, nothing half-written).
// Orchestration is paid per chunk, not per row (Temporal's batch sliding-window sample, GUIDE habit 15).
import {
  ActivityCancellationType,
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  ContinueAsNew,
  continueAsNew,
  isCancellation,
  ParentClosePolicy,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setCurrentDetails,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import {
  ADMISSION_CHECK_ROWS,
  type BatchInput,
  batchTaskQueue,
  batchWorkflowId,
  chunkMaxPagesOf,
  chunkPages,
  type PreparedBatch,
  runOf,
} from '../core/batch.ts';
import { errorEnvelope, successEnvelope } from '../core/envelope.ts';
import type { InnerError } from '../core/errors.ts';
import { renderFailure } from '../core/failures.ts';
import { deliverCallback } from './callback.ts';

const local = proxyLocalActivities<Activities>({
  startToCloseTimeout: '10 minutes',
  retry: { initialInterval: '500 milliseconds', backoffCoefficient: 2, maximumInterval: '10 seconds', maximumAttempts: 5 },
});

export type AdmissionResult = { accepted: true; rowsTotal: number; workflowId: string } | { accepted: false; problems: InnerError[] };

export async function batchAdmission(input: BatchInput): Promise<AdmissionResult> {
  const workflowId = batchWorkflowId(input.batchId);
  const prepared = await local.prepareBatch.executeWithOptions(
    {
      summary: `read the rows of ${input.data.loadMethod}:${input.data.urn}; copy the template; merge and name the first ${ADMISSION_CHECK_ROWS} rows`,
    },
    [{ batch: input, workflowId, checkRows: ADMISSION_CHECK_ROWS, maxRows: input.tuning.maxRows }],
  );
  if (!prepared.ok) return { accepted: false, problems: prepared.problems };
  const { typedSearchAttributes } = workflowInfo();
  await startChild(generateBatch, {
    workflowId,
    args: [{ batch: input, prepared: prepared.prepared, nextPage: 0 }],
    // The batch outlives this short workflow, whose caller (the API) has its answer as soon as it starts.
    parentClosePolicy: ParentClosePolicy.ABANDON,
    typedSearchAttributes,
    staticSummary: `batch ${input.batchId}: ${prepared.prepared.rowsTotal} rows of ${input.template.name ?? input.template.urn} -> ${input.document.fileFormat}${input.combined ? ` + combined ${input.combined.format}` : ''}`,
    staticDetails: [
      `**batch** ${input.batchId} · **subscription** ${input.run.subscriptionId} · **user** ${input.run.userId}`,
      `**rows** ${prepared.prepared.rowsTotal} from ${input.data.loadMethod}:${input.data.urn}, ${chunkSize(input)} per chunk, ${input.tuning.window} chunks at once`,
      `**document** ${input.document.name} as ${input.document.fileFormat}${input.document.deliveryMethod ? ` to ${input.document.deliveryMethod}:${input.document.path}` : ' (combined output only)'}`,
      ...(input.combined
        ? [`**combined** ${input.combined.name} (${input.combined.format}) to ${input.combined.deliveryMethod}:${input.combined.path}`]
        : []),
    ].join('\n'),
  });
  return { accepted: true, rowsTotal: prepared.prepared.rowsTotal, workflowId };
}

/** Rows per chunk, as the UI's details say it: "50", or "50-200" where a long batch's chunks grow. */
function chunkSize(batch: BatchInput): string {
  const { chunkRows } = batch.tuning;
  const maxPages = chunkMaxPagesOf(batch);
  return maxPages > 1 ? `${chunkRows}-${chunkRows * maxPages}` : `${chunkRows}`;
}

export interface BatchState {
  batch: BatchInput;
  prepared: PreparedBatch;
  /** The next page (chunk) to start: everything before it is recorded (continue-as-new drains the window). */
  nextPage: number;
}

export interface BatchOutcome {
  status: 'completed' | 'cancelled' | 'stopped' | 'failed';
  rowsTotal: number;
  rowsDone: number;
  rowsFailed: number;
  pages: number;
  combined?: { urn: string; name: string; pages?: number };
}

/** Patch (ARCHITECTURE.md "Changing a workflow"): a chunk takes a window's share of the pages left, up to
 *  the tuning's chunkMaxPages (core/batch.ts chunkPages). A run whose history a worker from before it began
 *  (a batch in flight across an upgrade, its input from an API that already sets chunkMaxPages) goes on
 *  taking one page a chunk, as it started: its next page is the workflow's own count. */
const CHUNKS_GROW = 'batch-chunks-grow';

export async function generateBatch(state: BatchState): Promise<BatchOutcome> {
  const { batch, prepared } = state;
  const info = workflowInfo();
  const run = runOf(batch, info.workflowId, prepared);
  const { chunkRows, window, heartbeatTimeoutMs, chunksPerRun } = batch.tuning;
  // Asked only where chunks may grow, so other runs carry no marker.
  const maxPages = chunkMaxPagesOf(batch);
  const chunkMaxPages = maxPages > 1 && patched(CHUNKS_GROW) ? maxPages : 1;
  const onBatchQueue = {
    taskQueue: batchTaskQueue(info.taskQueue),
    heartbeatTimeout: heartbeatTimeoutMs,
    // Cancelling waits for the chunk to stop after its row in progress: nothing is half-written when the
    // batch's end runs.
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 50 },
  };
  const chunks = proxyActivities<Activities>({ ...onBatchQueue, startToCloseTimeout: '2 hours' });
  const combine = proxyActivities<Activities>({ ...onBatchQueue, startToCloseTimeout: '6 hours' });

  let next = state.nextPage;
  let stop: { code: string; message: string } | undefined;
  // The Temporal UI's current details: the batch's rows as of the last chunk that ended, and the chunks
  // running, each showing its own rows as they go in its heartbeat (Pending Activities: lastRow, recorded of
  // of, failed), so a batch shows progress from its first rows, not from its first chunk's end. Not a
  // command: history and replay are unchanged.
  let rows: { done: number; failed: number } | undefined;
  // The chunks running, by first page: their rows.
  const running = new Map<number, string>();
  const progress = () => {
    const chunksRunning = [...running].sort(([a], [b]) => a - b).map(([, rows]) => rows);
    setCurrentDetails(
      [
        rows
          ? `**rows** ${rows.done + rows.failed} of ${prepared.rowsTotal} (${rows.done} done, ${rows.failed} failed)`
          : `**rows** ${prepared.rowsTotal}, none ended in this run yet`,
        `chunk${chunksRunning.length === 1 ? '' : 's'} running: ${chunksRunning.length ? `rows ${chunksRunning.join(', ')}` : 'none'} (rows so far in each one's heartbeat: Pending Activities)`,
      ].join(' · '),
    );
  };
  try {
    const inFlight = new Map<number, Promise<void>>();
    let started = 0;
    let failure: unknown;
    while (next < prepared.pages && started < chunksPerRun && !stop && failure === undefined) {
      while (inFlight.size >= window) await Promise.race(inFlight.values());
      if (stop || failure !== undefined) break;
      const page = next;
      const pages = chunkPages(prepared.pages - page, window, chunkMaxPages);
      next += pages;
      started++;
      const firstRow = page * chunkRows + 1;
      const count = Math.min(chunkRows * pages, prepared.rowsTotal - page * chunkRows);
      running.set(page, `${firstRow}-${firstRow + count - 1}`);
      progress();
      const p = chunks.generateBatchChunk
        .executeWithOptions({ summary: `rows ${firstRow}-${firstRow + count - 1}` }, [
          { run, page, ...(pages > 1 ? { pages } : {}), firstRow, count },
        ])
        .then((r) => {
          running.delete(page);
          rows = { done: r.batchDone, failed: r.batchFailed };
          progress();
          if (batch.stopAfterFailures !== undefined && r.batchFailed >= batch.stopAfterFailures && !stop) {
            stop = { code: 'STOPPED', message: `${r.batchFailed} rows failed (stopAfterFailures ${batch.stopAfterFailures})` };
          }
        })
        .catch((err: unknown) => {
          failure ??= err;
        })
        .finally(() => inFlight.delete(page));
      inFlight.set(page, p);
    }
    await Promise.all(inFlight.values());
    if (failure !== undefined) throw failure;
    // History stays bounded: a new run carries on from the next page (the window is drained). A cancel that
    // came while the last chunks finished would not reach the new run: it ends this one.
    if (CancellationScope.current().consideredCancelled) throw new CancelledFailure('the batch was cancelled');
    if (next < prepared.pages && !stop) await continueAsNew<typeof generateBatch>({ batch, prepared, nextPage: next });
    let combined: BatchOutcome['combined'];
    if (batch.combined && !stop) {
      combined = await combine.combineBatch.executeWithOptions(
        { summary: `combined ${batch.combined.format}: ${batch.combined.name} to ${batch.combined.deliveryMethod}:${batch.combined.path}` },
        [{ run, combined: batch.combined }],
      );
    }
    return await finish(state, stop ? 'stopped' : 'completed', combined, stop);
  } catch (err) {
    if (err instanceof ContinueAsNew) throw err;
    if (isCancellation(err)) {
      // Cancelled: the rows done stay; the batch's end still runs (uploads consumed, scratch removed).
      await CancellationScope.nonCancellable(() => finish(state, 'cancelled'));
      throw err;
    }
    const cause = err instanceof ActivityFailure && err.cause ? err.cause : err;
    const r = renderFailure(cause, info.workflowId);
    await finish(state, 'failed', undefined, { code: r.code, message: r.message });
    throw err;
  }
}

/** The batch's end: its status recorded, its uploads consumed, its scratch removed, the callback sent. */
async function finish(
  state: BatchState,
  status: BatchOutcome['status'],
  combined?: BatchOutcome['combined'],
  error?: { code: string; message: string },
): Promise<BatchOutcome> {
  const { batch } = state;
  const info = workflowInfo();
  const ended = await local.finishBatch.executeWithOptions({ summary: `batch ${status}: consume uploads, remove scratch` }, [
    {
      subscriptionId: batch.run.subscriptionId,
      batchId: batch.batchId,
      workflowId: info.workflowId,
      status,
      ...(error ? { error } : {}),
      uploads: batch.uploads,
    },
  ]);
  const outcome: BatchOutcome = {
    status: ended.status === 'running' ? status : ended.status,
    rowsTotal: ended.rowsTotal,
    rowsDone: ended.rowsDone,
    rowsFailed: ended.rowsFailed,
    pages: ended.pages,
    ...(combined
      ? { combined }
      : ended.combined?.urn
        ? {
            combined: {
              urn: ended.combined.urn,
              name: ended.combined.name,
              ...(ended.combined.pages !== undefined ? { pages: ended.combined.pages } : {}),
            },
          }
        : {}),
  };
  setCurrentDetails(`**${outcome.status}** · ${outcome.rowsDone} done, ${outcome.rowsFailed} failed of ${outcome.rowsTotal} rows`);
  if (batch.callback) {
    const tail = {
      ...(batch.envelope.externalContext !== undefined ? { externalContext: batch.envelope.externalContext } : {}),
      origin: batch.envelope.origin,
      dateTime: new Date().toISOString(),
      operationId: batch.batchId,
      userId: batch.run.userId,
    };
    // The first failed rows (row, code, message) and where the rest are: the batch's rows operation.
    const base = batch.envelope.origin.replace(/^\S+\s+/, '').replace(/\/documents\/document\/generate\/batch.*$/, '');
    const summary = {
      batch: {
        id: batch.batchId,
        ...outcome,
        failures: { rowCount: outcome.rowsFailed, items: ended.firstFailures ?? [] },
        rowsUrl: `${base}/documents/batch/${batch.batchId}/rows`,
      },
    };
    const body =
      status === 'failed'
        ? errorEnvelope(
            500,
            error?.message ?? 'the batch failed',
            [{ code: error?.code ?? 'FUNCTION_EXECUTION_ERROR', message: error?.message ?? '', userMessage: error?.message ?? '' }],
            tail,
          )
        : successEnvelope(201, summary, tail, {
            consumption: [
              { dimension: 'pages-generated', value: outcome.pages },
              { dimension: 'documents-generated', value: outcome.rowsDone },
            ],
          });
    const delivered = await deliverCallback(
      { subscriptionId: batch.run.subscriptionId, ...batch.callback },
      JSON.stringify(status === 'failed' ? { ...body, ...summary } : body),
    );
    if (!delivered.delivered && status !== 'cancelled') {
      throw ApplicationFailure.create({
        type: 'CALLBACK_NOT_DELIVERED',
        nonRetryable: true,
        message: `the batch's callback to ${batch.callback.url} was not delivered after ${delivered.attempts} attempt(s): ${delivered.reason}`,
      });
    }
  }
  return outcome;
}
