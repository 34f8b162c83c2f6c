// The activity proxies the generate and manage workflows share, and their one way to write a file and
// record it. Deterministic code only; activities are imported as types.
import { ActivityCancellationType, patched, proxyActivities, proxyLocalActivities, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import type { Recorded, WriteAndRecordInput } from '../activities/groups.ts';
import { isRemote, type RunContext } from '../core/run.ts';
import { officeTaskQueue } from '../core/task-queues.ts';

// Short steps run as local activities: a synchronous caller is waiting, and each normal activity costs
// several server round trips. They appear in the history (and the UI) as local-activity markers with
// their summaries; each is idempotent, so a worker crash that replays them is harmless. Caller mistakes
// are non-retryable ApplicationFailures; anything else (a database blip) is retried a few times.
export const steps = proxyLocalActivities<Activities>({
  startToCloseTimeout: '60 seconds',
  retry: { initialInterval: '200 milliseconds', backoffCoefficient: 2, maximumInterval: '5 seconds', maximumAttempts: 5 },
});

// Transfers to and from remote locations (a delivery to DriveA, a manage source read from DriveB...) are
// normal activities: they can take minutes for a large file on a slow link, and they heartbeat
// (activities/locations.ts), so a worker that dies mid-upload is noticed within 20 seconds and the step is
// retried on another worker, where the location's write journal resumes it.
export const transfers = proxyActivities<Activities>({
  startToCloseTimeout: '15 minutes',
  heartbeatTimeout: '20 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 8 },
});

/** The steps that move a file to or from `method`: transfers where the location is remote (its registered
 *  answer, carried by the run), local activities elsewhere. */
export function movingSteps(run: RunContext, method: string): typeof steps {
  return isRemote(run, method) ? transfers : steps;
}

// Conversion without a waiting caller (async generate) is a normal activity on the office task queue
// (core/task-queues.ts), whose workers take only as many as the converter can run, so a burst waits in
// Temporal instead of overflowing the pool's queue; it heartbeats, so a crashed worker's conversion is
// retried elsewhere within seconds (a killed LibreOffice instance fails the attempt with a retryable error;
// the pool restarts the instance).
const CONVERSION = {
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '10 seconds', maximumAttempts: 4 },
} as const;

/** Where a conversion runs: `local` for a waiting caller (sync generate, manage), in the same workflow task
 *  as the steps around it (a normal activity costs two server round trips and the next workflow task; a
 *  worker that dies mid-conversion loses the task and the next worker runs the idempotent steps again);
 *  `office` for an async generate. Either way a conversion is bounded by its own limits (CONVERTER_TIMEOUT_MS
 *  per attempt, CONVERSION's attempts), never by the caller's wait: a run that outlives its caller
 *  finishes and records its outcome for the caller's retry (api/temporal.ts). */
export type ConversionQueue = 'local' | 'office';

const localConversion = proxyLocalActivities<Activities>({ startToCloseTimeout: CONVERSION.startToCloseTimeout, retry: CONVERSION.retry });

export function conversion(queue: ConversionQueue) {
  if (queue === 'local') return localConversion;
  // A run cancelled while converting (the Temporal UI) waits for the conversion to stop before it ends, so
  // its end step discards the output the conversion may still write (issue 39): the patch keeps the runs
  // cancelled before it replaying as they ran.
  const waits = patched(CANCEL_WAITS_FOR_CONVERSION);
  return proxyActivities<Activities>({
    ...CONVERSION,
    taskQueue: officeTaskQueue(workflowInfo().taskQueue),
    ...(waits ? { cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED } : {}),
  });
}

const CANCEL_WAITS_FOR_CONVERSION = 'cancel-waits-for-conversion';

/** Writes a file to its target and records it, for both workflows. A local target: one local activity
 *  (count || write, record, end of the run). A remote one: the count, the transfer (a normal activity with
 *  heartbeats and a journaled write), then the record and the end of the run. */
export async function writeAndRecord(input: WriteAndRecordInput, summary: { what: string; write?: string }): Promise<Recorded> {
  const { run, target } = input;
  const to = `${target.deliveryMethod}:${target.path}`;
  if (input.written) return steps.writeAndRecord.executeWithOptions({ summary: summary.what }, [input]);
  if (!isRemote(run, target.deliveryMethod)) {
    return steps.writeAndRecord.executeWithOptions(
      { summary: `count pages; ${summary.write ?? 'write'} ${target.name} to ${to}; ${summary.what}` },
      [input],
    );
  }
  const pages =
    input.pages ??
    (await steps.measure.executeWithOptions({ summary: 'count pages' }, [
      {
        blob: input.source,
        fileFormat: target.fileFormat,
        subscriptionId: run.subscriptionId,
        ...(run.callerDeadline !== undefined ? { abandonAt: run.callerDeadline } : {}),
      },
    ]));
  const { pages: _pages, metering: _metering, movedFrom: _movedFrom, initiatorEmail: _initiatorEmail, end: _end, ...write } = input;
  const written = await transfers.deliver.executeWithOptions({ summary: `${summary.write ?? 'write'} ${target.name} to ${to}` }, [write]);
  return steps.writeAndRecord.executeWithOptions({ summary: summary.what }, [{ ...input, pages, written }]);
}
