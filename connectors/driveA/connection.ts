// A DriveA connection: a Microsoft Entra application (client credentials) and the drive it writes to. The
// client secret is sealed at rest and never returned; the tenant, the application and the drive are
// settings the connection list shows.
import Type from 'typebox';
import { innerError, type InnerError } from '../../core/errors.ts';
import type { ConnectionKind } from '../connections.ts';

export interface DriveASettings {
  tenantId: string;
  clientId: string;
  /** Exactly one of these names the drive: a drive id, or a SharePoint site / a user whose drive is used. */
  driveId?: string;
  siteId?: string;
  userId?: string;
}

const TARGETS = ['driveId', 'siteId', 'userId'] as const;
// Graph ids: GUIDs, "b!..." drive ids, "host,guid,guid" site ids, user principal names. No slashes or
// query characters: they are put into URL paths.
const ID = /^[A-Za-z0-9!._@,:~-]{1,200}$/;

export const driveAConnection: ConnectionKind = {
  kind: 'driveA',
  body: Type.Object(
    {
      tenantId: Type.String({ description: 'Microsoft Entra tenant id (GUID) or domain' }),
      clientId: Type.String({ description: 'Application (client) id of the Entra app registration' }),
      clientSecret: Type.String({ description: 'Client secret of the app (stored sealed, never returned)' }),
      driveId: Type.Optional(Type.String({ description: 'The drive to use (GET /sites/{site}/drives or /users/{user}/drive show it)' })),
      siteId: Type.Optional(Type.String({ description: 'Or: a SharePoint site whose default document library is used' })),
      userId: Type.Optional(Type.String({ description: 'Or: a user (id or principal name) whose OneDrive is used' })),
    },
    {
      description:
        'DriveA (OneDrive / SharePoint through Microsoft Graph), application permissions Files.ReadWrite.All or Sites.ReadWrite.All',
    },
  ),
  parse(body) {
    const errors: InnerError[] = [];
    const text = (field: string, secret = false): string => {
      const v = body[field];
      if (typeof v !== 'string' || v.trim() === '') {
        errors.push(innerError('VALIDATION_ERROR', `connection.${field} is required`));
        return '';
      }
      if (!secret && !ID.test(v.trim())) errors.push(innerError('VALIDATION_ERROR', `connection.${field} is not a valid id`));
      return v.trim();
    };
    const tenantId = text('tenantId');
    const clientId = text('clientId');
    const clientSecret = text('clientSecret', true);
    const given = TARGETS.filter((t) => body[t] !== undefined && body[t] !== null && body[t] !== '');
    if (given.length !== 1)
      errors.push(innerError('VALIDATION_ERROR', `connection: give exactly one of ${TARGETS.map((t) => `connection.${t}`).join(', ')}`));
    const settings: Record<string, unknown> = { tenantId, clientId };
    for (const t of given) settings[t] = text(t);
    if (errors.length > 0) return { errors };
    return { settings, secrets: { clientSecret } };
  },
};

/** The Graph path of the connection's drive. */
export function driveBase(s: DriveASettings): string {
  if (s.driveId) return `/drives/${encodeURIComponent(s.driveId)}`;
  if (s.siteId) return `/sites/${encodeURIComponent(s.siteId)}/drive`;
  return `/users/${encodeURIComponent(s.userId ?? '')}/drive`;
}
