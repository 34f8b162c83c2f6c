// Document solution configurations (spec 2.2, 4.3): create, update, get, list.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import Type from 'typebox';
import { ApiError } from '../../core/errors.ts';
import type { Db } from '../../store/db.ts';
import { isUuid } from '../../store/files.ts';
import {
  CONFIGURATION_BOOLEAN_FIELDS,
  CONFIGURATION_COLUMNS,
  CONFIGURATION_TEXT_FIELDS,
  type ConfigurationInput,
  createConfiguration,
  getConfiguration,
  listConfigurations,
  updateConfiguration,
} from '../../store/records/configurations.ts';
import { getSolution } from '../../store/records/solutions.ts';
import { success } from '../envelope.ts';
import { BareError, bareErrors, checkEmailList, listDescription, ListQuerystring, parseList, requireName, unexpectedAs, UuidParam } from '../lists.ts';
import { ErrorEnvelope, errorResponses, successEnvelope } from '../schemas.ts';

const TAG = 'Document solution configuration';

const FIELD_DOCS: Partial<Record<string, string>> = {
  name: 'Required; missing or blank gives 400 DATA_NAME_REQUIRED',
  fileFormat: 'e.g. pdf',
  processingType: 'e.g. STANDARD',
  deliveryMethod: 'e.g. Email',
  path: 'Output folder path',
  pdfConformanceLevel: 'e.g. PdfA2B',
  language: 'e.g. en',
  locale: 'e.g. en-US',
  timeZone: 'IANA name, e.g. Europe/Paris; an unknown zone gives 400 VALIDATION_ERROR',
  embeddedData: 'JSON text; text that is not JSON gives 400 VALIDATION_ERROR',
  viewUserEmailList: 'Comma-separated e-mail addresses',
  editUserEmailList: 'Comma-separated e-mail addresses',
};
const textProp = (f: string) => (FIELD_DOCS[f] ? Type.String({ description: FIELD_DOCS[f] }) : Type.String());

/** The body's field names (the schema below is built from the same lists), for the SDK's compile-time check. */
export type ConfigurationFieldName = 'documentSolutionGuid' | keyof typeof CONFIGURATION_TEXT_FIELDS | keyof typeof CONFIGURATION_BOOLEAN_FIELDS;

const ConfigurationBody = Type.Object(
  {
    documentSolutionGuid: Type.Optional(
      Type.Union([Type.String(), Type.Null()], { description: 'The owning document solution (a uuid of the caller); empty or null for none' }),
    ),
    ...Object.fromEntries(Object.keys(CONFIGURATION_TEXT_FIELDS).map((f) => [f, Type.Optional(textProp(f))])),
    ...Object.fromEntries(Object.keys(CONFIGURATION_BOOLEAN_FIELDS).map((f) => [f, Type.Optional(Type.Boolean({ description: 'Sharing switch; default false' }))])),
  },
  {
    description:
      'Configuration fields (2.2), flat. Server-managed fields (documentSolutionConfigurationGuid, subscriptionGuid, ownerGuid, lastModifiedUserGuid, createdDate, lastModifiedDate, isDeleted) are ignored when sent.',
  },
);

export const Configuration = Type.Object({
  documentSolutionConfigurationGuid: Type.String({ format: 'uuid' }),
  documentSolutionGuid: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], { description: 'null when the configuration has no owning solution' }),
  subscriptionGuid: Type.String({ format: 'uuid' }),
  ownerGuid: Type.String({ format: 'uuid' }),
  lastModifiedUserGuid: Type.String({ format: 'uuid' }),
  ...Object.fromEntries(Object.keys(CONFIGURATION_TEXT_FIELDS).map((f) => [f, Type.String()])),
  ...Object.fromEntries(Object.keys(CONFIGURATION_BOOLEAN_FIELDS).map((f) => [f, Type.Boolean()])),
  createdDate: Type.String({ format: 'date-time' }),
  lastModifiedDate: Type.String({ format: 'date-time' }),
  isDeleted: Type.Boolean(),
});

const one = successEnvelope(Type.Object({ documentSolutionConfiguration: Configuration }));
const Params = Type.Object({ documentSolutionConfigurationGuid: UuidParam('The configuration') });

function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

async function readBody(db: Db, request: FastifyRequest): Promise<ConfigurationInput> {
  const body = (request.body ?? {}) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const f of Object.keys(CONFIGURATION_TEXT_FIELDS)) out[f] = typeof body[f] === 'string' ? body[f] : '';
  for (const f of Object.keys(CONFIGURATION_BOOLEAN_FIELDS)) out[f] = body[f] === true;
  out.name = requireName(body.name, '');
  if (out.timeZone && !isTimeZone(String(out.timeZone))) throw new ApiError('VALIDATION_ERROR', `timeZone: ${JSON.stringify(out.timeZone)} is not an IANA time zone`);
  if (out.embeddedData) {
    try {
      JSON.parse(String(out.embeddedData));
    } catch {
      throw new ApiError('VALIDATION_ERROR', 'embeddedData: must be JSON text');
    }
  }
  checkEmailList(out.viewUserEmailList as string, 'viewUserEmailList');
  checkEmailList(out.editUserEmailList as string, 'editUserEmailList');
  const sol = typeof body.documentSolutionGuid === 'string' ? body.documentSolutionGuid.trim() : '';
  out.documentSolutionGuid = null;
  if (sol) {
    if (!isUuid(sol) || !(await getSolution(db, request.auth.subscriptionId, sol))) {
      throw new ApiError('VALIDATION_ERROR', `documentSolutionGuid: no document solution ${JSON.stringify(sol)} in this subscription`);
    }
    out.documentSolutionGuid = sol.toLowerCase();
  }
  return out as ConfigurationInput;
}

