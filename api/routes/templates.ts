// Document template records (spec 2.3, 4.4): create with rules 1-5, soft delete, and the update, get
// and list extensions. Upload lives in uploads.ts.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import Type from 'typebox';
import { ApiError } from '../../core/errors.ts';
import { TEMPLATE_FORMATS } from '../../core/formats.ts';
import { methodsFor } from '../../core/locations.ts';
import { LOCATION_CATALOG } from '../../connectors/registry.ts';
import type { Db } from '../../store/db.ts';
import { isUuid } from '../../store/files.ts';
import { findSolutions } from '../../store/records/solutions.ts';
import { createTemplate, deleteTemplate, getTemplate, listTemplates, TEMPLATE_COLUMNS, type TemplateInput, updateTemplate } from '../../store/records/templates.ts';
import { captureExternalContext, success } from '../envelope.ts';
import { listDescription, ListQuerystring, parseList, requireName, unexpectedAs, UuidParam } from '../lists.ts';
import { errorResponses, ExternalContext, successEnvelope } from '../schemas.ts';
import { SolutionRef } from './solutions.ts';

const TAG = 'Document template';
/** Where a template may be loaded from (spec 4.4: as generate's template.loadMethod). */
const LOAD_METHODS = methodsFor(LOCATION_CATALOG, 'generate', 'readTemplate');

const SolutionIds = Type.Array(Type.Object({ id: Type.String() }, { description: 'Only id is read' }), {
  maxItems: 100,
  description: 'Document solutions to link, best-effort: ids that name no live solution of the caller are skipped, not an error',
});

export const TemplateBody = Type.Object({
  documentTemplate: Type.Object(
    {
      name: Type.Optional(Type.String({ description: 'Required; missing or blank gives 400 DATA_NAME_REQUIRED' })),
      description: Type.Optional(Type.String()),
      title: Type.Optional(Type.String()),
      urn: Type.Optional(Type.String({ description: 'Reference to the file, together with loadMethod (e.g. an uploaded template id for Storage)' })),
      url: Type.Optional(Type.String({ description: 'http(s) URL of the file, used alone' })),
      fileFormat: Type.Optional(Type.String({ description: TEMPLATE_FORMATS.join(', ') })),
      loadMethod: Type.Optional(Type.String({ description: LOAD_METHODS.join(', ') })),
      documentSolutions: Type.Optional(SolutionIds),
    },
    { description: 'Server-managed fields (id, ownership, path, timestamps) are ignored when sent' },
  ),
  externalContext: Type.Optional(ExternalContext),
});

export const Template = Type.Object({
  id: Type.String({ format: 'uuid' }),
  subscriptionId: Type.String({ format: 'uuid' }),
  ownerId: Type.String({ format: 'uuid' }),
  lastModifiedUserId: Type.String({ format: 'uuid' }),
  name: Type.String(),
  description: Type.String(),
  title: Type.String(),
  urn: Type.String(),
  url: Type.String(),
  fileFormat: Type.String(),
  loadMethod: Type.String(),
  path: Type.String({ description: 'Display only; always empty in this deployment (templates are not filed in folders)' }),
  documentSolutions: Type.Array(SolutionRef),
  ownerName: Type.String(),
  lastModifiedUserName: Type.String(),
  createdDate: Type.String({ format: 'date-time' }),
  lastModifiedDate: Type.String({ format: 'date-time' }),
});

const RULES = [
  'Rules: (1) point at the file with `urn` together with `loadMethod`, or with `url` alone, never both (400 VALIDATION_ERROR);',
  '(2) `fileFormat` must agree with `loadMethod`: gdoc, gsheet, gslide only with DriveB; docx, xlsx, pptx only with Storage or DriveA (400 VALIDATION_ERROR);',
  '(3) linking through `documentSolutions` is best-effort: unknown solutions are skipped and the response lists the linked ones;',
  '(4) ids, ownership, path and timestamps are server-assigned; sending them has no effect;',
  '(5) a Storage urn is not checked against uploads: an uploaded file stops resolving after its retention, and the record survives (update its urn after re-uploading).',
  '`name` is required (400 DATA_NAME_REQUIRED). loadMethod and fileFormat are matched case-insensitively and stored in their canonical spelling.',
].join(' ');

