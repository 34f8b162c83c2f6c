// What the request rules know of the locations (where templates, data and documents are read and
// written): which exist, what each can do, the formats each holds, how its steps run. Each connector
// registers this about itself (connectors/registry.ts builds the catalog from the registrations), and every
// list of location methods (loadMethod, deliveryMethod, the connection kinds, the OpenAPI descriptions)
// derives from it: no list of locations is written anywhere else.
import type { InnerError } from './errors.ts';
import type { FileFormat } from './formats.ts';

/** What a location can be asked to do. */
export type Capability =
  /** read a template (generate's template, relatedItems) */
  | 'readTemplate'
  /** read a data file (generate's data) */
  | 'readData'
  /** read a delivered document (manage's source) */
  | 'readDocument'
  /** write a file (generate's delivery, manage's target) */
  | 'write'
  /** sharing links and invitations on the written file (document.options.driveA / driveB) */
  | 'share'
  /** remove the source of a Move (sourceDocument.remove delete / permanentDelete with a target) */
  | 'remove'
  /** the Delete operation of manage (source only, no target) */
  | 'delete';

/** document.options.driveA / driveB (spec 4.8): who gets links or invitations to the delivered file. */
export interface SharingRequest {
  viewAnonymous?: boolean;
  editAnonymous?: boolean;
  viewUsers?: string[];
  editUsers?: string[];
  /** Extension: e-mail the invited users (the drive's own invitation mail); default false. */
  sendInvitation?: boolean;
}

/** Name clash policy of drive writes: rename (default: the drive picks "name 1.docx"), replace the
 *  existing file, or fail. Extension field `conflictBehavior` of document.options.driveA / driveB. */
export type ConflictBehavior = 'rename' | 'replace' | 'fail';
export const CONFLICT_BEHAVIORS: readonly ConflictBehavior[] = ['rename', 'replace', 'fail'];

/** targetDocument.options.crm (spec 4.8): Salesforce ids, and fileType as a check of the format. */
export interface CrmTargetOptions {
  /** ContentVersion.NetworkId: the Experience Cloud site of a new file. */
  networkId?: string;
  /** The file to add a version to: its ContentDocument id (069...) or one of its ContentVersion ids (068...). */
  fileId?: string;
  /** Must agree with targetDocument.fileFormat (Salesforce derives FileType from the file name). */
  fileType?: string;
  /** ContentVersion.FirstPublishLocationId: the record (Account, Opportunity, user, library) a new file is attached to. */
  fileParentId?: string;
  /** ContentVersion.OwnerId. */
  ownerId?: string;
}

/** What a target's own location options ask of the write: sharing and the clash policy (drives), the
 *  location's own settings (crm). */
export interface TargetDelivery {
  sharing?: SharingRequest;
  conflict?: ConflictBehavior;
  options?: { crm?: CrmTargetOptions };
}

/** The sharing links a drive write can make (result.data.document, the document record). */
export const LINK_FIELDS = [
  'viewAnonymousLink',
  'editAnonymousLink',
  'viewUserLink',
  'editUserLink',
  'viewOrganizationLink',
  'editOrganizationLink',
] as const;
export type LinkField = (typeof LINK_FIELDS)[number];

/** The options object a target reads at its own location (document.options.<key>, targetDocument.options.<key>):
 *  spec 4.8 reads the one of the delivery's own location and ignores the others. */
export interface TargetOptionsReader {
  readonly key: string;
  /** `field` names the object in messages; every problem at once. */
  read(raw: unknown, at: { field: string; fileFormat: string }): { delivery: TargetDelivery; problems: InnerError[] };
}

export interface LocationEntry {
  /** The name requests use (loadMethod, deliveryMethod). */
  readonly method: string;
  readonly can: readonly Capability[];
  /** Formats it holds as templates (spec 4.8 rule 1), and the formats it may be given to write (rule 3). */
  readonly formats: { readonly templates: readonly FileFormat[]; readonly writes: readonly FileFormat[] };
  /** The operations whose method fields may name it (spec 4.8: generate's template, data and document;
   *  manage's source and target). Empty: reached another way (template.url). */
  readonly requests: readonly ('generate' | 'manage')[];
  /** The connection kind it needs (PUT /common/connection/{kind}); none: the service's own. */
  readonly connection?: string;
  /** How its reads and writes run in a workflow: `local` steps are local activities in the workflow task;
   *  `remote` ones are transfers (normal activities that heartbeat), whose writes are journaled so that a
   *  retried write finds its file (store/location-writes.ts). */
  readonly transfer: 'local' | 'remote';
  /** What a generate reads here are uploads it consumes (spec 3), whether it succeeds or fails. */
  readonly uploads?: boolean;
  /** Why a target path is not one of its paths (undefined: it is). */
  pathProblem?(path: string): string | undefined;
  readonly targetOptions?: TargetOptionsReader;
  /** How the API's descriptions and the docs name it: `what` it is, what a `urn` is there, what a `path`
   *  of a written file is there (none: it has no folders). */
  readonly wording?: { readonly what: string; readonly urn: string; readonly path?: string };
}

