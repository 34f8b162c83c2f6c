// The API's limits hold across processes (issue 36, section 2): two API processes on one PostgreSQL
// database count a subscription's requests and a client address's failed authentications in the same
// buckets (RATE_LIMIT_STORE=database, the default), so spreading requests over both does not double the
// allowance. With a refill of one per minute the allowance is the burst, whatever the machine's speed.
// Real services, real PostgreSQL, real Temporal dev server.
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Credentials } from '../../../api/auth/credentials.ts';
import { SharedBuckets } from '../../../store/rate-buckets.ts';
import { client } from '../../support/http.ts';
import { createPgDatabase, type Stack, startStack } from '../../support/stack.ts';

describe('limits shared by two API processes', () => {
  const stacks: Stack[] = [];
  let creds: Credentials;
  let apis: ReturnType<typeof client>[];

  beforeAll(async () => {
    const databaseUrl = await createPgDatabase();
    const shared = {
      databaseUrl,
      converterMode: 'none' as const,
      rateLimitPerMinute: 1,
      rateLimitBurst: 5,
      authFailuresPerMinute: 1,
      authFailuresBurst: 3,
    };
    stacks.push(await startStack(shared, { database: 'postgres' }));
    stacks.push(await startStack(shared, { database: 'postgres' }));
    creds = await stacks[0]!.credentials('limits');
    apis = [client(creds), client({ ...creds, baseUrl: `${stacks[1]!.service.baseUrl}/v1` })];
  }, 120_000);
  afterAll(async () => {
    for (const s of stacks) await s.stop();
  });

  it("a subscription's requests spread over both APIs: the burst of one, then 429 with Retry-After from either", async () => {
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    for (let i = 0; i < 10; i++) {
      const r = await apis[i % 2]!.call('GET', '/documents/template/list');
      statuses.push(r.status);
      if (r.status === 429) retryAfter ??= r.headers.get('retry-after');
    }
    // Five allowed (at most one more refilled), the rest refused: per process it was five on each.
    expect(statuses.filter((s) => s === 200).length).toBeLessThanOrEqual(6);
    expect(statuses.slice(0, 5)).toEqual([200, 200, 200, 200, 200]);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(4);
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
  });

  it('failed authentications from one address count on both APIs together', async () => {
    const bad = [
      client({ ...creds, apiKey: 'not-a-key' }),
      client({ ...creds, apiKey: 'not-a-key', baseUrl: `${stacks[1]!.service.baseUrl}/v1` }),
    ];
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await bad[i % 2]!.call('GET', '/documents/template/list')).status);
    // Three failures (the burst), spread over both; the fourth is refused before any check, on the API that saw one.
    expect(statuses).toEqual([401, 401, 401, 429]);
  });

  it('costs one statement per counted request (printed: the median time of a take on this PostgreSQL)', async () => {
    const buckets = new SharedBuckets(stacks[0]!.service.db, 'measure', { perMinute: 1_000_000, burst: 1_000_000 });
    const times: number[] = [];
    for (let i = 0; i < 200; i++) {
      const t = performance.now();
      expect(await buckets.take(`k${i % 10}`)).toBeUndefined();
      times.push(performance.now() - t);
    }
    times.sort((a, b) => a - b);
    console.log(
      `[limits] one shared-bucket take on PostgreSQL: median ${times[100]!.toFixed(2)} ms, p95 ${times[190]!.toFixed(2)} ms (200 takes)`,
    );
  });
});
