// The heartbeats a location step sends (activities/locations.ts atLocation), as the Temporal SDK's own activity
// Context receives them (its injected heartbeat function, what the worker hands to its core): a step says the
// activity is alive when it starts, unless the activity did within the step's interval (a batch chunk, which
// beats on its own, writes each of its rows through a step); a long step beats every third of the heartbeat
// timeout, always with the activity's last details.
import { setTimeout as sleep } from 'node:timers/promises';
import { asyncLocalStorage, Context, type Info } from '@temporalio/activity';
import { describe, expect, it } from 'vitest';
import type { Location } from '../../../connectors/location.ts';
import type { LocationRegistry } from '../../../connectors/registry.ts';
import { heartbeat } from '../../../activities/heartbeat.ts';
import { atLocation } from '../../../activities/locations.ts';

function activityContext(info: Partial<Info>): { ctx: Context; beats: unknown[] } {
  const beats: unknown[] = [];
  const ctx = new Context(
    { isLocal: false, heartbeatTimeoutMs: 3_000, currentAttemptScheduledTimestampMs: Date.now(), ...info } as Info,
    new Promise<never>(() => undefined),
    new AbortController().signal,
    (details?: unknown) => beats.push(details),
    undefined,
    undefined as never,
    undefined as never,
    undefined as never,
  );
  return { ctx, beats };
}

const registry: LocationRegistry = {
  get: () => undefined,
  check: () => Promise.resolve({ problems: [], connections: {} }),
  require: () => ({}) as Location,
};
const need = { method: 'Storage', capability: 'write', field: 'document.deliveryMethod' } as const;
/** A location step that takes `ms`, run in `ctx`. */
const step = (ctx: Context, ms: number) =>
  asyncLocalStorage.run(ctx, () => atLocation(registry, need, async () => (ms > 0 ? sleep(ms) : undefined)));

describe('heartbeats of a location step (activities/locations.ts)', () => {
  it('a step of an activity that has not heartbeated says it is alive at once', async () => {
    const { ctx, beats } = activityContext({});
    await step(ctx, 0);
    expect(beats).toEqual([undefined]);
  });

  it('steps of an activity that heartbeated within the interval send nothing of their own (a batch chunk’s rows)', async () => {
    // A 60 s timeout: a step's interval is 20 s, which no stall of a loaded machine reaches.
    const { ctx, beats } = activityContext({ heartbeatTimeoutMs: 60_000 });
    await asyncLocalStorage.run(ctx, async () => heartbeat(ctx, { lastRow: 7 }));
    for (let i = 0; i < 50; i++) await step(ctx, 0);
    expect(beats).toEqual([{ lastRow: 7 }]);
  });

  it('a step longer than a third of the heartbeat timeout beats meanwhile, with the activity’s last details', async () => {
    const { ctx, beats } = activityContext({});
    heartbeat(ctx, { lastRow: 3 });
    await step(ctx, 2_500);
    // every max(1 s, 3 s / 3): at about 1 s and 2 s (at least one of them however late the timers run)
    expect(beats.length).toBeGreaterThanOrEqual(2);
    expect(beats.every((b) => JSON.stringify(b) === JSON.stringify({ lastRow: 3 }))).toBe(true);
  });

  it('once the interval has passed since the last beat, the next step beats at its start again', async () => {
    const { ctx, beats } = activityContext({});
    heartbeat(ctx, { lastRow: 1 });
    await sleep(1_050);
    await step(ctx, 0);
    expect(beats).toEqual([{ lastRow: 1 }, { lastRow: 1 }]);
  });

  it('a local activity (every Storage step of a sync generate) does not heartbeat', async () => {
    const { ctx, beats } = activityContext({ isLocal: true });
    await step(ctx, 0);
    expect(beats).toEqual([]);
  });
});
