// Data source records (spec 2.4, 4.5): create (best-effort linking), list, soft delete, and the strict
// add-to-solution link. The schemas and their prose are in api/schemas/records.ts.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ApiError } from '../../core/errors.ts';
import { GRAPHQL } from '../../core/locations.ts';
import type { Db } from '../../store/db.ts';
import { isUuid } from '../../store/files.ts';
import {
  addDataSourceToSolution,
  createDataSource,
  DATA_SOURCE,
  DATA_SOURCE_COLUMNS,
  deleteDataSource,
  listDataSources,
} from '../../store/records/datasources.ts';
import { listedSpelling } from '../../store/records/fields.ts';
import { findSolutions } from '../../store/records/solutions.ts';
import { captureExternalContext, success } from '../envelope.ts';
import { parseList, requireName, unexpectedAs } from '../lists.ts';
import * as S from '../schemas/records.ts';

const dataSourceRoutes: FastifyPluginAsyncTypebox<{ db: Db }> = async (app, opts) => {
  const { db } = opts;
  app.post(
    '/documents/datasource/create',
    {
      errorHandler: unexpectedAs('CREATE_DATA_SOURCE_ERROR'),
      preValidation: async (request) => captureExternalContext(request),
      schema: S.createDataSource,
    },
    async (request, reply) => {
      const { dataSource: d } = request.body;
      const name = requireName(d.name, 'dataSource.');
      const loadMethod = S.DATA_LOAD_METHODS.find((m) => m.toLowerCase() === d.loadMethod.trim().toLowerCase());
      if (!loadMethod) {
        throw new ApiError(
          'VALIDATION_ERROR',
          `dataSource.loadMethod: ${JSON.stringify(d.loadMethod.slice(0, 80))} must be one of ${S.DATA_LOAD_METHODS.join(', ')}`,
        );
      }
      const graphql = loadMethod === GRAPHQL;
      const { subscriptionId, userId } = request.auth;
      const created = await db.transaction(async (tx) => {
        const ids = (d.documentSolutions ?? []).map((s) => s.id.trim().toLowerCase()).filter(isUuid);
        const solutions = await findSolutions(tx, subscriptionId, ids);
        return createDataSource(
          tx,
          subscriptionId,
          userId,
          {
            name,
            loadMethod,
            description: d.description ?? '',
            urn: d.urn?.trim() ?? '',
            query: graphql ? (d.query ?? '') : '',
            variables: graphql ? (d.variables ?? '') : '',
          },
          solutions.map((s) => s.id),
        );
      });
      const { isDeleted: _isDeleted, ...dataSource } = created;
      return reply.code(201).send(success(request, 201, { dataSource }));
    },
  );

  app.get(
    '/documents/datasource/list',
    {
      errorHandler: unexpectedAs('GET_DATA_SOURCE_ERROR'),
      schema: S.listDataSources,
    },
    async (request) => {
      const r = await listDataSources(db, request.auth.subscriptionId, parseList(request.query, DATA_SOURCE_COLUMNS));
      const dataSources = r.rows.map((d) => listedSpelling(DATA_SOURCE, d));
      return success(request, 200, { dataSources, rowCount: r.rowCount });
    },
  );

  app.delete(
    '/documents/datasource/:dataSourceGuid/delete',
    {
      errorHandler: unexpectedAs('GET_DATA_SOURCE_ERROR'),
      schema: S.deleteDataSource,
    },
    async (request) => {
      const id = request.params.dataSourceGuid.toLowerCase();
      if (!(await deleteDataSource(db, request.auth.subscriptionId, request.auth.userId, id)))
        throw new ApiError('NOT_FOUND_BY_ID', `no data source ${id}`);
      return success(request, 200, { dataSourceGuid: id, message: 'Data source deleted.' });
    },
  );

  app.post(
    '/documents/solution/:documentSolutionId/datasource/:dataSourceId/add',
    {
      errorHandler: unexpectedAs('ADD_DATA_SOURCE_TO_SOLUTION_ERROR'),
      schema: S.addDataSourceToSolution,
    },
    async (request, reply) => {
      const p = request.params;
      const documentSolutionId = p.documentSolutionId.toLowerCase();
      const dataSourceId = p.dataSourceId.toLowerCase();
      const outcome = await db.transaction((tx) =>
        addDataSourceToSolution(tx, request.auth.subscriptionId, documentSolutionId, dataSourceId),
      );
      if (outcome === 'missing') return reply.code(404).send(undefined);
      return success(request, 200, { documentSolutionId, dataSourceId, message: 'Data source added to solution.' });
    },
  );
};

export default dataSourceRoutes;
