// DriveA's write: the bytes uploaded under a temporary name into the folder (made where missing), journaled,
// then placed under the final name with the clash policy and shared as asked. A refused write leaves
// nothing: the temporary file and the folders it made go.
import { outputFileName } from '../../core/formats.ts';
import { type Location, LocationError, type WriteRequest } from '../location.ts';
import type { LocationDeps } from '../location.ts';
import type { Connect, Opened } from './connect.ts';
import { mapped } from './errors.ts';
import { folder, removeMadeFolders } from './folders.ts';
import { journaled, placeAs, placed, temporaryName } from './journal.ts';
import { type Conflict, folderSegments } from './names.ts';
import { upload } from './upload.ts';

export function driveAWrite(deps: LocationDeps, connect: Connect): Pick<Location, 'write'> {
  return {
    async write(ctx, req: WriteRequest) {
      const name = outputFileName(req.name, req.fileFormat);
      const conflict: Conflict = req.conflict ?? 'rename';
      const made: string[] = [];
      let opened: Opened | undefined;
      try {
        const segments = folderSegments(req.path);
        opened = await connect(ctx);
        const { graph, drive } = opened;
        // With replace, the final name itself is as repeatable as a temporary one (a retry replaces the same
        // file again), and the replaced file keeps its id, versions and sharing.
        const tmp = conflict === 'replace' ? name : temporaryName(req.urn, req.fileFormat);
        const item = await journaled(deps.db, ctx, req.urn, graph, drive, {
          temporaryName: conflict === 'replace' ? '' : tmp,
          make: async (journal) => upload(deps.blobs, graph, drive, await folder(graph, drive, segments, made), tmp, req.source, journal),
          place: (i) => placeAs(graph, drive, i, name, conflict),
        });
        return await placed(graph, drive, item, segments, req.sharing);
      } catch (err) {
        const refusal = mapped(err, { field: 'document.name' });
        // Final (the caller's answer): the folders made for it go; a transient failure keeps them for the retry.
        if (refusal instanceof LocationError && opened && made.length > 0) await removeMadeFolders(opened.graph, opened.drive, made);
        throw refusal;
      }
    },
  };
}
