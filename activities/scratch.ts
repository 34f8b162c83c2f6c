import { Context } from '@temporalio/activity';
import type { BlobRef } from '../core/blob.ts';
import type { ActivityDeps } from './deps.ts';

export function scratchActivities(deps: ActivityDeps) {
  return {
    /** Removes a run's intermediate blobs once the run is over, whatever its outcome. */
    async discardScratch(refs: BlobRef[]): Promise<void> {
      await Promise.all(refs.filter((ref) => ref.key.startsWith('scratch/')).map((ref) => deps.blobs.delete(ref.key)));
    },
  };
}

/** The running workflow execution (ids); undefined outside an activity (scripts, tests of a location alone). */
export function currentRun(): { workflowId: string; runId: string } | undefined {
  try {
    return Context.current().info.workflowExecution;
  } catch {
    return undefined;
  }
}

/** The running workflow's id in a blob-key-safe form: a step's scratch blobs go under scratch/<this>/,
 *  beside the run's others. */
export function scratchRunId(): string {
  const id = currentRun()?.workflowId ?? `adhoc-${Date.now()}`;
  return id.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^[^A-Za-z0-9]/, 'x');
}
