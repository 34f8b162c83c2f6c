// Data source records (spec 2.4, 4.5): create (best-effort linking), list, soft delete, and the strict
// add-to-solution link.
import type { FastifyInstance } from 'fastify';
import Type from 'typebox';
import { LOCATION_CATALOG } from '../../connectors/registry.ts';
import { ApiError } from '../../core/errors.ts';
import { methodsFor } from '../../core/locations.ts';
import type { Db } from '../../store/db.ts';
import { isUuid } from '../../store/files.ts';
import { addDataSourceToSolution, createDataSource, DATA_SOURCE_COLUMNS, deleteDataSource, listDataSources } from '../../store/records/datasources.ts';
import { findSolutions } from '../../store/records/solutions.ts';
import { captureExternalContext, success } from '../envelope.ts';
import { listDescription, ListQuerystring, parseList, requireName, unexpectedAs, UuidParam } from '../lists.ts';
import { errorResponses, ExternalContext, successEnvelope } from '../schemas.ts';
import { SolutionRef } from './solutions.ts';

const TAG = 'Data source';

/** The spec names Storage and GraphQL of four methods; the others are the locations generate reads data
 *  from (the location catalog): the two drives. */
const DATA_LOAD_METHODS = [...methodsFor(LOCATION_CATALOG, 'generate', 'readData'), 'GraphQL'];

export const DataSourceBody = Type.Object({
  dataSource: Type.Object(
    {
      name: Type.Optional(Type.String({ description: 'Required; missing or blank gives 400 DATA_NAME_REQUIRED' })),
      loadMethod: Type.String({ description: `Required: ${DATA_LOAD_METHODS.join(', ')} (case-insensitive, stored in this spelling)` }),
      description: Type.Optional(Type.String()),
      urn: Type.Optional(Type.String({ description: 'Storage: the id of an uploaded data file (removed after its retention; the record survives). GraphQL: the endpoint' })),
      query: Type.Optional(Type.String({ description: 'GraphQL only; stored empty for the other methods' })),
      variables: Type.Optional(Type.String({ description: 'GraphQL only; stored empty for the other methods' })),
      documentSolutions: Type.Optional(
        Type.Array(Type.Object({ id: Type.String() }), {
          maxItems: 100,
          description: 'Document solutions to link, best-effort: ids naming no live solution of the caller are skipped',
        }),
      ),
    },
    { description: 'Server-managed fields (ids, ownership, timestamps, isDeleted) are ignored when sent' },
  ),
  externalContext: Type.Optional(ExternalContext),
});

export const CreatedDataSource = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    subscriptionId: Type.String({ format: 'uuid' }),
    ownerId: Type.String({ format: 'uuid' }),
    lastModifiedUserId: Type.String({ format: 'uuid' }),
    name: Type.String(),
    description: Type.String(),
    urn: Type.String(),
    loadMethod: Type.String(),
    query: Type.String(),
    variables: Type.String(),
    documentSolutions: Type.Array(SolutionRef, { description: 'The solutions actually linked' }),
    ownerName: Type.String(),
    lastModifiedUserName: Type.String(),
    createdDate: Type.String({ format: 'date-time' }),
    lastModifiedDate: Type.String({ format: 'date-time' }),
  },
  { description: 'Create response: the Id spelling of the spec (id, subscriptionId, ownerId, lastModifiedUserId)' },
);

export const ListedDataSource = Type.Object(
  {
    dataSourceGuid: Type.String({ format: 'uuid' }),
    subscriptionGuid: Type.String({ format: 'uuid' }),
    ownerGuid: Type.String({ format: 'uuid' }),
    lastModifiedUserGuid: Type.String({ format: 'uuid' }),
    name: Type.String(),
    description: Type.String(),
    urn: Type.String(),
    loadMethod: Type.String(),
    query: Type.String(),
    variables: Type.String(),
    createdDate: Type.String({ format: 'date-time' }),
    lastModifiedDate: Type.String({ format: 'date-time' }),
    isDeleted: Type.Boolean({ description: 'Always false: deleted data sources are not listed' }),
  },
  { description: 'List item: the Guid spelling of the spec (dataSourceGuid, subscriptionGuid, ownerGuid, lastModifiedUserGuid)' },
);

type Body = { dataSource: { name?: string; loadMethod: string; description?: string; urn?: string; query?: string; variables?: string; documentSolutions?: { id: string }[] } };

