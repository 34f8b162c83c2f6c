// What Google answered, as the caller's error (LocationError naming what was asked), or the error unchanged
// when it is transient (the activity is retried).
import type { ErrorCode } from '../../core/errors.ts';
import { LocationError, throttledError } from '../location.ts';
import { ThrottledError } from '../throttle.ts';
import { type GoogleApiError, googleError, UploadSessionExpiredError } from './client.ts';

export function asLocationError(err: unknown, notFound: ErrorCode, what: string, serviceAccount = false): unknown {
  if (err instanceof LocationError) return err;
  if (err instanceof ThrottledError) return throttledError(err);
  if (err instanceof UploadSessionExpiredError) return new LocationError('FILE_UPLOAD_FAILED', `${what}: ${err.message}`);
  const g: GoogleApiError = googleError(err);
  const external = [{ status: g.status, reason: g.reason, message: g.message }];
  if (g.retryable && !g.auth) return g; // transient: the activity is retried
  if (g.auth || g.status === 401) {
    return new LocationError(
      'CONNECTION_ERROR',
      `Google refused the driveB connection (${g.message}): check it with PUT /v1/common/connection/driveB`,
      external,
    );
  }
  if (g.reason === 'storageQuotaExceeded' || g.reason === 'quotaExceeded' || g.reason === 'teamDriveFileLimitExceeded') {
    return new LocationError(
      'QUOTA_EXCEEDED',
      serviceAccount
        ? `${what}: the DriveB storage quota is used up (${g.message}); a service account has no storage of its own: connect with subject (domain-wide delegation) or sharedDriveId`
        : `${what}: the DriveB storage quota of the connected Google account is used up (${g.message}): free space in that Drive or connect a shared drive (sharedDriveId)`,
      external,
    );
  }
  if (g.status === 404 || (g.status === 403 && notFound !== 'CONNECTION_ERROR')) {
    return new LocationError(notFound, `${what} was not found in DriveB, or the driveB connection cannot see it (${g.message})`, external);
  }
  if (g.status === 403)
    return new LocationError('CONNECTION_ERROR', `${what}: the driveB connection is not allowed to do this (${g.message})`, external);
  return new LocationError('VALIDATION_ERROR', `${what}: Google answered ${g.status} ${g.reason}: ${g.message}`, external);
}
