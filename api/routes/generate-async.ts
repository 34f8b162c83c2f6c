// POST /documents/document/generate/async (spec 4.8, 5.3, 6). The same body and checks as the synchronous
// operation, plus the X-Client-Authorization header; everything is validated before the workflow is
// queued, so a 400 means no callback will ever follow. 201 with an empty body acknowledges the queueing;
// the result is POSTed to the callback named by the token (api/schemas/generation.ts documents it).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { Config } from '../../config/env.ts';
import type { LocationRegistry } from '../../connectors/registry.ts';
import type { Db } from '../../store/db.ts';
import { type ClientToken, readClientToken } from '../../security/client-token.ts';
import { captureExternalContext, origin } from '../envelope.ts';
import { generateDocumentAsync } from '../schemas/generation.ts';
import { outboundPolicy } from '../../connectors/http/address-policy.ts';
import { assertCallbackReachable } from './client-token.ts';
import { idempotencyOf, startGenerateAsync, type WorkflowStarter } from '../temporal.ts';
import { generateInput } from './generate.ts';

const HEADER = 'x-client-authorization';

const generateAsyncRoutes: FastifyPluginAsyncTypebox<{
  temporal: WorkflowStarter;
  db: Db;
  config: Config;
  locations: LocationRegistry;
}> = async (app, opts) => {
  const tokens = new WeakMap<FastifyRequest, { token: ClientToken; value: string }>();
  const policy = outboundPolicy(opts.config.outboundAllow);
  app.post(
    '/documents/document/generate/async',
    {
      // The header is checked before the body, so its failures read as in the 5.3 table whatever the body.
      preValidation: async (request) => {
        captureExternalContext(request);
        const raw = request.headers[HEADER];
        const value = Array.isArray(raw) ? raw[0] : raw;
        const token = await readClientToken(opts.db, value, { subscriptionId: request.auth.subscriptionId });
        // A token made before the target became unreachable (or under another OUTBOUND_ALLOW) is refused
        // here, before anything is generated or metered.
        await assertCallbackReachable(token.callbackUrl, policy);
        tokens.set(request, { token, value: (value ?? '').trim() });
      },
      schema: generateDocumentAsync,
    },
    async (request, reply) => {
      const input = await generateInput(request, request.body, opts.db, opts.locations);
      const client = tokens.get(request);
      if (!client) throw new Error('client token was not read');
      // The fingerprint covers the body and the callback target, not the token's timing claims, so a
      // retry with a freshly minted token for the same callback is still the same request.
      const idem = idempotencyOf(request.headers, { body: request.body, callback: client.token.callbackUrl });
      await startGenerateAsync(
        opts.temporal,
        {
          generate: input,
          envelope: {
            origin: origin(request),
            ...(request.ctx.externalContext !== undefined ? { externalContext: request.ctx.externalContext } : {}),
          },
          callback: {
            subscriptionId: input.run.subscriptionId,
            url: client.token.callbackUrl,
            clientToken: client.value,
            webhookId: `msg_${input.run.operationId}`,
            scheduleMs: opts.config.callbackRetryScheduleMs,
            outbound: { timeoutMs: opts.config.callbackTimeoutMs },
          },
        },
        idem,
      );
      return reply.code(201).send(undefined);
    },
  );
};

export default generateAsyncRoutes;
