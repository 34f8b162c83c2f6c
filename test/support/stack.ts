// The real service in-process (API on a free port + worker) against the run's Temporal dev server and a
// database of the caller's choice; each stack gets its own data directory and task queue.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { inject } from 'vitest';
import { type Credentials, issueCredentials } from '../../api/auth/credentials.ts';
import { startService, type RunningService } from '../../cli/service.ts';
import { type Config, loadConfig } from '../../config/env.ts';
import type { BlobStore } from '../../connectors/storage/blob-store.ts';
import { openBlobStore } from '../../connectors/storage/open.ts';
import { currentLabel, keepOutput, OUTPUTS_ENV } from './office-outputs.ts';
import { s3Settings } from './s3.ts';
import type { Logger } from '../../telemetry/log.ts';

export interface Stack {
  service: RunningService;
  /** The stack's blob store (the directory or the S3 bucket it was given). */
  blobs: BlobStore;
  config: Config;
  credentials(subscription?: string): Promise<Credentials>;
  stop(): Promise<void>;
}

export async function startStack(
  overrides: Partial<Config> = {},
  opts: {
    database?: 'pglite' | 'postgres';
    storage?: 'directory' | 's3';
    /** Fastify/pino logger options (default: no log). */
    logger?: Record<string, unknown>;
    /** The process log (the worker's and the converter's lines); default: at the config's level, silent. */
    log?: Logger;
  } = {},
): Promise<Stack> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-stack-'));
  let databaseUrl: string | undefined;
  // DOCGEN_TEST_DATABASE=postgres runs every stack-based suite on PostgreSQL (CI does both).
  const database = opts.database ?? (process.env.DOCGEN_TEST_DATABASE === 'postgres' ? 'postgres' : 'pglite');
  if (database === 'postgres') databaseUrl = await createPgDatabase();
  // DOCGEN_TEST_STORAGE=s3 runs every stack-based suite on the S3 server (a bucket per stack); CI's second
  // pass (PostgreSQL) does.
  const storage = opts.storage ?? (process.env.DOCGEN_TEST_STORAGE === 's3' ? 's3' : 'directory');
  const s3 = storage === 's3' ? await s3Settings() : {};
  const config = loadConfig(
    {},
    { port: 0, dataDir, taskQueue: `test-${randomUUID()}`, logLevel: 'silent', databaseUrl, ...s3, ...overrides },
  );
  const service = await startService({
    config,
    temporalAddress: inject('temporalAddress'),
    api: true,
    worker: true,
    logger: opts.logger ?? false,
    ...(opts.log ? { log: opts.log } : {}),
  });
  return {
    service,
    blobs: openBlobStore(config),
    config,
    credentials: (subscription?: string) => issueCredentials(service.db, config, service.baseUrl, subscription),
    async stop() {
      await keepDocuments(openBlobStore(config));
      await service.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A fresh database on the run's PostgreSQL server, so test files never see each other's rows. */
export async function createPgDatabase(): Promise<string> {
  const { default: pg } = await import('pg');
  const admin = new pg.Client({ connectionString: inject('postgresUrl') });
  await admin.connect();
  const name = `t_${randomUUID().replace(/-/g, '')}`;
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(inject('postgresUrl'));
  url.pathname = `/${name}`;
  return url.toString();
}

/** The Office documents the stack delivered to Storage, kept for schema validation (DOCGEN_TEST_OUTPUTS). */
async function keepDocuments(blobs: BlobStore): Promise<void> {
  if (!process.env[OUTPUTS_ENV]) return;
  let keys: string[];
  try {
    keys = await blobs.list('subscriptions/');
  } catch {
    return;
  }
  for (const key of keys.filter((k) => k.includes('/documents/'))) {
    try {
      keepOutput(await blobs.get(key), `stack-${currentLabel()}`);
    } catch {
      // removed meanwhile (a test's manage delete): nothing to keep
    }
  }
}
