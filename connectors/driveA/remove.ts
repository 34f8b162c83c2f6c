// DriveA removals: manage's delete / permanentDelete of a file, and the retention sweep's clean-up of a write
// whose run ended before placing its file.
import { deleteLocationWrite } from '../../store/location-writes.ts';
import type { Location, LocationDeps } from '../location.ts';
import type { Connect } from './connect.ts';
import { mapped } from './errors.ts';
import { type DriveItem, GraphError } from './graph.ts';
import { JOURNAL, openedJournal } from './journal.ts';
import { itemAddress } from './names.ts';

export function driveARemovals(deps: LocationDeps, connect: Connect): Pick<Location, 'remove' | 'sweepLeftover'> {
  return {
    /** A write whose run ended before placing its file: the temporary `.docgen-<urn>` file (only under that
     *  name) or the upload session goes, then the journal entry. Connection failures throw (kept for the
     *  next sweep). */
    async sweepLeftover(ctx, urn) {
      const earlier = await openedJournal(deps.db, ctx, urn);
      if (!earlier || earlier.state === 'placed') return;
      try {
        const { graph, drive } = await connect(ctx);
        if (earlier.itemId) {
          try {
            const item = await graph.json<DriveItem>('GET', `${drive}/items/${encodeURIComponent(earlier.itemId)}`);
            if (item.name.startsWith('.docgen-'))
              await graph.request('POST', `${drive}/items/${encodeURIComponent(item.id)}/permanentDelete`);
          } catch (err) {
            if (!(err instanceof GraphError && err.status === 404)) throw err;
          }
        } else if (earlier.uploadUrl) {
          // An upload session (or a copy monitor): cancelling it drops what it holds; an expired one is gone.
          await graph.request('DELETE', earlier.uploadUrl, { absolute: true }).catch(() => undefined);
        }
      } catch (err) {
        throw mapped(err, { urn });
      }
      await deleteLocationWrite(deps.db, ctx.subscriptionId, JOURNAL, urn);
    },

    /** delete: to the recycle bin; permanentDelete: gone. Already gone (a retry) is done. */
    async remove(ctx, urn, mode) {
      try {
        const { graph, drive } = await connect(ctx);
        const address = itemAddress(drive, urn, 'document');
        if (mode === 'permanentDelete') await graph.request('POST', `${address}/permanentDelete`);
        else await graph.request('DELETE', address);
      } catch (err) {
        if (err instanceof GraphError && err.status === 404) return;
        throw mapped(err, { urn });
      }
    },
  };
}
