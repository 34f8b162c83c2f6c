// What each subscription did with the LibreOffice pool (converter/pool.ts): its recent LibreOffice time
// (decayed, which orders the waiting ones: converter/pool-policy.ts), its use in the budget window (past
// the budget while others use the pool too: OVER_BUDGET), and counters for diagnostics and tests.
import { ConvertError } from './errors.ts';
import { runningOf, type Running } from './pool-policy.ts';

/** What one subscription did with the pool (diagnostics, tests). */
export interface SubscriptionUsage {
  running: number;
  queued: number;
  /** LibreOffice time used in the budget window, running conversions included. */
  usedMs: number;
  /** Conversions and page counts started. */
  started: number;
  /** Of those, how many had to wait because every instance it may use was busy with other subscriptions. */
  waitedForOthers: number;
}

export interface AccountingSettings {
  fairHalfLifeMs: number;
  budgetMs: number;
  budgetWindowMs: number;
}

/** What the accounting reads of the pool: its running conversions and the subscriptions that wait. */
export interface AccountingView {
  running(): Iterable<Running>;
  queuedTenants(): string[];
  queuedOf(tenant: string): number;
}

export class PoolAccounting {
  /** Per subscription: LibreOffice time of the runs that ended in the budget window, and counters. */
  private readonly usage = new Map<string, { runs: { at: number; ms: number }[]; started: number; waitedForOthers: number }>();
  /** Per subscription: LibreOffice time of its ended runs, decayed (half-life fairHalfLifeMs), as of `at`. */
  private readonly service = new Map<string, { ms: number; at: number }>();

  private readonly settings: AccountingSettings;
  private readonly pool: AccountingView;

  constructor(settings: AccountingSettings, pool: AccountingView) {
    this.settings = settings;
    this.pool = pool;
  }

  /** Refuses a subscription's new conversion when it used its budget of LibreOffice time in the window
   *  while others used the pool too (alone, it may use all of it). */
  checkBudget(tenant: string): void {
    if (!tenant) return;
    const { budgetMs, budgetWindowMs } = this.settings;
    const now = Date.now();
    const used = this.usedMs(tenant, now);
    if (used < budgetMs || !this.othersActive(tenant, now)) return;
    // When enough of the window's runs have left it for the use to fall below the budget.
    let freed = used;
    let at = now + budgetWindowMs;
    for (const r of this.usage.get(tenant)?.runs ?? []) {
      freed -= r.ms;
      if (freed < budgetMs) {
        at = r.at + budgetWindowMs;
        break;
      }
    }
    const retryAfterMs = Math.max(1_000, at - now);
    throw new ConvertError(
      'OVER_BUDGET',
      `this subscription's conversions used ${Math.round(used / 1000)} s of LibreOffice time in the last ${Math.round(budgetWindowMs / 1000)} s while other subscriptions used the converter too; ` +
        `the budget is ${Math.round(budgetMs)} ms per ${budgetWindowMs} ms (CONVERTER_SUBSCRIPTION_BUDGET_MS, CONVERTER_BUDGET_WINDOW_MS); retry in ${Math.ceil(retryAfterMs / 1000)} s`,
      { setting: 'CONVERTER_SUBSCRIPTION_BUDGET_MS', retryAfterMs },
    );
  }

  private usageOf(tenant: string) {
    let u = this.usage.get(tenant);
    if (!u) this.usage.set(tenant, (u = { runs: [], started: 0, waitedForOthers: 0 }));
    return u;
  }

  /** A conversion or page count of `tenant` started. */
  noteStarted(tenant: string): void {
    if (tenant) this.usageOf(tenant).started++;
  }

  /** A job of `tenant` waits while other subscriptions hold the instances it may use. */
  noteWaitedForOthers(tenant: string): void {
    this.usageOf(tenant).waitedForOthers++;
  }

  /** LibreOffice time of `tenant` in the window: the runs that ended in it and the running ones. */
  private usedMs(tenant: string, now: number): number {
    const u = this.usage.get(tenant);
    let used = 0;
    if (u) {
      while (u.runs.length > 0 && u.runs[0]!.at <= now - this.settings.budgetWindowMs) u.runs.shift();
      for (const r of u.runs) used += r.ms;
    }
    for (const a of this.pool.running()) if (a.tenant === tenant) used += now - a.startedAt;
    return used;
  }

  /** Another subscription used the pool in the window, or is using or waiting for it now. */
  private othersActive(tenant: string, now: number): boolean {
    for (const a of this.pool.running()) if (a.tenant && a.tenant !== tenant) return true;
    if (this.pool.queuedTenants().some((t) => t && t !== tenant)) return true;
    for (const [t, u] of this.usage) if (t !== tenant && u.runs.some((r) => r.at > now - this.settings.budgetWindowMs)) return true;
    return false;
  }

  /** A run of `tenant` ended after `ms` of LibreOffice time. */
  recordRun(tenant: string, ms: number): void {
    if (!tenant) return;
    const now = Date.now();
    this.usageOf(tenant).runs.push({ at: now, ms });
    this.service.set(tenant, { ms: this.decayedMs(tenant, now) + ms, at: now });
    // Bounded by the subscriptions active in the window: forget the others.
    if (this.usage.size > 1_000) {
      const idle = (t: string) => !this.pool.queuedTenants().includes(t) && runningOf(this.pool.running(), t) === 0;
      for (const [t, u] of this.usage) {
        if (u.runs.every((r) => r.at <= now - this.settings.budgetWindowMs) && idle(t)) this.usage.delete(t);
      }
      for (const t of this.service.keys()) if (this.decayedMs(t, now) < 1 && idle(t)) this.service.delete(t);
    }
  }

  /** The ended runs' LibreOffice time of `tenant`, each millisecond counting half after fairHalfLifeMs. */
  private decayedMs(tenant: string, now: number): number {
    const s = this.service.get(tenant);
    return s ? s.ms * 2 ** (-(now - s.at) / this.settings.fairHalfLifeMs) : 0;
  }

  /** What orders waiting subscriptions (least first) and decides who yields: the LibreOffice time a
   *  subscription used recently (decayed), its running conversions' time so far included. */
  recentMs(tenant: string, now: number): number {
    if (!tenant) return 0;
    let ms = this.decayedMs(tenant, now);
    for (const a of this.pool.running()) if (a.tenant === tenant) ms += now - a.startedAt;
    return ms;
  }

  /** What `tenant` did with the pool (diagnostics and tests). */
  usageOfTenant(tenant: string): SubscriptionUsage {
    const u = this.usage.get(tenant);
    return {
      running: runningOf(this.pool.running(), tenant),
      queued: this.pool.queuedOf(tenant),
      usedMs: this.usedMs(tenant, Date.now()),
      started: u?.started ?? 0,
      waitedForOthers: u?.waitedForOthers ?? 0,
    };
  }
}
