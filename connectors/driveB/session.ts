// A DriveB step's Drive operations, from the subscription's connection (cached per connection version) and
// the service settings; what every operation of the location shares.
import { valuesOf } from '../../core/settings.ts';
import { withLocationLock } from '../../store/location-writes.ts';
import type { OpenedConnection } from '../connections.ts';
import type { LocationContext, LocationDeps } from '../location.ts';
import { googleClients, type RetryPolicy } from './client.ts';
import { credentialsOf } from './connection.ts';
import { DriveOps } from './drive.ts';
import { driveBSettings } from './settings.ts';

/** The largest file read from DriveB into the service (a template, data, a manage source). */
export const MAX_READ_BYTES = 512 * 1024 * 1024;

export interface DriveBSession {
  deps: LocationDeps;
  open(ctx: LocationContext): Promise<DriveOps>;
  /** Connections through a service account (a full drive's advice differs from an OAuth user's). */
  viaServiceAccount: WeakSet<DriveOps>;
  maxReadBytes: number;
}

export function driveBSession(deps: LocationDeps, retry: RetryPolicy, limits: { maxReadBytes?: number }): DriveBSession {
  const cache = new Map<string, { fingerprint: string; ops: DriveOps }>();
  const maxReadBytes = limits.maxReadBytes ?? MAX_READ_BYTES;
  /** Connections through a service account (a full drive's advice differs from an OAuth user's). */
  const viaServiceAccount = new WeakSet<DriveOps>();

  async function open(ctx: LocationContext): Promise<DriveOps> {
    const c: OpenedConnection = await deps.connections.open(ctx, 'driveB');
    const s = valuesOf(driveBSettings, deps.settings);
    const fingerprint = c.version;
    const hit = cache.get(c.id);
    if (hit?.fingerprint === fingerprint) return hit.ops;
    const ops = new DriveOps(
      await googleClients({ apiUrl: s.driveBApiUrl, tokenUrl: s.driveBTokenUrl }, credentialsOf(c), {
        ...retry,
        maxThrottleWaitMs: s.driveThrottleMaxWaitMs,
      }),
      typeof c.settings.sharedDriveId === 'string' ? c.settings.sharedDriveId : undefined,
      (key, fn) => withLocationLock(deps.db, `DriveB ${c.id} ${key}`, fn),
    );
    cache.set(c.id, { fingerprint, ops });
    if (credentialsOf(c).kind === 'serviceAccount') viaServiceAccount.add(ops);
    return ops;
  }

  return { deps, open, viaServiceAccount, maxReadBytes };
}
