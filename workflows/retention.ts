// uploadRetention: one per uploaded template or data file. A durable timer (it survives worker and server
// restarts) that removes the upload once its retention period is over, unless a generate consumed it
// first; in that case the removal finds nothing left to do. Deterministic code only.
import { proxyLocalActivities, sleep } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';

export interface UploadRetentionInput {
  subscriptionId: string;
  fileId: string;
  fileName: string;
  kind: 'template' | 'data';
  blobKey: string;
  retentionMs: number;
}

const steps = proxyLocalActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

export async function uploadRetention(input: UploadRetentionInput): Promise<{ removed: boolean }> {
  await sleep(input.retentionMs, { summary: `keep ${input.kind} ${input.fileName} until its retention period ends` });
  return steps.expireUpload.executeWithOptions({ summary: `remove expired ${input.kind} ${input.fileId}` }, [
    { subscriptionId: input.subscriptionId, fileId: input.fileId, blobKey: input.blobKey },
  ]);
}
