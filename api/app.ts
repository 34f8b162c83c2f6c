// The HTTP API as a Fastify instance built from its dependencies. cli/service.ts composes and listens;
// tests call buildApp() and use inject() or listen on a free port.
import { randomUUID } from 'node:crypto';
import multipart from '@fastify/multipart';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import { type Config, connectorSettingsOf, templateLimits } from '../config/env.ts';
import { ApiError, innerError } from '../core/errors.ts';
import { failure, redactUrl } from './envelope.ts';
import { connectionStore } from '../connectors/connection-store.ts';
import { createLocationRegistry, type LocationRegistry } from '../connectors/registry.ts';
import type { BlobStore } from '../connectors/storage/blob-store.ts';
import type { Db } from '../store/db.ts';
import { SharedBuckets } from '../store/rate-buckets.ts';
import type { TokenVerifier } from '../security/tokens.ts';
import { isLogger, type Logger } from '../telemetry/log.ts';
import authPlugin from './plugins/auth.ts';
import errorsPlugin, { clientErrorHandler } from './plugins/errors.ts';
import openapiPlugin from './plugins/openapi.ts';
import adminRoutes, { ADMIN_PATH } from './routes/admin.ts';
import clientTokenRoutes from './routes/client-token.ts';
import commonRoutes from './routes/common.ts';
import connectionRoutes from './routes/connections.ts';
import generateAsyncRoutes from './routes/generate-async.ts';
import configurationRoutes from './routes/configurations.ts';
import dataSourceRoutes from './routes/datasources.ts';
import documentRoutes from './routes/documents.ts';
import generateRoutes from './routes/generate.ts';
import batchRoutes from './routes/batch.ts';
import healthRoutes, { type ReadinessCheck } from './routes/health.ts';
import manageRoutes from './routes/manage.ts';
import optionRoutes from './routes/options.ts';
import signatureRoutes from './routes/signatures.ts';
import solutionRoutes from './routes/solutions.ts';
import storageRoutes from './routes/storage.ts';
import templateRoutes from './routes/templates.ts';
import uploadRoutes from './routes/uploads.ts';
import studioRoutes from './routes/studio.ts';
import { issueCredentials } from './auth/credentials.ts';
import inspectRoutes from './routes/inspect.ts';
import rateLimitPlugin, { publicRouteLimit, RateLimits } from './plugins/rate-limit.ts';
import type { WorkflowStarter } from './temporal.ts';
import { DOCUMENTED_ENUM } from './schemas/components.ts';

export interface AppDeps {
  config: Config;
  db: Db;
  blobs: BlobStore;
  /** Where files come from and go to; built from db and blobs unless given. */
  locations?: LocationRegistry;
  temporal: WorkflowStarter;
  verifyToken: TokenVerifier;
  /** Base URL clients use (printed, put in the OpenAPI servers list); a function because the port may be
   *  known only after listen(). */
  baseUrl: () => string;
  /** Enables the loopback admin route that mints development credentials (embedded defaults only). */
  adminToken?: string;
  /** What GET /v1/ready checks (database, temporal, storage, converter); none = always ready. */
  readiness?: Record<string, ReadinessCheck>;
  /** Called once per answered request (metrics). */
  onResponse?: (route: string, method: string, status: number, seconds: number) => void;
  /** The request log: a pino logger (the process log, telemetry/log.ts), Fastify logger options, or false
   *  for none; default Fastify's own at LOG_LEVEL. */
  logger?: boolean | Record<string, unknown> | Logger;
}

const PUBLIC = /^\/v1\/(openapi\.json|docs(\/.*)?)(\?.*)?$/;

/** Fastify's request serializer for the log, with the URL stripped of the API key (`?apiKey=`). */
export const logSerializers = {
  req(request: FastifyRequest) {
    return {
      method: request.method,
      url: redactUrl(request.url),
      host: request.host,
      remoteAddress: request.ip,
      remotePort: request.socket?.remotePort,
    };
  },
};

function loggerOptions(deps: AppDeps): { logger: boolean | Record<string, unknown> } | { loggerInstance: FastifyBaseLogger } {
  // Typed by Fastify as its base logger, which a pino logger is.
  if (isLogger(deps.logger)) return { loggerInstance: deps.logger as unknown as FastifyBaseLogger };
  if (deps.logger === false) return { logger: false };
  const base = deps.logger === undefined || deps.logger === true ? { level: deps.config.logLevel } : deps.logger;
  return { logger: { ...base, serializers: { ...(base.serializers as Record<string, unknown> | undefined), ...logSerializers } } };
}

