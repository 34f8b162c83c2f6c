// Chooses the blob store from the settings: the data directory (embedded default), another directory, or
// an S3-compatible object store (STORAGE_URL=s3://bucket/prefix) that every process of a cluster shares.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Config } from '../../config/env.ts';
import { type BlobStore, FsBlobStore } from './blob-store.ts';
import { parseS3Url, S3BlobStore } from './s3-blob-store.ts';

export function openBlobStore(config: Config): BlobStore {
  const where = config.storageUrl;
  if (!where) return new FsBlobStore(path.join(config.dataDir, 'storage'));
  if (where.startsWith('s3:')) {
    const { bucket, prefix } = parseS3Url(where);
    return new S3BlobStore({
      bucket,
      prefix,
      region: config.s3Region,
      ...(config.s3Endpoint ? { endpoint: config.s3Endpoint } : {}),
      ...(config.s3PublicEndpoint ? { publicEndpoint: config.s3PublicEndpoint } : {}),
      forcePathStyle: config.s3ForcePathStyle === 'auto' ? Boolean(config.s3Endpoint) : config.s3ForcePathStyle === 'true',
      ...(config.awsAccessKeyId && config.awsSecretAccessKey
        ? {
            credentials: {
              accessKeyId: config.awsAccessKeyId,
              secretAccessKey: config.awsSecretAccessKey,
              ...(config.awsSessionToken ? { sessionToken: config.awsSessionToken } : {}),
            },
          }
        : {}),
    });
  }
  return new FsBlobStore(where.startsWith('file:') ? fileURLToPath(where) : path.resolve(where));
}
