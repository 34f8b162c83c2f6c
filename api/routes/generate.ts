// POST /documents/document/generate (spec 4.8, synchronous). Everything checkable is checked before a
// workflow starts; the workflow then resolves, merges, delivers and records.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import Type from 'typebox';
import { ApiError, type InnerError, innerError } from '../../core/errors.ts';
import { isOfficeFormat } from '../../core/formats.ts';
import {
  checkGenerateRules,
  type DriveDelivery,
  driveOptionsKey,
  nativeMergeOf,
  type GenerateInput,
  type GenerateRequest,
  LINK_FIELDS,
  parseDriveOptions,
  parseSaveOptions,
  type RelatedTemplate,
} from '../../core/generate.ts';
import { type LocationNeed, type LocationRegistry, problemCode } from '../../connectors/registry.ts';
import type { Db } from '../../store/db.ts';
import { sealHeaderVariables } from '../../security/sealed.ts';
import { sealTemplateUrl } from '../../connectors/url/location.ts';
import { captureExternalContext, success } from '../envelope.ts';
import { errorResponses, ExternalContext, successEnvelope } from '../schemas.ts';
import { idempotencyOf, runGenerate, type WorkflowStarter } from '../temporal.ts';

const JsonObject = Type.Object({}, { additionalProperties: true });

/** The optional Idempotency-Key header of generate, async generate and manage. */
export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      description:
        'Optional, 1 to 255 visible ASCII characters, scoped to the subscription. A retry with the same key and the same body gets the outcome of the first request (one document, one callback), also after that request finished; the same key with a different body answers 409 IDEMPOTENCY_KEY_REUSED. Keys are remembered as long as Temporal keeps the run (the namespace retention period).',
    }),
  ),
});

export const GenerateBody = Type.Object({
  template: Type.Object({
    urn: Type.Optional(Type.String({ description: 'With loadMethod: an uploaded template (Storage), a DriveA item id (or driveId!itemId, root:/path:), a DriveB file id' })),
    loadMethod: Type.Optional(Type.String({ description: 'Storage, DriveA or DriveB' })),
    url: Type.Optional(Type.String({ description: 'Alternative to urn + loadMethod' })),
    name: Type.Optional(Type.String()),
    fileFormat: Type.String({ description: 'docx, xlsx, pptx, gdoc, gsheet, gslide' }),
    options: Type.Optional(JsonObject),
    relatedItems: Type.Optional(
      Type.Array(
        Type.Object({
          name: Type.String(),
          urn: Type.Optional(Type.String()),
          fileFormat: Type.Optional(Type.String()),
          loadMethod: Type.Optional(Type.String()),
          options: Type.Optional(Type.Unknown()),
        }),
      ),
    ),
  }),
  data: Type.Object({
    loadMethod: Type.String({ description: 'Storage (uploaded JSON file), GraphQL, DriveA (a JSON file) or DriveB (a JSON file, or a Google Sheet read as rows)' }),
    urn: Type.String({ description: 'Id of an uploaded data file, the GraphQL endpoint, or the file at the drive (DriveA item id / driveId!itemId / root:/path:, DriveB file id)' }),
    variables: Type.Optional(Type.Array(Type.Object({ name: Type.String(), value: Type.Unknown(), type: Type.String() }))),
    query: Type.Optional(Type.String()),
    embedded: Type.Optional(Type.String({ description: 'JSON text of an object written to the output file properties' })),
  }),
  document: Type.Object({
    timezone: Type.String({ description: 'IANA time zone, e.g. Europe/Paris' }),
    locale: Type.String({ description: 'BCP 47 locale, e.g. en-US' }),
    name: Type.String({ minLength: 1 }),
    fileFormat: Type.String({ description: 'docx, xlsx, pptx, gdoc, gsheet, gslide, pdf, csv' }),
    deliveryMethod: Type.String({ description: 'Storage, DriveA or DriveB' }),
    path: Type.String({ description: "'root' or 'root/<folder>' for Storage; '' or a folder for the drives" }),
    options: Type.Optional(JsonObject),
  }),
  externalContext: Type.Optional(ExternalContext),
});

export const GeneratedDocument = Type.Object({
  deliveryMethod: Type.String(),
  name: Type.String(),
  fileFormat: Type.String(),
  urn: Type.String({ description: 'Storage: download with GET /documents/storage/{urn}/content. DriveA: the driveItem id. DriveB: the file id.' }),
  uri: Type.Optional(Type.String({ description: 'Drive deliveries: where the file opens (the drive item web URL)' })),
  ...Object.fromEntries(LINK_FIELDS.map((f) => [f, Type.Optional(Type.String({ description: 'Drive deliveries: a sharing link made for the file (document.options.driveA / driveB)' }))])),
  documentGuid: Type.String({ format: 'uuid', description: 'Extension: the document record of this file' }),
});

/** What a generate request asks of the locations: read the template (and its related items) and the data
 *  file, write the document, share it when the delivery's sharing options ask. */
