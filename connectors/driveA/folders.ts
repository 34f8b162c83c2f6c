// DriveA folders of a write: found or made (a concurrent delivery may make the same one), and the ones a
// refused write made removed again.
import { LocationError } from '../location.ts';
import { type DriveItem, type GraphClient, GraphError } from './graph.ts';

/** The folder `segments` below the root, made where missing; its item id. */
export async function folder(graph: GraphClient, drive: string, segments: string[], made?: string[]): Promise<string> {
  // Usually the folder is there already: one request by path.
  if (segments.length > 0) {
    try {
      const found = await graph.json<DriveItem>('GET', `${drive}/root:/${segments.map(encodeURIComponent).join('/')}:`);
      if (found.folder) return found.id;
    } catch (err) {
      if (!(err instanceof GraphError && err.status === 404)) throw err;
    }
  }
  let parent = (await graph.json<DriveItem>('GET', `${drive}/root`)).id;
  for (const name of segments) {
    let child: DriveItem | undefined;
    try {
      child = await graph.json<DriveItem>('GET', `${drive}/items/${encodeURIComponent(parent)}:/${encodeURIComponent(name)}:`);
    } catch (err) {
      if (!(err instanceof GraphError && err.status === 404)) throw err;
    }
    if (!child) {
      try {
        child = await graph.json<DriveItem>('POST', `${drive}/items/${encodeURIComponent(parent)}/children`, {
          json: { name, folder: {}, '@microsoft.graph.conflictBehavior': 'fail' },
        });
        made?.push(child.id);
      } catch (err) {
        // Made meanwhile by a concurrent delivery into the same folder: use it.
        if (!(err instanceof GraphError && err.status === 409)) throw err;
        child = await graph.json<DriveItem>('GET', `${drive}/items/${encodeURIComponent(parent)}:/${encodeURIComponent(name)}:`);
      }
    }
    if (!child.folder) throw new LocationError('VALIDATION_ERROR', `document.path: ${name} is a file in DriveA, not a folder`);
    parent = child.id;
  }
  return parent;
}

/** Spec 4.8: a refused write leaves nothing in the target, so the folders this request made go again,
 *  deepest first, each only if it is still empty (another delivery may have put a file there meanwhile).
 *  Best effort: a folder that cannot be removed now stays, and the refusal is what the caller hears. */
export async function removeMadeFolders(graph: GraphClient, drive: string, made: string[]): Promise<void> {
  for (const id of [...made].reverse()) {
    try {
      const item = await graph.json<DriveItem>('GET', `${drive}/items/${encodeURIComponent(id)}`);
      if (!item.folder || (item.folder.childCount ?? 0) > 0) return;
      await graph.request('POST', `${drive}/items/${encodeURIComponent(id)}/permanentDelete`);
    } catch {
      return;
    }
  }
}
