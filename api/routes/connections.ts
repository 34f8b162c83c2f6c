// Connections (an extension: the spec does not show how drives are connected). One connection per
// subscription and kind: PUT creates or replaces it, GET shows its settings (never its secrets), DELETE
// removes it. Requests that need a location whose connection is missing answer 400 CONNECTION_MISSING
// before anything is queued (connectors/registry.ts). The schemas and their prose are in
// api/schemas/common.ts.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { ConnectionKind, ConnectorSettings } from '../../connectors/connections.ts';
import { CONNECTION_KINDS } from '../../connectors/registry.ts';
import { ApiError } from '../../core/errors.ts';
import { deleteConnection, getConnectionByKind, listConnections, putConnection, type StoredConnection } from '../../store/connections.ts';
import type { Db } from '../../store/db.ts';
import { seal } from '../../security/sealed.ts';
import { success } from '../envelope.ts';
import * as S from '../schemas/common.ts';

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
  if (!kind) throw new ApiError('VALIDATION_ERROR', `kind: ${JSON.stringify(raw.slice(0, 40))} is not one of ${S.KIND_NAMES.join(', ')}`);
  return kind;
}

const connectionRoutes: FastifyPluginAsyncTypebox<{ db: Db; settings: ConnectorSettings }> = async (app, opts) => {
  const { db } = opts;
  // One PUT per kind (not a path parameter): each documents its own body, and /common/connection/list
  // stays a path with GET only.
  for (const [name, { kind, method }] of CONNECTION_KINDS) {
    app.put(`/common/connection/${name}`, { schema: S.putConnection(name, method, kind.body) }, async (request, reply) => {
      const parsed = kind.parse(request.body.connection, opts.settings);
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
    });
  }

  app.get(
    '/common/connection/list',
    {
      schema: S.listConnections,
    },
    async (request) => {
      const rows = await listConnections(db, request.auth.subscriptionId);
      return success(request, 200, { connections: rows.map(view) });
    },
  );

  app.get(
    '/common/connection/:kind/get',
    {
      schema: S.getConnection,
    },
    async (request) => {
      const kind = kindOf(request.params.kind);
      const c = await getConnectionByKind(db, request.auth.subscriptionId, kind.kind);
      if (!c) throw new ApiError('NOT_FOUND_BY_ID', `the subscription has no ${kind.kind} connection`);
      return success(request, 200, { connection: view(c) });
    },
  );

  app.delete(
    '/common/connection/:kind/delete',
    {
      schema: S.deleteConnection,
    },
    async (request) => {
      const kind = kindOf(request.params.kind);
      if (!(await deleteConnection(db, request.auth.subscriptionId, kind.kind)))
        throw new ApiError('NOT_FOUND_BY_ID', `the subscription has no ${kind.kind} connection`);
      return success(request, 200, { kind: kind.kind, deleted: true });
    },
  );
};

export default connectionRoutes;
