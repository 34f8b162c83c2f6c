// A queue per tenant, served round-robin (or, given a rank, to the tenant of lowest rank first, e.g. the
// LibreOffice time it used recently: fair queuing by service time): a burst of one tenant waits behind one
// job of each other tenant, never in front of all of them. Used where one process runs work of every tenant with a fixed
// number of slots (merge threads, LibreOffice instances). Pure: no Node built-ins.

export class FairQueue<T> {
  /** Tenants with waiting work; Map keeps insertion order (the tie-break). */
  private readonly queues = new Map<string, T[]>();
  /** When each tenant was last served (a counter): the tenant served longest ago goes next. */
  private readonly lastServed = new Map<string, number>();
  private served = 0;
  private count = 0;

  get size(): number {
    return this.count;
  }

  push(tenant: string, item: T): void {
    const q = this.queues.get(tenant);
    if (q) q.push(item);
    else this.queues.set(tenant, [item]);
    this.count++;
  }

  /** The next item: the oldest of the waiting tenant of lowest `rank` (when given), then served longest
   *  ago (or never), among the tenants `eligible` accepts (all by default; e.g. those below their share of
   *  the slots). */
  shift(eligible?: (tenant: string) => boolean, rank?: (tenant: string) => number): T | undefined {
    let pick: string | undefined;
    let pickAt = Infinity;
    let pickRank = Infinity;
    for (const tenant of this.queues.keys()) {
      if (eligible && !eligible(tenant)) continue;
      const r = rank ? rank(tenant) : 0;
      const at = this.lastServed.get(tenant) ?? -1;
      if (r < pickRank || (r === pickRank && at < pickAt)) {
        pick = tenant;
        pickAt = at;
        pickRank = r;
      }
    }
    if (pick === undefined) return undefined;
    const q = this.queues.get(pick)!;
    const item = q.shift();
    if (q.length === 0) this.queues.delete(pick);
    this.count--;
    this.lastServed.delete(pick);
    this.lastServed.set(pick, ++this.served);
    // Bounded by the active tenants: forget the longest-served idle ones.
    if (this.lastServed.size > 10_000) {
      for (const t of this.lastServed.keys()) {
        if (this.lastServed.size <= 5_000) break;
        if (!this.queues.has(t)) this.lastServed.delete(t);
      }
    }
    return item;
  }

  /** The tenants with waiting items. */
  tenants(): string[] {
    return [...this.queues.keys()];
  }

  /** The items of `tenant` that wait, oldest first. */
  itemsOf(tenant: string): readonly T[] {
    return this.queues.get(tenant) ?? [];
  }

  /** How many items of `tenant` wait. */
  sizeOf(tenant: string): number {
    return this.queues.get(tenant)?.length ?? 0;
  }

  /** Removes an item (a cancelled job); true if it was waiting. */
  remove(tenant: string, item: T): boolean {
    const q = this.queues.get(tenant);
    const i = q ? q.indexOf(item) : -1;
    if (!q || i < 0) return false;
    q.splice(i, 1);
    if (q.length === 0) this.queues.delete(tenant);
    this.count--;
    return true;
  }

  /** Empties the queue, returning what waited. */
  drain(): T[] {
    const all = [...this.queues.values()].flat();
    this.queues.clear();
    this.count = 0;
    return all;
  }
}
