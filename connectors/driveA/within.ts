// Copy and move inside DriveA (manage): Graph's asynchronous copy to a temporary name, journaled like a
// write, then the final name; a move is a PATCH of the item's parent and name. The bytes never pass
// through the service.
import { setTimeout as sleep } from 'node:timers/promises';
import { outputFileName } from '../../core/formats.ts';
import { putLocationWrite, getLocationWrite } from '../../store/location-writes.ts';
import type { Location, LocationDeps } from '../location.ts';
import type { Connect } from './connect.ts';
import { mapped } from './errors.ts';
import { folder } from './folders.ts';
import { type DriveItem, type GraphClient, GraphError } from './graph.ts';
import { JOURNAL, journaled, placeAs, placed, temporaryName } from './journal.ts';
import { type Conflict, folderSegments, itemAddress } from './names.ts';

export function driveAWithin(deps: LocationDeps, connect: Connect): Pick<Location, 'copyWithin' | 'moveWithin'> {
  return {
    /** Graph's copy (asynchronous: 202 and a monitor URL) to a temporary name, journaled like a write,
     *  then the final name; the bytes never pass through the service. */
    async copyWithin(ctx, urn, req) {
      const name = outputFileName(req.name, req.fileFormat);
      const conflict: Conflict = req.conflict ?? 'rename';
      try {
        const segments = folderSegments(req.path, 'targetDocument.path');
        const { graph, drive } = await connect(ctx);
        const source = itemAddress(drive, urn, 'document');
        const tmp = temporaryName(req.urn, req.fileFormat);
        const item = await journaled(deps.db, ctx, req.urn, graph, drive, {
          temporaryName: tmp,
          make: async (journal) => {
            if (journal.resume) {
              // A copy an earlier attempt started: follow it, unless its monitor has expired.
              try {
                return await graph.json<DriveItem>('GET', `${drive}/items/${encodeURIComponent(await copied(graph, journal.resume))}`);
              } catch (err) {
                if (!(err instanceof GraphError && err.status === 404)) throw err;
              }
            }
            const parentId = await folder(graph, drive, segments);
            const driveId = (await graph.json<{ id: string }>('GET', drive)).id;
            const res = await graph.request('POST', `${source}/copy`, {
              json: { parentReference: { driveId, id: parentId }, name: tmp },
              query: { '@microsoft.graph.conflictBehavior': 'replace' },
            });
            await res.body?.cancel();
            const monitor = res.headers.get('location') ?? '';
            if (!monitor) throw new Error('DriveA accepted the copy without a monitor URL');
            await journal.write({ state: 'uploading', itemId: null, uploadUrl: monitor });
            return graph.json<DriveItem>('GET', `${drive}/items/${encodeURIComponent(await copied(graph, monitor))}`);
          },
          place: (i) => placeAs(graph, drive, i, name, conflict),
        });
        return await placed(graph, drive, item, segments, req.sharing);
      } catch (err) {
        throw mapped(err, { field: 'targetDocument.name' });
      }
    },

    /** PATCH of the item's parent and name: the same item, in its new folder (journaled: a retried move
     *  returns the moved item). */
    async moveWithin(ctx, urn, req) {
      const name = outputFileName(req.name, req.fileFormat);
      const conflict: Conflict = req.conflict ?? 'rename';
      try {
        const segments = folderSegments(req.path, 'targetDocument.path');
        const { graph, drive } = await connect(ctx);
        const earlier = await getLocationWrite(deps.db, ctx.subscriptionId, JOURNAL, req.urn);
        let item: DriveItem;
        if (earlier?.state === 'placed' && earlier.itemId)
          item = await graph.json<DriveItem>('GET', `${drive}/items/${encodeURIComponent(earlier.itemId)}`);
        else {
          const source = await graph.json<DriveItem>('GET', itemAddress(drive, urn, 'document'));
          const own = await graph.json<{ id: string }>('GET', drive);
          // Graph moves inside one drive only; across drives the caller copies and removes.
          if (source.parentReference?.driveId && source.parentReference.driveId !== own.id) return undefined;
          item = await placeAs(graph, drive, source, name, conflict, await folder(graph, drive, segments));
          await putLocationWrite(deps.db, ctx.subscriptionId, JOURNAL, req.urn, { state: 'placed', itemId: item.id, uploadUrl: null });
        }
        return await placed(graph, drive, item, segments, req.sharing);
      } catch (err) {
        throw mapped(err, { field: 'targetDocument.name', reading: undefined });
      }
    },
  };
}

/** Polls a copy monitor (no token: it is pre-authenticated) until the copy completes; the new item's id. */
async function copied(graph: GraphClient, monitor: string): Promise<string> {
  for (let poll = 0; ; poll++) {
    const status = await graph.json<{ status?: string; resourceId?: string; error?: { code?: string; message?: string } }>('GET', monitor, {
      absolute: true,
    });
    if (status.status === 'completed' && status.resourceId) return status.resourceId;
    if (status.status === 'failed') {
      throw new GraphError(
        409,
        status.error?.code ?? 'copyFailed',
        `DriveA could not copy the file: ${status.error?.message ?? status.error?.code ?? 'failed'}`,
        status,
      );
    }
    if (poll > 120) throw new Error('the DriveA copy did not finish in time; retrying');
    await sleep(Math.min(2000, 100 * 2 ** poll));
  }
}
