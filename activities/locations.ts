// How activities reach a location: through the registry, with a LocationError (the location's own verdict
// in the spec's terms) turned into the non-retryable failure the API and the callback render.
import { type LocationNeed, type LocationRegistry } from '../connectors/registry.ts';
import { type Location, type LocationContext, LocationError } from '../connectors/location.ts';
import { Context } from '@temporalio/activity';
import { callerFailure } from '../core/failures.ts';
import { ThrottledError, withThrottleScope } from '../connectors/throttle.ts';
import { currentRun, scratchRunId } from './scratch.ts';
import { heartbeat, heartbeatUnlessRecent } from './heartbeat.ts';

export async function atLocation<T>(
  registry: LocationRegistry,
  need: LocationNeed,
  run: (location: Location) => Promise<T>,
  callerDeadline?: number,
): Promise<T> {
  const stopHeartbeats = heartbeatWhileRunning();
  try {
    // A throttling drive is waited out, heartbeating, as long as this step may wait (connectors/throttle.ts).
    return await withThrottleScope({ deadline: stepDeadline(callerDeadline), ...cancellation() }, () => run(registry.require(need)));
  } catch (err) {
    if (err instanceof ThrottledError)
      throw callerFailure('TOO_MANY_REQUESTS', err.message, undefined, undefined, {
        retryAfterSeconds: Math.max(1, Math.ceil(err.retryAfterMs / 1000)),
      });
    if (err instanceof LocationError)
      throw callerFailure(
        err.code,
        err.message,
        undefined,
        err.externalErrors,
        err.retryAfterSeconds !== undefined ? { retryAfterSeconds: err.retryAfterSeconds } : undefined,
      );
    throw err;
  } finally {
    stopHeartbeats();
  }
}

/** The activity's cancellation, which ends a throttled wait early. */
function cancellation(): { signal?: AbortSignal } {
  try {
    return { signal: Context.current().cancellationSignal };
  } catch {
    return {};
  }
}

/** The latest a throttled wait may end: the synchronous caller's deadline (a second before it, so the
 *  answer reaches the caller in time), and the activity's own time limit (a minute before it). */
function stepDeadline(callerDeadline: number | undefined): number | undefined {
  let deadline = callerDeadline !== undefined ? callerDeadline - 1_000 : undefined;
  try {
    const info = Context.current().info;
    if (info.startToCloseTimeoutMs) {
      const own = info.currentAttemptScheduledTimestampMs + info.startToCloseTimeoutMs - 60_000;
      deadline = deadline === undefined ? own : Math.min(deadline, own);
    }
  } catch {
    // not in an activity
  }
  return deadline;
}

/** Transfers to and from the drives run as normal activities with a heartbeat timeout (workflows/steps.ts
 *  `transfers`): while a location works, this process says it is alive, so a worker that dies mid-upload is
 *  noticed within the heartbeat timeout and the step is retried elsewhere (the location's write journal
 *  resumes it). Local activities (every Storage step) do not heartbeat. */
function heartbeatWhileRunning(): () => void {
  let ctx: Context;
  try {
    ctx = Context.current();
  } catch {
    return () => undefined; // not in an activity (scripts, tests of a location alone)
  }
  if (ctx.info.isLocal || !ctx.info.heartbeatTimeoutMs) return () => undefined;
  const every = Math.max(1_000, Math.floor(ctx.info.heartbeatTimeoutMs / 3));
  // Keeps the activity's own details (a batch chunk's last row): a bare heartbeat would clear them. Not when
  // the activity said it was alive within `every` (a batch chunk beats on its own, and its every row's write
  // comes here).
  heartbeatUnlessRecent(ctx, every);
  const timer = setInterval(() => heartbeat(ctx), every);
  timer.unref();
  return () => clearInterval(timer);
}

/** Who asks a location: the subscription, the acting user, the connection the API resolved for it, and the
 *  run (its run id) for the uploads it consumed itself. */
export function contextOf(
  input: { subscriptionId: string; userId?: string; connections?: Record<string, string> | undefined },
  method: string,
): LocationContext {
  const connectionId = input.connections?.[method];
  const run = currentRun();
  return {
    subscriptionId: input.subscriptionId,
    ...(input.userId ? { userId: input.userId } : {}),
    ...(connectionId ? { connectionId } : {}),
    scratch: `scratch/${scratchRunId()}/`,
    ...(run ? { consumer: run.runId } : {}),
  };
}
