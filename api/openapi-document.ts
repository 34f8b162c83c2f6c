// The OpenAPI document exactly as the service serves it at /v1/openapi.json, made without a database,
// Temporal or storage: the app is built with dependencies that refuse to be used (registering routes uses
// none of them) and asked for its document. For the lint, the generated client (client/openapi.ts) and
// their tests; the settings are the defaults, as in a fresh service.
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../config/env.ts';
import type { BlobStore } from '../connectors/storage/blob-store.ts';
import type { Db } from '../store/db.ts';
import type { TokenVerifier } from '../security/tokens.ts';
import { buildApp } from './app.ts';
import type { WorkflowStarter } from './temporal.ts';

/** A dependency that throws when anything of it is used. */
function unusable<T extends object>(name: string): T {
  return new Proxy({} as T, {
    get(_target, key) {
      throw new Error(`the OpenAPI document was asked of an app without a ${name} (${String(key)} was used)`);
    },
  });
}

export const DOCUMENT_BASE_URL = 'http://127.0.0.1:8080/v1';

/** The API with nothing behind it: its documentation (/v1/openapi.json, /v1/docs) works, any operation
 *  fails. */
export function documentationApp(baseUrl: () => string = () => DOCUMENT_BASE_URL): Promise<FastifyInstance> {
  return buildApp({
    config: loadConfig({}),
    db: unusable<Db>('database'),
    blobs: unusable<BlobStore>('blob store'),
    temporal: unusable<WorkflowStarter>('Temporal client'),
    verifyToken: unusable<TokenVerifier>('token verifier'),
    baseUrl,
    logger: false,
  });
}

export async function openapiDocument(): Promise<Record<string, unknown>> {
  const app = await documentationApp();
  try {
    await app.ready();
    return JSON.parse(JSON.stringify(app.swagger())) as Record<string, unknown>;
  } finally {
    await app.close();
  }
}
