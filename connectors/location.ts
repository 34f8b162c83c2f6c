// Where files come from and go to. Every place a template, a data file or a document can be read from or
// written to (Storage, DriveA, DriveB, crm, template.url) is a Location, reached through the registry
// (registry.ts) by generate and manage alike. A location reads into and writes from blob references
// (claim check), never raw bytes in a workflow. Each connector registers itself (LocationRegistration: what
// it can do, the formats it holds, its connection and options), so the API refuses a request that asks
// for something unavailable before anything is queued or consumed.
import type { BlobRef } from '../core/blob.ts';
import type { SettingsTable } from '../core/settings.ts';
import type { ErrorCode } from '../core/errors.ts';
import type { ConflictBehavior, CrmTargetOptions, LinkField, LocationEntry, SharingRequest } from '../core/locations.ts';
import type { Db } from '../store/db.ts';
import type { FileRecord } from '../store/files.ts';
import type { OutboundPolicy } from './http/address-policy.ts';
import type { ConnectionKind, ConnectionKindName, ConnectorSettings, OpenedConnection } from './connections.ts';
import type { BlobStore } from './storage/blob-store.ts';
import type { ThrottledError } from './throttle.ts';

export type { Capability } from '../core/locations.ts';

/** A connector's registration (one line in registry.ts): what the request rules know of it (core's
 *  LocationEntry), the connection kind it needs, and how to build it for a process. */
export interface LocationRegistration extends Omit<LocationEntry, 'connection'> {
  /** The connection kind it needs: the API refuses a request (CONNECTION_MISSING, naming the field) when
   *  the subscription has none, before anything is queued; PUT /common/connection/{kind} makes one. */
  readonly connection?: ConnectionKind;
  /** Its service settings (environment variables, defaults, parsers, meanings): config/env.ts parses them
   *  with the service's own, `docgen config` and the README's table list them, and the location reads
   *  them from LocationDeps.settings with core's valuesOf. */
  readonly settings?: SettingsTable;
  create(deps: LocationDeps): Location;
}

/** How a location opens the connection of the subscription it serves (connection-store.ts). */
export interface ConnectionStore {
  /** The subscription's connection of that kind (by ctx.connectionId when the workflow carries one), secrets
   *  unsealed; a LocationError CONNECTION_MISSING when there is none. */
  open(ctx: LocationContext, kind: ConnectionKindName): Promise<OpenedConnection>;
  /** The id of the subscription's connection of that kind, or undefined (the API's check before queueing). */
  idOf(subscriptionId: string, kind: ConnectionKindName): Promise<string | undefined>;
}

/** What locations are built from: the process's database and blob store, the connectors' service settings
 *  (endpoints) and the subscriptions' connections. */
export interface LocationDeps {
  db: Db;
  blobs: BlobStore;
  settings: ConnectorSettings;
  connections: ConnectionStore;
  /** Outbound HTTP to addresses a request names (template.url): the worker's allow-list and limits. */
  outbound?: { policy: OutboundPolicy; timeoutMs: number; maxResponseBytes: number };
}

/** Who is asking: every read and write is scoped to the caller's subscription (and its connection). */
export interface LocationContext {
  subscriptionId: string;
  /** The acting user: the owner of what is written (reads do not need it). */
  userId?: string;
  /** The connection the request was started with (the API resolved it before queueing); absent: the
   *  subscription's connection of the location's kind. */
  connectionId?: string;
  /** Where this step may put blobs it downloads (`scratch/<run>/`): the workflow discards them with the run's
   *  other scratch files. */
  scratch?: string;
  /** The run that reads (a generate's workflow run id): a Storage upload that this same run consumed still
   *  resolves for it, so a step run again after a lost workflow task reads what the first execution read. */
  consumer?: string;
}

export interface FoundFile {
  urn: string;
  name: string;
  path: string;
  fileFormat: string;
  blob: BlobRef;
}

export type { ConflictBehavior, SharingRequest } from '../core/locations.ts';

export interface WriteRequest {
  /** Chosen by the workflow, so a retried write finds or overwrites the same file instead of adding one. */
  urn: string;
  name: string;
  path: string;
  fileFormat: string;
  source: BlobRef;
  /** The source's bytes, held by the caller (a batch row's document, never put in scratch): a location that
   *  writes bytes (`Location.writesBytes`) writes these, and `source.key` names no blob. */
  bytes?: Uint8Array;
  /** document.options.driveA / driveB of the delivery's own drive (spec 4.8). */
  sharing?: SharingRequest;
  /** What to do when the folder already holds a file of that name (drives; Storage has no names to clash). */
  conflict?: ConflictBehavior;
  /** Location-specific options of the target (manage's targetDocument.options.crm). */
  options?: { crm?: CrmTargetOptions };
  /** The caller records the file in a statement of its own (a batch's flush: with the row's document record
   *  and entry): a location that keeps a record of the files it holds (Storage) returns it in `Written.file`
   *  instead of storing it, and the file does not resolve until the caller has. */
  recordLater?: boolean;
}

