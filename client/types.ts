// Request and response types of the SDK. Where a route exports its TypeBox schema the type is derived
// from it (one source for validation, OpenAPI and the SDK); the rest is written from the spec's tables
// (service-interface.md sections 2 and 4) and the route descriptions, for routes that do not export a
// schema or are not served yet (common 4.1, signatures 4.2, manage 4.8).
import type { Static } from 'typebox';
import type { ClientClaimsBody } from '../api/routes/client-token.ts';
import type { DocumentRecord as DocumentRecordSchema } from '../api/routes/documents.ts';
import type { GenerateBody } from '../api/routes/generate.ts';
import type { ManageBody } from '../api/routes/manage.ts';
import type { SolutionRef as SolutionRefSchema } from '../api/routes/solutions.ts';
import type { Template as TemplateSchema } from '../api/routes/templates.ts';
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

export interface GeneratedDocument {
  deliveryMethod: string;
  name: string;
  fileFormat: string;
  urn: string;
  /** Extension: the document record of this file. */
  documentGuid: string;
  uri?: string;
  [link: string]: unknown;
}

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

/** The manage operation returns result.statusCode as a string ("200"/"201"). */
export type ManageResponse = SuccessEnvelope<{ document: { deliveryMethod: string; name: string; fileFormat: string; urn: string; [k: string]: unknown } }, string>;

// ---- Uploads and storage ----

export interface UploadFile {
  /** File name; its extension decides acceptance (.docx/.xlsx/.pptx for templates, .json for data). */
  name: string;
  content: Uint8Array | Blob | string;
  /** Form field name (default `file`). */
  field?: string;
}

export interface UploadedFile {
  id: string;
  fileName: string;
}

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

export interface TemplateFields {
  name: string;
  description?: string;
  title?: string;
  urn?: string;
  url?: string;
  fileFormat?: string;
  loadMethod?: string;
  documentSolutions?: { id: string }[];
}

export interface DataSourceFields {
  name: string;
  /** Storage, GraphQL, DriveA or DriveB. */
  loadMethod: string;
  description?: string;
  urn?: string;
  query?: string;
  variables?: string;
  documentSolutions?: { id: string }[];
}

/** Create response: the Id spelling. */
export interface CreatedDataSource {
  id: string;
  subscriptionId: string;
  ownerId: string;
  lastModifiedUserId: string;
  name: string;
  description: string;
  urn: string;
  loadMethod: string;
  query: string;
  variables: string;
  documentSolutions: SolutionRef[];
  ownerName: string;
  lastModifiedUserName: string;
  createdDate: string;
  lastModifiedDate: string;
}

/** List item: the Guid spelling. */
export interface ListedDataSource {
  dataSourceGuid: string;
  subscriptionGuid: string;
  ownerGuid: string;
  lastModifiedUserGuid: string;
  name: string;
  description: string;
  urn: string;
  loadMethod: string;
  query: string;
  variables: string;
  createdDate: string;
  lastModifiedDate: string;
  isDeleted: boolean;
}

export interface DocumentSolution {
  id: string;
  name: string;
  description: string;
  subscriptionId: string;
  ownerId: string;
  lastModifiedUserId: string;
  createdDate: string;
  lastModifiedDate: string;
}

export interface DocumentSolutionWithMembers extends DocumentSolution {
  dataSources: SolutionRef[];
  documentTemplates: SolutionRef[];
}

export interface OptionItem {
  /** System option id (integer); give it or customKey, not both. */
  optionDefinitionId?: number | string | null;
  customKey?: string;
  customGroup?: string;
  value?: string;
}

export interface OptionValue {
  optionValueGuid: string;
  entityType: string;
  entityId: string;
  /** Empty string for a custom option. */
  optionDefinitionId: number | '';
  customKey: string;
  customGroup: string;
  value: string;
  effectiveKey: string;
  effectiveGroup: string;
  systemType: string;
  createdDate: string;
  lastModifiedDate: string;
}

export type OptionEntityType = 'DocumentSolutionConfiguration' | 'DocumentTemplate' | (string & {});

export interface DocumentUpdate {
  title?: string;
  urn?: string;
  url?: string;
  path?: string;
  fileFormat?: string;
  deliveryMethod?: string;
  succeededViewUserEmailList?: string;
  succeededEditUserEmailList?: string;
  failedViewUserEmailList?: string;
  failedEditUserEmailList?: string;
}

// ---- Common (4.1, 2.7 - 2.10) ----

export type ClientClaims = Static<typeof ClientClaimsBody>;

export interface ClientToken {
  token: string;
  /** Extension: Standard Webhooks secret of the callbacks. */
  webhookSecret?: string;
  /** Extension: when the token stops being accepted. */
  expiresAt?: string;
}

export interface LimitsQuery {
  scope?: 'Global' | 'User' | 'Subscription' | 'Account' | (string & {});
  application?: 'MDS' | 'MD' | 'MCLM' | 'MHCW' | 'MH' | (string & {});
  subscriptionId?: string;
}

export interface LimitRef {
  id?: string;
  name: string;
  description?: string;
  sortOrder?: number;
}

export interface LimitEntry {
  id: string;
  key: string;
  value: string;
  defaultValue: string;
  meta: {
    application: string;
    scope: { id?: string; name: string; priority?: number };
    category: LimitRef;
    subCategory: LimitRef;
    group: { key: string; name: string };
  };
}

export interface MeteredDimensionSetting {
  name: string;
  allocatedResources: string;
  displayName: string;
  groups: string;
  pricePerUnit?: number;
  subscriptionLimits: { monthly: LimitEntry[]; yearly: LimitEntry[] };
  userLimits: { monthly: LimitEntry[]; yearly: LimitEntry[] };
}

export interface DashboardSummary {
  todo: number;
  pending: number;
  inbox: number;
  expiring: number;
  completed: number;
  recentEnvelopes: { id: string; name: string; status: string }[];
  oldestTodoEnvelopes: { id: string; name: string; sendDate: string; userName: string; tid: string }[];
  latestPendingEnvelopes: { id: string; name: string; action: string; timestamp: string; person: string }[];
}

/** Self-service shape: not shown by the spec; designed by the service (see its OpenAPI description). */
export type SelfServiceSummary = Record<string, unknown>;

export interface UserContact {
  id: string;
  name: string;
  email: string;
  sharedWithAccount: boolean;
  subscriptionUserGuid: string;
}

export interface Folder {
  id: string;
  name: string;
}

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
export interface EnvelopeInput {
  name: string;
  /** Draft, Sent, Completed, Template, ... (case-insensitive; default Draft). */
  status?: string;
  sendDate?: string;
  expirationDate?: string;
  documents?: { name: string; fileFormat?: string }[];
  signGroups?: { name: string }[];
  recipients?: { name: string; email: string; userId?: string; status?: string; action?: string; actionDate?: string; signGroupIndex?: number }[];
  fields?: { type: string; page?: number; x?: number; y?: number; value?: string; documentIndex?: number; recipientIndex?: number }[];
}

export interface Envelope {
  id: string;
  name: string;
  status: string;
  sendDate: string | null;
  expirationDate: string | null;
  subscriptionId: string;
  ownerId: string;
  createdDate: string;
  lastModifiedDate: string;
  documents: { id: string; name: string; fileFormat: string }[];
  signGroups: { id: string; name: string }[];
  recipients: { id: string; name: string; email: string; userId: string | null; signGroupId: string | null; status: string; action: string; actionDate: string | null }[];
  fields: { id: string; type: string; page: number; x: number; y: number; value: string; documentId: string | null; recipientId: string | null }[];
}
