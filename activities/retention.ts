// Upload retention (spec 3, 8): an uploaded template or data file is removed when a generate consumes it
// or when its retention period ends, whichever comes first. Removing = the stored_files row gets
// `removed_date` (its urn stops resolving). The bytes are erased when the retention period ends, not when a
// generate consumes the file: the consuming run may have to read it again (a local activity runs again
// when its workflow task was lost), and only that run can (store/files.ts consumeFiles). Template and
// data-source records that point at the urn are not touched: they survive, and their urn must be updated
// after a re-upload.
import { consumeFiles, markFileRemoved } from '../store/files.ts';
import type { ActivityDeps } from './deps.ts';
import { currentRun } from './scratch.ts';

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
    /** Consumes the uploads a generate request named (one statement); ids that are not live uploads of the
     *  subscription (unknown, another tenant's, a delivered document, already removed) are left alone. */
    async consumeUploads(input: ConsumeUploadsInput): Promise<{ removed: string[] }> {
      const run = currentRun();
      if (!run) throw new Error('consumeUploads runs as a workflow step (it needs the consuming run)');
      const gone = await consumeFiles(deps.db, input.subscriptionId, input.urns, ['template', 'data'], run.runId);
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
