// Bytes live here, never in Temporal payloads or the database: uploads, delivered documents and the
// scratch blobs that activities hand to each other by reference (claim check).
import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** What activities pass around instead of bytes: one declaration, core's. */
export type { BlobRef } from '../../core/blob.ts';

export interface PutResult {
  size: number;
  sha256: string;
}

export class BlobTooLargeError extends Error {
  override name = 'BlobTooLargeError';
  readonly limit: number;
  constructor(limit: number) {
    super(`file exceeds the limit of ${limit} bytes`);
    this.limit = limit;
  }
}

export class BlobNotFoundError extends Error {
  override name = 'BlobNotFoundError';
}

/** Counts and hashes what streams through it, failing with BlobTooLargeError past `maxBytes`: every store's
 *  putStream measures the same way. */
export class SizeMeter extends Transform {
  private readonly hash = createHash('sha256');
  private size = 0;
  private readonly limit: number;
  constructor(maxBytes?: number) {
    super();
    this.limit = maxBytes ?? Number.POSITIVE_INFINITY;
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null, data?: Buffer) => void): void {
    this.size += chunk.length;
    if (this.size > this.limit) {
      cb(new BlobTooLargeError(this.limit));
      return;
    }
    this.hash.update(chunk);
    cb(null, chunk);
  }
  /** Size and sha256 of everything that passed (call once the stream has ended). */
  result(): PutResult {
    return { size: this.size, sha256: this.hash.digest('hex') };
  }
}

/** A put that `signal` aborts before the blob is in place leaves nothing: a cancelled run's step does not
 *  write into scratch that the run's end has already discarded. */
export interface PutOptions {
  signal?: AbortSignal;
}

export interface BlobStore {
  put(key: string, bytes: Uint8Array, opts?: PutOptions): Promise<PutResult>;
  /** Streams into the store, aborting (and leaving nothing behind) once `maxBytes` is exceeded. */
  putStream(key: string, source: Readable, opts?: { maxBytes?: number }): Promise<PutResult>;
  get(key: string): Promise<Uint8Array>;
  createReadStream(key: string): Promise<Readable>;
  delete(key: string): Promise<void>;
  exists(key: string): Promise<boolean>;
  /** Copies a blob inside the store (server-side where the store can: the bytes never pass through this
   *  process). Overwrites `to`; BlobNotFoundError when `from` is absent. */
  copy(from: string, to: string): Promise<void>;
  /** Every key that starts with `prefix` (tests, housekeeping); with `modifiedBefore`, only the blobs last
   *  written before that time (the scratch sweep). */
  list(prefix: string, opts?: { modifiedBefore?: Date }): Promise<string[]>;
  /** Removes everything under `prefix` (a folder-like prefix ending in `/`): every blob, and what a process
   *  killed while writing there left (the directory store's temporary files). A batch's scratch goes so. */
  deleteAll(prefix: string): Promise<void>;
  /** Readiness: resolves with a short description when the store can be used, throws why not otherwise. */
  check(): Promise<string>;
  /** A short-lived URL that downloads the blob without this process, or undefined when the store has none
   *  (the directory store). */
  presignedGetUrl(key: string, opts: { expiresInSeconds: number; fileName: string; contentType: string }): Promise<string | undefined>;
}

/** Files up to this size are written synchronously (FsBlobStore.put). */
const SYNC_WRITE_BYTES = 256 * 1024;

const KEY = /^[A-Za-z0-9][A-Za-z0-9._-]*(\/[A-Za-z0-9][A-Za-z0-9._-]*)*$/;

export function assertKey(key: string): void {
  if (!KEY.test(key) || key.split('/').some((s) => s === '..' || s === '.')) {
    throw new Error(`invalid blob key ${JSON.stringify(key)}`);
  }
}

/** The embedded default: a directory. Writes go to a temporary file first and are renamed into place, so
 *  a reader never sees half a file and a failed write leaves nothing. */
export class FsBlobStore implements BlobStore {
  readonly root: string;
  constructor(root: string) {
    this.root = path.resolve(root);
  }

  private file(key: string): string {
    assertKey(key);
    return path.join(this.root, ...key.split('/'));
  }

  /** Directories this store made or found, so that a write into one skips the mkdir (a recursive mkdir is
   *  a few syscalls and ~0.3 ms of the event loop per write). A directory removed behind our back (a run's
   *  scratch directory, see delete) costs one failed write and a retry (inDirectory). Bounded. */
  private readonly knownDirs = new Set<string>();

