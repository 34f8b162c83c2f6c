// OpenAPI 3.1 generated from the route schemas, served at /v1/openapi.json, with interactive docs at /v1/docs.
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

export default fp(async function openapiPlugin(app: FastifyInstance, opts: { serverUrl: () => string }) {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'docgen API',
        version: '1.0.0',
        description:
          'Document generation and management. Every operation needs a bearer token (`Authorization: Bearer ...`) and an API key (`X-Api-Key` header or `apiKey` query parameter): run `npx docgen credentials` on the server to get both. Operations marked (extension) are not in the interface specification; they fill its "not shown" gaps. Every operation may answer 429 TOO_MANY_REQUESTS with a Retry-After header (seconds): per subscription past RATE_LIMIT_BURST requests at once or RATE_LIMIT_PER_MINUTE sustained (all its API keys together); per client address past AUTH_FAILURES_BURST / AUTH_FAILURES_PER_MINUTE failed authentications, or past the RATE_LIMIT_* numbers on the routes that need no credentials.',
      },
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
          apiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-Api-Key' },
          apiKeyQuery: { type: 'apiKey', in: 'query', name: 'apiKey' },
        },
      },
      security: [
        { bearer: [], apiKeyHeader: [] },
        { bearer: [], apiKeyQuery: [] },
      ],
    },
    // Multipart routes read their files as streams (no body schema to validate); document the body here.
    transform: ({ schema, url, route }) => {
      const extra = (route.config as { openapiRequestBody?: unknown } | undefined)?.openapiRequestBody;
      if (!extra || !schema) return { schema, url };
      const body = (extra as { content: Record<string, { schema: unknown }> }).content['multipart/form-data']?.schema;
      return { schema: { ...schema, body }, url };
    },
    transformObject: (documentObject) => {
      const spec = 'openapiObject' in documentObject ? documentObject.openapiObject : documentObject.swaggerObject;
      return { ...spec, servers: [{ url: opts.serverUrl() }] };
    },
  });
  await app.register(swaggerUi, { routePrefix: '/v1/docs' });
  app.get('/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger());
});
