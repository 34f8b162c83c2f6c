// The blob store on an S3-compatible object store (AWS S3, versitygw, MinIO, Ceph...): what several
// machines share instead of a directory. Bytes stream both ways: an upload goes out in multipart parts
// while it arrives (memory bounded by partSize x queueSize), a download is the object's body stream.
import { createHash } from 'node:crypto';
import { PassThrough, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  AbortMultipartUploadCommand,
  ListMultipartUploadsCommand,
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { assertKey, BlobNotFoundError, type BlobStore, type PutOptions, type PutResult, SizeMeter } from './blob-store.ts';

export interface S3BlobStoreOptions {
  bucket: string;
  /** Keys are stored under `<prefix>/`; empty = the bucket's root. */
  prefix?: string;
  /** Unset = AWS. A self-hosted server: http(s)://host:port. */
  endpoint?: string;
  region: string;
  /** Path-style URLs (http://host/bucket/key): what self-hosted servers need. */
  forcePathStyle: boolean;
  /** Explicit keys; absent = the AWS SDK's standard chain (AWS_* variables, profile, instance role). */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** The endpoint clients reach for presigned downloads when it differs from `endpoint` (another host name). */
  publicEndpoint?: string;
  /** Multipart part size (min 5 MiB) and parts in flight: the memory one upload may hold. */
  partSize?: number;
  queueSize?: number;
}

const MiB = 1024 * 1024;

function isNotFound(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e?.name === 'NoSuchKey' || e?.name === 'NotFound' || e?.$metadata?.httpStatusCode === 404;
}

export class S3BlobStore implements BlobStore {
  readonly bucket: string;
  readonly prefix: string;
  readonly client: S3Client;
  private readonly presigner: S3Client;
  private readonly partSize: number;
  private readonly queueSize: number;
  private readonly endpoint: string;

  constructor(opts: S3BlobStoreOptions) {
    this.bucket = opts.bucket;
    this.prefix = opts.prefix ? `${opts.prefix.replace(/^\/+|\/+$/g, '')}/` : '';
    this.partSize = Math.max(5 * MiB, opts.partSize ?? 8 * MiB);
    this.queueSize = opts.queueSize ?? 4;
    this.endpoint = opts.endpoint ?? `s3.${opts.region}.amazonaws.com`;
    const base: S3ClientConfig = {
      region: opts.region,
      forcePathStyle: opts.forcePathStyle,
      ...(opts.credentials ? { credentials: opts.credentials } : {}),
      // Checksums only when the operation requires one: self-hosted servers vary in what they accept.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    };
    this.client = new S3Client({ ...base, ...(opts.endpoint ? { endpoint: opts.endpoint } : {}) });
    const publicEndpoint = opts.publicEndpoint ?? opts.endpoint;
    this.presigner =
      publicEndpoint === opts.endpoint ? this.client : new S3Client({ ...base, ...(publicEndpoint ? { endpoint: publicEndpoint } : {}) });
  }

  private objectKey(key: string): string {
    assertKey(key);
    return this.prefix + key;
  }

  async put(key: string, bytes: Uint8Array, opts: PutOptions = {}): Promise<PutResult> {
    opts.signal?.throwIfAborted();
    // An aborted request is not retried; S3 applies a PUT whole or not at all (one sent in full just before
    // the abort may still land: the scratch sweep removes it).
    await this.client.send(
      new PutObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key), Body: bytes, ContentLength: bytes.byteLength }),
      opts.signal ? { abortSignal: opts.signal } : {},
    );
    return { size: bytes.byteLength, sha256: createHash('sha256').update(bytes).digest('hex') };
  }

  async putStream(key: string, source: Readable, opts: { maxBytes?: number } = {}): Promise<PutResult> {
    const objectKey = this.objectKey(key);
    const meter = new SizeMeter(opts.maxBytes);
    const body = new PassThrough();
    // A multipart upload is only visible once completed; on any failure it is aborted, so a failed or
    // over-limit upload leaves no object behind.
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key: objectKey, Body: body },
      partSize: this.partSize,
      queueSize: this.queueSize,
      leavePartsOnError: false,
    });
    const uploaded = upload.done();
    uploaded.catch(() => undefined);
    try {
      // Both at once: a failing upload (server gone) must not leave the pipeline waiting for a reader.
      await Promise.all([pipeline(source, meter, body), uploaded]);
    } catch (err) {
      body.destroy();
      await upload.abort().catch(() => undefined);
      await uploaded.catch(() => undefined);
      await this.abortPendingUploads(objectKey).catch(() => undefined);
      // Drain the rest of the source so the HTTP request can complete with our error response.
      source.resume();
      throw err;
    }
    return meter.result();
  }

  /** Aborting the Upload cancels its requests, but a CreateMultipartUpload the server had already
   *  accepted when it was cancelled leaves an upload the client never learned the id of: find the key's
   *  pending uploads and abort them (every putStream key is its own, so none belongs to anyone else). */
  private async abortPendingUploads(objectKey: string): Promise<void> {
    const pending = await this.client.send(new ListMultipartUploadsCommand({ Bucket: this.bucket, Prefix: objectKey }));
    for (const u of pending.Uploads ?? []) {
      if (u.Key === objectKey && u.UploadId)
        await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: objectKey, UploadId: u.UploadId }));
    }
  }

  async get(key: string): Promise<Uint8Array> {
    try {
      const r = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }));
      if (!r.Body) throw new BlobNotFoundError(`blob ${key} not found`);
      return await r.Body.transformToByteArray();
    } catch (err) {
      if (isNotFound(err)) throw new BlobNotFoundError(`blob ${key} not found`);
      throw err;
    }
  }

  async createReadStream(key: string): Promise<Readable> {
    try {
      const r = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }));
      if (!r.Body) throw new BlobNotFoundError(`blob ${key} not found`);
      return r.Body as Readable;
    } catch (err) {
      if (isNotFound(err)) throw new BlobNotFoundError(`blob ${key} not found`);
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }));
  }

  async exists(key: string): Promise<boolean> {
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }));
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  async copy(from: string, to: string): Promise<void> {
    const source = this.objectKey(from);
    try {
      await this.client.send(
        new CopyObjectCommand({
          Bucket: this.bucket,
          Key: this.objectKey(to),
          CopySource: `${this.bucket}/${source.split('/').map(encodeURIComponent).join('/')}`,
        }),
      );
    } catch (err) {
      if (isNotFound(err)) throw new BlobNotFoundError(`blob ${from} not found`);
      throw err;
    }
  }

  /** An interrupted upload is never a visible object (multipart parts are aborted, or expire with the
   *  bucket's lifecycle rule): the objects under the prefix are all there is. */
  async deleteAll(prefix: string): Promise<void> {
    if (!prefix.endsWith('/')) throw new Error(`deleteAll takes a folder-like prefix ending in '/', not ${JSON.stringify(prefix)}`);
    const keys = await this.list(prefix);
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(8, keys.length) }, async () => {
        while (next < keys.length) await this.delete(keys[next++]!);
      }),
    );
  }

  async list(prefix: string, opts: { modifiedBefore?: Date } = {}): Promise<string[]> {
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const r = await this.client.send(
        new ListObjectsV2Command({ Bucket: this.bucket, Prefix: this.prefix + prefix, ContinuationToken: token }),
      );
      for (const o of r.Contents ?? []) {
        if (o.Key && (!opts.modifiedBefore || (o.LastModified && o.LastModified < opts.modifiedBefore)))
          keys.push(o.Key.slice(this.prefix.length));
      }
      token = r.IsTruncated ? r.NextContinuationToken : undefined;
    } while (token);
    return keys.sort();
  }

  async check(): Promise<string> {
    await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
    return `s3://${this.bucket}/${this.prefix} at ${this.endpoint}`;
  }

  async presignedGetUrl(key: string, opts: { expiresInSeconds: number; fileName: string; contentType: string }): Promise<string> {
    const disposition = `attachment; filename="${opts.fileName.replace(/["\\\r\n]/g, '_')}"; filename*=UTF-8''${encodeURIComponent(opts.fileName)}`;
    return getSignedUrl(
      this.presigner,
      new GetObjectCommand({
        Bucket: this.bucket,
        Key: this.objectKey(key),
        ResponseContentDisposition: disposition,
        ResponseContentType: opts.contentType,
      }),
      { expiresIn: opts.expiresInSeconds },
    );
  }
}