export default async function dataSourceRoutes(app: FastifyInstance, opts: { db: Db }) {
  const { db } = opts;
  app.post(
    '/documents/datasource/create',
    {
      errorHandler: unexpectedAs('CREATE_DATA_SOURCE_ERROR'),
      preValidation: async (request) => captureExternalContext(request),
      schema: {
        tags: [TAG],
        summary: 'Create a data source',
        description:
          '`name` is required (400 DATA_NAME_REQUIRED) and `loadMethod` too (400 VALIDATION_ERROR naming it). `query` and `variables` are kept only for GraphQL. Linking through `documentSolutions` is best-effort: unknown solutions are skipped and the response lists the linked ones. Answers 201 with result.data.dataSource in the Id spelling (the list uses the Guid spelling). An unexpected failure gives 500 CREATE_DATA_SOURCE_ERROR.',
        body: DataSourceBody,
        response: { 201: successEnvelope(Type.Object({ dataSource: CreatedDataSource })), ...errorResponses(400, 401, 500) },
      },
    },
    async (request, reply) => {
      const { dataSource: d } = request.body as Body;
      const name = requireName(d.name, 'dataSource.');
      const loadMethod = DATA_LOAD_METHODS.find((m) => m.toLowerCase() === d.loadMethod.trim().toLowerCase());
      if (!loadMethod) {
        throw new ApiError('VALIDATION_ERROR', `dataSource.loadMethod: ${JSON.stringify(d.loadMethod.slice(0, 80))} must be one of ${DATA_LOAD_METHODS.join(', ')}`);
      }
      const graphql = loadMethod === 'GraphQL';
      const { subscriptionId, userId } = request.auth;
      const created = await db.transaction(async (tx) => {
        const ids = (d.documentSolutions ?? []).map((s) => s.id.trim().toLowerCase()).filter(isUuid);
        const solutions = await findSolutions(tx, subscriptionId, ids);
        return createDataSource(
          tx,
          subscriptionId,
          userId,
          { name, loadMethod, description: d.description ?? '', urn: d.urn?.trim() ?? '', query: graphql ? (d.query ?? '') : '', variables: graphql ? (d.variables ?? '') : '' },
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
      schema: {
        tags: [TAG],
        summary: 'List data sources',
        description: `${listDescription(DATA_SOURCE_COLUMNS)} Items use the Guid spelling (dataSourceGuid, subscriptionGuid, ownerGuid, lastModifiedUserGuid) and carry isDeleted; deleted data sources are not listed.`,
        querystring: ListQuerystring,
        response: {
          200: successEnvelope(Type.Object({ dataSources: Type.Array(ListedDataSource), rowCount: Type.Integer() })),
          ...errorResponses(400, 401, 500),
        },
      },
    },
    async (request) => {
      const r = await listDataSources(db, request.auth.subscriptionId, parseList(request.query as Record<string, never>, DATA_SOURCE_COLUMNS));
      const dataSources = r.rows.map((d) => ({
        dataSourceGuid: d.id,
        subscriptionGuid: d.subscriptionId,
        ownerGuid: d.ownerId,
        lastModifiedUserGuid: d.lastModifiedUserId,
        name: d.name,
        description: d.description,
        urn: d.urn,
        loadMethod: d.loadMethod,
        query: d.query,
        variables: d.variables,
        createdDate: d.createdDate,
        lastModifiedDate: d.lastModifiedDate,
        isDeleted: d.isDeleted,
      }));
      return success(request, 200, { dataSources, rowCount: r.rowCount });
    },
  );

  app.delete(
    '/documents/datasource/:dataSourceGuid/delete',
    {
      errorHandler: unexpectedAs('GET_DATA_SOURCE_ERROR'),
      schema: {
        tags: [TAG],
        summary: 'Delete a data source (soft delete)',
        description:
          "Marks the data source deleted: it disappears from the list and from solutions. Deleting again, or an unknown or other subscription's id, gives 404 NOT_FOUND_BY_ID; a non-uuid id gives 400 VALIDATION_ERROR.",
        params: Type.Object({ dataSourceGuid: UuidParam('The data source') }),
        response: {
          200: successEnvelope(Type.Object({ dataSourceGuid: Type.String({ format: 'uuid' }), message: Type.String() })),
          ...errorResponses(400, 401, 404, 500),
        },
      },
    },
    async (request) => {
      const id = (request.params as { dataSourceGuid: string }).dataSourceGuid.toLowerCase();
      if (!(await deleteDataSource(db, request.auth.subscriptionId, request.auth.userId, id))) throw new ApiError('NOT_FOUND_BY_ID', `no data source ${id}`);
      return success(request, 200, { dataSourceGuid: id, message: 'Data source deleted.' });
    },
  );

  app.post(
    '/documents/solution/:documentSolutionId/datasource/:dataSourceId/add',
    {
      errorHandler: unexpectedAs('ADD_DATA_SOURCE_TO_SOLUTION_ERROR'),
      schema: {
        tags: [TAG],
        summary: 'Attach a data source to a document solution',
        description:
          "Strict, unlike linking on create: when the solution or the data source is not a live record of the caller's subscription the answer is 404 with an empty body (it does not say which id is missing) and nothing changes. Attaching twice is harmless (200 again). The data source itself is not copied or modified. A non-uuid id gives 400 VALIDATION_ERROR; an unexpected failure 500 ADD_DATA_SOURCE_TO_SOLUTION_ERROR.",
        params: Type.Object({ documentSolutionId: UuidParam('The document solution'), dataSourceId: UuidParam('The data source') }),
        response: {
          200: successEnvelope(Type.Object({ documentSolutionId: Type.String({ format: 'uuid' }), dataSourceId: Type.String({ format: 'uuid' }), message: Type.String() })),
          404: { type: 'null', description: 'Empty body: the solution or the data source does not exist in the caller\'s subscription' },
          ...errorResponses(400, 401, 500),
        },
      },
    },
    async (request, reply) => {
      const p = request.params as { documentSolutionId: string; dataSourceId: string };
      const documentSolutionId = p.documentSolutionId.toLowerCase();
      const dataSourceId = p.dataSourceId.toLowerCase();
      const outcome = await db.transaction((tx) => addDataSourceToSolution(tx, request.auth.subscriptionId, documentSolutionId, dataSourceId));
      if (outcome === 'missing') return reply.code(404).send();
      return success(request, 200, { documentSolutionId, dataSourceId, message: 'Data source added to solution.' });
    },
  );
}
