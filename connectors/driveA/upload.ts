// DriveA uploads: one PUT for a small file, an upload session in fragments for a large one, resumed from
// a journaled session (nextExpectedRanges) and started again, once, when the session expired half-way.
import type { BlobRef } from '../../core/blob.ts';
import type { LocationWrite } from '../../store/location-writes.ts';
import { LocationError } from '../location.ts';
import type { BlobStore } from '../storage/blob-store.ts';
import { type DriveItem, type GraphClient, GraphError } from './graph.ts';

/** Files up to this size go up in one PUT; larger ones through an upload session. */
export const SIMPLE_UPLOAD_MAX = 4 * 1024 * 1024;
/** Upload session fragments: a multiple of 320 KiB (Graph's rule), 4.8 MiB. */
export const UPLOAD_CHUNK = 15 * 320 * 1024;

/** Reads a blob from `offset`, in exact-size pieces. */
class BlobReader {
  private iterator: AsyncIterator<Buffer> | undefined;
  private pending: Buffer = Buffer.alloc(0);
  private readonly blobs: BlobStore;
  private readonly key: string;
  constructor(blobs: BlobStore, key: string) {
    this.blobs = blobs;
    this.key = key;
  }
  async open(offset: number): Promise<void> {
    await this.close();
    const stream = await this.blobs.createReadStream(this.key);
    this.iterator = (stream as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
    this.pending = Buffer.alloc(0);
    for (let skipped = 0; skipped < offset;) skipped += (await this.read(Math.min(offset - skipped, 8 * 1024 * 1024))).length;
  }
  async read(n: number): Promise<Buffer> {
    const parts: Buffer[] = [this.pending];
    let have = this.pending.length;
    while (have < n) {
      const next = await this.iterator!.next();
      if (next.done) break;
      parts.push(next.value);
      have += next.value.length;
    }
    const all = Buffer.concat(parts);
    this.pending = all.subarray(n);
    return all.subarray(0, n);
  }
  async close(): Promise<void> {
    await this.iterator?.return?.();
    this.iterator = undefined;
  }
}

const nextFrom = (s: { nextExpectedRanges?: string[] }): number | undefined => {
  const r = s.nextExpectedRanges?.[0];
  return r === undefined ? undefined : Number(r.split('-')[0]);
};

/** Uploads `source` as `name` into the folder (replace on a clash: the name is ours), resuming a
 *  journaled upload session when there is one. */
export async function upload(
  blobs: BlobStore,
  graph: GraphClient,
  drive: string,
  parentId: string,
  name: string,
  source: BlobRef,
  journal: { write(w: LocationWrite): Promise<void>; resume?: string },
): Promise<DriveItem> {
  const target = `${drive}/items/${encodeURIComponent(parentId)}:/${encodeURIComponent(name)}:`;
  if (source.size <= SIMPLE_UPLOAD_MAX) {
    const bytes = await blobs.get(source.key);
    return graph.json<DriveItem>('PUT', `${target}/content`, {
      body: bytes,
      headers: { 'content-type': source.contentType },
      query: { '@microsoft.graph.conflictBehavior': 'replace' },
    });
  }
  let url = journal.resume;
  let offset = 0;
  if (url) {
    try {
      const status = await graph.json<{ nextExpectedRanges?: string[]; id?: string }>('GET', url, { absolute: true });
      if (status.id) return status as DriveItem;
      offset = nextFrom(status) ?? 0;
    } catch (err) {
      if (!(err instanceof GraphError && err.status === 404)) throw err;
      url = undefined; // expired or finished: a new session
    }
  }
  const newSession = async (): Promise<string> => {
    const session = await graph.json<{ uploadUrl: string }>('POST', `${target}/createUploadSession`, {
      json: { item: { '@microsoft.graph.conflictBehavior': 'replace', name } },
    });
    offset = 0;
    await journal.write({ state: 'uploading', itemId: null, uploadUrl: session.uploadUrl });
    return session.uploadUrl;
  };
  let session: string = url ?? (await newSession());
  const reader = new BlobReader(blobs, source.key);
  await reader.open(offset);
  try {
    for (let resyncs = 0, renewed = 0; ;) {
      const chunk = await reader.read(Math.min(UPLOAD_CHUNK, source.size - offset));
      let res: Response;
      try {
        res = await graph.request('PUT', session, {
          absolute: true,
          body: chunk,
          headers: { 'content-range': `bytes ${offset}-${offset + chunk.length - 1}/${source.size}` },
        });
      } catch (err) {
        if (err instanceof GraphError && err.status === 404) {
          // The session expired half-way (Graph: "the upload session does not exist or has expired";
          // an idle session lasts minutes, a slow or paused upload outlives it): a new session, the
          // whole file again, once.
          if (++renewed > 1) {
            throw new LocationError(
              'FILE_UPLOAD_FAILED',
              `the DriveA upload session of ${name} expired before the upload finished, twice (404 on its upload URL after ${offset} of ${source.size} bytes): nothing was placed; send the request again`,
              [{ status: err.status, code: err.code, message: err.message }],
            );
          }
          session = await newSession();
          await reader.open(0);
          continue;
        }
        // 416: this range already arrived (an answer we lost); ask where to go on.
        if (!(err instanceof GraphError && err.status === 416) || ++resyncs > 5) throw err;
        const status = await graph.json<{ nextExpectedRanges?: string[]; id?: string }>('GET', session, { absolute: true });
        if (status.id) return status as DriveItem;
        offset = nextFrom(status) ?? 0;
        await reader.open(offset);
        continue;
      }
      if (res.status === 200 || res.status === 201) return (await res.json()) as DriveItem;
      const next = nextFrom((await res.json()) as { nextExpectedRanges?: string[] });
      const expected = offset + chunk.length;
      offset = next ?? expected;
      if (offset !== expected) await reader.open(offset);
    }
  } finally {
    await reader.close();
  }
}
