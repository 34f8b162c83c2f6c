// Peak memory of streaming a large blob into and out of each store, one child process per store and
// direction so that peaks do not mix: the S3 store (multipart upload, streamed body) against the directory
// store as the peer. Needs versitygw (go install github.com/versity/versitygw/cmd/versitygw@v1.8.0).
//   node bench/blob-store-memory.ts [--mb 200] [--stores fs,s3]
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { parseArgs, promisify } from 'node:util';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { freePort } from '../cli/temporal-dev.ts';
import { type BlobStore, FsBlobStore } from '../connectors/storage/blob-store.ts';
import { S3BlobStore } from '../connectors/storage/s3-blob-store.ts';
import { S3_ACCESS_KEY, S3_SECRET_KEY, startS3Server } from '../test/support/s3.ts';

const { values } = parseArgs({
  options: { mb: { type: 'string', default: '200' }, stores: { type: 'string', default: 'fs,s3' }, child: { type: 'string' } },
});
const MB = Number(values.mb);

function source(total: number): Readable {
  let sent = 0;
  const chunk = Buffer.alloc(1024 * 1024, 7);
  return new Readable({
    read() {
      if (sent >= total) return void this.push(null);
      sent += chunk.length;
      this.push(chunk);
    },
  });
}

async function child(spec: { kind: 'fs' | 's3'; dir?: string; endpoint?: string; bucket?: string; op: 'put' | 'get' }) {
  const store: BlobStore =
    spec.kind === 'fs'
      ? new FsBlobStore(spec.dir!)
      : new S3BlobStore({
          bucket: spec.bucket!,
          endpoint: spec.endpoint!,
          region: 'us-east-1',
          forcePathStyle: true,
          credentials: { accessKeyId: S3_ACCESS_KEY, secretAccessKey: S3_SECRET_KEY },
        });
  let peak = process.memoryUsage().rss;
  const base = peak;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  const t0 = performance.now();
  if (spec.op === 'put') {
    await store.putStream('big/blob.bin', source(MB * 1024 * 1024));
  } else {
    const hash = createHash('sha256');
    for await (const c of await store.createReadStream('big/blob.bin')) hash.update(c as Buffer);
  }
  clearInterval(timer);
  peak = Math.max(peak, process.memoryUsage().rss);
  process.stdout.write(
    JSON.stringify({ baseMB: Math.round(base / 2 ** 20), peakMB: Math.round(peak / 2 ** 20), ms: Math.round(performance.now() - t0) }),
  );
}

if (values.child) {
  await child(JSON.parse(values.child));
} else {
  const s3 = await startS3Server(await freePort());
  const bucket = 'bench';
  const client = new S3Client({
    endpoint: s3.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: S3_ACCESS_KEY, secretAccessKey: S3_SECRET_KEY },
  });
  await client.send(new CreateBucketCommand({ Bucket: bucket }));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-bench-blobs-'));
  try {
    console.log(`${MB} MB blob, peak RSS of a fresh process (MB) and time:`);
    const specs = [
      { kind: 'fs', dir },
      { kind: 's3', endpoint: s3.endpoint, bucket },
    ] as const;
    for (const spec of specs.filter((x) => values.stores.split(',').includes(x.kind))) {
      for (const op of ['put', 'get'] as const) {
        // Asynchronously: this process must keep reading the S3 server's output pipe meanwhile.
        const { stdout: out } = await promisify(execFile)(
          process.execPath,
          [import.meta.filename, '--mb', String(MB), '--child', JSON.stringify({ ...spec, op })],
          { encoding: 'utf8' },
        );
        const r = JSON.parse(out) as { baseMB: number; peakMB: number; ms: number };
        console.log(`  ${spec.kind.padEnd(3)} ${op}: base ${r.baseMB}, peak ${r.peakMB} (+${r.peakMB - r.baseMB}), ${r.ms} ms`);
      }
    }
  } finally {
    client.destroy();
    await s3.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
