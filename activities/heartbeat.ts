// An activity's heartbeat details, kept across the steps that heartbeat inside it. A batch chunk's details
// say where a retry resumes and how far it got (activities/batch/chunk.ts); a location's transfer inside the
// same activity (activities/locations.ts) heartbeats only to say it is alive, and a bare heartbeat would
// replace those details with none: it repeats the activity's last details instead.
import type { Context } from '@temporalio/activity';

const lastDetails = new WeakMap<Context, unknown>();

/** Heartbeats `details`, or, without them, the last details this activity gave. */
export function heartbeat(ctx: Context, ...details: [] | [unknown]): void {
  if (details.length > 0) lastDetails.set(ctx, details[0]);
  ctx.heartbeat(lastDetails.get(ctx));
}
