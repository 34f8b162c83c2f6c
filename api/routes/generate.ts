// POST /documents/document/generate (spec 4.8, synchronous). Everything checkable is checked before a
// workflow starts; the workflow then resolves, merges, delivers and records.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import Type from 'typebox';
import { ApiError } from '../../core/errors.ts';
import { type GenerateInput, type GenerateRequest, generateRequestSchema, parseGenerateRequest } from '../../core/generate.ts';
import { entryOf, LINK_FIELDS, type LocationNeed, methodsFor } from '../../core/locations.ts';
import type { RunContext } from '../../core/run.ts';
import { LOCATION_CATALOG, type LocationRegistry, problemCode } from '../../connectors/registry.ts';
import type { Db } from '../../store/db.ts';
import { sealHeaderVariables } from '../../security/sealed.ts';
import { sealTemplateUrl } from '../../connectors/url/location.ts';
import { captureExternalContext, success } from '../envelope.ts';
import { errorResponses, ExternalContext, successEnvelope } from '../schemas.ts';
import { idempotencyOf, runGenerate, type WorkflowStarter } from '../temporal.ts';

/** The optional Idempotency-Key header of generate, async generate and manage. */
export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      description:
        'Optional, 1 to 255 visible ASCII characters, scoped to the subscription. A retry with the same key and the same body gets the outcome of the first request (one document, one callback), also after that request finished; the same key with a different body answers 409 IDEMPOTENCY_KEY_REUSED. Keys are remembered as long as Temporal keeps the run (the namespace retention period).',
    }),
  ),
});

const generateSchema = generateRequestSchema({
  template: methodsFor(LOCATION_CATALOG, 'generate', 'readTemplate'),
  data: [...methodsFor(LOCATION_CATALOG, 'generate', 'readData'), 'GraphQL'],
  delivery: methodsFor(LOCATION_CATALOG, 'generate', 'write'),
});

/** The body of generate and async generate (core/generate.ts), with externalContext. */
export const GenerateBody = Type.Object({ ...generateSchema.properties, externalContext: Type.Optional(ExternalContext) });

export const GeneratedDocument = Type.Object({
  deliveryMethod: Type.String(),
  name: Type.String(),
  fileFormat: Type.String(),
  urn: Type.String({ description: 'Storage: download with GET /documents/storage/{urn}/content. DriveA: the driveItem id. DriveB: the file id.' }),
  uri: Type.Optional(Type.String({ description: 'Drive deliveries: where the file opens (the drive item web URL)' })),
  ...Object.fromEntries(LINK_FIELDS.map((f) => [f, Type.Optional(Type.String({ description: 'Drive deliveries: a sharing link made for the file (document.options.driveA / driveB)' }))])),
  documentGuid: Type.String({ format: 'uuid', description: 'Extension: the document record of this file' }),
});

/** The checks every generate request gets before anything is queued (sync and async): the request's rules
 *  (core/generate.ts), then what the subscription's locations can do. Throws the 400 the caller gets:
 *  nothing queued, nothing consumed. Returns the workflow input. */
export async function generateInput(request: FastifyRequest, db: Db, locations: LocationRegistry): Promise<GenerateInput> {
  const { input, needs, problems } = parseGenerateRequest(request.body as GenerateRequest, LOCATION_CATALOG);
  if (problems.length > 0) {
    throw new ApiError(problems[0]?.code === 'TEMPLATE_NOT_FOUND' ? 'TEMPLATE_NOT_FOUND' : 'VALIDATION_ERROR', problems.map((p) => p.message).join('; '), problems);
  }
  const { subscriptionId, userId } = request.auth;
  const { problems: unavailable, connections } = await locations.check(subscriptionId, needs);
  if (unavailable.length > 0) throw new ApiError(problemCode(unavailable), unavailable.map((p) => p.message).join('; '), unavailable);
  const { variables } = input.data;
  return {
    run: runContext({ operationId: request.ctx.operationId, subscriptionId, userId }, needs, connections),
    ...input,
    // template.url may itself be a credential (a presigned URL): the workflow gets its display form and the URL sealed.
    template: { ...input.template, ...(input.template.url ? await sealTemplateUrl(db, subscriptionId, input.template.url) : {}) },
    // Credentials for the data endpoint are sealed here, so the workflow history never shows them.
    data: { ...input.data, ...(variables ? { variables: await sealHeaderVariables(db, subscriptionId, variables) } : {}) },
  };
}

/** The run of a checked request: who asks, the connections its locations use, and which of them are remote
 *  transfers (each location's registered answer). */
export function runContext(who: Pick<RunContext, 'operationId' | 'subscriptionId' | 'userId'>, needs: LocationNeed[], connections: Record<string, string>): RunContext {
  const remote = [...new Set(needs.map((n) => n.method))].filter((m) => entryOf(LOCATION_CATALOG, m)?.transfer === 'remote');
  return { ...who, ...(Object.keys(connections).length > 0 ? { connections } : {}), ...(remote.length > 0 ? { remote } : {}) };
}

export default async function generateRoutes(app: FastifyInstance, opts: { temporal: WorkflowStarter; db: Db; locations: LocationRegistry }) {
  app.post(
    '/documents/document/generate',
    {
      preValidation: async (request) => captureExternalContext(request),
      schema: {
        tags: ['Generation'],
        summary: 'Generate a document synchronously',
        description:
          'Merges the template with the data, converts if asked, delivers the file and answers 201 with the document. A failure answers 400 with the reason in error.innerErrors (TEMPLATE_NOT_FOUND, DATA_NOT_FOUND, TEMPLATE_ERROR, TEMPLATE_TOO_COMPLEX when a template limit, MERGE_MAX_MEMORY_MB or MERGE_TIMEOUT_MS is exceeded, VALIDATION_ERROR, NOT_SUPPORTED) and nothing is written to the target.',
        headers: IdempotencyHeaders,
        body: GenerateBody,
        response: {
          201: successEnvelope(Type.Object({ document: GeneratedDocument }), { consumption: true }),
          ...errorResponses(400, 401, 409, 504),
        },
      },
    },
    async (request, reply) => {
      const input = await generateInput(request, opts.db, opts.locations);
      const result = await runGenerate(opts.temporal, input, idempotencyOf(request.headers, request.body));
      return reply
        .code(201)
        .send(success(request, 201, { document: { ...result.document, documentGuid: result.documentGuid } }, { consumption: result.consumption }));
    },
  );
}
