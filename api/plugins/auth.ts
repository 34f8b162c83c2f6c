// Spec 5.1: every operation needs a bearer JWT and an API key (header X-Api-Key or query `apiKey`).
// The API key names the subscription; the token names the user, who must belong to it.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { ApiError } from '../../core/errors.ts';
import { findApiKey, findUser } from '../../store/accounts.ts';
import type { Db } from '../../store/db.ts';
import { isUuid } from '../../store/files.ts';
import type { TokenVerifier } from '../../security/tokens.ts';

export interface AuthOptions {
  db: Db;
  verifyToken: TokenVerifier;
  /** External identity providers know users we have never seen; the local mode requires a known user. */
  requireKnownUser: boolean;
  /** Paths (after /v1) that need no credentials: the API's own documentation. */
  publicPaths: (url: string) => boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    auth: { subscriptionId: string; userId: string };
  }
}

function apiKeyOf(request: FastifyRequest): string | undefined {
  const header = request.headers['x-api-key'];
  if (typeof header === 'string' && header) return header;
  const q = request.query as Record<string, unknown> | undefined;
  return typeof q?.apiKey === 'string' && q.apiKey ? q.apiKey : undefined;
}

export default fp(async function authPlugin(app: FastifyInstance, opts: AuthOptions) {
  app.decorateRequest('auth', null as never);
  app.addHook('onRequest', async (request) => {
    if (opts.publicPaths(request.url)) return;
    const authz = request.headers.authorization;
    const bearer = typeof authz === 'string' && /^Bearer\s+\S+$/i.test(authz) ? authz.replace(/^Bearer\s+/i, '') : undefined;
    const apiKey = apiKeyOf(request);
    if (!bearer || !apiKey) {
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
      throw new ApiError('UNAUTHORIZED', 'the bearer token is not valid (signature, issuer, audience or expiry)');
    }
    if (token.subscriptionId !== undefined && token.subscriptionId !== owner.subscriptionId) {
      throw new ApiError('UNAUTHORIZED', 'the bearer token and the API key belong to different subscriptions');
    }
    if (!isUuid(token.userId)) throw new ApiError('UNAUTHORIZED', 'the bearer token subject is not a user id');
    if (opts.requireKnownUser && !(await findUser(opts.db, owner.subscriptionId, token.userId))) {
      throw new ApiError('UNAUTHORIZED', 'the bearer token names a user unknown to this subscription');
    }
    request.auth = { subscriptionId: owner.subscriptionId, userId: token.userId };
    request.ctx.userId = token.userId;
    request.ctx.subscriptionId = owner.subscriptionId;
  });
});
