// Request and response types of the SDK: named views of client/openapi.ts, which openapi-typescript
// generates from the service's OpenAPI document (npm run sdk:generate), itself generated from the route
// schemas. So the SDK stands alone (it imports nothing of the server) and cannot disagree with the API.
// Written by hand only: the envelopes' generic shapes, list paging, query parameters, and what the SDK
// itself adds (uploads, downloads, headers).
import type { components } from './openapi.ts';
import type { InnerError } from './errors.ts';

type Schemas = components['schemas'];

// ---- Envelopes (2.1) ----

export type Consumption = Schemas['Consumption'][number];

export interface EnvelopeCommon {
  externalContext?: Record<string, unknown>;
  origin: string;
  dateTime: string;
  operationId: string;
  userId?: string;
}

export interface SuccessEnvelope<T, S extends number | string = number> extends EnvelopeCommon {
  result: { statusCode: S; message: string; data: T };
  consumption?: Consumption[];
}

export interface ErrorEnvelope extends EnvelopeCommon {
  error: { statusCode: number | string; message: string; innerErrors: InnerError[]; externalErrors?: unknown[] };
}

export type ExternalContext = Record<string, unknown>;

// ---- Lists (4.9) ----

export interface FilterClause {
  key?: string;
  column: string;
  type?: string;
  /** CONTAINS, EQUALS, NOT_EQUALS, STARTS_WITH, ENDS_WITH, GREATER_THAN, LESS_THAN (per column type). */
  condition: string;
  value: string | number | boolean;
}

export interface ListParams {
  top?: number;
  skip?: number;
  /** `Column|DIRECTION`, e.g. `Name|DESC`; or give `{column, direction}`. */
  orderby?: string | { column: string; direction?: 'ASC' | 'DESC' };
  /** Clauses (JSON-encoded by the SDK) or already-encoded JSON text. */
  filter?: FilterClause[] | string;
}

export interface ListPage<K extends string, T> {
  rowCount: number;
  items: T[];
  /** The raw result.data, e.g. `{documentSolutionConfigurations, rowCount}`. */
  data: Record<K, T[]> & { rowCount: number };
}

// ---- Generation (4.8) ----

/** The body of generate and async generate (spec 4.8). */
export type GenerateRequest = Schemas['GenerateRequest'];

/** Every file format (document.fileFormat, manage's fileFormat). */
export type FileFormat = GenerateRequest['document']['fileFormat'];
/** The formats a template can have (template.fileFormat). */
export type TemplateFormat = GenerateRequest['template']['fileFormat'];
/** Where generate reads a template (template.loadMethod). */
export type TemplateLoadMethod = NonNullable<GenerateRequest['template']['loadMethod']>;
/** Where generate reads data (data.loadMethod). */
export type DataLoadMethod = GenerateRequest['data']['loadMethod'];
/** Where generate delivers (document.deliveryMethod). */
export type DeliveryMethod = GenerateRequest['document']['deliveryMethod'];

/** result.data.document of generate (and of the async callback); drive deliveries add uri and links. */
export type GeneratedDocument = Schemas['GeneratedDocument'];

/** The 201 of generate, and the body of an async generate's callback on success. */
export type GenerateResponse = Schemas['GenerateResult'];

/** result.data.warnings of generate (and of the async callback), present only when not empty: a tag that
 *  rendered empty because the data has no value for it (`code` MISSING_VALUE, `tag`, `location`). Send
 *  `document.options.strict: true` to fail the request instead. */
export type GenerateWarning = Schemas['GenerateWarning'];
/** Where a tag is in its template: part and paragraph (docx, pptx), or sheet and cell (xlsx). */
export type TemplateLocation = Schemas['TemplateLocation'];

export interface GenerateAsyncResponse {
  /** 201 with an empty body: queued. The result is POSTed to the callback of the client token. */
  queued: true;
  operationId: string | undefined;
}

/** Manage body (copy, move, delete, convert). */
export type ManageRequest = Schemas['ManageRequest'];
/** Where manage reads its source (sourceDocument.loadMethod). */
export type ManageLoadMethod = ManageRequest['sourceDocument']['loadMethod'];
/** Where manage writes (targetDocument.deliveryMethod). */
export type ManageDeliveryMethod = NonNullable<ManageRequest['targetDocument']>['deliveryMethod'];

