// Upload retention (spec 3). uploadSweeper: one per task queue, started (or handed new settings) by the API
// at start-up: every `intervalMs` it erases the uploads whose retention period is over, and the scratch
// files older than the longest run (RUN_TIME_LIMIT_MS), in batches (an activity each), then sleeps; a run continues as new after a number of rounds to keep its history short.
// Resolution refuses an expired upload by itself (store/files.ts getFile), so the interval only delays the
// erasure of the bytes.
// uploadRetention: the former one-workflow-per-upload timer, kept so that the timers a deployment started
// before the sweep still end (each costs a workflow per upload; none is started any more). Deterministic
// code only.
import { condition, continueAsNew, defineSignal, proxyActivities, proxyLocalActivities, setHandler, sleep } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';

export interface UploadSweeperInput {
  intervalMs: number;
  /** Uploads erased per activity. */
  batch: number;
}

/** New settings for a running sweeper (the API signals them at start-up): a round runs at once with them. */
export const sweepSettings = defineSignal<[UploadSweeperInput]>('sweepSettings');

const ROUNDS_PER_RUN = 200;

// A normal activity: its retries (say, while the database is down) wait in Temporal, where a local
// activity's would hold the worker's shutdown until the database came back.
const steps = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

export async function uploadSweeper(input: UploadSweeperInput): Promise<never> {
  let settings = input;
  let changed = false;
  setHandler(sweepSettings, (next) => {
    settings = next;
    changed = true;
  });
  for (let round = 0; round < ROUNDS_PER_RUN; round++) {
    // Settings that arrive during this round start the next one at once.
    changed = false;
    for (;;) {
      const { batch } = settings;
      const { erased } = await steps.sweepUploads.executeWithOptions(
        { summary: 'erase uploads whose retention period is over, and scratch files older than the longest run' },
        [{ limit: batch }],
      );
      if (erased < batch) break;
    }
    await condition(() => changed, settings.intervalMs);
  }
  return continueAsNew<typeof uploadSweeper>(settings);
}

export interface UploadRetentionInput {
  subscriptionId: string;
  fileId: string;
  fileName: string;
  kind: 'template' | 'data';
  blobKey: string;
  retentionMs: number;
}

// Its options as they were when these timers started.
const expiry = proxyLocalActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

export async function uploadRetention(input: UploadRetentionInput): Promise<{ removed: boolean }> {
  await sleep(input.retentionMs, { summary: `keep ${input.kind} ${input.fileName} until its retention period ends` });
  return expiry.expireUpload.executeWithOptions({ summary: `remove expired ${input.kind} ${input.fileId}` }, [
    { subscriptionId: input.subscriptionId, fileId: input.fileId, blobKey: input.blobKey },
  ]);
}
