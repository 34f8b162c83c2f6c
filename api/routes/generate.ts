// POST /documents/document/generate (spec 4.8, synchronous). Everything checkable is checked before a
// workflow starts; the workflow then resolves, merges, delivers and records. The schema and its prose are
// in api/schemas/generation.ts.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../../core/errors.ts';
import { type GenerateInput, type GenerateRequest, parseGenerateRequest } from '../../core/generate.ts';
import { type LocationNeed, remoteMethods } from '../../core/locations.ts';
import type { RunContext } from '../../core/run.ts';
import { LOCATION_CATALOG, type LocationRegistry, problemCode } from '../../connectors/registry.ts';
import type { Db } from '../../store/db.ts';
import { sealHeaderVariables } from '../../security/sealed.ts';
import { sealTemplateUrl } from '../../connectors/url/location.ts';
import { generatedData } from '../../core/envelope.ts';
import { captureExternalContext, metered } from '../envelope.ts';
import { generateDocument } from '../schemas/generation.ts';
import { idempotencyOf, runGenerate, type WorkflowStarter } from '../temporal.ts';

/** The checks every generate request gets before anything is queued (sync and async): the request's rules
 *  (core/generate.ts), then what the subscription's locations can do. Throws the 400 the caller gets:
 *  nothing queued, nothing consumed. Returns the workflow input. */
export async function generateInput(
  request: FastifyRequest,
  body: GenerateRequest,
  db: Db,
  locations: LocationRegistry,
): Promise<GenerateInput> {
  const { input, needs, problems } = parseGenerateRequest(body, LOCATION_CATALOG);
  if (problems.length > 0) {
    throw new ApiError(
      problems[0]?.code === 'TEMPLATE_NOT_FOUND' ? 'TEMPLATE_NOT_FOUND' : 'VALIDATION_ERROR',
      problems.map((p) => p.message).join('; '),
      problems,
    );
  }
  const { subscriptionId, userId } = request.auth;
  const { problems: unavailable, connections } = await locations.check(subscriptionId, needs);
  if (unavailable.length > 0) throw new ApiError(problemCode(unavailable), unavailable.map((p) => p.message).join('; '), unavailable);
  return {
    run: runContext({ operationId: request.ctx.operationId, subscriptionId, userId }, needs, connections),
    ...input,
    ...(await sealed(db, subscriptionId, input)),
  };
}

/** A checked request's template and data as the workflow may hold them (generate and batch): template.url
 *  may itself be a credential (a presigned URL), so the workflow gets its display form and the URL sealed;
 *  credentials for the data endpoint (GraphQL header variables) are sealed too. No history shows either. */
export async function sealed<I extends Pick<GenerateInput, 'template' | 'data'>>(
  db: Db,
  subscriptionId: string,
  input: I,
): Promise<Pick<I, 'template' | 'data'>> {
  const { variables } = input.data;
  return {
    template: { ...input.template, ...(input.template.url ? await sealTemplateUrl(db, subscriptionId, input.template.url) : {}) },
    data: { ...input.data, ...(variables ? { variables: await sealHeaderVariables(db, subscriptionId, variables) } : {}) },
  };
}

/** The run of a checked request: who asks, the connections its locations use, and which of them are remote
 *  transfers (each location's registered answer). */
export function runContext(
  who: Pick<RunContext, 'operationId' | 'subscriptionId' | 'userId'>,
  needs: LocationNeed[],
  connections: Record<string, string>,
): RunContext {
  const remote = remoteMethods(
    LOCATION_CATALOG,
    needs.map((n) => n.method),
  );
  return { ...who, ...(Object.keys(connections).length > 0 ? { connections } : {}), ...(remote.length > 0 ? { remote } : {}) };
}

const generateRoutes: FastifyPluginAsyncTypebox<{ temporal: WorkflowStarter; db: Db; locations: LocationRegistry }> = async (app, opts) => {
  app.post(
    '/documents/document/generate',
    { preValidation: async (request) => captureExternalContext(request), schema: generateDocument },
    async (request, reply) => {
      const input = await generateInput(request, request.body, opts.db, opts.locations);
      const result = await runGenerate(opts.temporal, input, idempotencyOf(request.headers, request.body));
      return reply.code(201).send(metered(request, generatedData(result), result.consumption));
    },
  );
};

export default generateRoutes;
