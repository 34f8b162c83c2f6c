// Document solutions (extension): the spec names them only as what templates and data sources link to,
// so create, get and list exist to give linking something to link to. The schemas and their prose are in
// api/schemas/records.ts.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ApiError } from '../../core/errors.ts';
import type { Db } from '../../store/db.ts';
import { createSolution, getSolution, listSolutions, SOLUTION_COLUMNS, solutionMembers } from '../../store/records/solutions.ts';
import { captureExternalContext, success } from '../envelope.ts';
import { parseList, requireName, unexpectedAs } from '../lists.ts';
import * as S from '../schemas/records.ts';

const solutionRoutes: FastifyPluginAsyncTypebox<{ db: Db }> = async (app, opts) => {
  const { db } = opts;
  app.post(
    '/documents/solution/create',
    {
      errorHandler: unexpectedAs('GET_DATA_SOURCE_ERROR'),
      preValidation: async (request) => captureExternalContext(request),
      schema: S.createSolution,
    },
    async (request, reply) => {
      const { documentSolution: s } = request.body;
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
      schema: S.getSolution,
    },
    async (request) => {
      const { documentSolutionId: id } = request.params;
      const s = await getSolution(db, request.auth.subscriptionId, id);
      if (!s) throw new ApiError('NOT_FOUND_BY_ID', `no document solution ${id}`);
      return success(request, 200, { documentSolution: { ...s, ...(await solutionMembers(db, request.auth.subscriptionId, id)) } });
    },
  );

  app.get(
    '/documents/solution/list',
    {
      errorHandler: unexpectedAs('GET_DATA_SOURCE_ERROR'),
      schema: S.listSolutions,
    },
    async (request) => {
      const r = await listSolutions(db, request.auth.subscriptionId, parseList(request.query, SOLUTION_COLUMNS));
      return success(request, 200, { documentSolutions: r.rows, rowCount: r.rowCount });
    },
  );
};

export default solutionRoutes;
