// POST /common/client/token (spec 5.3): the caller's callback claims, validated, signed and encrypted by the
// service into the value of the X-Client-Authorization header. iat and exp are the service's. The response
// also carries, as an extension, the Standard Webhooks secret with which the callbacks of this token are
// signed (see security/webhooks.ts for how a receiver verifies them). The schemas and their prose are in
// api/schemas/common.ts.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Config } from '../../config/env.ts';
import { ApiError } from '../../core/errors.ts';
import type { Db } from '../../store/db.ts';
import { type OutboundPolicy, outboundPolicy } from '../../connectors/http/address-policy.ts';
import { checkOutboundTarget } from '../../connectors/http/safe-fetch.ts';
import { callbackUrl, createClientToken } from '../../security/client-token.ts';
import { createServiceToken } from '../../security/service-token.ts';
import { success } from '../envelope.ts';
import * as S from '../schemas/common.ts';

/**
 * Refuses (400 X_CLIENT_AUTH_ERROR) a callback target the guarded outbound client would refuse when it
 * delivers: a loopback, private, link-local or metadata address, or a name that resolves to one (or to
 * nothing), unless OUTBOUND_ALLOW lists it. Accepting it would generate and meter a document whose
 * callback can never arrive. The message never says what a name resolved to.
 */
export async function assertCallbackReachable(url: string, policy: OutboundPolicy): Promise<void> {
  try {
    await checkOutboundTarget(url, policy);
  } catch (err) {
    throw new ApiError(
      'X_CLIENT_AUTH_ERROR',
      `the callback target (iss joined with dest) cannot be called back: ${(err as Error).message}`,
    );
  }
}

const clientTokenRoutes: FastifyPluginAsyncTypebox<{ db: Db; config: Config }> = async (app, opts) => {
  const policy = outboundPolicy(opts.config.outboundAllow);
  app.post(
    '/common/client/token',
    {
      schema: S.createClientToken,
    },
    async (request) => {
      const claims = request.body;
      let url: string;
      try {
        url = callbackUrl(claims.iss, claims.dest);
      } catch (err) {
        throw new ApiError('VALIDATION_ERROR', (err as Error).message);
      }
      await assertCallbackReachable(url, policy);
      const made = await createClientToken(opts.db, request.auth.subscriptionId, claims, opts.config.clientTokenTtlSeconds);
      return success(request, 200, { token: made.token, webhookSecret: made.webhookSecret, expiresAt: made.expiresAt.toISOString() });
    },
  );
  app.post(
    '/common/service/token',
    {
      schema: S.createServiceToken,
    },
    async (request) => {
      const made = await createServiceToken(opts.db, request.auth.subscriptionId, request.body, opts.config.clientTokenTtlSeconds);
      return success(request, 200, { token: made.token, expiresAt: made.expiresAt.toISOString() });
    },
  );
};

export default clientTokenRoutes;