export type LocationCatalog = readonly LocationEntry[];

/** One thing a request needs from a location, and the request field that asks for it. */
export interface LocationNeed {
  method: string;
  capability: Capability;
  field: string;
  fileFormat?: string;
  /** readTemplate: the template's urn there. A location that knows the kind of the templates it holds
   *  (Location.templateFormat: Storage, whose upload checked the package) lets the API refuse one of another
   *  kind than `fileFormat` before anything is queued. */
  urn?: string;
  /** A write's file: its name and folder as the request gives them, and the object naming them
   *  ('document', 'targetDocument'), checked against the location's naming rules (Location.nameProblem). */
  target?: { name: string; path: string; field: string };
}

export function entryOf(catalog: LocationCatalog, method: string | undefined): LocationEntry | undefined {
  return catalog.find((e) => e.method === method);
}

/** The methods an operation's field may name: locations of that operation that can do `capability` (and
 *  hold `format` for it, when given: templates for readTemplate, writes for write). */
export function methodsFor(catalog: LocationCatalog, request: 'generate' | 'manage', capability: Capability, format?: string): string[] {
  return catalog
    .filter((e) => e.requests.includes(request) && e.can.includes(capability))
    .filter((e) => format === undefined || holds(e, capability, format))
    .map((e) => e.method);
}

/** Whether the location holds `format` for `capability` (templates it reads, files it writes). */
export function holds(e: Pick<LocationEntry, 'formats'>, capability: Capability, format: string): boolean {
  const list = capability === 'readTemplate' ? e.formats.templates : capability === 'write' ? e.formats.writes : undefined;
  return list === undefined || (list as readonly string[]).includes(format);
}

/** generate's data.loadMethod other than a location: the data is a GraphQL query's result. */
export const GRAPHQL = 'GraphQL';

/** The methods generate's data.loadMethod may name: the locations generate reads data from, and GraphQL. */
export function dataLoadMethods(catalog: LocationCatalog): string[] {
  return [...methodsFor(catalog, 'generate', 'readData'), GRAPHQL];
}

/** "a, b or c" */
export function orList(list: readonly string[]): string {
  return list.length > 1 ? `${list.slice(0, -1).join(', ')} or ${list.at(-1)}` : (list[0] ?? '');
}

/** The descriptions' sentence of what a urn is at each location an operation's field may name. */
export function urnWording(catalog: LocationCatalog, request: 'generate' | 'manage', capability: Capability): string {
  return catalog
    .filter((e) => e.wording && e.requests.includes(request) && e.can.includes(capability))
    .map((e) => `${e.method}: ${e.wording!.urn}`)
    .join('; ');
}

/** The descriptions' sentence of what a written file's path is at each location an operation writes to. */
export function pathWording(catalog: LocationCatalog, request: 'generate' | 'manage'): string {
  return catalog
    .filter((e) => e.wording && e.requests.includes(request) && e.can.includes('write'))
    .map((e) => `${e.method}: ${e.wording!.path ?? 'ignored'}`)
    .join('; ');
}

/** Which locations hold which formats (spec 4.8 rules 1 and 3), e.g. "gdoc, gsheet, gslide only DriveB;
 *  pdf, csv Storage, DriveA, DriveB or crm". */
export function formatWording(catalog: LocationCatalog, request: 'generate' | 'manage', capability: 'readTemplate' | 'write'): string {
  const entries = catalog.filter((e) => e.requests.includes(request) && e.can.includes(capability));
  const groups = new Map<string, string[]>();
  for (const f of new Set(entries.flatMap((e) => (capability === 'write' ? e.formats.writes : e.formats.templates)))) {
    const where = entries.filter((e) => holds(e, capability, f)).map((e) => e.method);
    const key = where.length === entries.length ? 'any of them' : `${where.length === 1 ? 'only ' : ''}${orList(where)}`;
    groups.set(key, [...(groups.get(key) ?? []), f]);
  }
  return [...groups].map(([where, formats]) => `${formats.join(', ')}: ${where}`).join('; ');
}

/** The run's locations whose steps are remote transfers, of those a request names. */
export function remoteMethods(catalog: LocationCatalog, methods: (string | undefined)[]): string[] {
  return [...new Set(methods)].filter((m): m is string => entryOf(catalog, m)?.transfer === 'remote');
}