function canonical(value: string, allowed: readonly string[], field: string): string {
  const v = allowed.find((a) => a.toLowerCase() === value.trim().toLowerCase());
  if (!v) throw new ApiError('VALIDATION_ERROR', `documentTemplate.${field}: ${JSON.stringify(value.slice(0, 80))} must be one of ${allowed.join(', ')}`);
  return v;
}

type Body = { documentTemplate: Partial<Record<keyof TemplateInput, string>> & { documentSolutions?: { id: string }[] } };

function checkTemplate(t: Body['documentTemplate']): TemplateInput {
  const name = requireName(t.name, 'documentTemplate.');
  const urn = t.urn?.trim() ?? '';
  const url = t.url?.trim() ?? '';
  const loadMethodRaw = t.loadMethod?.trim() ?? '';
  if (url && (urn || loadMethodRaw)) {
    throw new ApiError('VALIDATION_ERROR', 'documentTemplate: give either urn with loadMethod, or url alone, not both');
  }
  if (!url && !(urn && loadMethodRaw)) {
    throw new ApiError(
      'VALIDATION_ERROR',
      urn ? 'documentTemplate.loadMethod is required with urn' : loadMethodRaw ? 'documentTemplate.urn is required with loadMethod' : 'documentTemplate: give urn with loadMethod, or url',
    );
  }
  if (url) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(url);
    } catch {
      parsed = undefined;
    }
    if (!parsed || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')) throw new ApiError('VALIDATION_ERROR', 'documentTemplate.url: must be an http or https URL');
  }
  const loadMethod = loadMethodRaw ? canonical(loadMethodRaw, LOAD_METHODS, 'loadMethod') : '';
  const fileFormat = t.fileFormat?.trim() ? canonical(t.fileFormat, TEMPLATE_FORMATS, 'fileFormat') : '';
  if (loadMethod && fileFormat) {
    // Spec 4.4 rule 2: the locations that hold this format as a template (the location catalog).
    const from = methodsFor(LOCATION_CATALOG, 'generate', 'readTemplate', fileFormat);
    if (!from.includes(loadMethod)) {
      throw new ApiError('VALIDATION_ERROR', `documentTemplate.fileFormat ${fileFormat} loads only with loadMethod ${from.join(' or ')}, not ${loadMethod}`);
    }
  }
  return { name, description: t.description ?? '', title: t.title ?? '', urn, url, fileFormat, loadMethod };
}

const solutionIdsOf = (t: Body['documentTemplate']) => (t.documentSolutions ?? []).map((s) => s.id.trim().toLowerCase()).filter(isUuid);

const Params = Type.Object({ documentTemplateGuid: UuidParam('The template') });
const one = successEnvelope(Type.Object({ documentTemplate: Template }));
const idOf = (request: FastifyRequest) => (request.params as { documentTemplateGuid: string }).documentTemplateGuid.toLowerCase();

