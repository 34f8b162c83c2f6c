// GET /documents/storage/{urn}/content (extension): downloads a document delivered to Storage.
import type { FastifyInstance } from 'fastify';
import Type from 'typebox';
import { ApiError } from '../../core/errors.ts';
import type { BlobStore } from '../../connectors/storage/blob-store.ts';
import type { Db } from '../../store/db.ts';
import { getFile } from '../../store/files.ts';
import { errorResponses } from '../schemas.ts';

export interface StorageRouteOptions {
  db: Db;
  blobs: BlobStore;
  /** Answer 302 to a presigned URL of the object store instead of streaming (STORAGE_DOWNLOAD=redirect). */
  redirect?: { expiresInSeconds: number };
}

export default async function storageRoutes(app: FastifyInstance, opts: StorageRouteOptions) {
  app.get(
    '/documents/storage/:urn/content',
    {
      schema: {
        tags: ['Generation'],
        summary: 'Download a document delivered to Storage (extension)',
        description:
          "Streams the file's bytes with its content type and file name, or, when the service is configured so (STORAGE_DOWNLOAD=redirect on object storage), answers 302 with a short-lived presigned URL of the object store. Another subscription's urn answers 404, as if absent.",
        params: Type.Object({ urn: Type.String() }),
        response: {
          200: { description: 'The file', content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } },
          302: { description: 'Download from the `Location` header (presigned, short-lived)', type: 'null' },
          ...errorResponses(400, 401, 404),
        },
      },
    },
    async (request, reply) => {
      const { urn } = request.params as { urn: string };
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
        .header('content-disposition', `attachment; filename="${file.fileName.replace(/["\\\r\n]/g, '_')}"; filename*=UTF-8''${encodeURIComponent(file.fileName)}`)
        .send(stream);
    },
  );
}
