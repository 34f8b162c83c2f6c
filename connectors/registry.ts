// The one registry of locations. Adding a location = its folder plus one line in LOCATIONS. The API asks
// `check` before it starts a workflow (a 400 then means nothing was queued and nothing consumed); the
// activities ask `require` for the location they use.
import type { InnerError } from '../core/errors.ts';
import { innerError } from '../core/errors.ts';
import { type Capability, type Location, type LocationDeps, LocationError } from './location.ts';
import { missingConnection } from './connections.ts';
import { driveALocation } from './driveA/location.ts';
import { driveBLocation } from './driveB/location.ts';
import { crmLocation } from './crm/location.ts';
import { storageLocation } from './storage/location.ts';
import { urlLocation } from './url/location.ts';

export type { LocationDeps } from './location.ts';

const LOCATIONS: Record<string, (deps: LocationDeps) => Location> = {
  Storage: storageLocation,
  DriveA: driveALocation,
  DriveB: driveBLocation,
  crm: crmLocation,
  url: urlLocation,
};

/** One thing a request needs from a location, and the request field that asks for it. */
export interface LocationNeed {
  method: string;
  capability: Capability;
  field: string;
  fileFormat?: string;
  /** A write's file: its name and folder as the request gives them, and the object naming them
   *  ('document', 'targetDocument'), checked against the location's naming rules (Location.nameProblem). */
  target?: { name: string; path: string; field: string };
}

/** The registry's answer to the API: what cannot be done (NOT_SUPPORTED, CONNECTION_MISSING, naming the
 *  field), and the connection each connected location will use (method -> connection id) for the workflow. */
export interface LocationCheck {
  problems: InnerError[];
  connections: Record<string, string>;
}

export interface LocationRegistry {
  get(method: string): Location | undefined;
  /** Every need the subscription's locations cannot meet, and the connections the others will use. */
  check(subscriptionId: string, needs: LocationNeed[]): Promise<LocationCheck>;
  /** The location for a need, or a LocationError(NOT_SUPPORTED) naming the field. */
  require(need: LocationNeed): Location;
}

function unsupported(need: LocationNeed, registered: boolean): string {
  if (registered && need.capability === 'delete') return `Delete is supported for the drives only (spec 4.8: DriveA; DriveB too), not for ${need.field} ${need.method}`;
  if (need.method === 'url') return `${need.field} is not available in this deployment yet: upload the file and use template.urn with loadMethod Storage`;
  const what: Record<Capability, string> = {
    readTemplate: 'to read templates from',
    readData: 'to read data from',
    readDocument: 'to read documents from',
    write: 'to write to',
    share: 'to share from',
    remove: 'to remove files from',
    delete: 'to delete from',
  };
  return `${need.field} ${need.method} is not available ${what[need.capability]} in this deployment yet`;
}

/** The most telling code of a check's problems: the API answers with it. */
export function problemCode(problems: InnerError[]): 'NOT_SUPPORTED' | 'CONNECTION_MISSING' | 'VALIDATION_ERROR' {
  for (const code of ['CONNECTION_MISSING', 'VALIDATION_ERROR'] as const) if (problems.every((p) => p.code === code)) return code;
  return 'NOT_SUPPORTED';
}

export function createLocationRegistry(deps: LocationDeps): LocationRegistry {
  const built = new Map<string, Location>();
  const get = (method: string): Location | undefined => {
    if (!Object.hasOwn(LOCATIONS, method)) return undefined;
    let l = built.get(method);
    if (!l) {
      l = LOCATIONS[method]!(deps);
      built.set(method, l);
    }
    return l;
  };
  const problem = (need: LocationNeed): string | undefined => {
    const l = get(need.method);
    if (!l || !l.capabilities.can.includes(need.capability)) return unsupported(need, l !== undefined);
    if (need.fileFormat !== undefined && !(l.capabilities.formats as readonly string[]).includes(need.fileFormat)) {
      return `${need.field} ${need.method} does not hold ${need.fileFormat} files`;
    }
    return undefined;
  };
  return {
    get,
    async check(subscriptionId, needs) {
      const problems: InnerError[] = [];
      const connections: Record<string, string> = {};
      const asked = new Set<string>();
      for (const need of needs) {
        const p = problem(need);
        if (p) {
          problems.push(innerError('NOT_SUPPORTED', p));
          continue;
        }
        const t = need.target;
        const refused = t && need.fileFormat !== undefined ? get(need.method)!.nameProblem?.({ name: t.name, path: t.path, fileFormat: need.fileFormat }) : undefined;
        if (t && refused) problems.push(innerError('VALIDATION_ERROR', `${t.field}.${refused.field} ${JSON.stringify(t[refused.field])}: ${refused.reason}`));
        const kind = get(need.method)!.connection;
        if (!kind || asked.has(need.method)) continue;
        asked.add(need.method);
        const id = await deps.connections.idOf(subscriptionId, kind);
        if (id) connections[need.method] = id;
        else problems.push(innerError('CONNECTION_MISSING', `${need.field} ${need.method}: ${missingConnection(kind)}`));
      }
      return { problems, connections };
    },
    require(need) {
      const p = problem(need);
      if (p) throw new LocationError('NOT_SUPPORTED', p);
      return get(need.method)!;
    },
  };
}
