// A real S3 server for tests: versitygw (`go install github.com/versity/versitygw/cmd/versitygw@v1.8.0`,
// .ci/run installs it) serving a temporary directory on a free loopback port. Each test file gets its own
// bucket.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { inject } from 'vitest';
import type { Config } from '../../config/env.ts';
import { findGoBinary } from './go-bins.ts';

export const VERSITYGW_MODULE = 'github.com/versity/versitygw/cmd/versitygw@v1.8.0';
export const S3_ACCESS_KEY = 'docgen-test';
export const S3_SECRET_KEY = 'docgen-test-secret-key';

export interface S3Server {
  endpoint: string;
  stop(): Promise<void>;
}

export function findVersitygw(): string | undefined {
  return findGoBinary('VERSITYGW', ['versitygw']);
}

export async function startS3Server(port: number): Promise<S3Server> {
  const bin = findVersitygw();
  if (!bin)
    throw new Error(`versitygw not found (VERSITYGW, PATH, Go's bin directory): run \`go install ${VERSITYGW_MODULE}\` (.ci/run does)`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-s3-'));
  let log = '';
  const child: ChildProcess = spawn(bin, ['--port', `127.0.0.1:${port}`, 'posix', dir], {
    env: { ...process.env, ROOT_ACCESS_KEY: S3_ACCESS_KEY, ROOT_SECRET_KEY: S3_SECRET_KEY },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (d: Buffer) => (log = (log + d.toString()).slice(-4000)));
  child.stderr?.on('data', (d: Buffer) => (log = (log + d.toString()).slice(-4000)));
  const endpoint = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    // Any HTTP answer (403 for an anonymous request) means it listens.
    const up = await fetch(endpoint, { signal: AbortSignal.timeout(1_000) }).then(
      () => true,
      () => false,
    );
    if (up) break;
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`versitygw did not start:\n${log}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    endpoint,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(timer);
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function s3Client(endpoint = inject('s3Endpoint')): S3Client {
  if (!endpoint) throw new Error(`no S3 server in this test run: versitygw was not found; run \`go install ${VERSITYGW_MODULE}\``);
  return new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: S3_ACCESS_KEY, secretAccessKey: S3_SECRET_KEY },
  });
}

/** A fresh bucket on the run's S3 server and the settings that point docgen at it. */
export async function s3Settings(prefix = 'docgen'): Promise<Partial<Config>> {
  const endpoint = inject('s3Endpoint');
  const bucket = `t-${randomUUID().replace(/-/g, '').slice(0, 24)}`;
  const client = s3Client(endpoint);
  try {
    await client.send(new CreateBucketCommand({ Bucket: bucket }));
  } finally {
    client.destroy();
  }
  return {
    storageUrl: `s3://${bucket}/${prefix}`,
    s3Endpoint: endpoint,
    s3ForcePathStyle: 'true',
    awsAccessKeyId: S3_ACCESS_KEY,
    awsSecretAccessKey: S3_SECRET_KEY,
  };
}

/** The same settings as environment variables, for `docgen` child processes. */
export function s3Env(settings: Partial<Config>): Record<string, string> {
  return {
    STORAGE_URL: settings.storageUrl ?? '',
    S3_ENDPOINT: settings.s3Endpoint ?? '',
    S3_FORCE_PATH_STYLE: settings.s3ForcePathStyle ?? 'auto',
    AWS_ACCESS_KEY_ID: settings.awsAccessKeyId ?? '',
    AWS_SECRET_ACCESS_KEY: settings.awsSecretAccessKey ?? '',
  };
}