/** The error codes of each error answer, read as it is sent, for its request's log line. */
const answeredCodes = new WeakMap<FastifyRequest, string>();

/** Fastify's request lines, the completion line with the subscription (once the caller is authenticated)
 *  and the error codes of an error answer beside the operation id. */
class RequestLog extends LogController {
  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return;
    const subscriptionId = request.ctx?.subscriptionId;
    const code = answeredCodes.get(request);
    const fields = {
      res: reply,
      responseTime: reply.elapsedTime,
      ...(subscriptionId ? { subscriptionId } : {}),
      ...(code ? { code } : {}),
    };
    if (error) reply.log.error({ ...fields, err: error }, 'request errored');
    else reply.log.info(fields, 'request completed');
  }
}

/** `innerErrors[].code` of an error envelope (or `code` of a bare error body), comma-separated. */
function codesOf(payload: string): string | undefined {
  try {
    const body = JSON.parse(payload) as { error?: { innerErrors?: { code?: unknown }[] }; code?: unknown };
    const codes = (body.error?.innerErrors ?? [body]).map((e) => e.code).filter((c): c is string => typeof c === 'string');
    return codes.length > 0 ? [...new Set(codes)].join(',') : undefined;
  } catch {
    return undefined;
  }
}

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const locations =
    deps.locations ??
    createLocationRegistry({
      db: deps.db,
      blobs: deps.blobs,
      settings: connectorSettingsOf(deps.config),
      connections: connectionStore(deps.db),
    });
  const app = Fastify({
    ...loggerOptions(deps),
    genReqId: () => randomUUID(),
    logController: new RequestLog({ requestIdLogLabel: 'operationId' }),
    bodyLimit: 5 * 1024 * 1024,
    keepAliveTimeout: deps.config.keepAliveTimeoutMs,
    // request.ip: the client's address as TRUST_PROXY allows it to be known (per-address limits, logs).
    trustProxy: deps.config.trustProxy ?? false,
    // Routes are case-sensitive and exact, as the spec writes them.
    routerOptions: { ignoreTrailingSlash: true },
    // DOCUMENTED_ENUM: values listed for the OpenAPI document only (api/schemas/components.ts documentedEnum).
    ajv: { customOptions: { allErrors: true, coerceTypes: 'array', removeAdditional: false, keywords: [DOCUMENTED_ENUM] } },
    // Errors the router raises before any hook runs (malformed percent-encoding, an absurdly long path
    // parameter) still answer in the spec's error envelope.
    clientErrorHandler,
    frameworkErrors: (error, request, reply) => {
      request.ctx ??= { operationId: request.id };
      const message =
        error.code === 'FST_ERR_MAX_PARAM_LENGTH'
          ? 'a path parameter is too long to be an id'
          : 'the URL is malformed (invalid percent-encoding)';
      // Typed loosely by Fastify at this stage; it is the ordinary reply object.
      void (reply as unknown as FastifyReply)
        .code(400)
        .type('application/json')
        .send(failure(request, 400, message, [innerError('VALIDATION_ERROR', message)]));
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.decorateRequest('ctx', null as never);
  app.addHook('onSend', async (request, reply, payload) => {
    if (reply.statusCode >= 400 && typeof payload === 'string' && payload.length < 65_536) {
      const code = codesOf(payload);
      if (code) answeredCodes.set(request, code);
    }
    return payload;
  });
  app.addHook('onRequest', async (request, reply) => {
    request.ctx = { operationId: request.id };
    reply.header('x-operation-id', request.id);
  });

  await app.register(errorsPlugin);
  const limits = new RateLimits(
    {
      perMinute: deps.config.rateLimitPerMinute,
      burst: deps.config.rateLimitBurst,
      failuresPerMinute: deps.config.authFailuresPerMinute,
      failuresBurst: deps.config.authFailuresBurst,
    },
    // Counted in the database every API process shares, unless RATE_LIMIT_STORE=memory.
    deps.config.rateLimitStore === 'database' ? { shared: (scope, rate) => new SharedBuckets(deps.db, scope, rate) } : {},
  );
  // Every route, before any other work: requests that carry no verified credentials count per address.
  await app.register(publicRouteLimit, { limits });
  await app.register(openapiPlugin, { serverUrl: () => `${deps.baseUrl()}` });
  await app.register(multipart, { limits: { fileSize: deps.config.uploadMaxBytes } });

  // PostgreSQL text cannot hold U+0000; refuse it at the door, naming the field, for every route.
  app.addHook('preHandler', async (request) => {
    for (const [where, value] of [
      ['body', request.body],
      ['query', request.query],
      ['params', request.params],
    ] as const) {
      const path = findNul(value, []);
      if (path) {
        const field = [where === 'body' ? '' : where, ...path].filter(Boolean).join('.') || where;
        throw new ApiError('VALIDATION_ERROR', `${field} contains a NUL character (U+0000), which is not allowed`);
      }
    }
  });

  if (deps.onResponse) {
    const observe = deps.onResponse;
    // The route pattern, never the raw URL: ids would make one series per request.
    app.addHook('onResponse', async (request, reply) => {
      observe(request.routeOptions.url ?? 'unmatched', request.method, reply.statusCode, reply.elapsedTime / 1000);
    });
  }

  // Outside the /v1 scope below, so the auth plugin never sees them.
  await app.register(healthRoutes, { checks: deps.readiness ?? {} });
  // The studio page calls /v1 with the credentials its user gives; on `docgen start` (embedded defaults)
  // it may fetch the development ones, once per process (api/routes/studio.ts says who may).
  let devCredentials: Promise<unknown> | undefined;
  await app.register(studioRoutes, {
    ...(deps.adminToken && !deps.config.databaseUrl
      ? {
          devCredentials: () =>
            (devCredentials ??= issueCredentials(deps.db, deps.config, deps.baseUrl()).catch((err: unknown) => {
              devCredentials = undefined;
              throw err;
            })),
        }
      : {}),
  });

  await app.register(
    async (v1) => {
      await v1.register(authPlugin, {
        db: deps.db,
        verifyToken: deps.verifyToken,
        requireKnownUser: !deps.config.jwtJwksUrl,
        cacheSeconds: deps.config.authCacheSeconds,
        publicPaths: (url: string) => PUBLIC.test(url) || url.startsWith(`/v1${ADMIN_PATH}`),
        limits,
      });
      await v1.register(rateLimitPlugin, { limits });
      await v1.register(uploadRoutes, {
        db: deps.db,
        blobs: deps.blobs,
        maxBytes: deps.config.uploadMaxBytes,
        retentionSeconds: deps.config.uploadRetentionSeconds,
        templateLimits: templateLimits(deps.config),
      });
      await v1.register(inspectRoutes, {
        db: deps.db,
        blobs: deps.blobs,
        maxBytes: deps.config.uploadMaxBytes,
        templateLimits: templateLimits(deps.config),
      });
      await v1.register(generateRoutes, { temporal: deps.temporal, db: deps.db, locations });
      await v1.register(generateAsyncRoutes, { temporal: deps.temporal, db: deps.db, config: deps.config, locations });
      await v1.register(manageRoutes, { temporal: deps.temporal, db: deps.db, locations });
      await v1.register(batchRoutes, { temporal: deps.temporal, db: deps.db, config: deps.config, locations });
      await v1.register(clientTokenRoutes, { db: deps.db, config: deps.config });
      await v1.register(storageRoutes, {
        db: deps.db,
        blobs: deps.blobs,
        ...(deps.config.storageDownload === 'redirect' ? { redirect: { expiresInSeconds: deps.config.storagePresignSeconds } } : {}),
      });
      await v1.register(configurationRoutes, { db: deps.db });
      await v1.register(templateRoutes, { db: deps.db });
      await v1.register(solutionRoutes, { db: deps.db });
      await v1.register(dataSourceRoutes, { db: deps.db });
      await v1.register(optionRoutes, { db: deps.db });
      await v1.register(documentRoutes, { db: deps.db });
      await v1.register(commonRoutes, { db: deps.db });
      await v1.register(connectionRoutes, { db: deps.db, settings: connectorSettingsOf(deps.config) });
      await v1.register(signatureRoutes, { db: deps.db });
      if (deps.adminToken) {
        await v1.register(adminRoutes, { db: deps.db, config: deps.config, adminToken: deps.adminToken, baseUrl: deps.baseUrl });
      }
    },
    { prefix: '/v1' },
  );
  return app;
}

/** The path to the first string (or key) holding U+0000, or undefined. */
function findNul(value: unknown, path: string[], depth = 0): string[] | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? path : undefined;
  if (value === null || typeof value !== 'object' || depth > 64 || Buffer.isBuffer(value)) return undefined;
  for (const [k, v] of Object.entries(value)) {
    const here = [...path, Array.isArray(value) ? `[${k}]` : k];
    if (k.includes('\u0000')) return here;
    const found = findNul(v, here, depth + 1);
    if (found) return found;
  }
  return undefined;
}
