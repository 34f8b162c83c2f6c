// The blob store contract on both stores: the directory (embedded default) and a real S3 server (versitygw).
import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { ListMultipartUploadsCommand } from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../config/env.ts';
import { BlobNotFoundError, type BlobStore, BlobTooLargeError, FsBlobStore } from '../../../connectors/storage/blob-store.ts';
import { openBlobStore } from '../../../connectors/storage/open.ts';
import { s3Client, s3Settings } from '../../support/s3.ts';

const MiB = 1024 * 1024;
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

const stores: { name: string; open: () => Promise<BlobStore> }[] = [
  {
    name: 'directory',
    open: async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-blobs-'));
      dirs.push(dir);
      return openBlobStore(loadConfig({}, { dataDir: dir }));
    },
  },
  {
    name: 'S3 (versitygw)',
    open: async () => openBlobStore(loadConfig({}, { dataDir: os.tmpdir(), ...(await s3Settings('some/prefix')) })),
  },
];

/** A stream of `total` pseudo-random bytes, produced chunk by chunk (never whole in memory). */
function generated(total: number, seed = 1): { stream: Readable; sha256: () => string } {
  const hash = createHash('sha256');
  let sent = 0;
  let x = seed;
  const stream = new Readable({
    read() {
      if (sent >= total) return void this.push(null);
      const n = Math.min(256 * 1024, total - sent);
      const chunk = Buffer.allocUnsafe(n);
      for (let i = 0; i < n; i += 4) {
        x = (x * 1103515245 + 12345) >>> 0;
        chunk.writeUInt32LE(x, i);
      }
      sent += n;
      hash.update(chunk);
      this.push(chunk);
    },
  });
  return { stream, sha256: () => hash.digest('hex') };
}

async function drain(stream: Readable): Promise<{ size: number; sha256: string }> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of stream) {
    size += (chunk as Buffer).length;
    hash.update(chunk as Buffer);
  }
  return { size, sha256: hash.digest('hex') };
}

