// Document solution configurations (spec 2.2, 4.3): create, update, get, list. The schemas and their prose
// are in api/schemas/records.ts.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Static } from 'typebox';
import { ApiError } from '../../core/errors.ts';
import type { Db } from '../../store/db.ts';
import { isUuid } from '../../store/files.ts';
import {
  CONFIGURATION,
  CONFIGURATION_COLUMNS,
  type ConfigurationInput,
  createConfiguration,
  getConfiguration,
  listConfigurations,
  updateConfiguration,
} from '../../store/records/configurations.ts';
import { getSolution } from '../../store/records/solutions.ts';
import { success } from '../envelope.ts';
import { bareErrors, checkEmailList, parseList, requireName, unexpectedAs } from '../lists.ts';
import * as S from '../schemas/records.ts';

function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

async function readBody(db: Db, subscriptionId: string, body: Static<typeof S.ConfigurationInput>): Promise<ConfigurationInput> {
  const out: Record<string, unknown> = {};
  const given = body as Record<string, unknown>;
  for (const [f, field] of Object.entries(CONFIGURATION.fields)) {
    if (field.type === 'text' && 'input' in field) out[f] = given[f] ?? '';
    if (field.type === 'boolean' && 'input' in field) out[f] = given[f] === true;
  }
  out.name = requireName(body.name, '');
  if (out.timeZone && !isTimeZone(String(out.timeZone)))
    throw new ApiError('VALIDATION_ERROR', `timeZone: ${JSON.stringify(out.timeZone)} is not an IANA time zone`);
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
    if (!isUuid(sol) || !(await getSolution(db, subscriptionId, sol))) {
      throw new ApiError('VALIDATION_ERROR', `documentSolutionGuid: no document solution ${JSON.stringify(sol)} in this subscription`);
    }
    out.documentSolutionGuid = sol.toLowerCase();
  }
  return out as ConfigurationInput;
}

const configurationRoutes: FastifyPluginAsyncTypebox<{ db: Db }> = async (app, opts) => {
  const { db } = opts;
  app.post(
    '/documents/configuration/create',
    {
      errorHandler: unexpectedAs('GET_DATA_SOURCE_ERROR'),
      schema: S.createConfiguration,
    },
    async (request) => {
      const input = await readBody(db, request.auth.subscriptionId, request.body);
      const c = await createConfiguration(db, request.auth.subscriptionId, request.auth.userId, input);
      return success(request, 200, { documentSolutionConfiguration: c });
    },
  );

  app.put(
    '/documents/configuration/:documentSolutionConfigurationGuid/update',
    {
      errorHandler: unexpectedAs('GET_DATA_SOURCE_ERROR'),
      schema: S.updateConfiguration,
    },
    async (request) => {
      const { documentSolutionConfigurationGuid: id } = request.params;
      const input = await readBody(db, request.auth.subscriptionId, request.body);
      const c = await updateConfiguration(db, request.auth.subscriptionId, request.auth.userId, id, input);
      if (!c) throw new ApiError('NOT_FOUND_BY_ID', `no configuration ${id}`);
      return success(request, 200, { documentSolutionConfiguration: c });
    },
  );

  app.get(
    '/documents/configuration/:documentSolutionConfigurationGuid/get',
    {
      errorHandler: bareErrors,
      schema: S.getConfiguration,
    },
    async (request) => {
      const { documentSolutionConfigurationGuid: id } = request.params;
      const c = await getConfiguration(db, request.auth.subscriptionId, id);
      if (!c) throw new ApiError('NOT_FOUND_BY_ID', `no configuration ${id}`);
      return success(request, 200, { documentSolutionConfiguration: c });
    },
  );

  app.get(
    '/documents/configuration/list',
    {
      errorHandler: bareErrors,
      schema: S.listConfigurations,
    },
    async (request) => {
      const q = parseList(request.query, CONFIGURATION_COLUMNS);
      const r = await listConfigurations(db, request.auth.subscriptionId, q);
      return success(request, 200, { documentSolutionConfigurations: r.rows, rowCount: r.rowCount });
    },
  );
};

export default configurationRoutes;
