// Per-API-key rate limit: a token bucket per key (RATE_LIMIT_BURST requests at once, refilled at
// RATE_LIMIT_PER_MINUTE). Past it: 429 TOO_MANY_REQUESTS in the error envelope with `Retry-After` (whole
// seconds until one request is allowed again). Runs after authentication, so only valid keys have
// buckets; keys are held as digests, never as given.
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { ApiError } from '../../core/errors.ts';

export interface RateLimitOptions {
  /** Sustained requests per minute per key; 0 = no limit. */
  perMinute: number;
  /** Requests a key may send at once. */
  burst: number;
  /** Clock (tests). */
  now?: () => number;
}

interface Bucket {
  tokens: number;
  at: number;
}

/** Buckets are swept of idle (full) keys every this many requests, so the map stays bounded by the active keys. */
const SWEEP_EVERY = 10_000;

function apiKeyOf(request: FastifyRequest): string | undefined {
  const h = request.headers['x-api-key'];
  if (typeof h === 'string' && h) return h;
  const q = request.query as Record<string, unknown> | undefined;
  return typeof q?.apiKey === 'string' && q.apiKey ? q.apiKey : undefined;
}

export default fp(async function rateLimitPlugin(app: FastifyInstance, opts: RateLimitOptions) {
  if (opts.perMinute <= 0) return;
  const now = opts.now ?? Date.now;
  const perMs = opts.perMinute / 60_000;
  const buckets = new Map<string, Bucket>();
  let seen = 0;
  const refill = (b: Bucket, t: number) => {
    b.tokens = Math.min(opts.burst, b.tokens + (t - b.at) * perMs);
    b.at = t;
  };
  app.addHook('onRequest', async (request, reply) => {
    // Public paths (health, docs) carry no authenticated key.
    if (!request.auth) return;
    const key = apiKeyOf(request);
    if (!key) return;
    const id = createHash('sha256').update(key).digest('base64url');
    const t = now();
    if (++seen % SWEEP_EVERY === 0) {
      for (const [k, b] of buckets) {
        refill(b, t);
        if (b.tokens >= opts.burst) buckets.delete(k);
      }
    }
    let b = buckets.get(id);
    if (!b) {
      b = { tokens: opts.burst, at: t };
      buckets.set(id, b);
    }
    refill(b, t);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return;
    }
    const retryAfter = Math.max(1, Math.ceil((1 - b.tokens) / perMs / 1000));
    reply.header('retry-after', String(retryAfter));
    throw new ApiError(
      'TOO_MANY_REQUESTS',
      `this API key sent more than ${opts.perMinute} requests per minute (bursts up to ${opts.burst}; RATE_LIMIT_PER_MINUTE, RATE_LIMIT_BURST): retry after ${retryAfter} s`,
    );
  });
});
