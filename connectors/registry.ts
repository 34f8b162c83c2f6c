// The one registry of locations. Adding a location = its folder (its Location and its registration) plus
// one line in REGISTRATIONS: every list of location methods, the request rules' catalog (core/locations.ts)
// and the connection kinds derive from it. The API asks `check` before it starts a workflow (a 400 then
// means nothing was queued and nothing consumed); the activities ask `require` for the location they use.
import type { InnerError } from '../core/errors.ts';
import { innerError } from '../core/errors.ts';
import { bytesFormatOf, isOfficeFormat, otherKindMessage } from '../core/formats.ts';
import { holds, type LocationCatalog, type LocationNeed } from '../core/locations.ts';
import { type Capability, type Location, type LocationDeps, LocationError, type LocationRegistration } from './location.ts';
import { type ConnectionKind, missingConnection } from './connections.ts';
import { crm } from './crm/index.ts';
import { driveA } from './driveA/index.ts';
import { driveB } from './driveB/index.ts';
import { storage } from './storage/index.ts';
import { url } from './url/index.ts';

export type { LocationDeps } from './location.ts';
export type { LocationNeed } from '../core/locations.ts';

const REGISTRATIONS: readonly LocationRegistration[] = [storage, driveA, driveB, crm, url];

/** What the request rules know of the locations (core/locations.ts), in registration order. */
export const LOCATION_CATALOG: LocationCatalog = REGISTRATIONS.map(({ create: _create, connection, ...entry }) => ({
  ...entry,
  ...(connection ? { connection: connection.kind } : {}),
}));

/** The connection kinds of the registered locations (PUT /common/connection/{kind}), by kind. */
export const CONNECTION_KINDS: ReadonlyMap<string, { kind: ConnectionKind; method: string }> = new Map(
  REGISTRATIONS.filter((r) => r.connection).map((r) => [r.connection!.kind, { kind: r.connection!, method: r.method }]),
);

/** The registry's answer to the API: what cannot be done (NOT_SUPPORTED, CONNECTION_MISSING, naming the
 *  field; INVALID_TEMPLATE_FORMAT for a template the location knows is of another kind), and the connection each connected location will use (method -> connection id) for the workflow. */
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
export function problemCode(problems: InnerError[]): 'NOT_SUPPORTED' | 'CONNECTION_MISSING' | 'VALIDATION_ERROR' | 'INVALID_TEMPLATE_FORMAT' {
  for (const code of ['CONNECTION_MISSING', 'VALIDATION_ERROR', 'INVALID_TEMPLATE_FORMAT'] as const) if (problems.every((p) => p.code === code)) return code;
  return 'NOT_SUPPORTED';
}

export function createLocationRegistry(deps: LocationDeps): LocationRegistry {
  const built = new Map<string, Location>();
  const registration = (method: string) => REGISTRATIONS.find((r) => r.method === method);
  const get = (method: string): Location | undefined => {
    const r = registration(method);
    if (!r) return undefined;
    let l = built.get(method);
    if (!l) {
      l = r.create(deps);
      built.set(method, l);
    }
    return l;
  };
  const problem = (need: LocationNeed): string | undefined => {
    const r = registration(need.method);
    if (!r || !r.can.includes(need.capability)) return unsupported(need, r !== undefined);
    if (need.fileFormat !== undefined && !holds(r, need.capability, need.fileFormat)) return `${need.field} ${need.method} does not hold ${need.fileFormat} files`;
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
        const kind = need.capability === 'readTemplate' && need.urn && need.fileFormat ? await get(need.method)!.templateFormat?.(subscriptionId, need.urn) : undefined;
        if (kind && need.fileFormat && kind !== bytesFormatOf(need.fileFormat) && isOfficeFormat(kind)) {
          problems.push(innerError('INVALID_TEMPLATE_FORMAT', otherKindMessage(need.fileFormat, kind)));
        }
        const t = need.target;
        const refused = t && need.fileFormat !== undefined ? get(need.method)!.nameProblem?.({ name: t.name, path: t.path, fileFormat: need.fileFormat }) : undefined;
        if (t && refused) problems.push(innerError('VALIDATION_ERROR', `${t.field}.${refused.field} ${JSON.stringify(t[refused.field])}: ${refused.reason}`));
        const connection = registration(need.method)!.connection?.kind;
        if (!connection || asked.has(need.method)) continue;
        asked.add(need.method);
        const id = await deps.connections.idOf(subscriptionId, connection);
        if (id) connections[need.method] = id;
        else problems.push(innerError('CONNECTION_MISSING', `${need.field} ${need.method}: ${missingConnection(connection)}`));
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
