// POST /v1/admin/credentials: lets `docgen credentials` mint development credentials while `docgen start`
// holds the embedded database (PGlite is single-process). Registered only on embedded defaults, answers
// only loopback callers presenting the admin token that `docgen start` wrote to the data directory.
import { timingSafeEqual } from 'node:crypto';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import type { Config } from '../../config/env.ts';
import { ApiError } from '../../core/errors.ts';
import type { Db } from '../../store/db.ts';
import { issueCredentials } from '../auth/credentials.ts';

export const ADMIN_PATH = '/admin/credentials';

const adminRoutes: FastifyPluginAsyncTypebox<{ db: Db; config: Config; adminToken: string; baseUrl: () => string }> = async (app, opts) => {
  app.post(
    ADMIN_PATH,
    {
      schema: {
        hide: true,
        body: Type.Object({ subscription: Type.Optional(Type.String()) }),
      },
    },
    async (request) => {
      const loopback = ['127.0.0.1', '::1', '::ffff:127.0.0.1'].includes(request.socket.remoteAddress ?? '');
      const given = Buffer.from(String(request.headers['x-docgen-admin'] ?? ''));
      const expected = Buffer.from(opts.adminToken);
      if (!loopback || given.length !== expected.length || !timingSafeEqual(given, expected)) {
        throw new ApiError('AUTHORIZATION_ERROR', 'admin operations are available to the local operator only');
      }
      const { subscription } = request.body;
      try {
        return await issueCredentials(opts.db, opts.config, opts.baseUrl(), subscription);
      } catch (err) {
        throw new ApiError('VALIDATION_ERROR', (err as Error).message);
      }
    },
  );
};

export default adminRoutes;
