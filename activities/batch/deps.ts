// What every part of the batch's activities is given, and the running activity's context.
import { Context } from '@temporalio/activity';
import type { ResolvedActivityDeps } from '../deps.ts';
import { heartbeat } from '../heartbeat.ts';
import type { Recorded, Steps, WriteAndRecordInput } from '../groups.ts';

/** The activities' dependencies, with generate's own steps and its one write-and-record (activities/groups.ts). */
export type BatchDeps = ResolvedActivityDeps & {
  steps: Pick<Steps, 'resolveTemplate' | 'loadData' | 'measure' | 'deliver'>;
  writeAndRecord: (input: WriteAndRecordInput) => Promise<Recorded>;
};

/** Heartbeat and cancellation of the running activity; nothing outside one (tests). */
export function activity(): Context | undefined {
  try {
    return Context.current();
  } catch {
    return undefined;
  }
}

/** Heartbeats `details()` every third of the heartbeat timeout, also while one step takes long (a slow
 *  conversion, a large merge); returns the stop. */
export function beatWhileRunning(ctx: Context | undefined, details: () => unknown): () => void {
  const beat = setInterval(() => ctx && heartbeat(ctx, details()), Math.max(500, Math.floor((ctx?.info.heartbeatTimeoutMs ?? 15_000) / 3)));
  return () => clearInterval(beat);
}

/** Removes everything under a scratch prefix. */
export async function discard(deps: Pick<BatchDeps, 'blobs'>, prefix: string): Promise<void> {
  await deps.blobs.deleteAll(prefix);
}
