// DriveB's write: the file uploaded under its temporary name (a native format converted on upload), then
// named by the clash policy (replace writes the content into the existing file in place); a retried write
// finds its file by the workflow's urn in appProperties. A refused write leaves nothing behind.
import { contentTypeOf, isNativeFormat } from '../../core/formats.ts';
import { type Location, LocationError } from '../location.ts';
import { type DriveFile, GOOGLE_MIME, NATIVE_TWIN, type NativeFormat, OFFICE_MIME, oldest } from './drive.ts';
import { asLocationError } from './errors.ts';
import { driveName, temporaryName } from './names.ts';
import type { DriveBSession } from './session.ts';
import { settle } from './settle.ts';
import { share, written } from './share.ts';

export function driveBWrite(b: DriveBSession): Pick<Location, 'write'> {
  return {
    async write(ctx, req) {
      const ops = await b.open(ctx);
      const made: string[] = [];
      try {
        const native = isNativeFormat(req.fileFormat);
        const temporary = temporaryName(req.urn, req.fileFormat);
        const conflict = req.conflict ?? 'rename';
        const contentType = native ? OFFICE_MIME[NATIVE_TWIN[req.fileFormat as NativeFormat]] : contentTypeOf(req.fileFormat);
        const tag = { docgenUrn: req.urn };
        // An earlier attempt of this write may have uploaded (or replaced) the file already; one that
        // replaced a file in place may have died before deleting its temporary upload.
        const earlier = await ops.allByWriteId(req.urn);
        let file = earlier.find((f) => f.name !== temporary) ?? earlier[0];
        if (file && file.name !== temporary) for (const left of earlier.filter((f) => f.name === temporary)) await ops.delete(left.id!);
        if (!file || file.name === temporary) {
          const folderId = (await ops.folder(req.path, true, made))!;
          const wanted = driveName(req.name, req.fileFormat);
          const replaceInPlace = async (existing: DriveFile) =>
            ops.updateContent(existing.id!, { bytes: await b.deps.blobs.get(req.source.key), contentType, appProperties: tag });
          if (!file && conflict === 'replace') {
            const existing = oldest(await ops.byName(folderId, wanted));
            if (existing) file = await replaceInPlace(existing);
          }
          if (!file) {
            file = await ops.upload({
              folderId,
              name: temporary,
              bytes: await b.deps.blobs.get(req.source.key),
              contentType,
              ...(native ? { targetMime: GOOGLE_MIME[req.fileFormat as NativeFormat] } : {}),
              appProperties: tag,
            });
          }
          if (file.name === temporary)
            file = await settle(ops, file, { folderId, wanted, native, conflict, path: req.path }, replaceInPlace);
        }
        return written(file, req.path, await share(ops, file, req.sharing));
      } catch (err) {
        const refusal = asLocationError(err, 'CONNECTION_ERROR', `document.path ${req.path || '(root)'}`, b.viaServiceAccount.has(ops));
        // Final (the caller's answer): spec 4.8, nothing stays in the target; the folders this write made
        // go, deepest first, each only while empty. A transient failure keeps them for the retry.
        if (refusal instanceof LocationError) {
          for (const id of [...made].reverse()) {
            const empty = await ops.g
              .call(() =>
                ops.g.drive.files.list(
                  {
                    q: `'${id}' in parents and trashed = false`,
                    fields: 'files(id)',
                    supportsAllDrives: true,
                    includeItemsFromAllDrives: true,
                  },
                  ops.g.opts('drive'),
                ),
              )
              .catch(() => undefined);
            if (!empty || (empty.files?.length ?? 0) > 0) break;
            if (
              !(await ops.delete(id).then(
                () => true,
                () => false,
              ))
            )
              break;
          }
        }
        throw refusal;
      }
    },
  };
}
