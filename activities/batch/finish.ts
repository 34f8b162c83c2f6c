// The batch's end (a local activity): its status, its uploads consumed (once, by this run), its scratch
// removed, and the batch as recorded with its first failed rows, for the summary callback.
import { batchScratch } from '../../core/batch.ts';
import { consumeFiles } from '../../store/files.ts';
import { type Batch, type BatchStatus, endBatch, listBatchRows } from '../../store/records/batches.ts';
import { currentRun } from '../scratch.ts';
import { type BatchDeps, discard } from './deps.ts';

/** Failed rows the summary callback lists. */
const FIRST_FAILURES = 10;

export interface FinishBatchInput {
  subscriptionId: string;
  batchId: string;
  workflowId: string;
  status: Exclude<BatchStatus, 'running'>;
  error?: { code: string; message: string };
  /** The uploads the request named (template, data, related items): consumed now, once. */
  uploads: string[];
}

export function finishing(deps: BatchDeps) {
  async function finishBatch(
    input: FinishBatchInput,
  ): Promise<Batch & { firstFailures: { row: number; code: string; message: string }[] }> {
    const run = currentRun();
    if (input.uploads.length > 0)
      await consumeFiles(deps.db, input.subscriptionId, input.uploads, ['template', 'data'], run?.runId ?? input.workflowId);
    const ended = await endBatch(deps.db, input.subscriptionId, input.batchId, input.status, input.error);
    await discard(deps, batchScratch(input.workflowId));
    if (!ended) throw new Error(`batch ${input.batchId} is not recorded`);
    // The first failed rows, for the summary callback (the rest: GET /documents/batch/{id}/rows).
    const failed = await listBatchRows(deps.db, input.subscriptionId, input.batchId, { status: 'failed', top: FIRST_FAILURES, skip: 0 });
    return { ...ended, firstFailures: failed.rows.map((r) => ({ row: r.row, code: r.code ?? '', message: r.message ?? '' })) };
  }

  return { finishBatch };
}
