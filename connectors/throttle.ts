// Throttling of the drives (Graph's 429/503 with Retry-After, Drive's 429 and 403 rate limits): one policy
// for both clients. A throttled request waits what the service asks (Retry-After, else the service's
// documented exponential back-off) and sends nothing meanwhile, for as long as
//   - the step's throttle budget allows (DRIVE_THROTTLE_MAX_WAIT_MS, all waits of one step together), and
//   - the step's deadline allows (the synchronous caller's wait, or the activity's own time limit).
// Past either, the wait is not started: a ThrottledError says how long the service asked for, and the
// location answers TOO_MANY_REQUESTS with that Retry-After (a final answer, never a 500). The scope of
// one step (an activity's location call) is carried by AsyncLocalStorage, so the clients need no new
// parameters: activities/locations.ts opens it, with the heartbeats running all along.
import { AsyncLocalStorage } from 'node:async_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { int, setting } from '../core/settings.ts';

/** The drives' shared setting: both registrations declare it (config lists it once). */
export const driveThrottleSettings = {
  driveThrottleMaxWaitMs: setting(
    'DRIVE_THROTTLE_MAX_WAIT_MS',
    600_000,
    int(0, 840_000),
    "The longest one step waits for a throttling DriveA or DriveB (429, 503 with Retry-After, Drive rate limits), all waits together: it waits what Retry-After (or the documented back-off) says and sends nothing meanwhile; past this, or past a synchronous caller's GENERATE_TIMEOUT_MS, the request answers 429 TOO_MANY_REQUESTS with Retry-After (at most 14 min: a transfer step has 15)",
  ),
};

export interface ThrottleScope {
  /** The latest moment a wait may end (epoch ms): the caller's or the activity's deadline. */
  deadline?: number;
  /** Milliseconds waited for throttling in this scope so far. */
  waited: number;
  /** Ends a wait early: the step was cancelled (a worker shutting down, a cancelled run). */
  signal?: AbortSignal;
}

const scopes = new AsyncLocalStorage<ThrottleScope>();

/** Runs `fn` with its own throttle budget and deadline. */
export function withThrottleScope<T>(scope: { deadline?: number; signal?: AbortSignal }, fn: () => Promise<T>): Promise<T> {
  return scopes.run({ ...scope, waited: 0 }, fn);
}

/** The service throttled longer than this step may wait. */
export class ThrottledError extends Error {
  override name = 'ThrottledError';
  /** What the service asked for last (ms). */
  readonly retryAfterMs: number;
  /** What this step had waited already (ms). */
  readonly waitedMs: number;
  constructor(service: string, retryAfterMs: number, waitedMs: number, why: 'budget' | 'deadline', maxWaitMs: number) {
    const s = Math.ceil(retryAfterMs / 1000);
    super(
      why === 'deadline'
        ? `${service} is throttling requests (it asks to wait ${s} s), longer than this request can wait; nothing was sent meanwhile: send it again after ${s} s`
        : `${service} is throttling requests: waited ${Math.round(waitedMs / 1000)} s as it asked, and it asks for ${s} s more, past DRIVE_THROTTLE_MAX_WAIT_MS (${Math.round(maxWaitMs / 1000)} s): send the request again after ${s} s`,
    );
    this.retryAfterMs = retryAfterMs;
    this.waitedMs = waitedMs;
  }
}

/** Statistics an operator (through logs) and tests can read. */
export const throttleStats = { waits: 0, waitedMs: 0, refused: 0 };

/**
 * Waits `waitMs` for a throttled `service`, or throws ThrottledError when that would pass the budget
 * (`maxWaitMs`, counted over the scope) or the scope's deadline. `local` is the budget of a call made
 * outside any scope (a script, a test of a location alone): the caller keeps one per request.
 */
export async function throttleWait(service: string, waitMs: number, maxWaitMs: number, local: ThrottleScope): Promise<void> {
  const scope = scopes.getStore() ?? local;
  if (scope.waited + waitMs > maxWaitMs) {
    throttleStats.refused++;
    throw new ThrottledError(service, waitMs, scope.waited, 'budget', maxWaitMs);
  }
  if (scope.deadline !== undefined && Date.now() + waitMs > scope.deadline) {
    throttleStats.refused++;
    throw new ThrottledError(service, waitMs, scope.waited, 'deadline', maxWaitMs);
  }
  throttleStats.waits++;
  throttleStats.waitedMs += waitMs;
  scope.waited += waitMs;
  await sleep(waitMs, undefined, scope.signal ? { signal: scope.signal } : {});
}

/** Retry-After as delta-seconds or an HTTP date, in ms; undefined when absent or unreadable. */
export function retryAfterMs(value: string | null | undefined): number | undefined {
  if (value === null || value === undefined || value.trim() === '') return undefined;
  const s = Number(value);
  if (Number.isFinite(s)) return Math.max(0, s * 1000);
  const at = Date.parse(value);
  return Number.isFinite(at) ? Math.max(0, at - Date.now()) : undefined;
}

/** The documented back-off when no Retry-After comes: exponential from 1 s, up to 32 s (Google's
 *  "truncated exponential backoff"; Graph: "use an exponential backoff retry policy"). */
export function backoffMs(attempt: number): number {
  return Math.min(32_000, 1000 * 2 ** Math.max(0, attempt - 1));
}
