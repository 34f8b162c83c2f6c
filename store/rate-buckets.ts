// Token buckets in the database every API process shares (table rate_buckets, migration 010): a request
// takes a token with one UPSERT that refills the bucket by the time passed (the database's clock) and
// says whether a token was there; a second API process therefore does not double a subscription's
// allowance, nor a client address's failed authentications.
import type { Queryable } from './db.ts';

/** The database's clock in ms (one clock for every process). */
const NOW_MS = 'extract(epoch from clock_timestamp()) * 1000';

export interface BucketRate {
  perMinute: number;
  burst: number;
}

/** Buckets of one scope ('subscription', 'public', 'auth-failures'). */
export class SharedBuckets {
  private takes = 0;
  private readonly db: Queryable;
  private readonly scope: string;
  private readonly rate: BucketRate;
  constructor(db: Queryable, scope: string, rate: BucketRate) {
    this.db = db;
    this.scope = scope;
    this.rate = rate;
  }

  private get perMs(): number {
    return this.rate.perMinute / 60_000;
  }

  /** Spends one token of `key`: undefined when there was one, else the seconds until there is. */
  async take(key: string): Promise<number | undefined> {
    const refilled = `LEAST($3::double precision, b.tokens + GREATEST(0, EXCLUDED.at_ms - b.at_ms) * $4::double precision)`;
    const { rows } = await this.db.query<{ granted: boolean; tokens: number }>(
      `INSERT INTO rate_buckets AS b (scope, key, tokens, at_ms, granted) VALUES ($1, $2, $3::double precision - 1, ${NOW_MS}, true)
       ON CONFLICT (scope, key) DO UPDATE SET
         granted = ${refilled} >= 1,
         tokens = ${refilled} - CASE WHEN ${refilled} >= 1 THEN 1 ELSE 0 END,
         at_ms = GREATEST(b.at_ms, EXCLUDED.at_ms)
       RETURNING granted, tokens`,
      [this.scope, key, this.rate.burst, this.perMs],
    );
    if (++this.takes % 1_000 === 0) void this.sweep().catch(() => {});
    const row = rows[0]!;
    return row.granted ? undefined : this.secondsUntilOne(Number(row.tokens));
  }

  /** Whether `key` has a token, without spending it: undefined when it has, else the seconds until it has. */
  async wait(key: string): Promise<number | undefined> {
    const { rows } = await this.db.query<{ tokens: number }>(
      `SELECT LEAST($3::double precision, tokens + GREATEST(0, ${NOW_MS} - at_ms) * $4::double precision) AS tokens FROM rate_buckets WHERE scope = $1 AND key = $2`,
      [this.scope, key, this.rate.burst, this.perMs],
    );
    const tokens = rows[0] === undefined ? undefined : Number(rows[0].tokens);
    return tokens === undefined || tokens >= 1 ? undefined : this.secondsUntilOne(tokens);
  }

  /** Deletes the buckets that have refilled (they carry nothing a new bucket would not). */
  async sweep(): Promise<void> {
    await this.db.query(
      `DELETE FROM rate_buckets WHERE scope = $1 AND tokens + GREATEST(0, ${NOW_MS} - at_ms) * $2::double precision >= $3::double precision`,
      [this.scope, this.perMs, this.rate.burst],
    );
  }

  private secondsUntilOne(tokens: number): number {
    return Math.max(1, Math.ceil((1 - tokens) / this.perMs / 1000));
  }
}