/** What the response (result.data.document) and the document record (spec 2.5) need of a written file. */
export interface Written {
  urn: string;
  name: string;
  path: string;
  uri?: string;
  links?: Partial<Record<LinkField, string>>;
  emails?: { succeededView: string[]; succeededEdit: string[]; failedView: string[]; failedEdit: string[] };
  /** Errors the external service reported (manage's error.externalErrors). */
  externalErrors?: unknown[];
  /** The file's record, for the caller to store (WriteRequest.recordLater). */
  file?: FileRecord;
}

/** A location as one process uses it (LocationRegistration.create); what it can do is its registration's. */
export interface Location {
  /** `fileFormat`: the format the request declares (a location that cannot tell checks it against the bytes). */
  readTemplate?(ctx: LocationContext, urn: string, fileFormat?: string): Promise<BlobRef>;
  readData?(ctx: LocationContext, urn: string): Promise<BlobRef>;
  /** The Office kind (docx, xlsx, pptx) of a template it holds, when it knows it without reading the file
   *  (Storage: an upload's package was checked against its extension); undefined when it does not know or
   *  the urn does not resolve (the workflow's read says so). The registry's check asks before queueing. */
  templateFormat?(subscriptionId: string, urn: string): Promise<string | undefined>;
  readDocument?(ctx: LocationContext, urn: string): Promise<FoundFile>;
  write?(ctx: LocationContext, req: WriteRequest): Promise<Written>;
  /** write() takes `req.bytes` in place of reading `req.source` (Storage: one file written at its final key,
   *  no scratch file to put, link and remove). */
  writesBytes?: true;
  /** Undoes a write nothing has recorded yet (the step that made it failed after it): the file and every
   *  trace of it go. A location with it may have its writes overlap the page count (activities/groups.ts). */
  discard?(ctx: LocationContext, urn: string): Promise<void>;
  /** The retention sweep's clean-up of a write whose run ended unfinished (its journal entry is stale): the
   *  temporary file or upload session it left goes, then the journal entry. Throws while the location
   *  cannot be reached (the connection refused: its credentials rotated); the entry stays for the next
   *  sweep. Never touches a file that has its final name. */
  sweepLeftover?(ctx: LocationContext, urn: string): Promise<void>;
  /** `delete` is soft (recoverable), `permanentDelete` is not; both make the urn stop resolving. */
  remove?(ctx: LocationContext, urn: string, mode: 'delete' | 'permanentDelete'): Promise<void>;
  /** Manage inside one location (DriveA: Graph's asynchronous copy, PATCH of the parent; DriveB): copy or
   *  move the file itself, its bytes never passing through docgen (a native Google file keeps everything an
   *  export would lose). `req.urn` keys retries as for write. */
  copyWithin?(ctx: LocationContext, sourceUrn: string, req: Omit<WriteRequest, 'source'>): Promise<Written>;
  /** undefined: this move cannot be done inside the location (the caller copies and removes instead). */
  moveWithin?(ctx: LocationContext, sourceUrn: string, req: Omit<WriteRequest, 'source'>): Promise<Written | undefined>;
  /** Whether this location accepts the name and folder of a file to write (`name` as the request gives
   *  it, before the format's extension is added): undefined when it does, else which one it refuses and
   *  why (DriveA: SharePoint's naming rules). The registry's check asks before anything is queued. */
  nameProblem?(target: { name: string; path: string; fileFormat: string }): { field: 'name' | 'path'; reason: string } | undefined;
  /** DriveB native merge (document.options.driveBGenerate.nativeMergeEnabled): copy the native template
   *  into the target folder and merge its fields in place; `pages` is what the copy meters. */
  nativeMerge?(ctx: LocationContext, req: NativeMergeRequest): Promise<Written & { pages: number }>;
}

export interface NativeMergeRequest {
  template: { urn: string; fileFormat: string };
  /** The data file (JSON) in the blob store. */
  data: BlobRef;
  /** nativeImageMergeEnabled */
  images: boolean;
  /** Where the merged copy goes: urn chosen by the workflow, name, path, sharing. */
  write: Omit<WriteRequest, 'source' | 'fileFormat'>;
}

/** A failure a location reports in the spec's terms (e.g. TEMPLATE_NOT_FOUND). Activities turn it into a
 *  non-retryable failure with that code; anything else a location throws is retried as transient. */
export class LocationError extends Error {
  override name = 'LocationError';
  readonly code: ErrorCode;
  readonly externalErrors: unknown[];
  /** TOO_MANY_REQUESTS: when the service asked to be called again (the answer's Retry-After). */
  readonly retryAfterSeconds: number | undefined;
  constructor(code: ErrorCode, message: string, externalErrors: unknown[] = [], retryAfterSeconds?: number) {
    super(message);
    this.code = code;
    this.externalErrors = externalErrors;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** A drive throttled longer than the step may wait (connectors/throttle.ts): TOO_MANY_REQUESTS with the
 *  Retry-After the drive asked for. */
export function throttledError(err: ThrottledError): LocationError {
  return new LocationError('TOO_MANY_REQUESTS', err.message, [], Math.max(1, Math.ceil(err.retryAfterMs / 1000)));
}
