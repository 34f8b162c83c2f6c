// Request and response types of the SDK, derived from the routes' TypeBox schemas: one source for
// validation, the OpenAPI document and the SDK, so they cannot disagree. Written by hand only: the
// envelopes' generic shapes, list paging, query parameters, and what the SDK itself adds (uploads,
// downloads, headers).
import type { Static } from 'typebox';
import type { ClientClaimsBody, ClientTokenResult, ServiceClaimsBody, ServiceTokenResult } from '../api/routes/client-token.ts';
import type { Contact, Dashboard, Folder as FolderSchema, Setting } from '../api/routes/common.ts';
import type { ConfigurationFieldName } from '../api/routes/configurations.ts';
import type { Connection as ConnectionSchema } from '../api/routes/connections.ts';
import type { CreatedDataSource as CreatedDataSourceSchema, DataSourceBody, ListedDataSource as ListedDataSourceSchema } from '../api/routes/datasources.ts';
import type { DocumentRecord as DocumentRecordSchema, DocumentUpdateBody } from '../api/routes/documents.ts';
import type { GenerateBody, GeneratedDocument as GeneratedDocumentSchema } from '../api/routes/generate.ts';
import type { ManageBody, ManageSuccess } from '../api/routes/manage.ts';
import type { OptionItem as OptionItemSchema, OptionValue as OptionValueSchema } from '../api/routes/options.ts';
import type { Envelope as EnvelopeSchema, EnvelopeBody } from '../api/routes/signatures.ts';
import type { Solution, SolutionRef as SolutionRefSchema, SolutionWithMembers } from '../api/routes/solutions.ts';
import type { Template as TemplateSchema, TemplateBody } from '../api/routes/templates.ts';
import type { UploadedFile as UploadedFileSchema } from '../api/routes/uploads.ts';
import type { InnerError } from './errors.ts';

// ---- Envelopes (2.1) ----

export interface Consumption {
  dimension: string;
  value: number;
}

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

export type GenerateRequest = Static<typeof GenerateBody>;

/** result.data.document of generate (and of the async callback); drive deliveries add uri and links. */
export type GeneratedDocument = Static<typeof GeneratedDocumentSchema> & { uri?: string; [link: string]: unknown };

export type GenerateResponse = SuccessEnvelope<{ document: GeneratedDocument }>;

export interface GenerateAsyncResponse {
  /** 201 with an empty body: queued. The result is POSTed to the callback of the client token. */
  queued: true;
  operationId: string | undefined;
}

export interface ManageSaveOptions {
  pdfSaveOptions?: string;
  docxSaveOptions?: string;
  crm?: { networkId?: string; fileId?: string; fileType?: string; fileParentId?: string; ownerId?: string };
  driveA?: { viewAnonymous?: boolean; editAnonymous?: boolean; editUsers?: string[]; viewUsers?: string[] };
  [other: string]: unknown;
}

/** Manage body (copy, move, delete, convert), from the route's schema. */
export type ManageRequest = Static<typeof ManageBody>;

export interface ManageHeaders {
  clientAuthorization?: string;
  serviceAuthorization?: string;
  email?: string;
}

/** The manage operation returns result.statusCode as a string ("201"). */
export type ManageResponse = Static<typeof ManageSuccess>;

// ---- Uploads and storage ----

export interface UploadFile {
  /** File name; its extension decides acceptance (.docx/.xlsx/.pptx for templates, .json for data). */
  name: string;
  content: Uint8Array | Blob | string;
  /** Form field name (default `file`). */
  field?: string;
}

export type UploadedFile = Static<typeof UploadedFileSchema>;

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

export type SolutionRef = Static<typeof SolutionRefSchema>;
export type DocumentTemplate = Static<typeof TemplateSchema>;
export type DocumentRecord = Static<typeof DocumentRecordSchema>;

/** Written out: the route builds these schemas from the store's field lists, which TypeBox cannot name. */
export interface ConfigurationFields {
  documentSolutionGuid?: string | null;
  name?: string;
  description?: string;
  title?: string;
  fileFormat?: string;
  processingType?: string;
  deliveryMethod?: string;
  path?: string;
  pdfConformanceLevel?: string;
  pdfVersion?: string;
  language?: string;
  locale?: string;
  timeZone?: string;
  embeddedData?: string;
  viewAnonymous?: boolean;
  editAnonymous?: boolean;
  viewOrganization?: boolean;
  editOrganization?: boolean;
  viewUser?: boolean;
  editUser?: boolean;
  viewUserEmailList?: string;
  editUserEmailList?: string;
}

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Assert<T extends true> = T;
/** Fails to compile when the route's configuration fields and ConfigurationFields above part ways. */
export type ConfigurationFieldsMatchTheRoute = Assert<Same<keyof ConfigurationFields, ConfigurationFieldName>>;

export type Configuration = Required<Omit<ConfigurationFields, 'documentSolutionGuid'>> & {
  documentSolutionGuid: string | null;
  documentSolutionConfigurationGuid: string;
  subscriptionGuid: string;
  ownerGuid: string;
  lastModifiedUserGuid: string;
  createdDate: string;
  lastModifiedDate: string;
  isDeleted: boolean;
};

export type TemplateFields = Static<typeof TemplateBody>['documentTemplate'];

export type DataSourceFields = Static<typeof DataSourceBody>['dataSource'];

/** Create response: the Id spelling. */
export type CreatedDataSource = Static<typeof CreatedDataSourceSchema>;

/** List item: the Guid spelling. */
export type ListedDataSource = Static<typeof ListedDataSourceSchema>;

export type DocumentSolution = Static<typeof Solution>;

export type DocumentSolutionWithMembers = Static<typeof SolutionWithMembers>;

export type OptionItem = Static<typeof OptionItemSchema>;

export type OptionValue = Static<typeof OptionValueSchema>;

export type OptionEntityType = 'DocumentSolutionConfiguration' | 'DocumentTemplate' | (string & {});

export type DocumentUpdate = DocumentUpdateBody;

// ---- Common (4.1, 2.7 - 2.10) ----

export type ClientClaims = Static<typeof ClientClaimsBody>;

export type ClientToken = Static<typeof ClientTokenResult>;

/** Claims of a service-authorization token (manage's X-Service-Authorization, spec 5.2): sub is the user's id (a UUID). */
export type ServiceClaims = Static<typeof ServiceClaimsBody>;

export type ServiceToken = Static<typeof ServiceTokenResult>;

export interface LimitsQuery {
  scope?: 'Global' | 'User' | 'Subscription' | 'Account' | (string & {});
  application?: 'MDS' | 'MD' | 'MCLM' | 'MHCW' | 'MH' | (string & {});
  subscriptionId?: string;
}


export type LimitEntry = MeteredDimensionSetting['subscriptionLimits']['monthly'][number];

export type MeteredDimensionSetting = Static<typeof Setting>;

export type DashboardSummary = Static<typeof Dashboard>;

/** Self-service shape: not shown by the spec; designed by the service (see its OpenAPI description). */
export type SelfServiceSummary = Record<string, unknown>;

export type UserContact = Static<typeof Contact>;

export type Folder = Static<typeof FolderSchema>;

// ---- Connections (extension) ----

export type ConnectionKind = 'driveA' | 'driveB' | 'crm';

/** A subscription's connection as GET shows it: settings and the names of its secrets, never their values. */
export type Connection = Static<typeof ConnectionSchema>;

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
export type EnvelopeInput = Static<typeof EnvelopeBody>['envelope'];

export type Envelope = Static<typeof EnvelopeSchema>;
