// GET /documents/storage/{urn}/content (extension): downloads a document delivered to Storage.
import type { FastifyInstance } from 'fastify';
import Type from 'typebox';
import { ApiError } from '../../core/errors.ts';
import type { BlobStore } from '../../connectors/storage/blob-store.ts';
import type { Db } from '../../store/db.ts';
import { getFile } from '../../store/files.ts';
import { errorResponses } from '../schemas.ts';

export default async function storageRoutes(app: FastifyInstance, opts: { db: Db; blobs: BlobStore }) {
  app.get(
    '/documents/storage/:urn/content',
    {
      schema: {
        tags: ['Generation'],
        summary: 'Download a document delivered to Storage (extension)',
        description: "Streams the file's bytes with its content type and file name. Another subscription's urn answers 404, as if absent.",
        params: Type.Object({ urn: Type.String() }),
        response: { 200: { description: 'The file', content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } }, ...errorResponses(400, 401, 404) },
      },
    },
    async (request, reply) => {
      const { urn } = request.params as { urn: string };
      const file = await getFile(opts.db, request.auth.subscriptionId, urn, ['document']);
      if (!file) throw new ApiError('NOT_FOUND_BY_ID', `no document with urn ${urn}`);
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
