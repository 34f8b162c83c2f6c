// A log line per failed batch row (issue 41): after each chunk activity that failed rows, the rows it
// recorded as failed are read back and logged with their row number and code, so an operator finds them in
// the worker's log beside the batch's other lines (GET /documents/batch/{id}/rows lists them for the
// caller). Read from what the chunk recorded, as an interceptor of the batch worker: the chunk's own code
// stays as it is.
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import type { ChunkInput } from '../activities/batch/index.ts';
import type { Db } from '../store/db.ts';
import { listBatchRows } from '../store/records/batches.ts';
import type { Logger } from '../telemetry/log.ts';

export function failedRowsLog(db: Db, log: Logger): ActivityInterceptorsFactory {
  const rows = log.child({ component: 'batch' });
  return (ctx) => ({
    inbound: {
      execute: async (input, next) => {
        const result: unknown = await next(input);
        if (ctx.info.activityType !== 'generateBatchChunk') return result;
        const failed = (result as { failed?: unknown } | undefined)?.failed;
        const chunk = input.args[0] as ChunkInput | undefined;
        if (typeof failed !== 'number' || failed === 0 || !chunk?.run) return result;
        const { run, firstRow, count } = chunk;
        try {
          const page = await listBatchRows(db, run.subscriptionId, run.batchId, {
            status: 'failed',
            fromRow: firstRow,
            top: count,
            skip: 0,
          });
          for (const r of page.rows.filter((x) => x.row < firstRow + count)) {
            rows.info(
              {
                batchId: run.batchId,
                subscriptionId: run.subscriptionId,
                workflowId: run.workflowId,
                row: r.row,
                code: r.code,
                reason: r.message,
              },
              'batch row failed',
            );
          }
        } catch (err) {
          rows.warn({ batchId: run.batchId, err }, 'could not read the failed rows of a batch chunk to log them');
        }
        return result;
      },
    },
  });
}