export interface ManageHeaders {
  clientAuthorization?: string;
  serviceAuthorization?: string;
  email?: string;
}

/** The manage operation returns result.statusCode as a string ("201"). */
export type ManageResponse = Schemas['ManageResult'];

// ---- Uploads and storage ----

export interface UploadFile {
  /** File name; its extension decides acceptance (.docx/.xlsx/.pptx for templates, .json for data). */
  name: string;
  content: Uint8Array | Blob | string;
  /** Form field name (default `file`). */
  field?: string;
}

export type UploadedFile = Schemas['UploadedFile'];

/** POST /documents/template/inspect (extension): tags, problems, the JSON Schema of the data and sample data. */
export type TemplateInspection = Schemas['TemplateInspection'];

export interface Download {
  bytes: Uint8Array;
  contentType: string;
  fileName: string | undefined;
}

export interface DownloadStream {
  stream: ReadableStream<Uint8Array>;
  contentType: string;
  fileName: string | undefined;
  size: number | undefined;
}

// ---- Records (2.2 - 2.6, extensions) ----

export type SolutionRef = Schemas['SolutionRef'];
export type DocumentTemplate = Schemas['DocumentTemplate'];
export type DocumentRecord = Schemas['Document'];

/** A configuration's fields as sent (2.2). */
export type ConfigurationFields = Schemas['ConfigurationInput'];
export type Configuration = Schemas['Configuration'];

export type TemplateFields = Schemas['DocumentTemplateInput'];

export type DataSourceFields = Schemas['DataSourceInput'];

/** Create response: the Id spelling. */
export type CreatedDataSource = Schemas['DataSource'];

/** List item: the Guid spelling. */
export type ListedDataSource = Schemas['ListedDataSource'];

export type DocumentSolution = Schemas['DocumentSolution'];

export type DocumentSolutionWithMembers = Schemas['DocumentSolutionWithMembers'];

export type OptionItem = Schemas['OptionItem'];

export type OptionValue = Schemas['OptionValue'];

export type OptionEntityType = 'DocumentSolutionConfiguration' | 'DocumentTemplate' | (string & {});

export type DocumentUpdate = Schemas['DocumentUpdate'];

// ---- Common (4.1, 2.7 - 2.10) ----

export type ClientClaims = Schemas['ClientClaims'];

export type ClientToken = Schemas['ClientToken'];

/** Claims of a service-authorization token (manage's X-Service-Authorization, spec 5.2): sub is the user's id (a UUID). */
export type ServiceClaims = Schemas['ServiceClaims'];

export type ServiceToken = Schemas['ServiceToken'];

export interface LimitsQuery {
  scope?: 'Global' | 'User' | 'Subscription' | 'Account' | (string & {});
  application?: 'MDS' | 'MD' | 'MCLM' | 'MHCW' | 'MH' | (string & {});
  subscriptionId?: string;
}

export type LimitEntry = MeteredDimensionSetting['subscriptionLimits']['monthly'][number];

export type MeteredDimensionSetting = Schemas['MeteredDimensionSetting'];

export type DashboardSummary = Schemas['DashboardSummary'];

/** Self-service (an extension; the spec does not show its fields): consumption against the limits. */
export type SelfServiceSummary = Schemas['SelfServiceSummary'];

export type UserContact = Schemas['UserContact'];

export type Folder = Schemas['Folder'];

// ---- Connections (extension) ----

/** A subscription's connection as GET shows it: settings and the names of its secrets, never their values. */
export type Connection = Schemas['Connection'];

/** The kinds of connection the service's locations need (PUT /common/connection/{kind}). */
export type ConnectionKind = Connection['kind'];

export interface FolderListParams {
  top?: number;
  skip?: number;
  /** Column, e.g. Name. */
  sort?: string;
  order?: 'ASC' | 'DESC';
}

// ---- Signatures (4.2) ----

export interface SignatureTemplateDeleted {
  template: { id: string; message: string };
}

/** Extension: an envelope (or, with status Template, a signature template) as created and read back. */
export type EnvelopeInput = Schemas['EnvelopeInput'];

export type Envelope = Schemas['Envelope'];

/** The service's probes (extensions): GET /ready's answer. */
export type ReadinessReport = Schemas['ReadinessReport'];
