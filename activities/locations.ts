// How activities reach a location: through the registry, with a LocationError (the location's own verdict
// in the spec's terms) turned into the non-retryable failure the API and the callback render.
import { type LocationNeed, type LocationRegistry } from '../connectors/registry.ts';
import { type Location, type LocationContext, LocationError } from '../connectors/location.ts';
import { callerFailure } from '../core/failures.ts';

export async function atLocation<T>(registry: LocationRegistry, need: LocationNeed, run: (location: Location) => Promise<T>): Promise<T> {
  try {
    return await run(registry.require(need));
  } catch (err) {
    if (err instanceof LocationError) throw callerFailure(err.code, err.message, undefined, err.externalErrors);
    throw err;
  }
}

/** Who asks a location: the subscription, the acting user, and the connection the API resolved for it. */
export function contextOf(input: { subscriptionId: string; userId?: string; connections?: Record<string, string> | undefined }, method: string): LocationContext {
  const connectionId = input.connections?.[method];
  return { subscriptionId: input.subscriptionId, ...(input.userId ? { userId: input.userId } : {}), ...(connectionId ? { connectionId } : {}) };
}
