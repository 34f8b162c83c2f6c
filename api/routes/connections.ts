// Connections (an extension: the spec does not show how drives are connected). One connection per
// subscription and kind: PUT creates or replaces it, GET shows its settings (never its secrets), DELETE
// removes it. Requests that need a location whose connection is missing answer 400 CONNECTION_MISSING
// before anything is queued (connectors/registry.ts).
import type { FastifyInstance } from 'fastify';
import Type from 'typebox';
import type { ConnectionKind, ConnectorSettings } from '../../connectors/connections.ts';
import { CONNECTION_KINDS } from '../../connectors/registry.ts';
import { ApiError } from '../../core/errors.ts';
import { deleteConnection, getConnectionByKind, listConnections, putConnection, type StoredConnection } from '../../store/connections.ts';
import type { Db } from '../../store/db.ts';
import { seal } from '../../security/sealed.ts';
import { success } from '../envelope.ts';
import { errorResponses, successEnvelope } from '../schemas.ts';

const TAG = 'Connections';
/** The kinds the registered locations need (connectors/registry.ts). */
const KIND_NAMES = [...CONNECTION_KINDS.keys()];

export const Connection = Type.Object({
  id: Type.String({ format: 'uuid', description: 'Stays the same when the connection is replaced' }),
  kind: Type.String({ description: KIND_NAMES.join(', ') }),
  settings: Type.Object({}, { additionalProperties: true, description: 'What was sent, without the secrets' }),
  secrets: Type.Array(Type.String(), { description: 'Names of the stored secrets (their values are never returned)' }),
  createdDate: Type.String({ format: 'date-time' }),
  lastModifiedDate: Type.String({ format: 'date-time' }),
  lastModifiedUserGuid: Type.String({ format: 'uuid' }),
});

const KindParam = Type.Object({ kind: Type.String({ maxLength: 40, description: KIND_NAMES.join(', ') }) });

function view(c: StoredConnection) {
  return {
    id: c.id,
    kind: c.kind,
    settings: c.settings,
    secrets: c.secretNames,
    createdDate: c.createdDate,
    lastModifiedDate: c.lastModifiedDate,
    lastModifiedUserGuid: c.lastModifiedUserGuid,
  };
}

function kindOf(raw: string): ConnectionKind {
  const kind = CONNECTION_KINDS.get(raw)?.kind;
  if (!kind) throw new ApiError('VALIDATION_ERROR', `kind: ${JSON.stringify(raw.slice(0, 40))} is not one of ${KIND_NAMES.join(', ')}`);
  return kind;
}

export default async function connectionRoutes(app: FastifyInstance, opts: { db: Db; settings: ConnectorSettings }) {
  const { db } = opts;
  // One PUT per kind (not a path parameter): each documents its own body, and /common/connection/list
  // stays a path with GET only.
  for (const [name, { kind, method }] of CONNECTION_KINDS) {
    const fields = Object.keys((kind.body as { properties?: Record<string, unknown> }).properties ?? {});
    app.put(
      `/common/connection/${name}`,
      {
        schema: {
          tags: [TAG],
          summary: `Connect ${method} (extension)`,
          description: [
            `Creates or replaces the subscription's ${name} connection; body \`{connection: {...}}\`. Answers 201 when created, 200 when replaced (the id stays).`,
            `${(kind.body as { description?: string }).description ?? ''}. Fields: ${fields.join(', ')}.`,
            'Secrets (client secrets, private keys, refresh tokens) are sealed with the service key at rest, never returned, never logged and never put into a workflow: a generate or manage carries the connection id and the step that talks to the drive opens it. Endpoints are service settings (DRIVEA_GRAPH_URL, DRIVEA_LOGIN_URL, DRIVEB_API_URL, DRIVEB_TOKEN_URL, CRM_LOGIN_HOSTS), never values of a connection.',
            'A missing or malformed field answers 400 VALIDATION_ERROR naming it (`connection.<field>`).',
          ].join('\n\n'),
          body: Type.Object({ connection: kind.body }),
          response: { 200: successEnvelope(Type.Object({ connection: Connection })), 201: successEnvelope(Type.Object({ connection: Connection })), ...errorResponses(400, 401, 500) },
        },
      },
      async (request, reply) => {
        const parsed = kind.parse((request.body as { connection: Record<string, unknown> }).connection, opts.settings);
        if ('errors' in parsed) throw new ApiError('VALIDATION_ERROR', parsed.errors.map((e) => e.message).join('; '), parsed.errors);
        const { subscriptionId, userId } = request.auth;
        const { connection, created } = await putConnection(db, {
          subscriptionId,
          userId,
          kind: kind.kind,
          settings: parsed.settings,
          sealedSecrets: await seal(db, subscriptionId, JSON.stringify(parsed.secrets)),
          secretNames: Object.keys(parsed.secrets).sort(),
        });
        const status = created ? 201 : 200;
        return reply.code(status).send(success(request, status, { connection: view(connection) }));
      },
    );
  }

  app.get(
    '/common/connection/list',
    {
      schema: {
        tags: [TAG],
        summary: "List the subscription's connections (extension)",
        description: 'Every connection of the caller\'s subscription, by kind, with its settings and the names (never the values) of its secrets.',
        response: { 200: successEnvelope(Type.Object({ connections: Type.Array(Connection) })), ...errorResponses(400, 401, 500) },
      },
    },
    async (request) => {
      const rows = await listConnections(db, request.auth.subscriptionId);
      return success(request, 200, { connections: rows.map(view) });
    },
  );

  app.get(
    '/common/connection/:kind/get',
    {
      schema: {
        tags: [TAG],
        summary: 'Get a connection (extension)',
        description: 'The connection of that kind, without its secrets; 404 NOT_FOUND_BY_ID when the subscription has none.',
        params: KindParam,
        response: { 200: successEnvelope(Type.Object({ connection: Connection })), ...errorResponses(400, 401, 404, 500) },
      },
    },
    async (request) => {
      const kind = kindOf((request.params as { kind: string }).kind);
      const c = await getConnectionByKind(db, request.auth.subscriptionId, kind.kind);
      if (!c) throw new ApiError('NOT_FOUND_BY_ID', `the subscription has no ${kind.kind} connection`);
      return success(request, 200, { connection: view(c) });
    },
  );

  app.delete(
    '/common/connection/:kind/delete',
    {
      schema: {
        tags: [TAG],
        summary: 'Delete a connection (extension)',
        description:
          'Removes the connection and its sealed secrets. Requests that need it answer 400 CONNECTION_MISSING from then on; a generate or manage already queued with it fails with CONNECTION_MISSING at its next step that needs the drive. 404 NOT_FOUND_BY_ID when there was none.',
        params: KindParam,
        response: { 200: successEnvelope(Type.Object({ kind: Type.String(), deleted: Type.Boolean() })), ...errorResponses(400, 401, 404, 500) },
      },
    },
    async (request) => {
      const kind = kindOf((request.params as { kind: string }).kind);
      if (!(await deleteConnection(db, request.auth.subscriptionId, kind.kind))) throw new ApiError('NOT_FOUND_BY_ID', `the subscription has no ${kind.kind} connection`);
      return success(request, 200, { kind: kind.kind, deleted: true });
    },
  );
}
