// The activity proxies shared by the generate and manage workflows.
import { patched, proxyActivities, proxyLocalActivities, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import { officeTaskQueue } from '../core/task-queues.ts';

// Short steps run as local activities: a synchronous caller is waiting, and each normal activity costs
// several server round trips. They appear in the history (and the UI) as local-activity markers with
// their summaries; each is idempotent, so a worker crash that replays them is harmless. Caller mistakes
// are non-retryable ApplicationFailures; anything else (a database blip) is retried a few times.
export const steps = proxyLocalActivities<Activities>({
  startToCloseTimeout: '60 seconds',
  retry: { initialInterval: '200 milliseconds', backoffCoefficient: 2, maximumInterval: '5 seconds', maximumAttempts: 5 },
});

// Transfers to and from the drives and the CRM (a delivery to DriveA, a manage source read from DriveB...)
// are normal activities: they can take minutes for a large file on a slow link, and they heartbeat
// (activities/locations.ts), so a worker that dies mid-upload is noticed within 20 seconds and the step is
// retried on another worker, where the location's write journal resumes it. Storage steps stay local.
export const transfers = proxyActivities<Activities>({
  startToCloseTimeout: '15 minutes',
  heartbeatTimeout: '20 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 8 },
});

/** The steps that move a file to or from `method`: local for Storage, `transfers` for the remote locations. */
export function movingSteps(method: string): typeof steps {
  return method === 'Storage' || !patched('remote-transfers') ? steps : transfers;
}

// Conversion without a waiting caller is a normal activity: long, bound to the LibreOffice pool,
// heartbeating so that a crashed worker's conversion is retried elsewhere within seconds. A killed
// LibreOffice instance fails the attempt with a retryable error; the pool restarts the instance.
// Where it runs: a caller that waits (sync generate, manage) gets a local activity (below); runs recorded
// before that converted on the main task queue, where the activity is dispatched eagerly to the worker that
// scheduled it. Background work (async generate) goes to the office task queue (core/task-queues.ts), whose
// workers take only as many as the converter can run, so a burst waits in Temporal instead of overflowing
// the pool's queue.
const CONVERSION = {
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '10 seconds', maximumAttempts: 4 },
} as const;

export type ConversionQueue = 'main' | 'office';

// A synchronous generate's conversion runs as a local activity, in the same workflow task as the steps
// around it: as a normal activity it cost two extra server round trips (~35 ms of a ~115 ms sync pdf
// generate, most of it waiting for the next workflow task). A worker that dies mid-conversion loses the task,
// and the next worker runs the steps again (they are idempotent); the caller's deadline bounds them.
const localConversion = proxyLocalActivities<Activities>({ startToCloseTimeout: CONVERSION.startToCloseTimeout, retry: CONVERSION.retry });

/** The conversion of a generate: local for a waiting caller ('main'), the office queue's normal activity
 *  for an async one. Runs recorded before the change converted on the main queue as a normal activity. */
export function generateConversion(queue: ConversionQueue) {
  return queue === 'main' && patched('sync-local-conversion') ? localConversion : conversion(queue);
}

/** The conversion of a manage (its caller waits): local, as a sync generate's. As a normal activity it
 *  ended a workflow task: a sync docx -> pdf manage took 105 ms (median of 5 runs' medians) where it takes
 *  93 ms now; the floor bench (bench/la-cost) prices the shapes at 47 ms (LA, activity, LA) and 17 ms (three
 *  LAs). Runs recorded before the change converted on the main queue as a normal activity. */
export function manageConversion() {
  return patched('manage-local-conversion') ? localConversion : conversion('main');
}

export function conversion(queue: ConversionQueue) {
  return proxyActivities<Activities>({ ...CONVERSION, ...(queue === 'office' ? { taskQueue: officeTaskQueue(workflowInfo().taskQueue) } : {}) });
}
