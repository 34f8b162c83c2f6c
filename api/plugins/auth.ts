// Spec 5.1: every operation needs a bearer JWT and an API key (header X-Api-Key or query `apiKey`).
// The API key names the subscription; the token names the user, who must belong to it.
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { ApiError } from '../../core/errors.ts';
import { findApiKey, findUser } from '../../store/accounts.ts';
import type { Db } from '../../store/db.ts';
import { isUuid } from '../../store/files.ts';
import type { TokenVerifier } from '../../security/tokens.ts';
import type { RateLimits } from './rate-limit.ts';

export interface AuthOptions {
  db: Db;
  verifyToken: TokenVerifier;
  /** External identity providers know users we have never seen; the local mode requires a known user. */
  requireKnownUser: boolean;
  /** Paths (after /v1) that need no credentials: the API's own documentation. */
  publicPaths: (url: string) => boolean;
  /** How long a verified pair (bearer token + API key) is trusted without checking it again, in seconds
   *  (AUTH_CACHE_SECONDS); 0 = check every request. Never past the token's own expiry. */
  cacheSeconds?: number;
  /** Most pairs remembered at once (least recently used first out). */
  cacheEntries?: number;
  /** Failed authentications per client address (api/plugins/rate-limit.ts): an address out of them is
   *  refused before its credentials cost a key lookup or a signature check. */
  limits?: Pick<RateLimits, 'beforeAuthentication' | 'failedAuthentication'>;
}

interface Verified {
  subscriptionId: string;
  userId: string;
  /** Date.now() past which the entry is not used. */
  until: number;
}

/**
 * Verified credentials, remembered for a short time: a bounded LRU (a Map in use order) keyed by the SHA-256
 * of the exact API key and bearer token, so only a pair that passed every check is ever found, and the
 * secrets themselves are not kept. Failures are never remembered (they are rare, and a flood of wrong
 * pairs must not evict the good ones). A revoked API key, a removed user or a rotated signing key is
 * noticed within `ttlMs`; an entry never outlives its token's `exp`.
 */
export class AuthCache {
  private readonly entries = new Map<string, Verified>();
  private readonly ttlMs: number;
  private readonly max: number;

  constructor(ttlMs: number, max: number) {
    this.ttlMs = ttlMs;
    this.max = max;
  }

  static key(apiKey: string, bearer: string): string {
    return createHash('sha256').update(apiKey).update('\0').update(bearer).digest('base64');
  }

  get(key: string, now = Date.now()): Verified | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    this.entries.delete(key);
    if (e.until <= now) return undefined;
    this.entries.set(key, e); // most recently used last
    return e;
  }

  set(key: string, v: { subscriptionId: string; userId: string }, tokenExpiresAt: number | undefined, now = Date.now()): void {
    if (this.ttlMs <= 0 || this.max <= 0) return;
    const until = Math.min(now + this.ttlMs, tokenExpiresAt ?? Infinity);
    if (until <= now) return;
    this.entries.delete(key);
    this.entries.set(key, { ...v, until });
    while (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value as string);
  }

  get size(): number {
    return this.entries.size;
  }
}

declare module 'fastify' {
  interface FastifyRequest {
    auth: { subscriptionId: string; userId: string };
  }
}

function apiKeyOf(request: FastifyRequest): string | undefined {
  const header = request.headers['x-api-key'];
  if (typeof header === 'string' && header) return header;
  // Every route reads its query here, whatever its schema: the key is not one of the route's parameters.
  const q: unknown = request.query;
  const key = q !== null && typeof q === 'object' && 'apiKey' in q ? q.apiKey : undefined;
  return typeof key === 'string' && key ? key : undefined;
}

/** When a verifier's error is jose's JWTExpired (a well-signed token past its `exp`): when it expired. */
function expiryOf(err: unknown): { at?: Date } | undefined {
  const e = err as { code?: unknown; payload?: { exp?: unknown } } | null;
  if (e?.code !== 'ERR_JWT_EXPIRED') return undefined;
  const at = new Date(typeof e.payload?.exp === 'number' ? e.payload.exp * 1000 : NaN);
  return Number.isNaN(at.getTime()) ? {} : { at };
}

