// The DriveA connection of a subscription (PUT /v1/common/connection/driveA): a Microsoft Entra
// application's client credentials (tenantId, clientId, clientSecret; the secret is sealed at rest and
// never returned) and the drive it delivers to: exactly one of driveId (a OneDrive or document library
// drive), siteId (the site's default document library) or userId (the user's OneDrive). The application
// needs the Graph application permission Files.ReadWrite.All (or Sites.Selected granted on the site).
import Type from 'typebox';
import { type InnerError, innerError } from '../../core/errors.ts';
import type { ConnectionKind } from '../connections.ts';

export interface DriveASettings {
  tenantId: string;
  clientId: string;
  driveId?: string;
  siteId?: string;
  userId?: string;
}

const Id = (description: string) => Type.String({ minLength: 1, maxLength: 400, description });

export const driveAConnection: ConnectionKind = {
  kind: 'driveA',
  body: Type.Object(
    {
      tenantId: Id('Microsoft Entra tenant id (GUID) or domain'),
      clientId: Id('application (client) id'),
      clientSecret: Type.String({ minLength: 1, maxLength: 1000, description: 'client secret; sealed at rest, never returned' }),
      driveId: Type.Optional(Id('the drive to use (one of driveId, siteId, userId)')),
      siteId: Type.Optional(Id("a SharePoint site whose default document library is used (one of driveId, siteId, userId)")),
      userId: Type.Optional(Id("a user whose OneDrive is used (one of driveId, siteId, userId)")),
    },
    { additionalProperties: false, description: 'DriveA (OneDrive / SharePoint through Microsoft Graph): client credentials and the drive' },
  ),
  parse(body) {
    const errors: InnerError[] = [];
    const text = (field: string, max = 400): string | undefined => {
      const v = body[field];
      if (v === undefined) return undefined;
      if (typeof v !== 'string' || v.trim() === '' || v.length > max) {
        errors.push(innerError('VALIDATION_ERROR', `connection.${field} must be a non-empty string of at most ${max} characters`));
        return undefined;
      }
      return v.trim();
    };
    for (const field of Object.keys(body)) {
      if (!['tenantId', 'clientId', 'clientSecret', 'driveId', 'siteId', 'userId'].includes(field)) {
        errors.push(innerError('VALIDATION_ERROR', `connection.${field} is not a DriveA connection field (tenantId, clientId, clientSecret, driveId, siteId, userId)`));
      }
    }
    const tenantId = text('tenantId');
    const clientId = text('clientId');
    const clientSecret = text('clientSecret', 1000);
    for (const [field, v] of [['tenantId', tenantId], ['clientId', clientId], ['clientSecret', clientSecret]] as const) {
      if (v === undefined && body[field] === undefined) errors.push(innerError('VALIDATION_ERROR', `connection.${field} is required`));
    }
    const drive = { driveId: text('driveId'), siteId: text('siteId'), userId: text('userId') };
    const named = Object.entries(drive).filter(([, v]) => v !== undefined);
    if (named.length !== 1 && !Object.keys(drive).some((k) => body[k] !== undefined && errors.some((e) => e.message.startsWith(`connection.${k} `)))) {
      errors.push(innerError('VALIDATION_ERROR', `connection needs exactly one of driveId, siteId or userId${named.length > 1 ? `, not ${named.map(([k]) => k).join(' and ')}` : ''}`));
    }
    if (errors.length > 0) return { errors };
    const settings: Record<string, unknown> = { tenantId, clientId, ...Object.fromEntries(named) };
    return { settings, secrets: { clientSecret: clientSecret! } };
  },
};

/** The Graph path of the connection's drive. */
export function driveBase(s: DriveASettings): string {
  if (s.driveId) return `/drives/${encodeURIComponent(s.driveId)}`;
  if (s.siteId) return `/sites/${encodeURIComponent(s.siteId)}/drive`;
  return `/users/${encodeURIComponent(s.userId ?? '')}/drive`;
}
