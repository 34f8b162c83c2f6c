// POST /common/client/token (spec 5.3): the caller's callback claims, validated, signed and encrypted by the
// service into the value of the X-Client-Authorization header. iat and exp are the service's. The response
// also carries, as an extension, the Standard Webhooks secret with which the callbacks of this token are
// signed (see security/webhooks.ts for how a receiver verifies them).
import type { FastifyInstance } from 'fastify';
import Type from 'typebox';
import type { Config } from '../../config/env.ts';
import { ApiError } from '../../core/errors.ts';
import type { Db } from '../../store/db.ts';
import { type OutboundPolicy, outboundPolicy } from '../../connectors/http/address-policy.ts';
import { checkOutboundTarget } from '../../connectors/http/safe-fetch.ts';
import { callbackUrl, type ClientClaims, createClientToken } from '../../security/client-token.ts';
import { createServiceToken, type ServiceClaims } from '../../security/service-token.ts';
import { success } from '../envelope.ts';
import { errorResponses, successEnvelope } from '../schemas.ts';

const claim = (description: string) => Type.String({ minLength: 1, maxLength: 4096, description });

export const ClientTokenResult = Type.Object({
  token: Type.String({ description: 'Value for the X-Client-Authorization header' }),
  webhookSecret: Type.String({ description: 'Extension: Standard Webhooks secret of the callbacks' }),
  expiresAt: Type.String({ format: 'date-time', description: 'Extension: when the token stops being accepted by new requests' }),
});

export const ServiceTokenResult = Type.Object({
  token: Type.String({ description: 'Value for the X-Service-Authorization header of manage' }),
  expiresAt: Type.String({ format: 'date-time', description: 'When the token stops being accepted' }),
});

export const ServiceClaimsBody = Type.Object(
  {
    sub: Type.String({
      format: 'uuid',
      description:
        "The user's id in this subscription (a UUID): recorded as the owner of what the user's manage requests write. A new UUID becomes a user of the subscription with its first token; another subscription's user id or the nil UUID is a 400",
    }),
    email: claim("The user's e-mail address (name@domain, as the X-Email header of manage)"),
    full_name: Type.Optional(claim("The user's name")),
  },
  { additionalProperties: false, description: 'Timing claims (iat, exp) are set by the service and cannot be sent.' },
);

export const ClientClaimsBody = Type.Object(
  {
    sub: claim('Access token the service presents to the callback endpoint (Authorization: Bearer <sub>)'),
    iss: claim('Base URL of the callback service (http or https)'),
    dest: claim('Route of the callback endpoint; the callback URL is iss joined with dest'),
    oid: Type.Optional(claim('Identifier of the callback service')),
    client_id: Type.Optional(claim('Identifier of the calling client')),
    full_name: Type.Optional(claim("Caller's name")),
    email: Type.Optional(claim("Caller's e-mail address")),
    locale: Type.Optional(claim("Caller's locale")),
    zoneinfo: Type.Optional(claim("Caller's time zone")),
  },
  { additionalProperties: false, description: 'Timing claims (iat, exp) are set by the service and cannot be sent.' },
);

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
    throw new ApiError('X_CLIENT_AUTH_ERROR', `the callback target (iss joined with dest) cannot be called back: ${(err as Error).message}`);
  }
}

export default async function clientTokenRoutes(app: FastifyInstance, opts: { db: Db; config: Config }) {
  const policy = outboundPolicy(opts.config.outboundAllow);
  app.post(
    '/common/client/token',
    {
      schema: {
        tags: ['Common'],
        summary: 'Create the client-authorization token',
        description: [
          'Validates the claims, signs them (JWS ES256 with the service key) and encrypts the result (JWE dir + A256GCM), returning the value to send in the `X-Client-Authorization` header of `POST /documents/document/generate/async`.',
          'The callback of an async generate is a POST to iss joined with dest, with `Authorization: Bearer <sub>` and the Standard Webhooks headers `webhook-id` (stable across retries: deduplicate on it), `webhook-timestamp` and `webhook-signature`.',
          'The callback target must be reachable by the service: a loopback, private, link-local or cloud-metadata address, or a name that resolves to one or to nothing, is refused with 400 X_CLIENT_AUTH_ERROR unless the OUTBOUND_ALLOW setting lists it (the same rule applies when an async generate is requested and when the callback is delivered).',
          'Extension: `webhookSecret` (`whsec_<base64 key>`) verifies those signatures: `webhook-signature` is `v1,` followed by base64(HMAC-SHA256(base64-decoded key, "<webhook-id>.<webhook-timestamp>.<raw body>")); any Standard Webhooks library does this. The secret is the same for every token of the subscription (until the service key rotates).',
        ].join('\n\n'),
        body: ClientClaimsBody,
        response: {
          200: successEnvelope(ClientTokenResult),
          ...errorResponses(400, 401),
        },
      },
    },
    async (request) => {
      const claims = request.body as ClientClaims;
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
      schema: {
        tags: ['Common'],
        summary: 'Create a service-authorization token (extension)',
        description: [
          'Extension (spec 5.2 names the header, not how its value is made). For a user who has no account at the identity provider but may use the subscription: the subscription\'s backend vouches for the user with this token and sends it in the `X-Service-Authorization` header of `POST /documents/document/manage`; the user (sub) then acts: owner of the document record, metered user, user in the workflow summary.',
          'The user (sub) is a user of the subscription: the first token made for a new UUID registers it (a user without an API key or bearer token of its own), later tokens name the same user. The id of another subscription\'s user and the nil UUID answer 400 VALIDATION_ERROR naming sub; an email that is not an e-mail address, 400 naming email. A manage whose token names a user the subscription does not know answers 401.',
          'Format: the claims (sub, email, full_name, sid = the subscription, iat, exp) signed as a JWS (ES256, typ `docgen-service+jwt`, the service signing key) inside a JWE (`dir` + `A256GCM`, kid = the signing key) whose key is derived from the service key under a label of its own. Lifetime: CLIENT_TOKEN_TTL_SECONDS.',
        ].join('\n\n'),
        body: ServiceClaimsBody,
        response: {
          200: successEnvelope(ServiceTokenResult),
          ...errorResponses(400, 401),
        },
      },
    },
    async (request) => {
      const made = await createServiceToken(opts.db, request.auth.subscriptionId, request.body as ServiceClaims, opts.config.clientTokenTtlSeconds);
      return success(request, 200, { token: made.token, expiresAt: made.expiresAt.toISOString() });
    },
  );
}
