// Connections: how a subscription reaches its drives and its CRM. One connection per subscription and kind
// (PUT /common/connection/{kind}); its secrets are sealed at rest with the service key, never returned,
// never logged, never in a workflow's input or history: a workflow carries the connection's id and the
// activity that talks to the drive opens it here. Endpoints are service settings (ConnectorSettings), never
// values a tenant sends, so a connection cannot point the service at an arbitrary host.
import type { TSchema } from 'typebox';
import type { InnerError } from '../core/errors.ts';
import type { Db } from '../store/db.ts';
import { getConnectionById, getConnectionByKind, type StoredConnection } from '../store/connections.ts';
import { unseal } from '../security/sealed.ts';
import { crmConnection } from './crm/connection.ts';
import { driveAConnection } from './driveA/connection.ts';
import { driveBConnection } from './driveB/connection.ts';
import { type LocationContext, LocationError } from './location.ts';

export const CONNECTION_KIND_NAMES = ['driveA', 'driveB', 'crm'] as const;
export type ConnectionKindName = (typeof CONNECTION_KIND_NAMES)[number];

/** The location method each connection kind serves. */
export const LOCATION_OF_KIND: Record<ConnectionKindName, string> = { driveA: 'DriveA', driveB: 'DriveB', crm: 'crm' };

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
}

export const DEFAULT_CONNECTOR_SETTINGS: ConnectorSettings = {
  driveAGraphUrl: 'https://graph.microsoft.com/v1.0',
  driveALoginUrl: 'https://login.microsoftonline.com',
  crmApiVersion: '62.0',
  crmLoginHosts: ['*.my.salesforce.com', 'login.salesforce.com', 'test.salesforce.com'],
  crmMultipartBytes: 30 * 1024 * 1024,
  driveBApiUrl: 'https://www.googleapis.com/',
  driveBTokenUrl: 'https://oauth2.googleapis.com/token',
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

/** The kinds this deployment can connect. A connector adds its own line. */
export const CONNECTION_KINDS: Partial<Record<ConnectionKindName, ConnectionKind>> = {
  driveA: driveAConnection,
  driveB: driveBConnection,
  crm: crmConnection,
};

export function isConnectionKindName(k: string): k is ConnectionKindName {
  return (CONNECTION_KIND_NAMES as readonly string[]).includes(k);
}

export interface OpenedConnection {
  id: string;
  kind: ConnectionKindName;
  settings: Record<string, unknown>;
  secrets: Record<string, string>;
  /** Changes whenever the connection is replaced: a key for caches of tokens made from it. */
  version: string;
}

export interface ConnectionStore {
  /** The subscription's connection of that kind (by ctx.connectionId when the workflow carries one), secrets
   *  unsealed; a LocationError CONNECTION_MISSING when there is none. */
  open(ctx: LocationContext, kind: ConnectionKindName): Promise<OpenedConnection>;
  /** The id of the subscription's connection of that kind, or undefined (the API's check before queueing). */
  idOf(subscriptionId: string, kind: ConnectionKindName): Promise<string | undefined>;
}

export function missingConnection(kind: ConnectionKindName): string {
  return `the subscription has no ${kind} connection: connect it with PUT /v1/common/connection/${kind}`;
}

export function connectionStore(db: Db): ConnectionStore {
  return {
    async open(ctx, kind) {
      let row: StoredConnection | undefined;
      if (ctx.connectionId) {
        row = await getConnectionById(db, ctx.subscriptionId, ctx.connectionId);
        if (row && row.kind !== kind) row = undefined;
        if (!row) throw new LocationError('CONNECTION_MISSING', `the ${kind} connection this request was started with was deleted: connect it again with PUT /v1/common/connection/${kind}`);
      } else {
        row = await getConnectionByKind(db, ctx.subscriptionId, kind);
        if (!row) throw new LocationError('CONNECTION_MISSING', missingConnection(kind));
      }
      const secrets = JSON.parse(await unseal(db, ctx.subscriptionId, row.sealedSecrets)) as Record<string, string>;
      return { id: row.id, kind, settings: row.settings, secrets, version: `${row.id}:${row.lastModifiedDate}` };
    },
    async idOf(subscriptionId, kind) {
      return (await getConnectionByKind(db, subscriptionId, kind))?.id;
    },
  };
}
