// Connections: how a subscription reaches its drives and its CRM. One connection per subscription and kind
// (PUT /common/connection/{kind}); its secrets are sealed at rest with the service key, never returned,
// never logged, never in a workflow's input or history: a workflow carries the connection's id and the
// activity that talks to the drive opens it (connection-store.ts). This file holds the contracts only. Endpoints are service settings (ConnectorSettings), never
// values a tenant sends, so a connection cannot point the service at an arbitrary host.
import type { TSchema } from 'typebox';
import type { InnerError } from '../core/errors.ts';

/** A connection kind's name (PUT /common/connection/{kind}): driveA, driveB, crm. The kinds are those the
 *  registered locations need (registry.ts CONNECTION_KINDS). */
export type ConnectionKindName = string;

/** Service settings of the connectors (config/env.ts connectorSettingsOf). */
export interface ConnectorSettings {
  /** Microsoft Graph root with its version, e.g. https://graph.microsoft.com/v1.0 */
  driveAGraphUrl: string;
  /** Entra token host; `/{tenant}/oauth2/v2.0/token` is appended. */
  driveALoginUrl: string;
  /** Salesforce REST API version, e.g. 62.0 */
  crmApiVersion: string;
  /** Hosts a crm connection's loginUrl may name (`*.domain` allowed). */
  crmLoginHosts: string[];
  /** Files larger than this go to Salesforce as multipart instead of JSON (base64). */
  crmMultipartBytes: number;
  /** Google API root (Drive, Docs, Sheets, Slides, uploads). */
  driveBApiUrl: string;
  /** Google OAuth token endpoint. */
  driveBTokenUrl: string;
  /** The longest one step waits for a throttling drive (Graph, Drive), all waits together (ms):
   *  DRIVE_THROTTLE_MAX_WAIT_MS. Past it the write or read answers TOO_MANY_REQUESTS with Retry-After. */
  driveThrottleMaxWaitMs?: number;
}

export const DEFAULT_CONNECTOR_SETTINGS: ConnectorSettings = {
  driveAGraphUrl: 'https://graph.microsoft.com/v1.0',
  driveALoginUrl: 'https://login.microsoftonline.com',
  crmApiVersion: '62.0',
  crmLoginHosts: ['*.my.salesforce.com', 'login.salesforce.com', 'test.salesforce.com'],
  crmMultipartBytes: 30 * 1024 * 1024,
  driveBApiUrl: 'https://www.googleapis.com/',
  driveBTokenUrl: 'https://oauth2.googleapis.com/token',
  driveThrottleMaxWaitMs: 600_000,
};

/** What a connector declares about its connections: the body it accepts and how it splits it. */
export interface ConnectionKind {
  readonly kind: ConnectionKindName;
  /** Schema of the PUT body's `connection` object (the OpenAPI document shows it). */
  readonly body: TSchema;
  /** Splits a PUT body into public settings (returned by GET) and secrets (sealed, never returned), or every
   *  problem, each naming its field as `connection.<field>`. */
  parse(body: Record<string, unknown>, settings: ConnectorSettings): { settings: Record<string, unknown>; secrets: Record<string, string> } | { errors: InnerError[] };
}

export interface OpenedConnection {
  id: string;
  kind: ConnectionKindName;
  settings: Record<string, unknown>;
  secrets: Record<string, string>;
  /** Changes whenever the connection is replaced: a key for caches of tokens made from it. */
  version: string;
}

export function missingConnection(kind: ConnectionKindName): string {
  return `the subscription has no ${kind} connection: connect it with PUT /v1/common/connection/${kind}`;
}
