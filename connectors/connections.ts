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

/** Service settings of the connectors, by key (config/env.ts connectorSettingsOf): each location declares
 *  its own in its registration (LocationRegistration.settings) and reads them with core's valuesOf, which
 *  gives each one missing its declared default. */
export type ConnectorSettings = Readonly<Record<string, unknown>>;

/** No settings given: every location uses its declared defaults. */
export const DEFAULT_CONNECTOR_SETTINGS: ConnectorSettings = {};

/** What a connector declares about its connections: the body it accepts and how it splits it. */
export interface ConnectionKind {
  readonly kind: ConnectionKindName;
  /** Schema of the PUT body's `connection` object (the OpenAPI document shows it). */
  readonly body: TSchema;
  /** Splits a PUT body into public settings (returned by GET) and secrets (sealed, never returned), or every
   *  problem, each naming its field as `connection.<field>`. */
  parse(
    body: Record<string, unknown>,
    settings: ConnectorSettings,
  ): { settings: Record<string, unknown>; secrets: Record<string, string> } | { errors: InnerError[] };
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
