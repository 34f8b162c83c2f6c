// Rate limits, three token buckets, each answering 429 TOO_MANY_REQUESTS in the error envelope with
// `Retry-After` (whole seconds until one request is allowed again):
// - per subscription, after authentication: RATE_LIMIT_BURST requests at once, refilled at
//   RATE_LIMIT_PER_MINUTE, shared by every API key of the subscription (a second key does not double it);
// - failed authentication per client address: AUTH_FAILURES_BURST failures at once, refilled at
//   AUTH_FAILURES_PER_MINUTE. Only failures spend; once an address has none left, every request from it
//   whose credentials are not already verified (api/plugins/auth.ts AuthCache) is refused before the key
//   lookup and the signature check, so guessing costs the service a map lookup;
// - the public routes (health, readiness, the API docs, unknown paths) per client address, with the
//   RATE_LIMIT_* numbers.
// The buckets live in the database every API process shares (RATE_LIMIT_STORE=database, the default:
// store/rate-buckets.ts, one UPSERT per counted request), so a second API process does not double an
// allowance; RATE_LIMIT_STORE=memory counts per process. A database that does not answer lets the request
// through (the limits must not take the health and readiness routes down with it).
// A client address is `request.ip` (the connection's, or X-Forwarded-For from a TRUST_PROXY proxy), an
// IPv6 address counted by its /64 (one host's usual allocation). Memory is bounded: each limiter holds at
// most MAX_TRACKED keys; when full it first drops the buckets that are full again (they carry nothing),
// then the least recently used.
import { isIPv6 } from 'node:net';
import type { FastifyInstance, FastifyReply } from 'fastify';
import fp from 'fastify-plugin';
import { ApiError } from '../../core/errors.ts';

export interface RateLimitSettings {
  /** RATE_LIMIT_PER_MINUTE: per subscription and, for the public routes, per client address; 0 = off. */
  perMinute: number;
  /** RATE_LIMIT_BURST. */
  burst: number;
  /** AUTH_FAILURES_PER_MINUTE: failed authentications per client address; 0 = off. */
  failuresPerMinute: number;
  /** AUTH_FAILURES_BURST. */
  failuresBurst: number;
}

/** Keys one limiter remembers at most: about 210 bytes each, so at most ~11 MB per limiter (three). */
export const MAX_TRACKED = 50_000;

interface Bucket {
  tokens: number;
  at: number;
}

/** Token buckets by key: spend one (`take`), or ask without spending (`wait`); undefined = a token is there,
 *  else the seconds until one is. */
export interface Buckets {
  take(key: string): number | undefined | Promise<number | undefined>;
  wait(key: string): number | undefined | Promise<number | undefined>;
}

/** Makes the buckets of one scope with its rate (the shared, database-backed ones). */
export type BucketsFactory = (scope: string, rate: { perMinute: number; burst: number }) => Buckets;

/** Token buckets by key in this process's memory, at most `maxKeys` of them. */
export class TokenBuckets implements Buckets {
  private readonly buckets = new Map<string, Bucket>();
  private readonly perMs: number;
  private readonly burst: number;
  private readonly maxKeys: number;
  private readonly now: () => number;

  constructor(perMinute: number, burst: number, maxKeys = MAX_TRACKED, now: () => number = Date.now) {
    this.perMs = perMinute / 60_000;
    this.burst = burst;
    this.maxKeys = maxKeys;
    this.now = now;
  }

  get size(): number {
    return this.buckets.size;
  }

  /** Spends one token of `key`: undefined when there was one, else the seconds until there is. */
  take(key: string): number | undefined {
    const b = this.bucket(key, true)!;
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return undefined;
    }
    return this.secondsUntilOne(b);
  }

  /** Whether `key` has a token, without spending it: undefined when it has, else the seconds until it has. */
  wait(key: string): number | undefined {
    const b = this.bucket(key, false);
    return !b || b.tokens >= 1 ? undefined : this.secondsUntilOne(b);
  }

  private secondsUntilOne(b: Bucket): number {
    return Math.max(1, Math.ceil((1 - b.tokens) / this.perMs / 1000));
  }

  private refill(b: Bucket, t: number): void {
    b.tokens = Math.min(this.burst, b.tokens + (t - b.at) * this.perMs);
    b.at = t;
  }

  private bucket(key: string, create: boolean): Bucket | undefined {
    const t = this.now();
    let b = this.buckets.get(key);
    if (b) {
      this.buckets.delete(key); // most recently used last
      this.buckets.set(key, b);
    } else {
      if (!create) return undefined;
      if (this.buckets.size >= this.maxKeys) this.makeRoom(t);
      b = { tokens: this.burst, at: t };
      this.buckets.set(key, b);
    }
    this.refill(b, t);
    return b;
  }

  /** Full buckets first (they hold nothing a new bucket would not), then the least recently used, down to
   *  90% of the bound, so a flood of new keys costs O(1) per key on average. */
  private makeRoom(t: number): void {
    for (const [k, b] of this.buckets) {
      this.refill(b, t);
      if (b.tokens >= this.burst) this.buckets.delete(k);
    }
    const target = Math.floor(this.maxKeys * 0.9);
    for (const k of this.buckets.keys()) {
      if (this.buckets.size <= target) break;
      this.buckets.delete(k);
    }
  }
}