describe.each(stores)('blob store: $name', ({ name, open }) => {
  let store: BlobStore;
  const key = (k: string) => `t/${k}`;

  it('is chosen from the settings and reports itself ready', async () => {
    store = await open();
    // The S3 store loads the AWS SDK on first use (connectors/storage/open.ts): it is S3BlobStore's behind a wrapper.
    if (name === 'directory') expect(store).toBeInstanceOf(FsBlobStore);
    else expect(store).not.toBeInstanceOf(FsBlobStore);
    expect(await store.check()).toMatch(
      name === 'directory' ? /^directory / : /^s3:\/\/t-[0-9a-f]+\/some\/prefix\/ at http:\/\/127\.0\.0\.1:\d+$/,
    );
  });

  it('puts, gets, lists, copies and deletes', async () => {
    const bytes = new TextEncoder().encode('hello blobs');
    const put = await store.put(key('a.txt'), bytes);
    expect(put).toEqual({ size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') });
    expect(Buffer.from(await store.get(key('a.txt'))).toString()).toBe('hello blobs');
    expect(await store.exists(key('a.txt'))).toBe(true);
    expect(await store.exists(key('missing'))).toBe(false);
    await store.copy(key('a.txt'), key('copy/b.txt'));
    expect(Buffer.from(await store.get(key('copy/b.txt'))).toString()).toBe('hello blobs');
    // A copy is a blob of its own: the source written again (a directory store links a copy) leaves it as it was.
    await store.put(key('a.txt'), new TextEncoder().encode('hello again'));
    expect(Buffer.from(await store.get(key('copy/b.txt'))).toString()).toBe('hello blobs');
    expect(await store.list('t/')).toEqual([key('a.txt'), key('copy/b.txt')]);
    expect(await store.list('t/copy/')).toEqual([key('copy/b.txt')]);
    await store.delete(key('a.txt'));
    await store.delete(key('a.txt')); // idempotent
    expect(await store.exists(key('a.txt'))).toBe(false);
    await expect(store.get(key('a.txt'))).rejects.toBeInstanceOf(BlobNotFoundError);
    await expect(store.createReadStream(key('a.txt'))).rejects.toBeInstanceOf(BlobNotFoundError);
    await expect(store.copy(key('a.txt'), key('c.txt'))).rejects.toBeInstanceOf(BlobNotFoundError);
    expect(await store.exists(key('c.txt'))).toBe(false);
  });

  it('deletes everything under a folder-like prefix, and nothing beside it', async () => {
    await store.put(key('batch/rows/1.jsonl'), new Uint8Array([1]));
    await store.put(key('batch/docs/2.pdf'), new Uint8Array([2]));
    await store.put(key('batch-2/kept.txt'), new Uint8Array([3]));
    await store.deleteAll(key('batch/'));
    expect(await store.list(key('batch'))).toEqual([key('batch-2/kept.txt')]);
    await expect(store.deleteAll(key('batch'))).rejects.toThrow(/ending in '\/'/);
    await store.deleteAll(key('batch/')); // nothing left: no error
  });

  it('refuses keys that could escape their place', async () => {
    for (const bad of ['../x', 'a/../../x', '/abs', 'a//b', '', 'a/./b']) {
      await expect(store.put(bad, new Uint8Array(1))).rejects.toThrow(/invalid blob key/);
    }
  });

  it('a put whose signal is aborted, before it starts or while it writes, leaves nothing', async () => {
    await expect(store.put(key('cancelled-before.bin'), new Uint8Array(10), { signal: AbortSignal.abort() })).rejects.toThrow(/abort/i);
    // 4 MiB: the directory store writes it through the pool, S3 sends it for milliseconds; aborted at once.
    const during = new AbortController();
    const put = store.put(key('cancelled-during.bin'), new Uint8Array(4 * MiB), { signal: during.signal });
    during.abort();
    await expect(put).rejects.toThrow(/abort/i);
    expect((await store.list('t/')).filter((k) => k.includes('cancelled'))).toEqual([]);
  });

  it('streams 24 MiB in and out (multipart on S3) with the right size and digest', async () => {
    const src = generated(24 * MiB, 7);
    const put = await store.putStream(key('big.bin'), src.stream, { maxBytes: 25 * MiB });
    expect(put).toEqual({ size: 24 * MiB, sha256: src.sha256() });
    expect(await drain(await store.createReadStream(key('big.bin')))).toEqual(put);
  });

  it('aborts a stream over the limit and leaves nothing behind (no object, no pending multipart upload)', async () => {
    const src = generated(12 * MiB, 3);
    await expect(store.putStream(key('over.bin'), src.stream, { maxBytes: 10 * MiB })).rejects.toBeInstanceOf(BlobTooLargeError);
    expect(await store.exists(key('over.bin'))).toBe(false);
    expect((await store.list('t/')).filter((k) => k.includes('over'))).toEqual([]);
    if (name !== 'directory') {
      const client = s3Client();
      const bucket = /^s3:\/\/([^/]+)\//.exec(await store.check())![1];
      const pending = await client.send(new ListMultipartUploadsCommand({ Bucket: bucket }));
      client.destroy();
      expect(pending.Uploads ?? []).toEqual([]);
    }
  });

  it('offers a presigned download URL on S3 only, which serves the bytes with the file name', async () => {
    await store.put(key('doc.pdf'), new TextEncoder().encode('%PDF-1.7 fake'));
    const url = await store.presignedGetUrl(key('doc.pdf'), {
      expiresInSeconds: 60,
      fileName: 'Résumé "final".pdf',
      contentType: 'application/pdf',
    });
    if (name === 'directory') {
      expect(url).toBeUndefined();
      return;
    }
    expect(url).toMatch(/X-Amz-Signature=/);
    const res = await fetch(url!);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    expect(res.headers.get('content-disposition')).toContain(`filename*=UTF-8''R%C3%A9sum%C3%A9%20%22final%22.pdf`);
    expect(await res.text()).toBe('%PDF-1.7 fake');
    // Tampering with the key breaks the signature.
    expect((await fetch(url!.replace('doc.pdf', 'doc.pdX'))).status).toBe(403);
  });

  it('check() fails, saying why, when the store cannot be used', async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-blobs-')), 'a-file');
    dirs.push(path.dirname(file));
    fs.writeFileSync(file, '');
    const broken =
      name === 'directory'
        ? new FsBlobStore(path.join(file, 'storage')) // under a regular file: cannot be created
        : openBlobStore(
            loadConfig({}, { dataDir: os.tmpdir(), ...(await s3Settings()), storageUrl: `s3://missing-${randomUUID().slice(0, 8)}/x` }),
          );
    await expect(broken.check()).rejects.toThrow();
  });
});

describe('blob store: directory layout', () => {
  function store(): FsBlobStore {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-blobs-'));
    dirs.push(dir);
    return new FsBlobStore(dir);
  }

  it("removes a run's scratch directory with its last file, and only then", async () => {
    const blobs = store();
    await blobs.put('scratch/run-1/merged.docx', new Uint8Array([1]));
    await blobs.put('scratch/run-1/data.json', new Uint8Array([2]));
    await blobs.put('scratch/loose-file.bin', new Uint8Array([3]));
    await blobs.delete('scratch/run-1/merged.docx');
    expect(fs.readdirSync(path.join(blobs.root, 'scratch')).sort()).toEqual(['loose-file.bin', 'run-1']);
    await blobs.delete('scratch/run-1/data.json');
    await blobs.delete('scratch/loose-file.bin');
    // The scratch/ folder itself stays; so do the folders of stored documents.
    expect(fs.readdirSync(path.join(blobs.root, 'scratch'))).toEqual([]);
    await blobs.put('subscriptions/s1/doc.docx', new Uint8Array([4]));
    await blobs.delete('subscriptions/s1/doc.docx');
    expect(fs.readdirSync(path.join(blobs.root, 'subscriptions'))).toEqual(['s1']);
    await expect(blobs.delete('scratch/run-1/gone.docx')).resolves.toBeUndefined();
  });

  it('deleteAll also removes what a process killed mid-write left (temporary files list() does not show)', async () => {
    const blobs = store();
    await blobs.put('scratch/batch-1/docs/1.pdf', new Uint8Array([1]));
    const leftover = path.join(blobs.root, 'scratch', 'batch-1', 'docs', '2.pdf.0b9a.tmp');
    fs.writeFileSync(leftover, 'half');
    expect(await blobs.list('scratch/batch-1/')).toEqual(['scratch/batch-1/docs/1.pdf']);
    await blobs.deleteAll('scratch/batch-1/');
    expect(fs.existsSync(path.join(blobs.root, 'scratch', 'batch-1'))).toBe(false);
    // The store writes there again afterwards (its remembered directories were forgotten).
    await blobs.put('scratch/batch-1/docs/3.pdf', new Uint8Array([3]));
    expect(await blobs.list('scratch/batch-1/')).toEqual(['scratch/batch-1/docs/3.pdf']);
  });

  it('puts a small file (written in the thread) and a large one (through the pool) whole, into new directories, leaving no temporary file', async () => {
    const blobs = store();
    const small = new Uint8Array(10_000).fill(7);
    const large = new Uint8Array(300 * 1024).map((_, i) => i % 251);
    expect(await blobs.put('subscriptions/s4/small.bin', small)).toEqual({
      size: small.length,
      sha256: createHash('sha256').update(small).digest('hex'),
    });
    expect((await blobs.put('subscriptions/s5/deep/large.bin', large)).size).toBe(large.length);
    expect(Buffer.compare(Buffer.from(await blobs.get('subscriptions/s4/small.bin')), Buffer.from(small))).toBe(0);
    expect(Buffer.compare(Buffer.from(await blobs.get('subscriptions/s5/deep/large.bin')), Buffer.from(large))).toBe(0);
    expect(fs.readdirSync(path.join(blobs.root, 'subscriptions', 's4'))).toEqual(['small.bin']);
    expect(fs.readdirSync(path.join(blobs.root, 'subscriptions', 's5', 'deep'))).toEqual(['large.bin']);
    // A write that fails (the key is a directory) leaves nothing behind either, on both paths.
    fs.mkdirSync(path.join(blobs.root, 'subscriptions', 's4', 'dir.bin', 'x'), { recursive: true });
    await expect(blobs.put('subscriptions/s4/dir.bin', small)).rejects.toThrow();
    await expect(blobs.put('subscriptions/s4/dir.bin', large)).rejects.toThrow();
    expect(fs.readdirSync(path.join(blobs.root, 'subscriptions', 's4')).sort()).toEqual(['dir.bin', 'small.bin']);
  });

  it('writes into a directory that was removed after an earlier write there (put and copy)', async () => {
    const blobs = store();
    await blobs.put('scratch/run-2/a.bin', new Uint8Array([1]));
    await blobs.put('subscriptions/s2/a.bin', new Uint8Array([1]));
    fs.rmSync(path.join(blobs.root, 'scratch', 'run-2'), { recursive: true });
    fs.rmSync(path.join(blobs.root, 'subscriptions', 's2'), { recursive: true });
    await blobs.put('scratch/run-2/b.bin', new Uint8Array([2]));
    expect([...(await blobs.get('scratch/run-2/b.bin'))]).toEqual([2]);
    await blobs.copy('scratch/run-2/b.bin', 'subscriptions/s2/b.bin');
    expect([...(await blobs.get('subscriptions/s2/b.bin'))]).toEqual([2]);
    await expect(blobs.copy('scratch/run-2/missing.bin', 'subscriptions/s3/c.bin')).rejects.toBeInstanceOf(BlobNotFoundError);
  });
});
