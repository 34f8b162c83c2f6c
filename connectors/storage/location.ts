// Storage: the service's own location. Uploaded templates and data files, and delivered documents, are
// stored_files rows (store/files.ts) plus their bytes in the blob store. Every lookup is scoped to the
// caller's subscription; another tenant's urn reads as absent.
import { formatOfFileName, isOfficeFormat, outputFileName } from '../../core/formats.ts';
import type { BlobRef } from '../../core/blob.ts';
import {
  deleteFile,
  fileLookups,
  type FileKind,
  type FileRecord,
  insertFile,
  isUuid,
  markFileRemoved,
  removedFileKey,
} from '../../store/files.ts';
import { type Location, type LocationDeps, LocationError } from '../location.ts';

/** Where a document delivered to Storage keeps its bytes. */
const documentKey = (subscriptionId: string, urn: string) => `subscriptions/${subscriptionId}/documents/${urn}`;

export function storageLocation(deps: LocationDeps): Location {
  // Lookups asked at once (a generate's template and data) share one statement.
  const lookup = fileLookups(deps.db);
  async function find(subscriptionId: string, urn: string, kind: FileKind, consumer?: string) {
    const file = await lookup({ subscriptionId, id: urn, kinds: [kind], ...(consumer ? { consumedBy: consumer } : {}) });
    if (!file || !(await deps.blobs.exists(file.blobKey))) return undefined;
    return file;
  }
  const ref = (f: { blobKey: string; sha256: string; size: number; contentType: string }, contentType = f.contentType): BlobRef => ({
    key: f.blobKey,
    sha256: f.sha256,
    size: f.size,
    contentType,
  });

  return {
    async readTemplate(ctx, urn) {
      const file = await find(ctx.subscriptionId, urn, 'template', ctx.consumer);
      if (!file) {
        throw new LocationError(
          'TEMPLATE_NOT_FOUND',
          `template.urn ${urn} does not resolve: upload the file with POST /documents/template/upload (uploads expire after use or 24 hours)`,
        );
      }
      return ref(file);
    },

    /** The upload route refused a package whose kind is not its extension's (api/routes/uploads.ts), so the
     *  extension tells the kind of an uploaded template, if it is an Office package at all (the merge says
     *  when it is not). */
    async templateFormat(subscriptionId, urn) {
      const file = await lookup({ subscriptionId, id: urn, kinds: ['template'] });
      const format = file ? formatOfFileName(file.fileName) : undefined;
      return isOfficeFormat(format) ? format : undefined;
    },

    async readData(ctx, urn) {
      const file = await find(ctx.subscriptionId, urn, 'data', ctx.consumer);
      if (!file) {
        throw new LocationError(
          'DATA_NOT_FOUND',
          `data.urn ${urn} does not resolve: upload the file with POST /documents/data/upload (uploads expire after use or 24 hours)`,
        );
      }
      return ref(file, 'application/json');
    },

    async readDocument(ctx, urn) {
      const file = await find(ctx.subscriptionId, urn, 'document');
      if (!file)
        throw new LocationError('TEMPLATE_NOT_FOUND', `sourceDocument.urn ${urn} does not resolve to a document delivered to Storage`);
      return { urn: file.id, name: file.fileName, path: file.path, fileFormat: formatOfFileName(file.fileName), blob: ref(file) };
    },

    /** Copies the source to the document's own key inside the store (S3: a server-side copy, so a large
     *  document never passes through this process), or writes the bytes the caller holds there; writing the
     *  same urn again overwrites (retries are safe). */
    writesBytes: true,
    async write(ctx, req) {
      if (!ctx.userId) throw new Error('a Storage write needs the acting user (the document owner)');
      const name = outputFileName(req.name, req.fileFormat);
      const key = documentKey(ctx.subscriptionId, req.urn);
      // Bytes in hand are written at the key itself (atomic: put renames its temporary file over the key).
      const put = req.bytes ? await deps.blobs.put(key, req.bytes) : undefined;
      if (!put) await deps.blobs.copy(req.source.key, key);
      const file: FileRecord = {
        id: req.urn,
        subscriptionId: ctx.subscriptionId,
        ownerId: ctx.userId,
        kind: 'document',
        fileName: name,
        path: req.path,
        contentType: req.source.contentType,
        size: put?.size ?? req.source.size,
        sha256: put?.sha256 ?? req.source.sha256,
        blobKey: key,
        expiresDate: null,
      };
      // A batch's flush stores the record with the row's document record, in its one statement.
      if (req.recordLater) return { urn: req.urn, name, path: req.path, file };
      await insertFile(deps.db, file);
      return { urn: req.urn, name, path: req.path };
    },

    /** A document written by a step that then failed, before anything recorded it: row and bytes go. A write
     *  whose record was left to its caller (recordLater) has no row: its bytes are at the key it was given. */
    async discard(ctx, urn) {
      const key = await deleteFile(deps.db, ctx.subscriptionId, urn, ['document']);
      if (key) await deps.blobs.delete(key);
      else if (isUuid(urn)) await deps.blobs.delete(documentKey(ctx.subscriptionId, urn));
    },

    /** `delete` marks the row removed (the urn stops resolving) and keeps the bytes for an operator to
     *  recover; `permanentDelete` also erases the bytes. */
    async remove(ctx, urn, mode) {
      const key = await markFileRemoved(deps.db, ctx.subscriptionId, urn, ['document']);
      if (mode !== 'permanentDelete') return;
      // Run again (a retried step, a replayed workflow task) after the row was marked: erase anyway.
      const erase = key ?? (await removedFileKey(deps.db, ctx.subscriptionId, urn, ['document']));
      if (erase) await deps.blobs.delete(erase);
    },
  };
}