/**
 * The client address a limit counts: IPv4 as is (also when IPv4-mapped), IPv6 by its /64 prefix, since a
 * single host usually holds a whole /64 and could otherwise rotate through it.
 */
export function clientKey(ip: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(ip);
  if (mapped) return mapped[1]!;
  const bare = ip.split('%', 1)[0]!;
  if (!isIPv6(bare)) return ip;
  const groups = (part: string) => (part === '' ? [] : part.split(':').flatMap((g) => (g.includes('.') ? ['0', '0'] : [g])));
  const [head = '', tail] = bare.split('::');
  const h = groups(head);
  const all = tail === undefined ? h : [...h, ...Array<string>(Math.max(0, 8 - h.length - groups(tail).length)).fill('0'), ...groups(tail)];
  return `${all
    .slice(0, 4)
    .map((g) => parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}

/** A 429 for the caller, with its Retry-After. */
function tooMany(reply: FastifyReply, retryAfter: number, message: string): ApiError {
  void reply.header('retry-after', String(retryAfter));
  return new ApiError('TOO_MANY_REQUESTS', `${message}: retry after ${retryAfter} s`);
}

/** A bucket's answer; a database that does not answer lets the request through. */
async function ask(b: Buckets | undefined, op: 'take' | 'wait', key: string): Promise<number | undefined> {
  if (!b) return undefined;
  try {
    return await b[op](key);
  } catch {
    return undefined;
  }
}

/** The API's limits, in the shared database (`shared`) or in this process's memory. */
export class RateLimits {
  private readonly subscriptions?: Buckets;
  private readonly anonymous?: Buckets;
  private readonly failures?: Buckets;
  private readonly settings: RateLimitSettings;

  constructor(settings: RateLimitSettings, opts: { maxKeys?: number; now?: () => number; shared?: BucketsFactory } = {}) {
    this.settings = settings;
    const { maxKeys, now, shared } = opts;
    const make = (scope: string, perMinute: number, burst: number): Buckets =>
      shared ? shared(scope, { perMinute, burst }) : new TokenBuckets(perMinute, burst, maxKeys, now);
    if (settings.perMinute > 0) {
      this.subscriptions = make('subscription', settings.perMinute, settings.burst);
      this.anonymous = make('public', settings.perMinute, settings.burst);
    }
    if (settings.failuresPerMinute > 0) this.failures = make('auth-failures', settings.failuresPerMinute, settings.failuresBurst);
  }

  /** One request of an authenticated subscription (all its API keys together). */
  async subscription(reply: FastifyReply, subscriptionId: string): Promise<void> {
    const wait = await ask(this.subscriptions, 'take', subscriptionId);
    if (wait === undefined) return;
    const { perMinute, burst } = this.settings;
    throw tooMany(
      reply,
      wait,
      `this subscription sent more than ${perMinute} requests per minute, all its API keys together (bursts up to ${burst}; RATE_LIMIT_PER_MINUTE, RATE_LIMIT_BURST)`,
    );
  }

  /** One request to a route that needs no credentials. */
  async publicRoute(reply: FastifyReply, address: string): Promise<void> {
    const wait = await ask(this.anonymous, 'take', clientKey(address));
    if (wait === undefined) return;
    const { perMinute, burst } = this.settings;
    throw tooMany(
      reply,
      wait,
      `this address sent more than ${perMinute} requests per minute to the routes that need no credentials (bursts up to ${burst}; RATE_LIMIT_PER_MINUTE, RATE_LIMIT_BURST)`,
    );
  }

  /** Before checking credentials that are not already verified: refuses an address out of failures. */
  async beforeAuthentication(reply: FastifyReply, address: string): Promise<void> {
    const wait = await ask(this.failures, 'wait', clientKey(address));
    if (wait === undefined) return;
    const { failuresPerMinute, failuresBurst } = this.settings;
    throw tooMany(
      reply,
      wait,
      `too many failed authentications from this address: more than ${failuresPerMinute} per minute (bursts up to ${failuresBurst}; AUTH_FAILURES_PER_MINUTE, AUTH_FAILURES_BURST)`,
    );
  }

  /** A failed authentication from `address`. */
  async failedAuthentication(address: string): Promise<void> {
    await ask(this.failures, 'take', clientKey(address));
  }
}

/**
 * Registers the public-route limit for the whole app (a preParsing hook: it runs after every onRequest
 * hook, so a request the auth plugin authenticated is known by `request.auth`), and the subscription limit
 * in the scope it is registered in, after the auth plugin.
 */
export const publicRouteLimit = fp(async function publicRouteLimit(app: FastifyInstance, opts: { limits: RateLimits }) {
  app.addHook('preParsing', async (request, reply) => {
    if (!request.auth) await opts.limits.publicRoute(reply, request.ip);
  });
});

export default fp(async function subscriptionLimit(app: FastifyInstance, opts: { limits: RateLimits }) {
  app.addHook('onRequest', async (request, reply) => {
    // Routes the auth plugin lets through without credentials count as public (publicRouteLimit).
    if (request.auth) await opts.limits.subscription(reply, request.auth.subscriptionId);
  });
});