  /** Runs `write` (which creates a file in `dir`), making `dir` first when it is not known to exist, and
   *  again when the write found it gone. */
  private async inDirectory<T>(dir: string, write: () => Promise<T>): Promise<T> {
    if (!this.knownDirs.has(dir)) await this.makeDirectory(dir);
    try {
      return await write();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || fs.existsSync(dir)) throw err;
      await this.makeDirectory(dir);
      return await write();
    }
  }

  private async makeDirectory(dir: string): Promise<void> {
    await fsp.mkdir(dir, { recursive: true });
    if (this.knownDirs.size >= 10_000) this.knownDirs.clear();
    this.knownDirs.add(dir);
  }

  async put(key: string, bytes: Uint8Array, opts: PutOptions = {}): Promise<PutResult> {
    const target = this.file(key);
    opts.signal?.throwIfAborted();
    const tmp = `${target}.${randomUUID()}.tmp`;
    // A small file (a batch row's document, a merged invoice) is written and renamed in this thread: an
    // async write costs about three times the CPU of the syscalls it makes (each step a hop to libuv's pool
    // and back), and these take the event loop for a fraction of a millisecond. Larger files go through
    // the pool, so that a write of megabytes never holds the loop.
    const small = bytes.byteLength <= SYNC_WRITE_BYTES;
    try {
      if (small) {
        await this.inDirectory(path.dirname(target), async () => fs.writeFileSync(tmp, bytes));
        fs.renameSync(tmp, target);
      } else {
        await this.inDirectory(path.dirname(target), () => fsp.writeFile(tmp, bytes));
        opts.signal?.throwIfAborted();
        await fsp.rename(tmp, target);
      }
    } catch (err) {
      await fsp.rm(tmp, { force: true });
      throw err;
    }
    return { size: bytes.byteLength, sha256: createHash('sha256').update(bytes).digest('hex') };
  }

  async putStream(key: string, source: Readable, opts: { maxBytes?: number } = {}): Promise<PutResult> {
    const target = this.file(key);
    await fsp.mkdir(path.dirname(target), { recursive: true });
    const tmp = `${target}.${randomUUID()}.tmp`;
    const meter = new SizeMeter(opts.maxBytes);
    try {
      await pipeline(source, meter, fs.createWriteStream(tmp));
      await fsp.rename(tmp, target);
    } catch (err) {
      await fsp.rm(tmp, { force: true });
      // Drain the rest of the source so the HTTP request can complete with our error response.
      source.resume();
      throw err;
    }
    return meter.result();
  }

  async get(key: string): Promise<Uint8Array> {
    try {
      return await fsp.readFile(this.file(key));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new BlobNotFoundError(`blob ${key} not found`);
      throw err;
    }
  }

  async createReadStream(key: string): Promise<Readable> {
    const file = this.file(key);
    try {
      await fsp.access(file);
    } catch {
      throw new BlobNotFoundError(`blob ${key} not found`);
    }
    return fs.createReadStream(file);
  }

  async delete(key: string): Promise<void> {
    const file = this.file(key);
    try {
      // unlink: one syscall, where rm() first lstats the path.
      await fsp.unlink(file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    // A run's scratch directory (scratch/<run>/) goes with its last file; otherwise every workflow run left
    // one empty directory behind, for ever. rmdir refuses while other files remain.
    const parts = key.split('/');
    if (parts.length === 3 && parts[0] === 'scratch') {
      const dir = path.dirname(file);
      this.knownDirs.delete(dir);
      await fsp.rmdir(dir).catch(() => {});
    }
  }

  async deleteAll(prefix: string): Promise<void> {
    if (!prefix.endsWith('/')) throw new Error(`deleteAll takes a folder-like prefix ending in '/', not ${JSON.stringify(prefix)}`);
    const dir = this.file(prefix.slice(0, -1));
    for (const known of this.knownDirs) if (known === dir || known.startsWith(`${dir}${path.sep}`)) this.knownDirs.delete(known);
    await fsp.rm(dir, { recursive: true, force: true });
  }

  async exists(key: string): Promise<boolean> {
    try {
      await fsp.access(this.file(key));
      return true;
    } catch {
      return false;
    }
  }

  async copy(from: string, to: string): Promise<void> {
    const source = this.file(from);
    const target = this.file(to);
    const tmp = `${target}.${randomUUID()}.tmp`;
    try {
      // A blob is never changed in place (put writes a new file and renames it over the old one), so a copy
      // can be a second name of the same file: a hard link, no bytes read or written. copyFile where the
      // file system refuses links.
      await this.inDirectory(path.dirname(target), () =>
        fsp.link(source, tmp).catch((err: NodeJS.ErrnoException) => {
          if (err.code === 'ENOENT') throw err;
          return fsp.copyFile(source, tmp);
        }),
      );
      await fsp.rename(tmp, target);
    } catch (err) {
      await fsp.rm(tmp, { force: true });
      if ((err as NodeJS.ErrnoException).code === 'ENOENT' && !(await this.exists(from)))
        throw new BlobNotFoundError(`blob ${from} not found`);
      throw err;
    }
  }

  async list(prefix: string, opts: { modifiedBefore?: Date } = {}): Promise<string[]> {
    // Read from the deepest directory the prefix names (scratch/ is not the whole store).
    const base = prefix.includes('/') ? prefix.slice(0, prefix.lastIndexOf('/')) : '';
    const dir = base ? path.join(this.root, ...base.split('/')) : this.root;
    let entries: string[];
    try {
      entries = (await fsp.readdir(dir, { recursive: true })) as string[];
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    const keys: string[] = [];
    for (const rel of entries) {
      const key = (base ? `${base}/` : '') + rel.split(path.sep).join('/');
      // A temporary file is a write in progress, unless it is old enough to be one that died (the sweep).
      if (!key.startsWith(prefix) || (key.endsWith('.tmp') && !opts.modifiedBefore)) continue;
      let stat: fs.Stats;
      try {
        stat = await fsp.stat(path.join(dir, rel));
      } catch {
        continue; // removed meanwhile
      }
      if (stat.isFile() && (!opts.modifiedBefore || stat.mtime < opts.modifiedBefore)) keys.push(key);
    }
    return keys.sort();
  }

  async check(): Promise<string> {
    await fsp.mkdir(this.root, { recursive: true });
    await fsp.access(this.root, fs.constants.R_OK | fs.constants.W_OK);
    return `directory ${this.root}`;
  }

  async presignedGetUrl(): Promise<undefined> {
    return undefined;
  }
}