export default fp(async function authPlugin(app: FastifyInstance, opts: AuthOptions) {
  app.decorateRequest('auth', null as never);
  const cache = new AuthCache((opts.cacheSeconds ?? 0) * 1000, opts.cacheEntries ?? 10_000);
  app.addHook('onRequest', async (request, reply) => {
    if (opts.publicPaths(request.url)) return;
    const authz = request.headers.authorization;
    const bearer = typeof authz === 'string' && /^Bearer\s+\S+$/i.test(authz) ? authz.replace(/^Bearer\s+/i, '') : undefined;
    const apiKey = apiKeyOf(request);
    const cacheKey = bearer && apiKey ? AuthCache.key(apiKey, bearer) : undefined;
    const known = cacheKey ? cache.get(cacheKey) : undefined;
    if (known) {
      request.auth = { subscriptionId: known.subscriptionId, userId: known.userId };
      request.ctx.userId = known.userId;
      request.ctx.subscriptionId = known.subscriptionId;
      return;
    }
    await opts.limits?.beforeAuthentication(reply, request.ip);
    try {
      await authenticate(request, bearer, apiKey, cacheKey);
    } catch (err) {
      if (err instanceof ApiError && err.code === 'UNAUTHORIZED') await opts.limits?.failedAuthentication(request.ip);
      throw err;
    }
  });

  /** The full check of credentials that are not remembered; throws 401 UNAUTHORIZED naming what failed. */
  async function authenticate(
    request: FastifyRequest,
    bearer: string | undefined,
    apiKey: string | undefined,
    cacheKey: string | undefined,
  ): Promise<void> {
    if (!bearer || !apiKey || !cacheKey) {
      throw new ApiError(
        'UNAUTHORIZED',
        !bearer && !apiKey
          ? 'Authorization: Bearer <token> and an API key (X-Api-Key header or apiKey query parameter) are required'
          : !bearer
            ? 'Authorization: Bearer <token> is required'
            : 'an API key is required (X-Api-Key header or apiKey query parameter)',
      );
    }
    const owner = await findApiKey(opts.db, apiKey);
    if (!owner) throw new ApiError('UNAUTHORIZED', 'the API key is not valid');
    let token: Awaited<ReturnType<TokenVerifier>>;
    try {
      token = await opts.verifyToken(bearer);
    } catch (err) {
      request.log.info({ reason: (err as Error).message }, 'bearer token rejected');
      // jose checks the signature before the claims: only a token we (or the identity provider) signed
      // is said to have expired.
      const expired = expiryOf(err);
      if (expired)
        throw new ApiError(
          'UNAUTHORIZED',
          `the bearer token expired${expired.at ? ` at ${expired.at.toISOString()}` : ''}: get a new access token`,
        );
      throw new ApiError('UNAUTHORIZED', 'the bearer token is not valid (signature, issuer or audience)');
    }
    if (token.subscriptionId !== undefined && token.subscriptionId !== owner.subscriptionId) {
      throw new ApiError('UNAUTHORIZED', 'the bearer token and the API key belong to different subscriptions');
    }
    if (!isUuid(token.userId)) throw new ApiError('UNAUTHORIZED', 'the bearer token subject is not a user id');
    if (opts.requireKnownUser && !(await findUser(opts.db, owner.subscriptionId, token.userId))) {
      throw new ApiError('UNAUTHORIZED', 'the bearer token names a user unknown to this subscription');
    }
    request.auth = { subscriptionId: owner.subscriptionId, userId: token.userId };
    cache.set(cacheKey, request.auth, token.expiresAt);
    request.ctx.userId = token.userId;
    request.ctx.subscriptionId = owner.subscriptionId;
  }
});
