// Who goes next on the LibreOffice pool, and which running conversion stops for a waiting one: the pool's
// scheduling policy (converter/pool.ts), as decisions over the running conversions and each subscription's
// recent LibreOffice time (converter/pool-accounting.ts). Pure: no Node built-ins, no instances, no clock
// (`now` is given), so it is tested without LibreOffice (test/unit/convert/pool-policy.test.ts).

/** Why the pool stops a running conversion: its own limit, contention, the slice, or its caller. */
export type Interruption = 'timeout' | 'contended' | 'slice' | 'aborted';

/** A running conversion as the policy sees it. */
export interface Running {
  tenant: string;
  startedAt: number;
  /** Already being stopped: it frees its instance soon, and is not stopped twice. */
  stopped: boolean;
}

export interface PolicySettings {
  /** Instances one subscription may hold at once. */
  perSubscription: number;
  /** The pool's own limit per conversion (CONVERTER_TIMEOUT_MS). */
  timeoutMs: number;
  contendedTimeoutMs: number;
  sliceMs: number;
}

/** A subscription's recent LibreOffice time (decayed, its running conversions included) at `now`. */
export type RecentMs = (tenant: string, now: number) => number;

/** How many of `running` are `tenant`'s. */
export function runningOf(running: Iterable<Running>, tenant: string): number {
  let n = 0;
  for (const r of running) if (r.tenant === tenant) n++;
  return n;
}

/** A subscription may start another conversion while it holds fewer instances than its share. */
export function mayStart(settings: PolicySettings, running: Iterable<Running>, tenant: string): boolean {
  return !tenant || runningOf(running, tenant) < settings.perSubscription;
}

/**
 * Beyond its share: a subscription may borrow an idle instance for a short job (estimated within the spare's
 * page bound) while no other subscription waits, where the pool keeps a spare. The share exists so that a
 * newcomer finds an instance at once; with a spare the newcomer's short job takes the spare at once
 * (mayTakeSpare), and a long one waits for one short borrowed job at most. A batch alone on the pool uses
 * every instance instead of all but one.
 */
export function mayBorrow(hasSpare: boolean, othersWaiting: boolean, short: boolean): boolean {
  return hasSpare && !othersWaiting && short;
}

/**
 * Every instance busy: an idle spare is the fairness lane. A subscription that used less LibreOffice
 * time recently than each one holding an instance runs on it at once, so its wait is bounded by its own
 * work, not by the others' (without stopping theirs); the spare is the spare again when it ends.
 * `holders` are the subscriptions of the conversions on the (non-spare) instances.
 */
export function mayTakeSpare(
  settings: PolicySettings,
  running: Iterable<Running>,
  holders: readonly string[],
  rank: (tenant: string) => number,
  tenant: string,
): boolean {
  return mayStart(settings, running, tenant) && holders.every((h) => h !== tenant && rank(tenant) < rank(h));
}

/** When a running conversion is due to stop while `waiting` subscriptions wait, and why. */
export function limitOf(
  settings: PolicySettings,
  a: Running,
  waiting: readonly string[],
  now: number,
  recentMs: RecentMs,
): { at: number; why: Interruption } {
  let at = Infinity;
  let why: Interruption = 'contended';
  if (settings.contendedTimeoutMs < settings.timeoutMs) at = a.startedAt + settings.contendedTimeoutMs;
  if (settings.sliceMs < settings.timeoutMs && a.tenant) {
    // The running subscription's recent time grows while it runs: the slice applies from when it has
    // used more than a waiting one (and the conversion has run a slice).
    const mine = recentMs(a.tenant, now);
    const least = Math.min(...waiting.filter((t) => t && t !== a.tenant).map((t) => recentMs(t, now)));
    const sliceAt = Math.max(a.startedAt + settings.sliceMs, now + Math.max(0, least - mine + 1));
    if (sliceAt < at) {
      at = sliceAt;
      why = 'slice';
    }
  }
  return { at, why };
}

/**
 * While a subscription that may start a conversion waits because every instance is busy (a pool of
 * one, or the others' shares), the running conversions of other subscriptions are limited: to
 * CONVERTER_SLICE_MS when the waiting one used less LibreOffice time recently than the running one's
 * subscription (fair queuing's slice: one that used more yields), else to CONVERTER_CONTENDED_TIMEOUT_MS.
 * The longest-running one past its limit is stopped, one per waiting subscription (less the instances
 * already restarting, which will take them). The pool asks whenever the queue or the running set changes,
 * and again at `nextAt` (when the next running conversion reaches its limit; Infinity = none).
 */
export function contention<R extends Running>(
  settings: PolicySettings,
  queued: readonly string[],
  running: readonly R[],
  restarting: number,
  now: number,
  recentMs: RecentMs,
): { stop: { run: R; why: Interruption }[]; nextAt: number } {
  const stop: { run: R; why: Interruption }[] = [];
  let nextAt = Infinity;
  if (queued.length === 0 || running.length === 0) return { stop, nextAt };
  const waiting = queued.filter((t) => mayStart(settings, running, t));
  let toFree = waiting.length - restarting;
  if (toFree <= 0) return { stop, nextAt };
  const candidates = running.filter((a) => !a.stopped && waiting.some((t) => t !== a.tenant)).sort((x, y) => x.startedAt - y.startedAt);
  for (const a of candidates) {
    const { at, why } = limitOf(settings, a, waiting, now, recentMs);
    if (at <= now) {
      if (toFree-- > 0) stop.push({ run: a, why });
    } else nextAt = Math.min(nextAt, at);
  }
  return { stop, nextAt };
}