export function generateNeeds(body: GenerateRequest, delivery: DriveDelivery): LocationNeed[] {
  const needs: LocationNeed[] = [];
  const t = body.template;
  if (t.url) needs.push({ method: 'url', capability: 'readTemplate', field: 'template.url' });
  else needs.push({ method: t.loadMethod ?? '', capability: 'readTemplate', field: 'template.loadMethod', fileFormat: t.fileFormat });
  for (const [i, item] of (t.relatedItems ?? []).entries()) {
    const method = item.loadMethod ?? t.loadMethod;
    if (method) needs.push({ method, capability: 'readTemplate', field: `template.relatedItems[${i}].loadMethod`, fileFormat: item.fileFormat ?? t.fileFormat });
  }
  if (body.data.loadMethod !== 'GraphQL') needs.push({ method: body.data.loadMethod, capability: 'readData', field: 'data.loadMethod' });
  const d = body.document;
  needs.push({ method: d.deliveryMethod, capability: 'write', field: 'document.deliveryMethod', fileFormat: d.fileFormat, target: { name: d.name, path: d.path, field: 'document' } });
  // Only the sharing options of the delivery's own drive are read (spec 4.8); Storage has none.
  const key = driveOptionsKey(d.deliveryMethod);
  if (key && delivery.sharing) needs.push({ method: d.deliveryMethod, capability: 'share', field: `document.options.${key}` });
  return needs;
}

/** The checks every generate request gets before anything is queued (sync and async), and the workflow
 *  input built from a valid request. Throws the 400 the caller gets: nothing queued, nothing consumed. */
export async function generateInput(request: FastifyRequest, db: Db, locations: LocationRegistry): Promise<GenerateInput> {
  const body = request.body as GenerateRequest;
  const problems = checkGenerateRules(body);
  const key = driveOptionsKey(body.document.deliveryMethod);
  const drive = key ? parseDriveOptions(body.document.options?.[key], `document.options.${key}`) : { delivery: {}, errors: [] };
  problems.push(...drive.errors);
  const related = relatedTemplates(body, problems);
  if (problems.length > 0) {
    throw new ApiError(problems[0]?.code === 'TEMPLATE_NOT_FOUND' ? 'TEMPLATE_NOT_FOUND' : 'VALIDATION_ERROR', problems.map((p) => p.message).join('; '), problems);
  }
  const { problems: unavailable, connections } = await locations.check(request.auth.subscriptionId, generateNeeds(body, drive.delivery));
  if (unavailable.length > 0) throw new ApiError(problemCode(unavailable), unavailable.map((p) => p.message).join('; '), unavailable);
  return {
    operationId: request.ctx.operationId,
    subscriptionId: request.auth.subscriptionId,
    userId: request.auth.userId,
    template: {
      urn: body.template.urn ?? '',
      loadMethod: body.template.loadMethod ?? '',
      fileFormat: body.template.fileFormat,
      ...(body.template.name ? { name: body.template.name } : {}),
      ...(body.template.url ? await sealTemplateUrl(db, request.auth.subscriptionId, body.template.url) : {}),
      ...(related.length > 0 ? { relatedItems: related } : {}),
    },
    data: {
      urn: body.data.urn,
      loadMethod: body.data.loadMethod,
      // Credentials for the data endpoint are sealed here, so the workflow history never shows them.
      ...(body.data.variables ? { variables: await sealHeaderVariables(db, request.auth.subscriptionId, body.data.variables) } : {}),
      ...(body.data.query ? { query: body.data.query } : {}),
      ...(body.data.embedded ? { embedded: body.data.embedded } : {}),
    },
    document: {
      name: body.document.name,
      fileFormat: body.document.fileFormat,
      deliveryMethod: body.document.deliveryMethod,
      path: body.document.path,
      locale: body.document.locale,
      timezone: body.document.timezone,
      saveOptions: parseSaveOptions(body.document).options,
      ...drive.delivery,
      ...(nativeMergeOf(body).merge ? { nativeMerge: nativeMergeOf(body).merge! } : {}),
    },
    ...(Object.keys(connections).length > 0 ? { connections } : {}),
  };
}

/** template.relatedItems as the workflow reads them: each a name, a urn and a location (default: the main
 *  template's), in a format the include directive can use. Problems are added to `problems`. */
function relatedTemplates(body: GenerateRequest, problems: InnerError[]): RelatedTemplate[] {
  const out: RelatedTemplate[] = [];
  const names = new Set<string>();
  for (const [i, item] of (body.template.relatedItems ?? []).entries()) {
    const field = `template.relatedItems[${i}]`;
    const name = item.name.trim();
    if (name === '') problems.push(innerError('VALIDATION_ERROR', `${field}.name is required (the name the include directive uses)`));
    else if (names.has(name)) problems.push(innerError('VALIDATION_ERROR', `${field}.name ${JSON.stringify(name)} is given twice`));
    names.add(name);
    if (!item.urn) problems.push(innerError('VALIDATION_ERROR', `${field}.urn is required`));
    const loadMethod = item.loadMethod ?? body.template.loadMethod ?? '';
    if (!item.loadMethod && !body.template.loadMethod) problems.push(innerError('VALIDATION_ERROR', `${field}.loadMethod is required`));
    const fileFormat = item.fileFormat ?? body.template.fileFormat;
    if (!isOfficeFormat(fileFormat)) problems.push(innerError('VALIDATION_ERROR', `${field}.fileFormat must be docx, xlsx or pptx`));
    out.push({ name, urn: item.urn ?? '', loadMethod, fileFormat });
  }
  return out;
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
