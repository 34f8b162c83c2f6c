// OpenAPI 3.1 generated from the route schemas (api/schemas/), served at /v1/openapi.json, with interactive
// docs at /v1/docs. @fastify/swagger turns each route's schema into an operation; this plugin then gives the
// document what a client generator needs: the named schemas as components/schemas (each occurrence a $ref),
// and what @fastify/swagger cannot express (a multipart file upload, callbacks), which a route schema
// carries under `x-openapi` and which is merged into its operation here.
import { STATUS_CODES } from 'node:http';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { TSchema } from 'typebox';
import { components, DOCUMENTED_ENUM, enumComponentOf } from '../schemas/components.ts';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
const ref = (name: string) => `#/components/schemas/${name}`;
/** Keys whose values are data (examples), not schemas: never rewritten. */
const DATA_KEYS = new Set(['example', 'examples', 'default', 'enum', 'const']);

/** `node` with every named schema inside it (and itself, unless `keep`) replaced by a $ref to its component;
 *  a description of its own is kept beside the $ref. */
function withRefs(given: unknown, named: ReadonlyMap<string, TSchema>, keep?: unknown): unknown {
  if (Array.isArray(given)) return given.map((n) => withRefs(n, named));
  if (!isObject(given)) return given;
  let node = given;
  if (DOCUMENTED_ENUM in node) {
    const { [DOCUMENTED_ENUM]: values, ...rest } = node;
    node = { ...rest, enum: values };
  }
  const name = typeof node.title === 'string' && named.has(node.title) ? node.title : enumComponentOf(node);
  if (name && given !== keep) {
    const own = (named.get(name) as { description?: unknown }).description;
    return {
      $ref: ref(name),
      ...(typeof node.description === 'string' && node.description !== own ? { description: node.description } : {}),
    };
  }
  return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, DATA_KEYS.has(k) ? v : withRefs(v, named)]));
}

/** `someOperationId` -> `SomeOperationIdResponse`. */
const responseName = (operationId: string) => `${operationId[0]!.toUpperCase()}${operationId.slice(1)}Response`;

/** Each success answer's JSON body that is not already a component becomes one, named after its operation
 *  (`GenerateDocumentAsyncResponse`...): generated clients get a readable type per answer instead of an
 *  anonymous `*_response_20x` one. Added to `schemas`; the operation's body becomes a $ref. */
function nameSuccessBodies(operationId: unknown, responses: unknown, schemas: Json): unknown {
  if (typeof operationId !== 'string' || !isObject(responses)) return responses;
  const successes = Object.keys(responses).filter((s) => /^2\d\d$/.test(s));
  return Object.fromEntries(
    Object.entries(responses).map(([status, response]) => {
      const media = isObject(response) && isObject(response.content) ? response.content['application/json'] : undefined;
      if (!successes.includes(status) || !isObject(media) || !isObject(media.schema) || '$ref' in media.schema) return [status, response];
      // Two success answers with one body (200 replaced, 201 created) share its name.
      const bodies = new Set(successes.map((st) => JSON.stringify((responses[st] as { content?: Json }).content?.['application/json'])));
      const name = bodies.size > 1 ? `${responseName(operationId)}${status}` : responseName(operationId);
      if (name in schemas && JSON.stringify(schemas[name]) !== JSON.stringify(media.schema))
        throw new Error(`${name}: a component of that name exists already`);
      schemas[name] = media.schema;
      const content = { ...(response as Json & { content: Json }).content, 'application/json': { ...media, schema: { $ref: ref(name) } } };
      return [status, { ...(response as Json), content }];
    }),
  );
}

/** An operation's responses described by their status where the schema says nothing (not @fastify/swagger's
 *  "Default Response"), without the response's own description repeated on its body's schema (the 429 that
 *  plugins/errors.ts adds carries its description there for @fastify/swagger to read). */
