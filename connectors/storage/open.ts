// Chooses the blob store from the settings: the data directory (embedded default), another directory, or
// an S3-compatible object store (STORAGE_URL=s3://bucket/prefix) that every process of a cluster shares.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Readable } from 'node:stream';
import { type BlobStore, FsBlobStore, type PutOptions, type PutResult } from './blob-store.ts';
import type { S3BlobStoreOptions } from './s3-blob-store.ts';

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
    return new LazyS3BlobStore({
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

/** `s3://bucket/some/prefix` -> { bucket, prefix }. */
export function parseS3Url(url: string): { bucket: string; prefix: string } {
  const u = new URL(url);
  if (u.protocol !== 's3:' || !u.hostname) throw new Error(`not an s3://bucket[/prefix] URL: ${url}`);
  return { bucket: u.hostname, prefix: decodeURIComponent(u.pathname).replace(/^\/+|\/+$/g, '') };
}

/** The S3 store, its AWS SDK loaded on first use: a process on the directory store never loads the SDK
 *  (about 35 MB of a process's memory, docs/decisions/034-the-memory-of-docgen-start.md). */
class LazyS3BlobStore implements BlobStore {
  private store: Promise<BlobStore> | undefined;
  private readonly opts: S3BlobStoreOptions;
  constructor(opts: S3BlobStoreOptions) {
    this.opts = opts;
  }
  private async s3(): Promise<BlobStore> {
    this.store ??= import('./s3-blob-store.ts').then((m) => new m.S3BlobStore(this.opts));
    return this.store;
  }
  async put(key: string, bytes: Uint8Array, opts?: PutOptions): Promise<PutResult> {
    return (await this.s3()).put(key, bytes, opts);
  }
  async putStream(key: string, source: Readable, opts?: { maxBytes?: number }): Promise<PutResult> {
    return (await this.s3()).putStream(key, source, opts);
  }
  async get(key: string): Promise<Uint8Array> {
    return (await this.s3()).get(key);
  }
  async createReadStream(key: string): Promise<Readable> {
    return (await this.s3()).createReadStream(key);
  }
  async delete(key: string): Promise<void> {
    return (await this.s3()).delete(key);
  }
  async exists(key: string): Promise<boolean> {
    return (await this.s3()).exists(key);
  }
  async copy(from: string, to: string): Promise<void> {
    return (await this.s3()).copy(from, to);
  }
  async list(prefix: string, opts?: { modifiedBefore?: Date }): Promise<string[]> {
    return (await this.s3()).list(prefix, opts);
  }
  async deleteAll(prefix: string): Promise<void> {
    return (await this.s3()).deleteAll(prefix);
  }
  async check(): Promise<string> {
    return (await this.s3()).check();
  }
  async presignedGetUrl(
    key: string,
    opts: { expiresInSeconds: number; fileName: string; contentType: string },
  ): Promise<string | undefined> {
    return (await this.s3()).presignedGetUrl(key, opts);
  }
}
