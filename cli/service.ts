// Composes the service from its parts: database, blob store, Temporal connection, worker and API.
// `docgen start` runs all of it (plus a Temporal dev server) in one process; `docgen api` and
// `docgen worker` run one half each against a shared PostgreSQL and Temporal cluster.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../api/app.ts';
import { converterAvailable, defaultPoolSize, shutdownConverter, startConverter } from '../converter/index.ts';
import { createTokenVerifier } from '../security/tokens.ts';
import { baseUrl, type Config, templateLimits } from '../config/env.ts';
import { MergePool } from '../activities/merge-pool.ts';
import { outboundPolicy } from '../connectors/http/address-policy.ts';
import { FsBlobStore } from '../connectors/storage/blob-store.ts';
import { type Db, openDb } from '../store/db.ts';
import { migrate } from '../store/migrate.ts';
import { installRuntime, type RunningWorker, startWorker } from '../worker/index.ts';
import { ensureSearchAttributes } from '../worker/search-attributes.ts';

export interface ServiceOptions {
  config: Config;
  temporalAddress: string;
  api: boolean;
  worker: boolean;
  adminToken?: string;
  logger?: boolean | Record<string, unknown>;
}

export interface RunningService {
  db: Db;
  app?: FastifyInstance;
  worker?: RunningWorker;
  /** The API's base URL without /v1, once listening. */
  baseUrl: string;
  /** One line for the start-up banner: is pdf/csv conversion available, and if not, how to enable it. */
  converterStatus: string;
  stop(): Promise<void>;
}

/** The converter's pool size; a bad CONVERTER_POOL_SIZE is reported when the converter starts, not here. */
function poolSizeOrCpus(): number {
  try {
    return defaultPoolSize();
  } catch {
    return os.availableParallelism();
  }
}

export async function startService(opts: ServiceOptions): Promise<RunningService> {
  const { config } = opts;
  if (!config.databaseUrl && !(opts.api && opts.worker)) {
    throw new Error(
      'The embedded database (PGlite) serves one process only: run `docgen start`, or set DATABASE_URL to a PostgreSQL server to run `docgen api` and `docgen worker` separately.',
    );
  }
  fs.mkdirSync(config.dataDir, { recursive: true });
  const db = await openDb({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  const cleanups: (() => Promise<void>)[] = [async () => db.close()];
  const stop = async () => {
    for (const fn of cleanups.reverse()) await fn().catch(() => undefined);
    cleanups.length = 0;
  };
  try {
    await migrate(db);
    const blobs = new FsBlobStore(path.join(config.dataDir, 'storage'));
    // One connection for the worker and the API's client: with both in one process, a synchronous generate
    // starts eagerly on the local worker (no extra round trip through the task queue).
    installRuntime(config.logLevel);
    const connection = await NativeConnection.connect({ address: opts.temporalAddress });
    cleanups.push(async () => connection.close());
    await ensureSearchAttributes(connection, config.temporalNamespace);
    let worker: RunningWorker | undefined;
    let converterStatus = 'not in this process';
    if (opts.worker) {
      const mergePool = new MergePool({
        threads: config.mergeThreads,
        timeoutMs: config.mergeTimeoutMs,
        maxMemoryMb: config.mergeMaxMemoryMb,
        limits: templateLimits(config),
        outbound: { allow: config.outboundAllow, timeoutMs: config.outboundTimeoutMs, maxResponseBytes: config.outboundMaxBytes },
      });
      mergePool.warm();
      cleanups.push(async () => mergePool.close());
      worker = await startWorker({
        connection,
        namespace: config.temporalNamespace,
        taskQueue: config.taskQueue,
        deps: {
          db,
          blobs,
          outbound: { policy: outboundPolicy(config.outboundAllow), timeoutMs: config.outboundTimeoutMs, maxResponseBytes: config.outboundMaxBytes },
          merge: mergePool,
        },
        logLevel: config.logLevel,
        officeSlots: config.converterSlots || 2 * poolSizeOrCpus(),
      });
      const w = worker;
      cleanups.push(async () => w.shutdown());
      // The LibreOffice pool starts with the worker (warm instances are the point); without LibreOffice
      // the worker still serves docx/xlsx/pptx outputs and pdf/csv requests get a 400 saying why.
      if (converterAvailable().available) {
        converterStatus = await startConverter({ maxMemoryMb: config.converterMaxMemoryMb }).then(
          (s) => `${s.kind}, ${s.instances.length} warm instance(s), network isolation: ${s.networkIsolation}`,
          (err: unknown) => `failed to start: ${err instanceof Error ? err.message : String(err)}`,
        );
        cleanups.splice(1, 0, async () => shutdownConverter());
      } else {
        const c = converterAvailable();
        converterStatus = `not available (${c.reason}); ${c.howToEnable}`;
      }
    }
    let app: FastifyInstance | undefined;
    let url = baseUrl(config);
    if (opts.api) {
      const client = new Client({ connection, namespace: config.temporalNamespace });
      app = await buildApp({
        config,
        db,
        blobs,
        temporal: {
          client,
          taskQueue: config.taskQueue,
          generateTimeoutMs: config.generateTimeoutMs,
          eagerStart: opts.worker,
          ...(opts.worker ? { converter: converterAvailable } : {}),
        },
        verifyToken: await createTokenVerifier(db, config),
        baseUrl: () => url,
        ...(opts.adminToken ? { adminToken: opts.adminToken } : {}),
        ...(opts.logger !== undefined ? { logger: opts.logger } : {}),
      });
      await app.listen({ port: config.port, host: config.host });
      const addr = app.server.address();
      if (addr && typeof addr === 'object') url = baseUrl(config, addr.port);
      const a = app;
      cleanups.push(async () => {
        // Fastify closes the connections that are idle when close() starts; a keep-alive connection whose
        // response was still finishing then would hold close() for the whole keep-alive timeout (~72 s).
        // Keep closing the ones that became idle, and after a grace period for in-flight requests close
        // the rest.
        const sweep = setInterval(() => a.server.closeIdleConnections(), 100);
        const force = setTimeout(() => a.server.closeAllConnections(), 10_000);
        try {
          await a.close();
        } finally {
          clearInterval(sweep);
          clearTimeout(force);
        }
      });
    }
    return {
      db,
      ...(app ? { app } : {}),
      ...(worker ? { worker } : {}),
      get baseUrl() {
        return url;
      },
      converterStatus,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
