// PUT /v1/common/connection/driveB: how docgen reaches a subscription's Google Drive. Three shapes:
// - a Google OAuth client (clientId, clientSecret) and a user's refreshToken: files belong to that user;
// - a service account key (serviceAccountKey, the JSON key file) with `subject`: domain-wide delegation,
//   the service account acts as that Workspace user (files belong to the user);
// - a service account key with `sharedDriveId`: files go to that shared drive (the service account must be
//   a member). A service account has no storage quota of its own, so it cannot own files in a My Drive:
//   one of `subject` or `sharedDriveId` is required.
// The client secret, the refresh token and the private key are secrets (sealed at rest, never returned);
// the rest is returned by GET.
import Type from 'typebox';
import { type InnerError, innerError } from '../../core/errors.ts';
import type { ConnectionKind, OpenedConnection } from '../connections.ts';
import type { GoogleCredentials } from './client.ts';

const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;

export const driveBConnection: ConnectionKind = {
  kind: 'driveB',
  body: Type.Object(
    {
      clientId: Type.Optional(Type.String({ description: 'OAuth: the Google OAuth client id' })),
      clientSecret: Type.Optional(Type.String({ description: 'OAuth: the client secret (secret: never returned)' })),
      refreshToken: Type.Optional(
        Type.String({ description: "OAuth: the user's refresh token, scope https://www.googleapis.com/auth/drive (secret)" }),
      ),
      serviceAccountKey: Type.Optional(
        Type.Union([Type.String(), Type.Object({}, { additionalProperties: true })], {
          description:
            'Service account: the JSON key file (object or JSON text) with client_email and private_key (secret: the private key is never returned)',
        }),
      ),
      subject: Type.Optional(Type.String({ description: 'Service account: the Workspace user to act as (domain-wide delegation)' })),
      sharedDriveId: Type.Optional(
        Type.String({
          description: 'A shared drive to read and write in (required for a service account without subject: it has no storage of its own)',
        }),
      ),
    },
    { additionalProperties: false },
  ),
  parse(body): { settings: Record<string, unknown>; secrets: Record<string, string> } | { errors: InnerError[] } {
    const errors: InnerError[] = [];
    const str = (k: string): string | undefined => {
      const v = body[k];
      if (v === undefined || v === null || v === '') return undefined;
      if (typeof v !== 'string') {
        errors.push(innerError('VALIDATION_ERROR', `connection.${k} must be a string`));
        return undefined;
      }
      return v.trim();
    };
    const clientId = str('clientId');
    const clientSecret = str('clientSecret');
    const refreshToken = str('refreshToken');
    const subject = str('subject');
    const sharedDriveId = str('sharedDriveId');
    const rawKey = body.serviceAccountKey;
    if (sharedDriveId !== undefined && !/^[A-Za-z0-9_-]{1,200}$/.test(sharedDriveId))
      errors.push(innerError('VALIDATION_ERROR', 'connection.sharedDriveId is not a shared drive id'));
    if (subject !== undefined && !EMAIL.test(subject))
      errors.push(innerError('VALIDATION_ERROR', 'connection.subject must be the e-mail address of the user to act as'));
    const oauth = clientId !== undefined || clientSecret !== undefined || refreshToken !== undefined;
    if (rawKey !== undefined && rawKey !== null && rawKey !== '') {
      if (oauth)
        errors.push(
          innerError(
            'VALIDATION_ERROR',
            'connection: give either clientId, clientSecret and refreshToken (OAuth) or serviceAccountKey, not both',
          ),
        );
      let key: Record<string, unknown> | undefined;
      try {
        const parsed: unknown = typeof rawKey === 'string' ? JSON.parse(rawKey) : rawKey;
        if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) key = parsed as Record<string, unknown>;
      } catch {
        key = undefined;
      }
      const clientEmail = key?.client_email;
      const privateKey = key?.private_key;
      if (
        !key ||
        typeof clientEmail !== 'string' ||
        !EMAIL.test(clientEmail) ||
        typeof privateKey !== 'string' ||
        !privateKey.includes('PRIVATE KEY')
      ) {
        errors.push(
          innerError(
            'VALIDATION_ERROR',
            'connection.serviceAccountKey must be the JSON key file of a service account (with client_email and private_key)',
          ),
        );
      } else if (subject === undefined && sharedDriveId === undefined) {
        errors.push(
          innerError(
            'VALIDATION_ERROR',
            'connection.subject or connection.sharedDriveId is required with a service account: it has no storage quota of its own (act as a user with domain-wide delegation, or write to a shared drive)',
          ),
        );
      }
      if (errors.length > 0) return { errors };
      return {
        settings: { mode: 'serviceAccount', clientEmail, ...(subject ? { subject } : {}), ...(sharedDriveId ? { sharedDriveId } : {}) },
        secrets: { privateKey: privateKey as string },
      };
    }
    if (!oauth) {
      errors.push(
        innerError(
          'VALIDATION_ERROR',
          'connection: give clientId, clientSecret and refreshToken (OAuth), or serviceAccountKey with subject or sharedDriveId',
        ),
      );
      return { errors };
    }
    for (const [k, v] of [
      ['clientId', clientId],
      ['clientSecret', clientSecret],
      ['refreshToken', refreshToken],
    ] as const) {
      if (v === undefined) errors.push(innerError('VALIDATION_ERROR', `connection.${k} is required for an OAuth connection`));
    }
    if (subject !== undefined) errors.push(innerError('VALIDATION_ERROR', 'connection.subject applies to a service account only'));
    if (errors.length > 0) return { errors };
    return {
      settings: { mode: 'oauth', clientId, ...(sharedDriveId ? { sharedDriveId } : {}) },
      secrets: { clientSecret: clientSecret!, refreshToken: refreshToken! },
    };
  },
};

/** The client credentials of an opened connection. */
export function credentialsOf(c: OpenedConnection): GoogleCredentials {
  if (c.settings.mode === 'serviceAccount') {
    return {
      kind: 'serviceAccount',
      clientEmail: String(c.settings.clientEmail),
      privateKey: c.secrets.privateKey ?? '',
      ...(typeof c.settings.subject === 'string' ? { subject: c.settings.subject } : {}),
    };
  }
  return {
    kind: 'oauth',
    clientId: String(c.settings.clientId),
    clientSecret: c.secrets.clientSecret ?? '',
    refreshToken: c.secrets.refreshToken ?? '',
  };
}
