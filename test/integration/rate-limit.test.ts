// Per-API-key rate limit: past RATE_LIMIT_BURST requests at once (refilled at RATE_LIMIT_PER_MINUTE) a key
// gets 429 TOO_MANY_REQUESTS in the error envelope with Retry-After; another key, even of the same
// subscription, is served as before.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from '../support/http.ts';
import { type Stack, startStack } from '../support/stack.ts';

describe('rate limit per API key', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ rateLimitPerMinute: 60, rateLimitBurst: 5 });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('answers 429 with Retry-After past the burst; other keys are not affected', async () => {
    const noisy = client(await stack.credentials('noisy'));
    const quiet = client(await stack.credentials('quiet'));
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await noisy.call('GET', '/documents/template/list')).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    const limited = await noisy.call('GET', '/documents/template/list');
    expect(limited.status).toBe(429);
    expect(limited.body.error.statusCode).toBe(429);
    expect(limited.body.error.innerErrors[0].code).toBe('TOO_MANY_REQUESTS');
    expect(limited.body.error.message).toMatch(/RATE_LIMIT_PER_MINUTE/);
    // One request per second comes back: the wait is about a second.
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(2);
    expect(limited.body.error.message).toContain(`retry after ${retryAfter} s`);
    expect((await quiet.call('GET', '/documents/template/list')).status).toBe(200);
    // After the wait the key is served again.
    await new Promise((r) => setTimeout(r, retryAfter * 1000 + 100));
    expect((await noisy.call('GET', '/documents/template/list')).status).toBe(200);
  });
});
