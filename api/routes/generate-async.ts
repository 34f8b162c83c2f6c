// POST /documents/document/generate/async (spec 4.8, 5.3, 6). The same body and checks as the synchronous
// operation, plus the X-Client-Authorization header; everything is validated before the workflow is
// queued, so a 400 means no callback will ever follow. 201 with an empty body acknowledges the queueing;
// the result is POSTed to the callback named by the token.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import Type from 'typebox';
import type { Config } from '../../config/env.ts';
import type { LocationRegistry } from '../../connectors/registry.ts';
import type { Db } from '../../store/db.ts';
import { type ClientToken, readClientToken } from '../../security/client-token.ts';
import { captureExternalContext, origin } from '../envelope.ts';
import { errorResponses } from '../schemas.ts';
import { outboundPolicy } from '../../connectors/http/address-policy.ts';
import { assertCallbackReachable } from './client-token.ts';
import { idempotencyOf, startGenerateAsync, type WorkflowStarter } from '../temporal.ts';
import { GenerateBody, generateInput, IdempotencyHeaders } from './generate.ts';

const HEADER = 'x-client-authorization';

export default async function generateAsyncRoutes(app: FastifyInstance, opts: { temporal: WorkflowStarter; db: Db; config: Config; locations: LocationRegistry }) {
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
      schema: {
        tags: ['Generation'],
        summary: 'Generate a document asynchronously',
        description: [
          'Same body and validation as the synchronous operation. Requires `X-Client-Authorization` (from `POST /common/client/token`): absent, undecryptable (400 X_CLIENT_AUTH_ERROR), unsigned, wrongly signed or expired (401), missing claims (400), a callback target the service cannot reach (a loopback, private, link-local or metadata address, or a name resolving to one or to nothing, unless OUTBOUND_ALLOW lists it: 400 X_CLIENT_AUTH_ERROR).',
          'Answers 201 with an empty body once queued. The result is then POSTed to iss joined with dest with `Authorization: Bearer <sub>`: the synchronous 201 body on success, the error envelope on failure (no result, no consumption), externalContext echoed.',
          'Each delivery carries Standard Webhooks headers (`webhook-id` stable across retries, `webhook-timestamp`, `webhook-signature` verifiable with the `webhookSecret` of the token response). Failed deliveries are retried on the CALLBACK_RETRY_SCHEDULE (default immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h), never sooner than a Retry-After; a 3xx counts as a failure and is not followed; 410 and other 4xx except 408 and 429 stop the retries.',
        ].join('\n\n'),
        headers: Type.Object({
          'x-client-authorization': Type.Optional(Type.String({ description: 'Client-authorization token from POST /common/client/token (required)' })),
          ...IdempotencyHeaders.properties,
        }),
        body: GenerateBody,
        response: {
          201: Type.Null({ description: 'Queued; the result follows as a callback. Empty body.' }),
          ...errorResponses(400, 401, 409),
        },
      },
    },
    async (request, reply) => {
      const input = await generateInput(request, opts.db, opts.locations);
      const client = tokens.get(request);
      if (!client) throw new Error('client token was not read');
      // The fingerprint covers the body and the callback target, not the token's timing claims, so a
      // retry with a freshly minted token for the same callback is still the same request.
      const idem = idempotencyOf(request.headers, { body: request.body, callback: client.token.callbackUrl });
      await startGenerateAsync(opts.temporal, {
        generate: input,
        envelope: { origin: origin(request), ...(request.ctx.externalContext !== undefined ? { externalContext: request.ctx.externalContext } : {}) },
        callback: {
          subscriptionId: input.run.subscriptionId,
          url: client.token.callbackUrl,
          clientToken: client.value,
          webhookId: `msg_${input.run.operationId}`,
          scheduleMs: opts.config.callbackRetryScheduleMs,
          outbound: { timeoutMs: opts.config.callbackTimeoutMs },
        },
      }, idem);
      return reply.code(201).send();
    },
  );
}
