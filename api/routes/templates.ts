// Document template records (spec 2.3, 4.4): create with rules 1-5, soft delete, and the update, get
// and list extensions. Upload lives in uploads.ts; the schemas and their prose in api/schemas/records.ts.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Static } from 'typebox';
import { ApiError } from '../../core/errors.ts';
import { TEMPLATE_FORMATS } from '../../core/formats.ts';
import { methodsFor } from '../../core/locations.ts';
import { LOCATION_CATALOG } from '../../connectors/registry.ts';
import type { Db } from '../../store/db.ts';
import { isUuid } from '../../store/files.ts';
import { findSolutions } from '../../store/records/solutions.ts';
import {
  createTemplate,
  deleteTemplate,
  getTemplate,
  listTemplates,
  TEMPLATE_COLUMNS,
  type TemplateInput,
  updateTemplate,
} from '../../store/records/templates.ts';
import { captureExternalContext, success } from '../envelope.ts';
import { parseList, requireName, unexpectedAs } from '../lists.ts';
import * as S from '../schemas/records.ts';

const LOAD_METHODS = S.TEMPLATE_LOAD_METHODS;

function canonical(value: string, allowed: readonly string[], field: string): string {
  const v = allowed.find((a) => a.toLowerCase() === value.trim().toLowerCase());
  if (!v)
    throw new ApiError(
      'VALIDATION_ERROR',
      `documentTemplate.${field}: ${JSON.stringify(value.slice(0, 80))} must be one of ${allowed.join(', ')}`,
    );
  return v;
}

type Fields = Static<typeof S.DocumentTemplateInput>;

function checkTemplate(t: Fields): TemplateInput {
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
      urn
        ? 'documentTemplate.loadMethod is required with urn'
        : loadMethodRaw
          ? 'documentTemplate.urn is required with loadMethod'
          : 'documentTemplate: give urn with loadMethod, or url',
    );
  }
  if (url) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(url);
    } catch {
      parsed = undefined;
    }
    if (!parsed || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:'))
      throw new ApiError('VALIDATION_ERROR', 'documentTemplate.url: must be an http or https URL');
  }
  const loadMethod = loadMethodRaw ? canonical(loadMethodRaw, LOAD_METHODS, 'loadMethod') : '';
  const fileFormat = t.fileFormat?.trim() ? canonical(t.fileFormat, TEMPLATE_FORMATS, 'fileFormat') : '';
  if (loadMethod && fileFormat) {
    // Spec 4.4 rule 2: the locations that hold this format as a template (the location catalog).
    const from = methodsFor(LOCATION_CATALOG, 'generate', 'readTemplate', fileFormat);
    if (!from.includes(loadMethod)) {
      throw new ApiError(
        'VALIDATION_ERROR',
        `documentTemplate.fileFormat ${fileFormat} loads only with loadMethod ${from.join(' or ')}, not ${loadMethod}`,
      );
    }
  }
  return { name, description: t.description ?? '', title: t.title ?? '', urn, url, fileFormat, loadMethod };
}

const solutionIdsOf = (t: Fields) => (t.documentSolutions ?? []).map((s) => s.id.trim().toLowerCase()).filter(isUuid);

const templateRoutes: FastifyPluginAsyncTypebox<{ db: Db }> = async (app, opts) => {
  const { db } = opts;
  app.post(
    '/documents/template/create',
    {
      errorHandler: unexpectedAs('CREATE_DOCUMENT_TEMPLATE_ERROR'),
      preValidation: async (request) => captureExternalContext(request),
      schema: S.createTemplate,
    },
    async (request, reply) => {
      const { documentTemplate: t } = request.body;
      const input = checkTemplate(t);
      const { subscriptionId, userId } = request.auth;
      const created = await db.transaction(async (tx) => {
        const solutions = await findSolutions(tx, subscriptionId, solutionIdsOf(t));
        return createTemplate(
          tx,
          subscriptionId,
          userId,
          input,
          solutions.map((s) => s.id),
        );
      });
      return reply.code(201).send(success(request, 201, { documentTemplate: created }));
    },
  );

  app.put(
    '/documents/template/:documentTemplateGuid/update',
    {
      errorHandler: unexpectedAs('GET_DATA_SOURCE_ERROR'),
      preValidation: async (request) => captureExternalContext(request),
      schema: S.updateTemplate,
    },
    async (request) => {
      const id = request.params.documentTemplateGuid.toLowerCase();
      const { documentTemplate: t } = request.body;
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
      schema: S.getTemplate,
    },
    async (request) => {
      const id = request.params.documentTemplateGuid.toLowerCase();
      const t = await getTemplate(db, request.auth.subscriptionId, id);
      if (!t) throw new ApiError('NOT_FOUND_BY_ID', `no document template ${id}`);
      return success(request, 200, { documentTemplate: t });
    },
  );

  app.get(
    '/documents/template/list',
    {
      errorHandler: unexpectedAs('GET_DATA_SOURCE_ERROR'),
      schema: S.listTemplates,
    },
    async (request) => {
      const r = await listTemplates(db, request.auth.subscriptionId, parseList(request.query, TEMPLATE_COLUMNS));
      return success(request, 200, { documentTemplates: r.rows, rowCount: r.rowCount });
    },
  );

  app.delete(
    '/documents/template/:documentTemplateGuid/delete',
    {
      errorHandler: unexpectedAs('GET_DATA_SOURCE_ERROR'),
      schema: S.deleteTemplate,
    },
    async (request) => {
      const id = request.params.documentTemplateGuid.toLowerCase();
      if (!(await deleteTemplate(db, request.auth.subscriptionId, request.auth.userId, id)))
        throw new ApiError('NOT_FOUND_BY_ID', `no document template ${id}`);
      return success(request, 200, { documentTemplateGuid: id, message: 'Document template deleted.' });
    },
  );
};

export default templateRoutes;
