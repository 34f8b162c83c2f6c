// Chooses the blob store from the settings: the data directory (embedded default), another directory, or
// an S3-compatible object store (STORAGE_URL=s3://bucket/prefix) that every process of a cluster shares.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BlobStore, FsBlobStore } from './blob-store.ts';
import { parseS3Url, S3BlobStore } from './s3-blob-store.ts';

/** The storage settings (config/env.ts STORAGE_URL, S3_*, AWS_*). */
export interface BlobStoreSettings {
  dataDir: string;
  storageUrl?: string | undefined;
  s3Region: string;
  s3Endpoint?: string | undefined;
  s3PublicEndpoint?: string | undefined;
  s3ForcePathStyle: string;
  awsAccessKeyId?: string | undefined;
  awsSecretAccessKey?: string | undefined;
  awsSessionToken?: string | undefined;
}

export function openBlobStore(config: BlobStoreSettings): BlobStore {
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
