// What Graph or the token endpoint said, as the caller's error (LocationError naming the field), or the
// error unchanged when it is transient (the activity is retried).
import { LocationError, throttledError } from '../location.ts';
import { BlobTooLargeError } from '../storage/blob-store.ts';
import { ThrottledError } from '../throttle.ts';
import { GraphError, TokenError } from './graph.ts';
import { NOT_FOUND, type Reading } from './names.ts';

/** The largest file read from DriveA into the service. */
export const MAX_READ_BYTES = 512 * 1024 * 1024;

/** Turns what Graph or the token endpoint said into the caller's error; transient failures pass through
 *  unchanged (plain errors: the activity is retried). */
export function mapped(err: unknown, what: { reading?: Reading; urn?: string; field?: string }): unknown {
  if (err instanceof LocationError) return err;
  if (err instanceof ThrottledError) return throttledError(err);
  if (err instanceof BlobTooLargeError && what.reading) {
    // Not transient: a retry would download the same bytes again.
    const { field } = NOT_FOUND[what.reading];
    return new LocationError(
      what.reading === 'document' ? 'VALIDATION_ERROR' : 'TEMPLATE_TOO_COMPLEX',
      `${field} ${what.urn ?? ''} is larger than the ${MAX_READ_BYTES} bytes this service reads from DriveA`,
    );
  }
  if (err instanceof TokenError) {
    return new LocationError(
      'CONNECTION_ERROR',
      `the DriveA connection was refused: ${err.message}; check tenantId, clientId and clientSecret with PUT /v1/common/connection/driveA`,
      [err.body],
    );
  }
  if (!(err instanceof GraphError)) return err;
  const external = [{ status: err.status, code: err.code, message: err.message }];
  if (err.status === 401 || err.status === 403) {
    return new LocationError(
      'CONNECTION_ERROR',
      `DriveA refused the connection's access${what.urn ? ` to ${what.urn}` : ''} (${err.message}): grant the application access to the drive`,
      external,
    );
  }
  if (what.reading && (err.status === 404 || err.status === 400)) {
    const { code, field } = NOT_FOUND[what.reading];
    return new LocationError(code, `${field} ${what.urn ?? ''} does not resolve in DriveA (${err.message})`, external);
  }
  if (err.status === 404)
    return new LocationError(
      'CONNECTION_ERROR',
      `the DriveA connection's drive was not found (${err.message}): check driveId, siteId or userId`,
      external,
    );
  if (err.status === 409 && err.code === 'nameAlreadyExists') {
    return new LocationError(
      'VALIDATION_ERROR',
      `${what.field ?? 'document.name'} already exists in that DriveA folder and the conflict behaviour is fail`,
      external,
    );
  }
  if (err.status === 507 || err.code === 'quotaLimitReached' || err.code === 'insufficientStorage') {
    return new LocationError(
      'QUOTA_EXCEEDED',
      `the DriveA drive has no room left for ${what.field ?? 'document.name'} (Graph answered ${err.message}): free space in the drive or raise its quota, then send the request again`,
      external,
    );
  }
  if (err.status === 400 || err.status === 413 || err.status === 423)
    return new LocationError('VALIDATION_ERROR', `DriveA refused the write (${err.message})`, external);
  return err;
}
