import type { BlobRef } from '../connectors/storage/blob-store.ts';
import type { ActivityDeps } from './deps.ts';

export function scratchActivities(deps: ActivityDeps) {
  return {
    /** Removes a run's intermediate blobs once the run is over, whatever its outcome. */
    async discardScratch(refs: BlobRef[]): Promise<void> {
      for (const ref of refs) {
        if (ref.key.startsWith('scratch/')) await deps.blobs.delete(ref.key);
      }
    },
  };
}
