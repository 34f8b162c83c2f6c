// DriveA: OneDrive / SharePoint document libraries through Microsoft Graph, with the subscription's
// connection (connection.ts: Entra client credentials and the drive). Reads download into the blob store
// (the run's scratch), writes upload from it; sharing uses createLink and invite.
//
// urn forms (template.urn, data.urn, relatedItems[].urn, sourceDocument.urn):
//   - an item id of the connection's drive ("01BYE5RZ6QN3ZWBTUFOFD3GSPGOHDJD36K"); what a delivery returns;
//   - driveId!itemId: an item of another drive of the same tenant (split at the last "!", since
//     SharePoint drive ids contain one: "b!Xy…!01BYE5…");
//   - root:/Folder/file.docx: a path from the connection's drive root (the closing colon is optional).
//
// Exactly one file per write, across retries (a worker killed between the upload and the document
// record): the bytes go under a temporary name derived from the workflow's urn (".docgen-<urn>.<ext>",
// conflictBehavior replace, so a repeated upload overwrites instead of adding), the item id is journaled
// (store/location-writes.ts), and only then is the item renamed to its final name with the clash policy.
// A retried write reads the journal: a file that was uploaded is renamed (unless it already was), a
// file that was placed is returned as it is, a large upload resumes its session from
// nextExpectedRanges. Name clashes: `rename` by default (Graph's "name 1.docx"), `replace` or `fail`
// when the request asks (WriteRequest.conflict; `fail` answers VALIDATION_ERROR and leaves nothing).
// `replace` uploads straight to the final name (conflictBehavior replace is repeatable by itself), so
// the replaced file keeps its id, its versions and its sharing.
//
// Names: the API refuses, before queueing, a name or folder SharePoint would refuse (nameProblem); should
// Graph refuse a final name all the same (a rule we cannot see from here, such as the site's share of the
// 400-character path), the temporary file or copy is deleted for good: a failed write leaves nothing. The
//
// The parts, by operation: connect.ts (the Graph client of a step), names.ts (urn forms, naming rules),
// errors.ts (Graph's answers as the caller's errors), read.ts, write.ts (with upload.ts, folders.ts,
// journal.ts, share.ts), within.ts (copy and move inside the drive), remove.ts (delete, leftovers).
import type { Location, LocationDeps } from '../location.ts';
import { driveAConnect } from './connect.ts';
import { driveANameProblem } from './names.ts';
import { driveAReads } from './read.ts';
import { driveARemovals } from './remove.ts';
import { driveAWithin } from './within.ts';
import { driveAWrite } from './write.ts';

export { driveANameProblem, driveANameRule, folderSegments, itemAddress } from './names.ts';
export { SIMPLE_UPLOAD_MAX, UPLOAD_CHUNK } from './upload.ts';

export function driveALocation(deps: LocationDeps): Location {
  const connect = driveAConnect(deps);
  return {
    nameProblem: driveANameProblem,
    ...driveAReads(deps, connect),
    ...driveAWrite(deps, connect),
    ...driveAWithin(deps, connect),
    ...driveARemovals(deps, connect),
  };
}
