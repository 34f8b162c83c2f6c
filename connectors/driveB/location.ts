// DriveB: Google Drive, through the subscription's driveB connection (connection.ts). urns are Drive file
// ids; paths are folders from the drive's root (My Drive, or the connection's shared drive), created on
// write.
// - readTemplate: a Google Doc / Sheet / Slides deck is exported to its Office twin (docx / xlsx / pptx)
//   so the engine merges it with the one template language; Office files stored in Drive are downloaded.
// - readData: a JSON file, or a Google Sheet whose first row names the fields: {rows: [{field: value}]}.
// - write: uploads into document.path; gdoc / gsheet / gslide upload the merged Office file converting it
//   to the native type. Drive allows duplicate names, so docgen allocates them: the file goes up under a
//   temporary name (".docgen-<urn>"), then, holding the folder's names lock (one delivery at a time per
//   connection and folder, across processes: store/location-writes.ts withLocationLock), the name is
//   looked up and the file renamed: rename (default: "name (1)"), fail (the temporary file is deleted) or
//   replace. Replace writes the new content into the existing file in place (files.update with media),
//   keeping its id, link and permissions. The workflow's urn is stored in the file's appProperties: a
//   retried write finds the file its earlier attempt created or replaced (exactly one file per generation);
//   a resumable upload that died mid-way created nothing. Folders are created under a lock too (drive.ts).
// - reads stream into the blob store, up to MAX_READ_BYTES.
// - sharing: `anyone` reader/writer for the anonymous flags, `user` reader/writer per address without a
//   notification e-mail (unless `notify`); links are the file's webViewLink; per-user results.
// - remove: delete = trash (recoverable), permanentDelete = delete.
// - copyWithin / moveWithin (manage inside DriveB: files.copy, addParents/removeParents) and nativeMerge.
//
// The parts, by operation: session.ts (the Drive operations of a step), names.ts, errors.ts (Google's
// answers as the caller's errors), read.ts, write.ts (with settle.ts, the names lock, and share.ts),
// within.ts (copy and move inside the drive), remove.ts, merge-in-place.ts (native merge).
import type { Location, LocationContext, NativeMergeRequest, WriteRequest, Written } from '../location.ts';
import type { LocationDeps } from '../location.ts';
import { DEFAULT_RETRY, type RetryPolicy } from './client.ts';
import { driveBNativeMerge } from './merge-in-place.ts';
import { driveBReads } from './read.ts';
import { driveBRemovals } from './remove.ts';
import { driveBSession } from './session.ts';
import { driveBWithin } from './within.ts';
import { driveBWrite } from './write.ts';

export { sheetRowsToData } from './read.ts';
export { MAX_READ_BYTES } from './session.ts';

/** What DriveB adds to the Location interface. */
export interface DriveBLocation extends Location {
  copyWithin(ctx: LocationContext, sourceUrn: string, req: Omit<WriteRequest, 'source'>): Promise<Written>;
  moveWithin(ctx: LocationContext, sourceUrn: string, req: Omit<WriteRequest, 'source'>): Promise<Written | undefined>;
  nativeMerge(ctx: LocationContext, req: NativeMergeRequest): Promise<Written & { pages: number }>;
}

export function driveBLocation(
  deps: LocationDeps,
  retry: RetryPolicy = DEFAULT_RETRY,
  limits: { maxReadBytes?: number } = {},
): DriveBLocation {
  const session = driveBSession(deps, retry, limits);
  return {
    ...driveBReads(session),
    ...driveBWrite(session),
    ...driveBRemovals(session),
    ...driveBWithin(session),
    ...driveBNativeMerge(session),
  };
}
