// POST /documents/document/manage (spec 4.8): copy, move, convert and delete of a delivered document,
// chosen by the payload exactly as the spec's table says. Everything checkable is checked before the
// manageDocument workflow starts. Unlike every other operation, manage answers its statusCode as a string
// and its error carries `externalErrors` (api/schemas/generation.ts).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { LOCATION_CATALOG, type LocationRegistry, problemCode } from '../../connectors/registry.ts';
import { ApiError } from '../../core/errors.ts';
import { type ManageInput, type ManageRequest, parseManageRequest } from '../../core/manage.ts';
import type { Db } from '../../store/db.ts';
import { readClientToken } from '../../security/client-token.ts';
import { readServiceToken, type ServiceToken } from '../../security/service-token.ts';
import { captureExternalContext, metered } from '../envelope.ts';
import { manageDocument } from '../schemas/generation.ts';
import { idempotencyOf, runManage, type WorkflowStarter } from '../temporal.ts';
import { runContext } from './generate.ts';

const EMAIL = /^[^\s@<>(),;:"]+@[^\s@<>(),;:"]+\.[^\s@<>(),;:"]+$/;

/** The validated optional headers of one request (spec 5.2). */
const manageHeaders = new WeakMap<FastifyRequest, { service?: ServiceToken; email?: string }>();

function header(request: FastifyRequest, name: string): string | undefined {
  const raw = request.headers[name];
  return Array.isArray(raw) ? raw[0] : raw;
}

/** Spec 4.8 table -> the operation and its target, or every problem with the payload (core/manage.ts); then
 *  what the locations cannot do for this subscription. Throws the 400 the caller gets: nothing is queued. */
export async function manageInput(
  request: FastifyRequest,
  body: ManageRequest,
  locations: LocationRegistry,
  headers: { service?: ServiceToken; email?: string } = {},
): Promise<ManageInput> {
  const { input, needs, problems } = parseManageRequest(body, LOCATION_CATALOG);
  if (problems.length > 0) throw new ApiError('VALIDATION_ERROR', problems.map((p) => p.message).join('; '), problems);
  const { problems: unsupported, connections } = await locations.check(request.auth.subscriptionId, needs);
  if (unsupported.length > 0) throw new ApiError(problemCode(unsupported), unsupported.map((p) => p.message).join('; '), unsupported);
  const service = headers.service;
  const who = {
    operationId: request.ctx.operationId,
    subscriptionId: request.auth.subscriptionId,
    userId: service ? service.claims.sub : request.auth.userId,
  };
  return {
    run: runContext(who, needs, connections),
    ...(service
      ? { serviceUser: { email: service.claims.email, ...(service.claims.full_name ? { fullName: service.claims.full_name } : {}) } }
      : {}),
    ...(headers.email ? { initiatorEmail: headers.email } : {}),
    ...input,
  };
}

/** An error envelope as manage answers it: statusCode as a string, externalErrors always present. */
function asManageError(payload: unknown): unknown {
  if (!payload || typeof payload !== 'object' || !('error' in payload)) return payload;
  const { error } = payload;
  if (!error || typeof error !== 'object') return payload;
  const e: { statusCode?: unknown; message?: unknown; innerErrors?: unknown; externalErrors?: unknown } = error;
  return {
    ...payload,
    error: {
      statusCode: String(e.statusCode),
      message: e.message,
      innerErrors: e.innerErrors ?? [],
      externalErrors: e.externalErrors ?? [],
    },
  };
}

const manageRoutes: FastifyPluginAsyncTypebox<{ temporal: WorkflowStarter; db: Db; locations: LocationRegistry }> = async (app, opts) => {
  // Manage's error envelope: statusCode as a string, plus externalErrors (spec 2.1). Applies to every
  // failure of this route, including authentication and schema validation.
  app.addHook('preSerialization', async (_request, _reply, payload: unknown) => asManageError(payload));
  app.post(
    '/documents/document/manage',
    {
      preValidation: async (request) => {
        captureExternalContext(request);
        // Optional here (spec 5.2), but a value that is sent must be valid: the 5.3 table applies, so a
        // stale or foreign token is refused rather than silently ignored.
        const value = header(request, 'x-client-authorization');
        if (value !== undefined && value.trim() !== '')
          await readClientToken(opts.db, value, { subscriptionId: request.auth.subscriptionId });
        // Spec 5.2: a user without an account at the identity provider, vouched for by the service's own
        // token; the same failure table as the client token.
        const service = header(request, 'x-service-authorization');
        if (service !== undefined && service.trim() !== '') {
          manageHeaders.set(request, {
            service: await readServiceToken(opts.db, service, { subscriptionId: request.auth.subscriptionId }),
          });
        }
        const email = header(request, 'x-email')?.trim();
        if (email) {
          if (email.length > 320 || !EMAIL.test(email))
            throw new ApiError('VALIDATION_ERROR', 'the X-Email header must be an e-mail address (name@domain)');
          manageHeaders.set(request, { ...manageHeaders.get(request), email });
        }
      },
      schema: manageDocument,
    },
    async (request, reply) => {
      const input = await manageInput(request, request.body, opts.locations, manageHeaders.get(request));
      const result = await runManage(opts.temporal, input, idempotencyOf(request.headers, request.body));
      const body = metered(request, { document: { ...result.document, documentGuid: result.documentGuid } }, result.consumption);
      return reply.code(201).send({ ...body, result: { ...body.result, statusCode: '201' } });
    },
  );
};

export default manageRoutes;
