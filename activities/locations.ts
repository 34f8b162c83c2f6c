// How activities reach a location: through the registry, with a LocationError (the location's own verdict
// in the spec's terms) turned into the non-retryable failure the API and the callback render.
import { type LocationNeed, type LocationRegistry } from '../connectors/registry.ts';
import { type Location, type LocationContext, LocationError } from '../connectors/location.ts';
import { Context } from '@temporalio/activity';
import { callerFailure } from '../core/failures.ts';
import { currentRun, scratchRunId } from './scratch.ts';

export async function atLocation<T>(registry: LocationRegistry, need: LocationNeed, run: (location: Location) => Promise<T>): Promise<T> {
  const stopHeartbeats = heartbeatWhileRunning();
  try {
    return await run(registry.require(need));
  } catch (err) {
    if (err instanceof LocationError) throw callerFailure(err.code, err.message, undefined, err.externalErrors);
    throw err;
  } finally {
    stopHeartbeats();
  }
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
  ctx.heartbeat();
  const timer = setInterval(() => ctx.heartbeat(), every);
  timer.unref();
  return () => clearInterval(timer);
}

/** Who asks a location: the subscription, the acting user, the connection the API resolved for it, and the
 *  run (its run id) for the uploads it consumed itself. */
export function contextOf(input: { subscriptionId: string; userId?: string; connections?: Record<string, string> | undefined }, method: string): LocationContext {
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
