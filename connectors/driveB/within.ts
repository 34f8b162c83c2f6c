// Copy and move inside DriveB (manage): files.copy under a temporary name then named, and a move of the
// file itself (addParents/removeParents), marked with the move's urn so a retry finds it in place.
import { isNativeFormat } from '../../core/formats.ts';
import { type Location, LocationError } from '../location.ts';
import { formatOfMime } from './drive.ts';
import { asLocationError } from './errors.ts';
import { driveName, numbered, temporaryName } from './names.ts';
import type { DriveBSession } from './session.ts';
import { settle } from './settle.ts';
import { share, written } from './share.ts';

export function driveBWithin(b: DriveBSession): Required<Pick<Location, 'copyWithin' | 'moveWithin'>> {
  return {
    async copyWithin(ctx, sourceUrn, target) {
      const ops = await b.open(ctx);
      try {
        let copy = await ops.byWriteId(target.urn);
        const source = copy ? undefined : await ops.get(sourceUrn);
        const format = formatOfMime((copy ?? source)!.mimeType, source?.name ?? '');
        const temporary = temporaryName(target.urn, format);
        if (!copy || copy.name === temporary) {
          const folderId = (await ops.folder(target.path, true))!;
          copy ??= await ops.copy(sourceUrn, folderId, temporary, { docgenUrn: target.urn });
          copy = await settle(ops, copy, {
            folderId,
            wanted: driveName(target.name, format),
            native: isNativeFormat(format),
            conflict: target.conflict ?? 'rename',
            path: target.path,
          });
        }
        // targetDocument.options.driveB shares the copy, as write does.
        return written(copy, target.path, await share(ops, copy, target.sharing));
      } catch (err) {
        throw asLocationError(err, 'TEMPLATE_NOT_FOUND', `sourceDocument.urn ${sourceUrn}`, b.viaServiceAccount.has(ops));
      }
    },

    async moveWithin(ctx, sourceUrn, target) {
      const ops = await b.open(ctx);
      try {
        const source = await ops.get(sourceUrn);
        // A retried move finds the file marked with this move's urn: it is already in place.
        let moved = source;
        if (source.appProperties?.docgenMove !== target.urn) {
          const format = formatOfMime(source.mimeType, source.name ?? '');
          const folderId = (await ops.folder(target.path, true))!;
          const wanted = driveName(target.name, format);
          const conflict = target.conflict ?? 'rename';
          // The name is chosen and taken in one request, holding the folder's names lock.
          moved = await ops.lock(`names:${folderId}`, async () => {
            const clashes = (await ops.byName(folderId, wanted)).filter((f) => f.id !== source.id);
            let name = wanted;
            if (clashes.length > 0 && conflict === 'fail')
              throw new LocationError(
                'VALIDATION_ERROR',
                `targetDocument.name: ${wanted} already exists in ${target.path || 'the root folder'} of DriveB (conflict: fail)`,
              );
            if (clashes.length > 0 && conflict === 'replace') for (const old of clashes) await ops.trash(old.id!);
            for (let n = 1; clashes.length > 0 && conflict === 'rename' && name === wanted; n++) {
              if (n >= 1000)
                throw new LocationError('VALIDATION_ERROR', `targetDocument.name: no free name for ${wanted} in ${target.path}`);
              const candidate = numbered(wanted, n, isNativeFormat(format));
              if ((await ops.byName(folderId, candidate)).length === 0) name = candidate;
            }
            return ops.move(source, folderId, name, { docgenMove: target.urn });
          });
        }
        return written(moved, target.path, await share(ops, moved, target.sharing));
      } catch (err) {
        throw asLocationError(err, 'TEMPLATE_NOT_FOUND', `sourceDocument.urn ${sourceUrn}`, b.viaServiceAccount.has(ops));
      }
    },
  };
}
