// An activity's heartbeat details, kept across the steps that heartbeat inside it. A batch chunk's details
// say where a retry resumes and how far it got (activities/batch/chunk.ts); a location's transfer inside the
// same activity (activities/locations.ts) heartbeats only to say it is alive, and a bare heartbeat would
// replace those details with none: it repeats the activity's last details instead.
import type { Context } from '@temporalio/activity';

const lastDetails = new WeakMap<Context, unknown>();
/** When each activity last heartbeated (Date.now()). */
const lastBeatAt = new WeakMap<Context, number>();

/** Heartbeats `details`, or, without them, the last details this activity gave. */
export function heartbeat(ctx: Context, ...details: [] | [unknown]): void {
  if (details.length > 0) lastDetails.set(ctx, details[0]);
  lastBeatAt.set(ctx, Date.now());
  ctx.heartbeat(lastDetails.get(ctx));
}

/** Heartbeats the last details unless the activity heartbeated less than `withinMs` ago: a step that starts
 *  says the activity is alive, which a batch chunk's row, whose chunk beats on its own, need not repeat (each
 *  heartbeat is encoded and handed to the SDK's core, about 0.2 ms of the event loop). */
export function heartbeatUnlessRecent(ctx: Context, withinMs: number): void {
  const at = lastBeatAt.get(ctx);
  if (at !== undefined && Date.now() - at < withinMs) return;
  heartbeat(ctx);
}
