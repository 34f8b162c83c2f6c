// Shared by the durability tests: `docgen api` and `docgen worker` as real processes (PostgreSQL, the run's
// Temporal server) whose blob store is the run's S3 server behind a proxy that can hold one request
// (test/support/s3-hold.ts). A test holds a blob operation of a workflow task, SIGKILLs the worker while
// that request is in flight, and starts a second worker; the server times the lost workflow task out (10 s,
// Temporal's default) and the second worker runs it again from the last completed task.
import { inject } from 'vitest';
import { processEnv } from '../../support/async-e2e.ts';
import { docgenCredentials } from '../../support/docgen-start.ts';
import { client } from '../../support/http.ts';
import { type Held, type S3Proxy, s3ProxyEnv, startS3Proxy } from '../../support/s3-hold.ts';
import { runDocgen, stopProcess } from '../../support/service-process.ts';

export interface Crashable {
  proxy: S3Proxy;
  env: NodeJS.ProcessEnv;
  sdk: ReturnType<typeof client>;
  /** The stored files prefix's S3 path: `/<bucket>/<prefix>/`. */
  keyPath: string;
  /** SIGKILLs the running worker (it must be inside the held request), lets the held request go (or drop)
   *  and starts another worker. */
  crashAndReplace(held: Held): Promise<void>;
  sql<T>(text: string, params?: unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

export async function startCrashable(name: string): Promise<Crashable> {
  const proxy = await startS3Proxy(inject('s3Endpoint'));
  const s3 = await s3ProxyEnv(proxy);
  // One LibreOffice instance is enough (manage and generate count docx pages with it).
  const setup = await processEnv(inject('temporalAddress'), { ...s3.env, CONVERTER_POOL_SIZE: '1' });
  const { env } = setup;
  const procs: ReturnType<typeof runDocgen>[] = [];
  let worker = runDocgen(['worker'], env, 'docgen worker polling');
  const api = runDocgen(['api'], env, 'docgen api listening');
  procs.push(worker, api);
  const { default: pg } = await import('pg');
  const db = new pg.Client({ connectionString: env.DATABASE_URL });
  let sdk: ReturnType<typeof client>;
  try {
    await Promise.all([worker.started, api.started]);
    sdk = client(await docgenCredentials(env, name));
    await db.connect();
  } catch (err) {
    for (const p of procs) await stopProcess(p, 'SIGKILL');
    await proxy.close();
    setup.cleanup();
    throw err;
  }
  const url = new URL(s3.settings.storageUrl ?? '');
  return {
    proxy,
    env,
    sdk,
    keyPath: `/${url.hostname}${url.pathname.replace(/\/?$/, '/')}`,
    async crashAndReplace(held) {
      const code = await stopProcess(worker, 'SIGKILL');
      if (code !== null) throw new Error(`the worker had already exited (${code}):\n${worker.output()}`);
      held.release();
      worker = runDocgen(['worker'], env, 'docgen worker polling');
      procs.push(worker);
      await worker.started;
    },
    sql: async <T>(text: string, params: unknown[] = []) => (await db.query(text, params)).rows as T[],
    async close() {
      for (const p of procs) await stopProcess(p, 'SIGKILL');
      await db.end();
      await proxy.close();
      setup.cleanup();
    },
  };
}
