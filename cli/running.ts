// The running `docgen start` of a data directory (service.json, admin token) and the development
// credentials `docgen credentials`, `docgen generate` and `docgen example` use to call it.
import fs from 'node:fs';
import path from 'node:path';
import { type Credentials, DEFAULT_SUBSCRIPTION, issueCredentials } from '../api/auth/credentials.ts';
import { ADMIN_PATH } from '../api/routes/admin.ts';
import { baseUrl, type Config } from '../config/env.ts';
import { openDb } from '../store/db.ts';
import { migrate } from '../store/migrate.ts';

export function serviceFile(config: Config): string {
  return path.join(config.dataDir, 'service.json');
}
export function adminTokenFile(config: Config): string {
  return path.join(config.dataDir, 'admin-token');
}

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export interface ServiceRecord {
  pid: number;
  baseUrl: string;
  temporalAddress?: string;
  uiUrl?: string;
}

export function readServiceFile(config: Config): ServiceRecord | undefined {
  try {
    return JSON.parse(fs.readFileSync(serviceFile(config), 'utf8')) as ServiceRecord;
  } catch {
    return undefined;
  }
}

/** The running service of this data directory, or an error saying how to start one. */
export function runningService(config: Config): ServiceRecord {
  const running = readServiceFile(config);
  if (!running || !pidAlive(running.pid)) {
    throw new Error(
      `no docgen service is running from ${config.dataDir}: start one with \`npm start\` (or \`npx docgen start\`) in another terminal, in this directory`,
    );
  }
  return running;
}

/** Development credentials for a subscription: from the running service when it holds the embedded
 *  database, else (DATABASE_URL) straight from the database the API reads. Never into an embedded database
 *  no service reads: keys minted there would answer 401 everywhere. */
export async function obtainCredentials(config: Config, subscription = DEFAULT_SUBSCRIPTION): Promise<Credentials> {
  const running = readServiceFile(config);
  if (!config.databaseUrl && !(running && pidAlive(running.pid))) {
    throw new Error(
      `no docgen service is running from ${path.resolve(config.dataDir)}, so there is no database to make credentials in. ` +
        'Start one with `npm start` (or `npx docgen start`) in this directory, or point at the one you use: ' +
        'DOCGEN_DATA_DIR=<its data directory> (the "Data" line `docgen start` prints), or DATABASE_URL=<its PostgreSQL URL> ' +
        'for a service run as `docgen api` and `docgen worker`.',
    );
  }
  if (!config.databaseUrl && running) {
    // The running service holds the embedded database: ask it over loopback.
    const token = fs.readFileSync(adminTokenFile(config), 'utf8');
    const res = await fetch(`${running.baseUrl}/v1${ADMIN_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-docgen-admin': token },
      body: JSON.stringify({ subscription }),
    });
    const body = (await res.json()) as Credentials & { error?: { message: string } };
    if (!res.ok) throw new Error(`the running service refused: ${body.error?.message ?? res.status}`);
    return body;
  }
  const db = await openDb({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    pgliteSharedBuffersMb: config.pgliteSharedBuffersMb,
  });
  try {
    await migrate(db);
    return await issueCredentials(db, config, running?.baseUrl ?? baseUrl(config), subscription);
  } finally {
    await db.close();
  }
}