function responsesOf(responses: unknown): unknown {
  if (!isObject(responses)) return responses;
  return Object.fromEntries(
    Object.entries(responses).map(([status, given]) => {
      const response =
        isObject(given) && given.description === 'Default Response' ? { ...given, description: STATUS_CODES[status] ?? status } : given;
      if (!isObject(response) || !isObject(response.content)) return [status, response];
      const content = Object.fromEntries(
        Object.entries(response.content).map(([type, media]) => {
          if (!isObject(media) || !isObject(media.schema) || media.schema.description !== response.description) return [type, media];
          const { description: _same, ...schema } = media.schema;
          return [type, { ...media, schema }];
        }),
      );
      return [status, { ...response, content }];
    }),
  );
}

/** The document @fastify/swagger made, finished: `x-openapi` merged into its operations, the named schemas
 *  moved to components/schemas. */
export function finishDocument(spec: Json, serverUrl: string): Json {
  const named = components();
  const responseSchemas: Json = {};
  const paths: Json = {};
  for (const [path, item] of Object.entries(isObject(spec.paths) ? spec.paths : {})) {
    const operations: Json = {};
    for (const [method, op] of Object.entries(isObject(item) ? item : {})) {
      if (!isObject(op)) continue;
      const { 'x-openapi': extra, ...rest } = op;
      const operation = withRefs({ ...rest, ...(isObject(extra) ? extra : {}), responses: responsesOf(rest.responses) }, named) as Json;
      operations[method] = { ...operation, responses: nameSuccessBodies(operation.operationId, operation.responses, responseSchemas) };
    }
    paths[path] = operations;
  }
  const schemas: Json = {};
  for (const [name, schema] of [...named].sort(([a], [b]) => a.localeCompare(b))) {
    const plain: unknown = JSON.parse(JSON.stringify(schema));
    schemas[name] = withRefs(plain, named, plain);
  }
  for (const [name, schema] of Object.entries(responseSchemas)) {
    if (name in schemas) throw new Error(`${name}: a component of that name exists already`);
    schemas[name] = schema;
  }
  const sorted = Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b)));
  const given = isObject(spec.components) ? spec.components : {};
  return { ...spec, servers: [{ url: serverUrl }], paths, components: { ...given, schemas: sorted } };
}

export default fp(async function openapiPlugin(app: FastifyInstance, opts: { serverUrl: () => string }) {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'docgen API',
        version: '1.0.0',
        // package.json's UNLICENSED (not open source) as an SPDX expression a linter accepts.
        license: { name: 'UNLICENSED (proprietary)', identifier: 'LicenseRef-UNLICENSED' },
        description:
          'Document generation and management. Every operation needs a bearer token (`Authorization: Bearer ...`) and an API key (`X-Api-Key` header or `apiKey` query parameter): run `npx docgen credentials` on the server to get both. Operations marked (extension) are not in the interface specification; they fill its "not shown" gaps. Every operation may answer 429 TOO_MANY_REQUESTS with a Retry-After header (seconds): per subscription past RATE_LIMIT_BURST requests at once or RATE_LIMIT_PER_MINUTE sustained (all its API keys together); per client address past AUTH_FAILURES_BURST / AUTH_FAILURES_PER_MINUTE failed authentications, or past the RATE_LIMIT_* numbers on the routes that need no credentials. Template authors: the [template studio](/studio) (same origin) shows the tags of a template, the data it expects and a live preview, through these operations.',
      },
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
          apiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-Api-Key' },
          apiKeyQuery: { type: 'apiKey', in: 'query', name: 'apiKey' },
          callbackBearer: {
            type: 'http',
            scheme: 'bearer',
            description: "What the service sends to your callback endpoint: the sub claim of the request's client-authorization token",
          },
        },
      },
      security: [
        { bearer: [], apiKeyHeader: [] },
        { bearer: [], apiKeyQuery: [] },
      ],
    },
    transformObject: (documentObject) => {
      const spec = 'openapiObject' in documentObject ? documentObject.openapiObject : documentObject.swaggerObject;
      return finishDocument(spec as Json, opts.serverUrl());
    },
  });
  await app.register(swaggerUi, { routePrefix: '/v1/docs' });
  app.get('/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger());
});
