// Upload retention (spec 3, 8): an uploaded template or data file is removed when a generate consumes it
// or when its retention period ends, whichever comes first. Removing = the stored_files row gets
// `removed_date` (its urn stops resolving). The bytes are erased when the retention period ends, not when a
// generate consumes the file: the consuming run may have to read it again (a local activity runs again
// when its workflow task was lost), and only that run can (store/files.ts consumeFiles). The periodic sweep
// (workflows/retention.ts uploadSweeper) erases them; resolution already refuses an upload whose period is
// over (store/files.ts getFile), so the sweep's interval delays only the erasure. Template and
// data-source records that point at the urn are not touched: they survive, and their urn must be updated
// after a re-upload. The same sweep removes scratch files older than the longest run (RUN_TIME_LIMIT_MS).
import { RUN_TIME_LIMIT_MS } from '../core/run.ts';
import { Context } from '@temporalio/activity';
import { consumeFiles, expiredUploads, markFileRemoved, markUploadsErased } from '../store/files.ts';
import { staleLocationWrites } from '../store/location-writes.ts';
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

export interface SweepUploadsInput {
  /** At most this many uploads (and as many stale scratch files) per call. */
  limit: number;
  /** Scratch files older than this are removed (default RUN_TIME_LIMIT_MS: no run that wrote one can still
   *  be open). */
  scratchOlderThanMs?: number;
  /** Unfinished drive writes untouched for this long are swept (default RUN_TIME_LIMIT_MS). */
  journalOlderThanMs?: number;
}

/** A temporary file (or upload session) of a failed drive write that the sweep could not remove yet. */
export interface Leftover {
  subscriptionId: string;
  location: string;
  urn: string;
  since: string;
  reason: string;
}

/** A warning in the activity's log (the worker's), or on stderr outside an activity (a script, a test). */
function logWarn(message: string, fields: Record<string, unknown>): void {
  try {
    Context.current().log.warn(message, fields);
  } catch {
    process.emitWarning(`${message} ${JSON.stringify(fields)}`);
  }
}

/** Blob deletions in flight at once during a sweep. */
const ERASE_CONCURRENCY = 8;

export function retentionActivities(deps: ActivityDeps) {
  /** Deletes the blobs, ERASE_CONCURRENCY at a time. */
  async function eraseAll(keys: string[]): Promise<void> {
    let next = 0;
    const lane = async () => {
      while (next < keys.length) await deps.blobs.delete(keys[next++]!);
    };
    await Promise.all(Array.from({ length: Math.min(ERASE_CONCURRENCY, keys.length) }, lane));
  }

  /** What failed drive writes left (a `.docgen-<urn>` file uploaded, then the rename refused because the
   *  connection's credentials were rotated): removed once the connection works again. What cannot be
   *  removed yet is logged (a warning per leftover) and returned: the sweep's result in the Temporal UI
   *  lists it for the operator. */
  async function sweepLeftovers(before: Date, limit: number): Promise<{ removed: number; left: Leftover[] }> {
    if (!deps.locations) return { removed: 0, left: [] };
    let removed = 0;
    const left: Leftover[] = [];
    for (const w of await staleLocationWrites(deps.db, before, limit)) {
      const location = deps.locations.get(w.location);
      if (!location?.sweepLeftover) continue;
      try {
        await location.sweepLeftover({ subscriptionId: w.subscriptionId }, w.urn);
        removed++;
      } catch (err) {
        const reason = err instanceof Error ? err.message : String(err);
        left.push({ subscriptionId: w.subscriptionId, location: w.location, urn: w.urn, since: w.updatedDate.toISOString(), reason });
        logWarn(
          `a temporary file of a failed ${w.location} write is still there (.docgen-${w.urn}); it goes once the connection works again`,
          { subscriptionId: w.subscriptionId, urn: w.urn, since: w.updatedDate.toISOString(), reason },
        );
      }
    }
    return { removed, left };
  }

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

    /** One batch of the upload sweep: erases the bytes of uploads whose retention period is over, then marks
     *  their rows erased (and removed, unless a generate consumed them first). Bytes first: a sweep stopped
     *  in between finds the rows again and erases nothing twice that matters (deleting a missing key is a
     *  no-op). Returns how many it erased; fewer than `limit` means none is left. */
    async sweepUploads(
      input: SweepUploadsInput,
    ): Promise<{ erased: number; scratch: number; leftoversRemoved?: number; leftovers?: Leftover[] }> {
      const due = await expiredUploads(deps.db, input.limit);
      await eraseAll(due.map((f) => f.blobKey));
      await markUploadsErased(
        deps.db,
        due.map((f) => f.id),
      );
      // And what runs left in scratch: a run discards its scratch files when it ends, however it ends, but a
      // run stopped by the server (its time limit, a termination) runs no code, and a discard can fail.
      const before = new Date(Date.now() - (input.scratchOlderThanMs ?? RUN_TIME_LIMIT_MS));
      const stale = (await deps.blobs.list('scratch/', { modifiedBefore: before })).slice(0, input.limit);
      await eraseAll(stale);
      const { removed, left } = await sweepLeftovers(new Date(Date.now() - (input.journalOlderThanMs ?? RUN_TIME_LIMIT_MS)), input.limit);
      return {
        erased: due.length,
        scratch: stale.length,
        ...(removed > 0 ? { leftoversRemoved: removed } : {}),
        ...(left.length > 0 ? { leftovers: left } : {}),
      };
    },

    /** The end of a per-upload retention timer (uploadRetention workflows started before the sweep). Erases
     *  the bytes even when the row is gone or already removed (a consumed upload, or an upload whose record
     *  was rolled back after its timer started). */
    async expireUpload(input: ExpireUploadInput): Promise<{ removed: boolean }> {
      const key = await markFileRemoved(deps.db, input.subscriptionId, input.fileId, ['template', 'data']);
      await deps.blobs.delete(key ?? input.blobKey);
      return { removed: key !== undefined };
    },
  };
}
