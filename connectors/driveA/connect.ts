// A DriveA step's Graph client and drive, from the subscription's connection and the service settings.
import { valuesOf } from '../../core/settings.ts';
import type { LocationContext, LocationDeps } from '../location.ts';
import { type DriveASettings, driveBase } from './connection.ts';
import { GraphClient } from './graph.ts';
import { driveASettings } from './settings.ts';

export interface Opened {
  graph: GraphClient;
  /** The Graph address of the connection's drive (/drives/{id}, /sites/{id}/drive, /users/{id}/drive). */
  drive: string;
}
export type Connect = (ctx: LocationContext) => Promise<Opened>;

export function driveAConnect(deps: LocationDeps): Connect {
  const settings = valuesOf(driveASettings, deps.settings);
  return async (ctx) => {
    const c = await deps.connections.open(ctx, 'driveA');
    const s = c.settings as unknown as DriveASettings;
    const graph = new GraphClient({
      graphUrl: settings.driveAGraphUrl,
      loginUrl: settings.driveALoginUrl,
      credentials: { tenantId: s.tenantId, clientId: s.clientId, clientSecret: c.secrets.clientSecret ?? '' },
      cacheKey: `${c.id}:${c.version}`,
      maxThrottleWaitMs: settings.driveThrottleMaxWaitMs,
    });
    return { graph, drive: driveBase(s) };
  };
}
