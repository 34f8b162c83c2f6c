// The HTTP API as a Fastify instance built from its dependencies. server.ts only listens; tests call
// buildApp() and use inject() or listen on a free port.
import { randomUUID } from 'node:crypto';
import multipart from '@fastify/multipart';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance, LogController } from 'fastify';
import type { Config } from '../config/env.ts';
import type { BlobStore } from '../connectors/storage/blob-store.ts';
import type { Db } from '../store/db.ts';
import type { TokenVerifier } from './auth/tokens.ts';
import authPlugin from './plugins/auth.ts';
import errorsPlugin from './plugins/errors.ts';
import openapiPlugin from './plugins/openapi.ts';
import adminRoutes, { ADMIN_PATH } from './routes/admin.ts';
import clientTokenRoutes from './routes/client-token.ts';
import generateAsyncRoutes from './routes/generate-async.ts';
import configurationRoutes from './routes/configurations.ts';
import dataSourceRoutes from './routes/datasources.ts';
import documentRoutes from './routes/documents.ts';
import generateRoutes from './routes/generate.ts';
import optionRoutes from './routes/options.ts';
import solutionRoutes from './routes/solutions.ts';
import storageRoutes from './routes/storage.ts';
import templateRoutes from './routes/templates.ts';
import uploadRoutes from './routes/uploads.ts';
import type { WorkflowStarter } from './temporal.ts';

export interface AppDeps {
  config: Config;
  db: Db;
  blobs: BlobStore;
  temporal: WorkflowStarter;
  verifyToken: TokenVerifier;
  /** Base URL clients use (printed, put in the OpenAPI servers list); a function because the port may be
   *  known only after listen(). */
  baseUrl: () => string;
  /** Enables the loopback admin route that mints development credentials (embedded defaults only). */
  adminToken?: string;
  logger?: boolean | Record<string, unknown>;
}

const PUBLIC = /^\/v1\/(openapi\.json|docs(\/.*)?|health)(\?.*)?$/;

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    logger: deps.logger ?? { level: deps.config.logLevel },
    genReqId: () => randomUUID(),
    logController: new LogController({ requestIdLogLabel: 'operationId' }),
    bodyLimit: 5 * 1024 * 1024,
    // Routes are case-sensitive and exact, as the spec writes them.
    routerOptions: { ignoreTrailingSlash: true },
    ajv: { customOptions: { allErrors: true, coerceTypes: 'array', removeAdditional: false } },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.decorateRequest('ctx', null as never);
  app.addHook('onRequest', async (request, reply) => {
    request.ctx = { operationId: request.id };
    reply.header('x-operation-id', request.id);
  });

  await app.register(errorsPlugin);
  await app.register(openapiPlugin, { serverUrl: () => `${deps.baseUrl()}` });
  await app.register(multipart, { limits: { fileSize: deps.config.uploadMaxBytes } });

  app.get('/v1/health', { schema: { hide: true } }, async () => ({ status: 'ok' }));

  await app.register(
    async (v1) => {
      await v1.register(authPlugin, {
        db: deps.db,
        verifyToken: deps.verifyToken,
        requireKnownUser: !deps.config.jwtJwksUrl,
        publicPaths: (url: string) => PUBLIC.test(url) || url.startsWith(`/v1${ADMIN_PATH}`),
      });
      await v1.register(uploadRoutes, {
        db: deps.db,
        blobs: deps.blobs,
        maxBytes: deps.config.uploadMaxBytes,
        retentionSeconds: deps.config.uploadRetentionSeconds,
      });
      await v1.register(generateRoutes, { temporal: deps.temporal });
      await v1.register(generateAsyncRoutes, { temporal: deps.temporal, db: deps.db, config: deps.config });
      await v1.register(clientTokenRoutes, { db: deps.db, config: deps.config });
      await v1.register(storageRoutes, { db: deps.db, blobs: deps.blobs });
      await v1.register(configurationRoutes, { db: deps.db });
      await v1.register(templateRoutes, { db: deps.db });
      await v1.register(solutionRoutes, { db: deps.db });
      await v1.register(dataSourceRoutes, { db: deps.db });
      await v1.register(optionRoutes, { db: deps.db });
      await v1.register(documentRoutes, { db: deps.db });
      if (deps.adminToken) {
        await v1.register(adminRoutes, { db: deps.db, config: deps.config, adminToken: deps.adminToken, baseUrl: deps.baseUrl });
      }
    },
    { prefix: '/v1' },
  );
  return app;
}
