// DriveB removals (manage): delete = trash (recoverable), permanentDelete = delete.
import type { Location } from '../location.ts';
import { googleError } from './client.ts';
import { asLocationError } from './errors.ts';
import type { DriveBSession } from './session.ts';

export function driveBRemovals(b: DriveBSession): Pick<Location, 'remove'> {
  return {
    async remove(ctx, urn, mode) {
      const ops = await b.open(ctx);
      try {
        if (mode === 'permanentDelete') await ops.delete(urn);
        else await ops.trash(urn);
      } catch (err) {
        // Already gone (a retried permanent delete) is done.
        if (googleError(err).status === 404) return;
        throw asLocationError(err, 'TEMPLATE_NOT_FOUND', `sourceDocument.urn ${urn}`);
      }
    },
  };
}