export default async function templateRoutes(app: FastifyInstance, opts: { db: Db }) {
  const { db } = opts;
  app.post(
    '/documents/template/create',
    {
      errorHandler: unexpectedAs('CREATE_DOCUMENT_TEMPLATE_ERROR'),
      preValidation: async (request) => captureExternalContext(request),
      schema: {
        tags: [TAG],
        summary: 'Create a document template record',
        description: `Records a reference to an existing template file; the file itself is not uploaded here (see template upload). ${RULES} Answers 201 with result.data.documentTemplate and externalContext echoed. An unexpected failure gives 500 CREATE_DOCUMENT_TEMPLATE_ERROR.`,
        body: TemplateBody,
        response: { 201: one, ...errorResponses(400, 401, 500) },
      },
    },
    async (request, reply) => {
      const { documentTemplate: t } = request.body as Body;
      const input = checkTemplate(t);
      const { subscriptionId, userId } = request.auth;
      const created = await db.transaction(async (tx) => {
        const solutions = await findSolutions(tx, subscriptionId, solutionIdsOf(t));
        return createTemplate(tx, subscriptionId, userId, input, solutions.map((s) => s.id));
      });
      return reply.code(201).send(success(request, 201, { documentTemplate: created }));
    },
  );

  app.put(
    '/documents/template/:documentTemplateGuid/update',
    {
      errorHandler: unexpectedAs('GET_DATA_SOURCE_ERROR'),
      preValidation: async (request) => captureExternalContext(request),
      schema: {
        tags: [TAG],
        summary: 'Update a document template record (extension)',
        description: `Same body as create; it replaces the record's fields (fields left out become empty). \`documentSolutions\`, when sent, replaces the links (best-effort again); when left out the links stay. ${RULES} An unknown, deleted or other subscription's id gives 404 NOT_FOUND_BY_ID.`,
        params: Params,
        body: TemplateBody,
        response: { 200: one, ...errorResponses(400, 401, 404, 500) },
      },
    },
    async (request) => {
      const id = idOf(request);
      const { documentTemplate: t } = request.body as Body;
      const input = checkTemplate(t);
      const { subscriptionId, userId } = request.auth;
      const updated = await db.transaction(async (tx) => {
        const links = t.documentSolutions ? (await findSolutions(tx, subscriptionId, solutionIdsOf(t))).map((s) => s.id) : undefined;
        return updateTemplate(tx, subscriptionId, userId, id, input, links);
      });
      if (!updated) throw new ApiError('NOT_FOUND_BY_ID', `no document template ${id}`);
      return success(request, 200, { documentTemplate: updated });
    },
  );

  app.get(
    '/documents/template/:documentTemplateGuid/get',
    {
      errorHandler: unexpectedAs('GET_DATA_SOURCE_ERROR'),
      schema: {
        tags: [TAG],
        summary: 'Get a document template record (extension)',
        description: "An unknown, deleted or other subscription's id gives 404 NOT_FOUND_BY_ID; a non-uuid id gives 400 VALIDATION_ERROR.",
        params: Params,
        response: { 200: one, ...errorResponses(400, 401, 404, 500) },
      },
    },
    async (request) => {
      const id = idOf(request);
      const t = await getTemplate(db, request.auth.subscriptionId, id);
      if (!t) throw new ApiError('NOT_FOUND_BY_ID', `no document template ${id}`);
      return success(request, 200, { documentTemplate: t });
    },
  );

  app.get(
    '/documents/template/list',
    {
      errorHandler: unexpectedAs('GET_DATA_SOURCE_ERROR'),
      schema: {
        tags: [TAG],
        summary: 'List document template records (extension)',
        description: `${listDescription(TEMPLATE_COLUMNS)} Deleted templates are not listed.`,
        querystring: ListQuerystring,
        response: {
          200: successEnvelope(Type.Object({ documentTemplates: Type.Array(Template), rowCount: Type.Integer() })),
          ...errorResponses(400, 401, 500),
        },
      },
    },
    async (request) => {
      const r = await listTemplates(db, request.auth.subscriptionId, parseList(request.query as Record<string, never>, TEMPLATE_COLUMNS));
      return success(request, 200, { documentTemplates: r.rows, rowCount: r.rowCount });
    },
  );

  app.delete(
    '/documents/template/:documentTemplateGuid/delete',
    {
      errorHandler: unexpectedAs('GET_DATA_SOURCE_ERROR'),
      schema: {
        tags: [TAG],
        summary: 'Delete a document template record (soft delete)',
        description:
          "Marks the record deleted: it disappears from get and list, its links stop counting, and the file it points at is untouched. Deleting again, or an unknown or other subscription's id, gives 404 NOT_FOUND_BY_ID.",
        params: Params,
        response: {
          200: successEnvelope(Type.Object({ documentTemplateGuid: Type.String({ format: 'uuid' }), message: Type.String() })),
          ...errorResponses(400, 401, 404, 500),
        },
      },
    },
    async (request) => {
      const id = idOf(request);
      if (!(await deleteTemplate(db, request.auth.subscriptionId, request.auth.userId, id))) throw new ApiError('NOT_FOUND_BY_ID', `no document template ${id}`);
      return success(request, 200, { documentTemplateGuid: id, message: 'Document template deleted.' });
    },
  );
}