export default async function configurationRoutes(app: FastifyInstance, opts: { db: Db }) {
  const { db } = opts;
  app.post(
    '/documents/configuration/create',
    {
      errorHandler: unexpectedAs('GET_DATA_SOURCE_ERROR'),
      schema: {
        tags: [TAG],
        summary: 'Create a document solution configuration',
        description:
          'Creates a configuration from the flat fields of 2.2. `name` is required (400 DATA_NAME_REQUIRED). Absent text fields are stored empty and absent switches false. `documentSolutionGuid`, when given, must name a document solution of the caller (400 VALIDATION_ERROR otherwise). Answers 200 as the spec shows (not 201).',
        body: ConfigurationBody,
        response: { 200: one, ...errorResponses(400, 401, 500) },
      },
    },
    async (request) => {
      const input = await readBody(db, request);
      const c = await createConfiguration(db, request.auth.subscriptionId, request.auth.userId, input);
      return success(request, 200, { documentSolutionConfiguration: c });
    },
  );

  app.put(
    '/documents/configuration/:documentSolutionConfigurationGuid/update',
    {
      errorHandler: unexpectedAs('GET_DATA_SOURCE_ERROR'),
      schema: {
        tags: [TAG],
        summary: 'Update a document solution configuration',
        description:
          'Same body as create, and it replaces the configuration: fields left out become empty (text) or false (switches), and `name` is required again (400 DATA_NAME_REQUIRED). An unknown, deleted or other subscription\'s id gives 404 NOT_FOUND_BY_ID; a non-uuid id gives 400 VALIDATION_ERROR.',
        params: Params,
        body: ConfigurationBody,
        response: { 200: one, ...errorResponses(400, 401, 404, 500) },
      },
    },
    async (request) => {
      const { documentSolutionConfigurationGuid: id } = request.params as { documentSolutionConfigurationGuid: string };
      const input = await readBody(db, request);
      const c = await updateConfiguration(db, request.auth.subscriptionId, request.auth.userId, id, input);
      if (!c) throw new ApiError('NOT_FOUND_BY_ID', `no configuration ${id}`);
      return success(request, 200, { documentSolutionConfiguration: c });
    },
  );

  app.get(
    '/documents/configuration/:documentSolutionConfigurationGuid/get',
    {
      errorHandler: bareErrors,
      schema: {
        tags: [TAG],
        summary: 'Get a document solution configuration',
        description:
          "Failures of this operation use the bare body the spec documents for configuration get and list, `{code, message}` (plus `eventId` on 500), not the error envelope: 400 VALIDATION_ERROR for a non-uuid id, 404 NOT_FOUND_BY_ID for an unknown, deleted or other subscription's id, 500 GET_DATA_SOURCE_ERROR. Credential failures (401) keep the envelope, as everywhere.",
        params: Params,
        response: { 200: one, 400: BareError, 401: ErrorEnvelope, 404: BareError, 500: BareError },
      },
    },
    async (request) => {
      const { documentSolutionConfigurationGuid: id } = request.params as { documentSolutionConfigurationGuid: string };
      const c = await getConfiguration(db, request.auth.subscriptionId, id);
      if (!c) throw new ApiError('NOT_FOUND_BY_ID', `no configuration ${id}`);
      return success(request, 200, { documentSolutionConfiguration: c });
    },
  );

  app.get(
    '/documents/configuration/list',
    {
      errorHandler: bareErrors,
      schema: {
        tags: [TAG],
        summary: 'List document solution configurations',
        description: `${listDescription(CONFIGURATION_COLUMNS)} Failures use the bare body \`{code, message}\` (plus \`eventId\` on 500) the spec documents for this operation; credential failures (401) keep the envelope.`,
        querystring: ListQuerystring,
        response: {
          200: successEnvelope(Type.Object({ documentSolutionConfigurations: Type.Array(Configuration), rowCount: Type.Integer() })),
          400: BareError,
          401: ErrorEnvelope,
          500: BareError,
        },
      },
    },
    async (request) => {
      const q = parseList(request.query as Record<string, never>, CONFIGURATION_COLUMNS);
      const r = await listConfigurations(db, request.auth.subscriptionId, q);
      return success(request, 200, { documentSolutionConfigurations: r.rows, rowCount: r.rowCount });
    },
  );
}
