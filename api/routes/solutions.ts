// Document solutions (extension): the spec names them only as what templates and data sources link to,
// so create, get and list exist to give linking something to link to.
import type { FastifyInstance } from 'fastify';
import Type from 'typebox';
import { ApiError } from '../../core/errors.ts';
import type { Db } from '../../store/db.ts';
import { createSolution, getSolution, listSolutions, SOLUTION_COLUMNS, solutionMembers } from '../../store/records/solutions.ts';
import { captureExternalContext, success } from '../envelope.ts';
import { listDescription, ListQuerystring, parseList, requireName, unexpectedAs, UuidParam } from '../lists.ts';
import { errorResponses, ExternalContext, successEnvelope } from '../schemas.ts';

const TAG = 'Document solution';

export const SolutionRef = Type.Object({ id: Type.String({ format: 'uuid' }), name: Type.String(), description: Type.String() });

export const Solution = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  description: Type.String(),
  subscriptionId: Type.String({ format: 'uuid' }),
  ownerId: Type.String({ format: 'uuid' }),
  lastModifiedUserId: Type.String({ format: 'uuid' }),
  createdDate: Type.String({ format: 'date-time' }),
  lastModifiedDate: Type.String({ format: 'date-time' }),
});
export const SolutionWithMembers = Type.Object({
  ...Solution.properties,
  dataSources: Type.Array(SolutionRef, { description: 'Linked live data sources' }),
  documentTemplates: Type.Array(SolutionRef, { description: 'Linked live templates' }),
});

export default async function solutionRoutes(app: FastifyInstance, opts: { db: Db }) {
  const { db } = opts;
  app.post(
    '/documents/solution/create',
    {
      errorHandler: unexpectedAs('GET_DATA_SOURCE_ERROR'),
      preValidation: async (request) => captureExternalContext(request),
      schema: {
        tags: [TAG],
        summary: 'Create a document solution (extension)',
        description:
          'Body `{documentSolution: {name, description}, externalContext?}`, shaped like template and data source create. `name` is required (400 DATA_NAME_REQUIRED). Answers 201 with result.data.documentSolution. Server-managed fields sent in the body are ignored.',
        body: Type.Object({
          documentSolution: Type.Object({ name: Type.Optional(Type.String()), description: Type.Optional(Type.String()) }),
          externalContext: Type.Optional(ExternalContext),
        }),
        response: { 201: successEnvelope(Type.Object({ documentSolution: Solution })), ...errorResponses(400, 401, 500) },
      },
    },
    async (request, reply) => {
      const { documentSolution: s } = request.body as { documentSolution: { name?: string; description?: string } };
      const created = await createSolution(db, request.auth.subscriptionId, request.auth.userId, {
        name: requireName(s.name, 'documentSolution.'),
        description: s.description ?? '',
      });
      return reply.code(201).send(success(request, 201, { documentSolution: created }));
    },
  );

  app.get(
    '/documents/solution/:documentSolutionId/get',
    {
      errorHandler: unexpectedAs('GET_DATA_SOURCE_ERROR'),
      schema: {
        tags: [TAG],
        summary: 'Get a document solution with its linked data sources and templates (extension)',
        description: "An unknown, deleted or other subscription's id gives 404 NOT_FOUND_BY_ID; a non-uuid id gives 400 VALIDATION_ERROR.",
        params: Type.Object({ documentSolutionId: UuidParam('The document solution') }),
        response: { 200: successEnvelope(Type.Object({ documentSolution: SolutionWithMembers })), ...errorResponses(400, 401, 404, 500) },
      },
    },
    async (request) => {
      const { documentSolutionId: id } = request.params as { documentSolutionId: string };
      const s = await getSolution(db, request.auth.subscriptionId, id);
      if (!s) throw new ApiError('NOT_FOUND_BY_ID', `no document solution ${id}`);
      return success(request, 200, { documentSolution: { ...s, ...(await solutionMembers(db, request.auth.subscriptionId, id)) } });
    },
  );

  app.get(
    '/documents/solution/list',
    {
      errorHandler: unexpectedAs('GET_DATA_SOURCE_ERROR'),
      schema: {
        tags: [TAG],
        summary: 'List document solutions (extension)',
        description: listDescription(SOLUTION_COLUMNS),
        querystring: ListQuerystring,
        response: {
          200: successEnvelope(Type.Object({ documentSolutions: Type.Array(Solution), rowCount: Type.Integer() })),
          ...errorResponses(400, 401, 500),
        },
      },
    },
    async (request) => {
      const r = await listSolutions(db, request.auth.subscriptionId, parseList(request.query as Record<string, never>, SOLUTION_COLUMNS));
      return success(request, 200, { documentSolutions: r.rows, rowCount: r.rowCount });
    },
  );
}
