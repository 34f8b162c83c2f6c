// A file a write, copy or native merge made under its temporary name gets its final name, holding the
// folder's names lock, by the clash policy.
import { LocationError } from '../location.ts';
import { googleError } from './client.ts';
import { type DriveFile, type DriveOps, oldest } from './drive.ts';
import { type Conflict, numbered } from './names.ts';

/** Gives `mine` (a file this write made under its temporary name, in `folderId`) its final name, holding
 *  the folder's names lock: `wanted` when free, else by the clash policy: rename ("name (1)"), fail (the
 *  file is deleted), replace. `replaceInPlace` (uploads): the existing file takes the content, keeping its
 *  id, link and permissions, and `mine` is deleted; without (copies): the existing files go to the trash
 *  and `mine` takes the name. A final name refused for any other reason deletes `mine` too. */
export async function settle(
  ops: DriveOps,
  mine: DriveFile,
  target: { folderId: string; wanted: string; native: boolean; conflict: Conflict; path: string },
  replaceInPlace?: (existing: DriveFile) => Promise<DriveFile>,
): Promise<DriveFile> {
  const drop = () => ops.delete(mine.id!).catch(() => undefined);
  let replacing: DriveFile | undefined;
  try {
    const named = await ops.lock(`names:${target.folderId}`, async () => {
      const clashes = (await ops.byName(target.folderId, target.wanted)).filter((f) => f.id !== mine.id);
      if (clashes.length === 0) return ops.rename(mine.id!, target.wanted);
      if (target.conflict === 'fail') {
        throw new LocationError(
          'VALIDATION_ERROR',
          `document.name: ${target.wanted} already exists in ${target.path || 'the root folder'} of DriveB (conflict: fail)`,
        );
      }
      if (target.conflict === 'replace') {
        if (replaceInPlace) {
          replacing = oldest(clashes);
          return undefined;
        }
        for (const old of clashes) await ops.trash(old.id!);
        return ops.rename(mine.id!, target.wanted);
      }
      for (let n = 1; n < 1000; n++) {
        const candidate = numbered(target.wanted, n, target.native);
        if ((await ops.byName(target.folderId, candidate)).length === 0) return ops.rename(mine.id!, candidate);
      }
      throw new LocationError('VALIDATION_ERROR', `document.name: no free name for ${target.wanted} in ${target.path}`);
    });
    if (named) return named;
  } catch (err) {
    // Refused for good: the temporary file goes; a transient failure leaves it for the retry to find.
    if (err instanceof LocationError || !googleError(err).retryable) await drop();
    throw err;
  }
  const replaced = await replaceInPlace!(replacing!);
  await drop();
  return replaced;
}
