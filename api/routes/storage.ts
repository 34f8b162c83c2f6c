// GET /documents/storage/{urn}/content (extension): downloads a document delivered to Storage.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ApiError } from '../../core/errors.ts';
import type { BlobStore } from '../../connectors/storage/blob-store.ts';
import type { Db } from '../../store/db.ts';
import { getFile } from '../../store/files.ts';
import { downloadDocument } from '../schemas/files.ts';

export interface StorageRouteOptions {
  db: Db;
  blobs: BlobStore;
  /** Answer 302 to a presigned URL of the object store instead of streaming (STORAGE_DOWNLOAD=redirect). */
  redirect?: { expiresInSeconds: number };
}

const storageRoutes: FastifyPluginAsyncTypebox<StorageRouteOptions> = async (app, opts) => {
  app.get('/documents/storage/:urn/content', { schema: downloadDocument }, async (request, reply) => {
    const { urn } = request.params;
    const file = await getFile(opts.db, request.auth.subscriptionId, urn, ['document']);
    if (!file) throw new ApiError('NOT_FOUND_BY_ID', `no document with urn ${urn}`);
    if (opts.redirect) {
      const location = await opts.blobs.presignedGetUrl(file.blobKey, {
        expiresInSeconds: opts.redirect.expiresInSeconds,
        fileName: file.fileName,
        contentType: file.contentType,
      });
      if (location) return reply.code(302).header('location', location).header('cache-control', 'no-store').send();
    }
    const stream = await opts.blobs.createReadStream(file.blobKey).catch(() => {
      throw new ApiError('NOT_FOUND_BY_ID', `no document with urn ${urn}`);
    });
    return reply
      .header('content-type', file.contentType)
      .header('content-length', String(file.size))
      .header(
        'content-disposition',
        `attachment; filename="${file.fileName.replace(/["\\\r\n]/g, '_')}"; filename*=UTF-8''${encodeURIComponent(file.fileName)}`,
      )
      .send(stream);
  });
};

export default storageRoutes;
