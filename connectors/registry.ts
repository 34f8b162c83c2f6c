// The one registry of locations. Adding a location = its folder (its Location and its registration: what it
// can do, its formats, its connection, its settings, its wording) plus one line below (registerLocation):
// every list of location methods, the request rules' catalog (core/locations.ts), the OpenAPI enums and
// descriptions, the connection kinds and the location settings of config/env.ts derive from it. The API asks `check` before it starts a workflow (a 400 then
// means nothing was queued and nothing consumed); the activities ask `require` for the location they use.
import type { InnerError } from '../core/errors.ts';
import { innerError } from '../core/errors.ts';
import { bytesFormatOf, isOfficeFormat, otherKindMessage } from '../core/formats.ts';
import { holds, orList, type LocationCatalog, type LocationNeed } from '../core/locations.ts';
import type { Setting, SettingsTable, ValuesOf } from '../core/settings.ts';
import { type Capability, type Location, type LocationDeps, LocationError, type LocationRegistration } from './location.ts';
import { type ConnectionKind, missingConnection } from './connections.ts';
import { crm } from './crm/index.ts';
import { driveA } from './driveA/index.ts';
import { driveB } from './driveB/index.ts';
import { storage } from './storage/index.ts';
import { url } from './url/index.ts';

export type { LocationDeps } from './location.ts';
export type { LocationNeed } from '../core/locations.ts';

const REGISTRATIONS: LocationRegistration[] = [];
const catalog: LocationCatalog[number][] = [];
const connectionKinds = new Map<string, { kind: ConnectionKind; method: string }>();

/** What the request rules know of the locations (core/locations.ts), in registration order. */
export const LOCATION_CATALOG: LocationCatalog = catalog;

/** The connection kinds of the registered locations (PUT /common/connection/{kind}), by kind. */
export const CONNECTION_KINDS: ReadonlyMap<string, { kind: ConnectionKind; method: string }> = connectionKinds;

/** Adds a location to every list derived from the registry: the catalog (request rules, OpenAPI enums and
 *  descriptions), the connection kinds, the settings (config/env.ts). Modules that build from the registry
 *  (the API's schemas) read it when they are first imported: register before. A test registers a location
 *  of its own this way (test/fixtures/locations). */
export function registerLocation(r: LocationRegistration): void {
  if (REGISTRATIONS.some((e) => e.method === r.method)) throw new Error(`location ${r.method} is registered twice`);
  REGISTRATIONS.push(r);
  const { create: _create, connection, settings: _settings, ...entry } = r;
  catalog.push({ ...entry, ...(connection ? { connection: connection.kind } : {}) });
  if (connection) connectionKinds.set(connection.kind, { kind: connection, method: r.method });
}

const BUILT_IN = [storage, driveA, driveB, crm, url] as const;
for (const r of BUILT_IN) registerLocation(r);

type Intersection<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void ? I : never;
/** The typed values of the built-in locations' settings (config/env.ts's Config has them as fields). */
type SettingsValues<R> = R extends { settings: infer S } ? ValuesOf<S> : never;
export type LocationConfig = Intersection<SettingsValues<(typeof BUILT_IN)[number]>>;

/** The settings the registered locations declare, by key (config/env.ts parses them with its own); a
 *  setting two locations share (the drives' throttle wait) is listed once. */
export function locationSettings(): SettingsTable {
  const out: Record<string, Setting<unknown>> = {};
  for (const r of REGISTRATIONS) {
    for (const [key, s] of Object.entries(r.settings ?? {})) {
      const seen = out[key];
      if (seen && seen !== s) throw new Error(`locations declare setting ${key} twice, differently (${seen.env}, ${s.env})`);
      out[key] = s;
    }
  }
  return out;
}

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
  if (registered && need.capability === 'delete')
    return `Delete is supported only by ${orList(REGISTRATIONS.filter((r) => r.can.includes('delete')).map((r) => r.method))} (spec 4.8), not for ${need.field} ${need.method}`;
  if (need.method === 'url')
    return `${need.field} is not available in this deployment yet: upload the file and use template.urn with loadMethod Storage`;
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
export function problemCode(
  problems: InnerError[],
): 'NOT_SUPPORTED' | 'CONNECTION_MISSING' | 'VALIDATION_ERROR' | 'INVALID_TEMPLATE_FORMAT' {
  for (const code of ['CONNECTION_MISSING', 'VALIDATION_ERROR', 'INVALID_TEMPLATE_FORMAT'] as const)
    if (problems.every((p) => p.code === code)) return code;
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
    if (need.fileFormat !== undefined && !holds(r, need.capability, need.fileFormat))
      return `${need.field} ${need.method} does not hold ${need.fileFormat} files`;
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
        const kind =
          need.capability === 'readTemplate' && need.urn && need.fileFormat
            ? await get(need.method)!.templateFormat?.(subscriptionId, need.urn)
            : undefined;
        if (kind && need.fileFormat && kind !== bytesFormatOf(need.fileFormat) && isOfficeFormat(kind)) {
          problems.push(innerError('INVALID_TEMPLATE_FORMAT', otherKindMessage(need.fileFormat, kind)));
        }
        const t = need.target;
        const refused =
          t && need.fileFormat !== undefined
            ? get(need.method)!.nameProblem?.({ name: t.name, path: t.path, fileFormat: need.fileFormat })
            : undefined;
        if (t && refused)
          problems.push(
            innerError('VALIDATION_ERROR', `${t.field}.${refused.field} ${JSON.stringify(t[refused.field])}: ${refused.reason}`),
          );
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
