// Upload retention (spec 3, 8): an uploaded template or data file is removed when a generate consumes it
// or when its retention period ends, whichever comes first. Removing = the stored_files row gets
// `removed_date` (its urn stops resolving) and the bytes are erased. Template and data-source records
// that point at the urn are not touched: they survive, and their urn must be updated after a re-upload.
import { markFileRemoved, markFilesRemoved } from '../store/files.ts';
import type { ActivityDeps } from './deps.ts';

export interface ConsumeUploadsInput {
  subscriptionId: string;
  /** The urns a generate request named with loadMethod Storage (template and data). */
  urns: string[];
}

export interface ExpireUploadInput {
  subscriptionId: string;
  fileId: string;
  blobKey: string;
}

export function retentionActivities(deps: ActivityDeps) {
  return {
    /** Removes the uploads a generate request named; ids that are not live uploads of the subscription
     *  (unknown, another tenant's, a delivered document, already removed) are left alone. */
    async consumeUploads(input: ConsumeUploadsInput): Promise<{ removed: string[] }> {
      // One statement for all of them (a template and a data file, usually), then the bytes, in parallel.
      const gone = await markFilesRemoved(deps.db, input.subscriptionId, input.urns, ['template', 'data']);
      await Promise.all(gone.map((f) => deps.blobs.delete(f.blobKey)));
      const ids = new Set(gone.map((f) => f.id.toLowerCase()));
      return { removed: [...new Set(input.urns)].filter((u) => ids.has(u.toLowerCase())) };
    },

    /** The retention timer's end. Erases the bytes even when the row is gone or already removed (a
     *  consumed upload, or an upload whose record was rolled back after its timer started). */
    async expireUpload(input: ExpireUploadInput): Promise<{ removed: boolean }> {
      const key = await markFileRemoved(deps.db, input.subscriptionId, input.fileId, ['template', 'data']);
      await deps.blobs.delete(key ?? input.blobKey);
      return { removed: key !== undefined };
    },
  };
}
