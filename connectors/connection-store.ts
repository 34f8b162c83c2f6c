// The connection store the locations open connections with (ConnectionStore, connectors/location.ts).
// Secrets are unsealed here, inside the activity that talks to the drive, never earlier.
import type { Db } from '../store/db.ts';
import { getConnectionById, getConnectionByKind, type StoredConnection } from '../store/connections.ts';
import { unseal } from '../security/sealed.ts';
import { missingConnection } from './connections.ts';
import { type ConnectionStore, LocationError } from './location.ts';

export function connectionStore(db: Db): ConnectionStore {
  return {
    async open(ctx, kind) {
      let row: StoredConnection | undefined;
      if (ctx.connectionId) {
        row = await getConnectionById(db, ctx.subscriptionId, ctx.connectionId);
        if (row && row.kind !== kind) row = undefined;
        if (!row)
          throw new LocationError(
            'CONNECTION_MISSING',
            `the ${kind} connection this request was started with was deleted: connect it again with PUT /v1/common/connection/${kind}`,
          );
      } else {
        row = await getConnectionByKind(db, ctx.subscriptionId, kind);
        if (!row) throw new LocationError('CONNECTION_MISSING', missingConnection(kind));
      }
      const secrets = JSON.parse(await unseal(db, ctx.subscriptionId, row.sealedSecrets)) as Record<string, string>;
      return { id: row.id, kind, settings: row.settings, secrets, version: `${row.id}:${row.lastModifiedDate}` };
    },
    async idOf(subscriptionId, kind) {
      return (await getConnectionByKind(db, subscriptionId, kind))?.id;
    },
  };
}
