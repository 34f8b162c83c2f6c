// A queue per tenant, served round-robin: a burst of one tenant waits behind one job of each other
// tenant, never in front of all of them. Used where one process runs work of every tenant with a fixed
// number of slots (merge threads, LibreOffice instances). Pure: no Node built-ins.

export class FairQueue<T> {
  /** Tenants with waiting work, in serving order; Map keeps insertion order. */
  private readonly queues = new Map<string, T[]>();
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

  /** The next item: the oldest of the tenant whose turn it is; that tenant then goes to the back. */
  shift(): T | undefined {
    for (const [tenant, q] of this.queues) {
      const item = q.shift();
      this.queues.delete(tenant);
      if (q.length > 0) this.queues.set(tenant, q);
      if (item !== undefined) {
        this.count--;
        return item;
      }
    }
    return undefined;
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
