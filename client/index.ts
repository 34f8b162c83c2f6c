// The docgen SDK: one DocgenClient with a sub-client per area of the API (spec section 4 plus the
// service's extensions). Record operations resolve to the record (result.data unwrapped); generate and
// manage resolve to the whole success envelope, whose consumption and externalContext matter.
// Every failure rejects with a DocgenError subclass (see errors.ts); retries are the transport's.
import { type CallInit, type QueryValue, type RequestOptions, Transport, type TransportOptions } from './http.ts';
import type {
  TemplateInspection,
  ClientClaims,
  ClientToken,
  ServiceClaims,
  ServiceToken,
  Configuration,
  Connection,
  ConnectionKind,
  ConfigurationFields,
  CreatedDataSource,
  DashboardSummary,
  DataSourceFields,
  DocumentRecord,
  DocumentSolution,
  DocumentSolutionWithMembers,
  DocumentTemplate,
  DocumentUpdate,
  Envelope,
  EnvelopeInput,
  Download,
  DownloadStream,
  ExternalContext,
  Folder,
  FolderListParams,
  GenerateAsyncResponse,
  GenerateRequest,
  GenerateResponse,
  LimitsQuery,
  ListedDataSource,
  ListPage,
  ListParams,
  ManageHeaders,
  ManageRequest,
  ManageResponse,
  ReadinessReport,
  MeteredDimensionSetting,
  OptionEntityType,
  OptionItem,
  OptionValue,
  SelfServiceSummary,
  SignatureTemplateDeleted,
  SuccessEnvelope,
  TemplateFields,
  UploadedFile,
  UploadFile,
  UserContact,
} from './types.ts';

export * from './errors.ts';
export type * from './types.ts';
export { parseRetryAfter, Transport, type FetchLike, type RequestOptions, type RetryPolicy, type TransportOptions } from './http.ts';
export { verifyCallback, type CallbackHeaders } from './webhooks.ts';
export {
  BatchesClient,
  type BatchProgress,
  type BatchRequest,
  type BatchRow,
  type BatchStarted,
  type BatchStartOptions,
  type BatchWaitOptions,
} from './batches.ts';
import { BatchesClient } from './batches.ts';

export type DocgenClientOptions = TransportOptions;

const seg = (s: string) => encodeURIComponent(s);

function listQuery(p: ListParams = {}): Record<string, QueryValue> {
  const orderby = typeof p.orderby === 'object' ? `${p.orderby.column}|${p.orderby.direction ?? 'ASC'}` : p.orderby;
  const filter = Array.isArray(p.filter) ? JSON.stringify(p.filter) : p.filter;
  return { top: p.top, skip: p.skip, orderby, filter };
}

function callInit(opts: RequestOptions | undefined, extra: CallInit = {}): CallInit {
  return { ...opts, ...extra, headers: { ...opts?.headers, ...extra.headers } };
}

/** Shared plumbing: a JSON call that unwraps result.data. */
class Area {
  protected readonly t: Transport;
  constructor(t: Transport) {
    this.t = t;
  }
  protected async call<T>(method: string, path: string, init: CallInit = {}): Promise<T> {
    const env = await this.t.json<SuccessEnvelope<T>>(method, path, init);
    return env.result.data;
  }
  protected async page<K extends string, T>(
    path: string,
    key: K,
    params: ListParams | undefined,
    opts?: RequestOptions,
  ): Promise<ListPage<K, T>> {
    const data = await this.call<Record<K, T[]> & { rowCount: number }>('GET', path, callInit(opts, { query: listQuery(params) }));
    return { rowCount: data.rowCount, items: data[key], data };
  }
}

interface WithContext extends RequestOptions {
  externalContext?: ExternalContext;
}

/** Common utilities (4.1). */
export class CommonClient extends Area {
  async limits(query: LimitsQuery = {}, opts?: RequestOptions): Promise<MeteredDimensionSetting[]> {
    const d = await this.call<{ settings: MeteredDimensionSetting[] }>(
      'GET',
      '/common/limits/get',
      callInit(opts, { query: { ...query } }),
    );
    return d.settings;
  }
  summary(type: 'dashboard', opts?: RequestOptions): Promise<DashboardSummary>;
  summary(type: 'self-service', opts?: RequestOptions): Promise<SelfServiceSummary>;
  summary(type: string, opts?: RequestOptions): Promise<DashboardSummary | SelfServiceSummary>;
  async summary(type: string, opts?: RequestOptions): Promise<DashboardSummary | SelfServiceSummary> {
    return this.call('GET', '/common/summary', callInit(opts, { query: { type } }));
  }
  /** POST /common/client/token: the value for X-Client-Authorization (spec 5.3). */
  async createClientToken(claims: ClientClaims, opts?: RequestOptions): Promise<ClientToken> {
    return this.call('POST', '/common/client/token', callInit(opts, { json: claims }));
  }
  /** Extension: POST /common/service/token, the value for manage's X-Service-Authorization (spec 5.2): a
   *  user without an account at the identity provider, who then acts in the manage requests that send it. */
  async createServiceToken(claims: ServiceClaims, opts?: RequestOptions): Promise<ServiceToken> {
    return this.call('POST', '/common/service/token', callInit(opts, { json: claims }));
  }
  async listContacts(opts?: RequestOptions): Promise<UserContact[]> {
    return (await this.call<{ userContacts: UserContact[] }>('GET', '/common/user/contact/list', callInit(opts))).userContacts;
  }
  async getContact(userContactId: string, opts?: RequestOptions): Promise<UserContact> {
    return (await this.call<{ userContact: UserContact }>('GET', `/common/user/contact/${seg(userContactId)}/get`, callInit(opts)))
      .userContact;
  }
  /** Extension: creates a contact of the caller. */
  async createContact(
    userContact: { name: string; email: string; sharedWithAccount?: boolean },
    opts?: RequestOptions,
  ): Promise<UserContact> {
    return (await this.call<{ userContact: UserContact }>('POST', '/common/user/contact/create', callInit(opts, { json: { userContact } })))
      .userContact;
  }
  /** Extension: connects a drive or the CRM (PUT /common/connection/{kind}); replaces an existing one. The
   *  fields depend on the kind (see the OpenAPI description); secrets are sealed and never returned. */
  async putConnection(kind: ConnectionKind, connection: Record<string, unknown>, opts?: RequestOptions): Promise<Connection> {
    return (await this.call<{ connection: Connection }>('PUT', `/common/connection/${seg(kind)}`, callInit(opts, { json: { connection } })))
      .connection;
  }
  async listConnections(opts?: RequestOptions): Promise<Connection[]> {
    return (await this.call<{ connections: Connection[] }>('GET', '/common/connection/list', callInit(opts))).connections;
  }
  async getConnection(kind: ConnectionKind, opts?: RequestOptions): Promise<Connection> {
    return (await this.call<{ connection: Connection }>('GET', `/common/connection/${seg(kind)}/get`, callInit(opts))).connection;
  }
  async deleteConnection(kind: ConnectionKind, opts?: RequestOptions): Promise<void> {
    await this.call('DELETE', `/common/connection/${seg(kind)}/delete`, callInit(opts));
  }
  /** Extension: creates a folder (folder body, no envelope). */
  async createFolder(folder: { name: string }, opts?: RequestOptions): Promise<Folder> {
    return (await this.t.json<{ folder: Folder }>('POST', '/common/folder/create', callInit(opts, { json: { folder } }))).folder;
  }
  /** Folder operations answer `{folder: ...}` without the success envelope. */
  async listFolders(params: FolderListParams = {}, opts?: RequestOptions): Promise<Folder[]> {
    return (await this.t.json<{ folder: Folder[] }>('GET', '/common/folder/list', callInit(opts, { query: { ...params } }))).folder;
  }
  async getFolder(folderId: string, opts?: RequestOptions): Promise<Folder> {
    return (await this.t.json<{ folder: Folder }>('GET', `/common/folder/${seg(folderId)}/get`, callInit(opts))).folder;
  }
  async updateFolder(folderId: string, folder: { name: string }, opts?: RequestOptions): Promise<{ id: string; message: string }> {
    return (
      await this.t.json<{ folder: { id: string; message: string } }>(
        'PUT',
        `/common/folder/${seg(folderId)}/update`,
        callInit(opts, { json: { folder } }),
      )
    ).folder;
  }
}

/** Signatures (4.2). */
export class SignaturesClient extends Area {
  async deleteTemplate(templateId: string, opts?: RequestOptions): Promise<SignatureTemplateDeleted['template']> {
    return (await this.call<SignatureTemplateDeleted>('DELETE', `/signatures/template/${seg(templateId)}/delete`, callInit(opts))).template;
  }
  /** Extension: an envelope with its documents, sign groups, recipients and fields; status Template makes a signature template. */
  async createEnvelope(envelope: EnvelopeInput, opts?: WithContext): Promise<Envelope> {
    const json = { envelope, ...(opts?.externalContext ? { externalContext: opts.externalContext } : {}) };
    return (await this.call<{ envelope: Envelope }>('POST', '/signatures/envelope/create', callInit(opts, { json }))).envelope;
  }
  /** Extension. An unknown or invisible id rejects with ValidationError ENVELOPE_ID_INVALID. */
  async getEnvelope(envelopeId: string, opts?: RequestOptions): Promise<Envelope> {
    return (await this.call<{ envelope: Envelope }>('GET', `/signatures/envelope/${seg(envelopeId)}/get`, callInit(opts))).envelope;
  }
}

/** Document solution configurations (4.3). */
export class ConfigurationsClient extends Area {
  async create(fields: ConfigurationFields, opts?: RequestOptions): Promise<Configuration> {
    return (
      await this.call<{ documentSolutionConfiguration: Configuration }>(
        'POST',
        '/documents/configuration/create',
        callInit(opts, { json: fields }),
      )
    ).documentSolutionConfiguration;
  }
  /** Replaces the configuration: fields left out become empty/false. */
  async update(id: string, fields: ConfigurationFields, opts?: RequestOptions): Promise<Configuration> {
    return (
      await this.call<{ documentSolutionConfiguration: Configuration }>(
        'PUT',
        `/documents/configuration/${seg(id)}/update`,
        callInit(opts, { json: fields }),
      )
    ).documentSolutionConfiguration;
  }
  /** Failures come back as bare `{code, message}` bodies; the error classes carry them the same way. */
  async get(id: string, opts?: RequestOptions): Promise<Configuration> {
    return (
      await this.call<{ documentSolutionConfiguration: Configuration }>('GET', `/documents/configuration/${seg(id)}/get`, callInit(opts))
    ).documentSolutionConfiguration;
  }
  list(params?: ListParams, opts?: RequestOptions): Promise<ListPage<'documentSolutionConfigurations', Configuration>> {
    return this.page('/documents/configuration/list', 'documentSolutionConfigurations', params, opts);
  }
}

/** Document templates (4.4; get, list and update are extensions). Files: `uploads.templates`. */
export class TemplatesClient extends Area {
  async create(documentTemplate: TemplateFields, opts?: WithContext): Promise<DocumentTemplate> {
    const json = { documentTemplate, ...(opts?.externalContext ? { externalContext: opts.externalContext } : {}) };
    return (await this.call<{ documentTemplate: DocumentTemplate }>('POST', '/documents/template/create', callInit(opts, { json })))
      .documentTemplate;
  }
  async update(id: string, documentTemplate: TemplateFields, opts?: WithContext): Promise<DocumentTemplate> {
    const json = { documentTemplate, ...(opts?.externalContext ? { externalContext: opts.externalContext } : {}) };
    return (
      await this.call<{ documentTemplate: DocumentTemplate }>('PUT', `/documents/template/${seg(id)}/update`, callInit(opts, { json }))
    ).documentTemplate;
  }
  async get(id: string, opts?: RequestOptions): Promise<DocumentTemplate> {
    return (await this.call<{ documentTemplate: DocumentTemplate }>('GET', `/documents/template/${seg(id)}/get`, callInit(opts)))
      .documentTemplate;
  }
  list(params?: ListParams, opts?: RequestOptions): Promise<ListPage<'documentTemplates', DocumentTemplate>> {
    return this.page('/documents/template/list', 'documentTemplates', params, opts);
  }
  delete(id: string, opts?: RequestOptions): Promise<{ documentTemplateGuid: string; message: string }> {
    return this.call('DELETE', `/documents/template/${seg(id)}/delete`, callInit(opts));
  }
  /** Extension: one template file's tags and problems with their locations, the JSON Schema of the data it
   *  reads and sample data; nothing is stored. */
  inspect(file: UploadFile, opts?: RequestOptions): Promise<TemplateInspection> {
    const form = new FormData();
    form.append(file.field ?? 'file', toBlob(file.content), file.name);
    return this.call<TemplateInspection>('POST', '/documents/template/inspect', callInit(opts, { form }));
  }
}

/** Data sources (4.5). */
export class DataSourcesClient extends Area {
  /** The response uses the Id spelling (id, subscriptionId, ...). */
  async create(dataSource: DataSourceFields, opts?: WithContext): Promise<CreatedDataSource> {
    const json = { dataSource, ...(opts?.externalContext ? { externalContext: opts.externalContext } : {}) };
    return (await this.call<{ dataSource: CreatedDataSource }>('POST', '/documents/datasource/create', callInit(opts, { json })))
      .dataSource;
  }
  /** Items use the Guid spelling (dataSourceGuid, subscriptionGuid, ...). */
  list(params?: ListParams, opts?: RequestOptions): Promise<ListPage<'dataSources', ListedDataSource>> {
    return this.page('/documents/datasource/list', 'dataSources', params, opts);
  }
  delete(id: string, opts?: RequestOptions): Promise<{ dataSourceGuid: string; message: string }> {
    return this.call('DELETE', `/documents/datasource/${seg(id)}/delete`, callInit(opts));
  }
  /** Strict link: a missing solution or data source rejects with NotFoundError (empty body, code NOT_FOUND_BY_ID). */
  addToSolution(
    documentSolutionId: string,
    dataSourceId: string,
    opts?: RequestOptions,
  ): Promise<{ documentSolutionId: string; dataSourceId: string; message: string }> {
    // Attaching twice is harmless, so the link is idempotent: retry it like a PUT.
    return this.call('POST', `/documents/solution/${seg(documentSolutionId)}/datasource/${seg(dataSourceId)}/add`, callInit(opts));
  }
}

/** Document solutions (extension). */
export class SolutionsClient extends Area {
  async create(documentSolution: { name: string; description?: string }, opts?: WithContext): Promise<DocumentSolution> {
    const json = { documentSolution, ...(opts?.externalContext ? { externalContext: opts.externalContext } : {}) };
    return (await this.call<{ documentSolution: DocumentSolution }>('POST', '/documents/solution/create', callInit(opts, { json })))
      .documentSolution;
  }
  async get(id: string, opts?: RequestOptions): Promise<DocumentSolutionWithMembers> {
    return (await this.call<{ documentSolution: DocumentSolutionWithMembers }>('GET', `/documents/solution/${seg(id)}/get`, callInit(opts)))
      .documentSolution;
  }
  list(params?: ListParams, opts?: RequestOptions): Promise<ListPage<'documentSolutions', DocumentSolution>> {
    return this.page('/documents/solution/list', 'documentSolutions', params, opts);
  }
}

/** Option values (4.6; list is an extension). */
export class OptionsClient extends Area {
  async create(entityType: OptionEntityType, entityId: string, item: OptionItem, opts?: RequestOptions): Promise<OptionValue> {
    return (
      await this.call<{ optionValue: OptionValue }>(
        'POST',
        `/documents/option/${seg(entityType)}/${seg(entityId)}/create`,
        callInit(opts, { json: item }),
      )
    ).optionValue;
  }
  replace(
    entityType: OptionEntityType,
    entityId: string,
    items: OptionItem[],
    opts?: RequestOptions,
  ): Promise<{ entityId: string; entityType: string; message: string }> {
    return this.call('PUT', `/documents/option/${seg(entityType)}/${seg(entityId)}/replace`, callInit(opts, { json: items }));
  }
  async list(entityType: OptionEntityType, entityId: string, opts?: RequestOptions): Promise<OptionValue[]> {
    return (
      await this.call<{ optionValues: OptionValue[] }>('GET', `/documents/option/${seg(entityType)}/${seg(entityId)}/list`, callInit(opts))
    ).optionValues;
  }
  async update(optionValueGuid: string, item: OptionItem, opts?: RequestOptions): Promise<OptionValue> {
    return (
      await this.call<{ optionValue: OptionValue }>(
        'PUT',
        `/documents/option/${seg(optionValueGuid)}/update`,
        callInit(opts, { json: item }),
      )
    ).optionValue;
  }
  delete(optionValueGuid: string, opts?: RequestOptions): Promise<{ optionValueGuid: string; message: string }> {
    return this.call('DELETE', `/documents/option/${seg(optionValueGuid)}/delete`, callInit(opts));
  }
}

/** Generated document records (4.7; get and list are extensions). */
export class DocumentsClient extends Area {
  async update(documentGuid: string, fields: DocumentUpdate, opts?: RequestOptions): Promise<DocumentRecord> {
    return (
      await this.call<{ document: DocumentRecord }>(
        'PUT',
        `/documents/document/${seg(documentGuid)}/update`,
        callInit(opts, { json: fields }),
      )
    ).document;
  }
  async get(documentGuid: string, opts?: RequestOptions): Promise<DocumentRecord> {
    return (await this.call<{ document: DocumentRecord }>('GET', `/documents/document/${seg(documentGuid)}/get`, callInit(opts))).document;
  }
  list(params?: ListParams, opts?: RequestOptions): Promise<ListPage<'documents', DocumentRecord>> {
    return this.page('/documents/document/list', 'documents', params, opts);
  }
}

export interface GenerateOptions extends RequestOptions {
  /** Sent as Idempotency-Key; also makes the request retryable. */
  idempotencyKey?: string;
}

/** Generation and file management (4.8). */
export class GenerationClient extends Area {
  /** Synchronous generate: the whole 201 envelope (result.data.document, consumption, externalContext...). */
  generate(body: GenerateRequest, opts?: GenerateOptions): Promise<GenerateResponse> {
    return this.t.json('POST', '/documents/document/generate', callInit(opts, { json: body }));
  }
  /** Queues the generation; the result is POSTed to the callback named by `clientAuthorization`
   *  (from `common.createClientToken`). */
  async generateAsync(body: GenerateRequest, opts: GenerateOptions & { clientAuthorization: string }): Promise<GenerateAsyncResponse> {
    const { clientAuthorization, ...rest } = opts;
    const res = await this.t.send(
      'POST',
      '/documents/document/generate/async',
      callInit(rest, { json: body, headers: { 'x-client-authorization': clientAuthorization } }),
    );
    await res.body?.cancel();
    return { queued: true, operationId: res.headers.get('x-operation-id') ?? undefined };
  }
  /** Copy, move, delete or convert a document file. result.statusCode is a string in this operation. */
  manage(body: ManageRequest, opts: GenerateOptions & ManageHeaders = {}): Promise<ManageResponse> {
    const { clientAuthorization, serviceAuthorization, email, ...rest } = opts;
    const headers: Record<string, string> = {};
    if (clientAuthorization) headers['x-client-authorization'] = clientAuthorization;
    if (serviceAuthorization) headers['x-service-authorization'] = serviceAuthorization;
    if (email) headers['x-email'] = email;
    return this.t.json('POST', '/documents/document/manage', callInit(rest, { json: body, headers }));
  }
}

function toBlob(content: UploadFile['content']): Blob {
  if (content instanceof Blob) return content;
  if (typeof content === 'string') return new Blob([content]);
  // Copy into a fresh ArrayBuffer-backed view: a Uint8Array over a SharedArrayBuffer is not a BlobPart.
  return new Blob([new Uint8Array(content)]);
}

/** Template and data file uploads (template upload 4.4; data upload is an extension). */
export class UploadsClient extends Area {
  private async upload(path: string, files: UploadFile[], opts?: RequestOptions): Promise<UploadedFile[]> {
    const form = new FormData();
    for (const f of files) form.append(f.field ?? 'file', toBlob(f.content), f.name);
    // The form is rebuilt from Blobs, so a retried attempt (with an idempotencyKey) sends the same bytes.
    return (await this.call<{ files: UploadedFile[] }>('POST', path, callInit(opts, { form }))).files;
  }
  /** .docx, .xlsx, .pptx; ids in form order, for template.urn with loadMethod Storage. */
  templates(files: UploadFile[], opts?: RequestOptions): Promise<UploadedFile[]> {
    return this.upload('/documents/template/upload', files, opts);
  }
  /** .json files; ids for data.urn with loadMethod Storage. */
  data(files: UploadFile[], opts?: RequestOptions): Promise<UploadedFile[]> {
    return this.upload('/documents/data/upload', files, opts);
  }
}

function fileNameOf(disposition: string | null): string | undefined {
  if (!disposition) return undefined;
  const star = /filename\*=UTF-8''([^;]+)/i.exec(disposition);
  if (star?.[1]) {
    try {
      return decodeURIComponent(star[1]);
    } catch {
      /* fall through to the plain parameter */
    }
  }
  return /filename="([^"]*)"/i.exec(disposition)?.[1];
}

/** Downloads of documents delivered to Storage (extension). */
export class StorageClient extends Area {
  async download(urn: string, opts?: RequestOptions): Promise<Download> {
    const res = await this.t.send('GET', `/documents/storage/${seg(urn)}/content`, callInit(opts, { headers: { accept: '*/*' } }));
    return {
      bytes: new Uint8Array(await res.arrayBuffer()),
      contentType: res.headers.get('content-type') ?? 'application/octet-stream',
      fileName: fileNameOf(res.headers.get('content-disposition')),
    };
  }
  /** The same as a stream: nothing is buffered. Consume or cancel the stream. */
  async downloadStream(urn: string, opts?: RequestOptions): Promise<DownloadStream> {
    const res = await this.t.send('GET', `/documents/storage/${seg(urn)}/content`, callInit(opts, { headers: { accept: '*/*' } }));
    const len = res.headers.get('content-length');
    return {
      stream: res.body ?? new ReadableStream<Uint8Array>({ start: (c) => c.close() }),
      contentType: res.headers.get('content-type') ?? 'application/octet-stream',
      fileName: fileNameOf(res.headers.get('content-disposition')),
      size: len !== null ? Number(len) : undefined,
    };
  }
}

/** The service's probes (extensions): need no credentials, are never retried. */
export class OperationsClient extends Area {
  /** GET /health: true when the process answers. */
  async health(): Promise<boolean> {
    return (await this.t.probe('/health')).status === 200;
  }
  /** GET /ready: the readiness report, whether ready (200) or not (503). */
  async ready(): Promise<ReadinessReport> {
    const { status, body } = await this.t.probe('/ready');
    if (status !== 200 && status !== 503) throw new Error(`GET /v1/ready answered ${status}`);
    return body as ReadinessReport;
  }
}

export class DocgenClient {
  readonly transport: Transport;
  readonly operations: OperationsClient;
  readonly common: CommonClient;
  readonly signatures: SignaturesClient;
  readonly configurations: ConfigurationsClient;
  readonly templates: TemplatesClient;
  readonly dataSources: DataSourcesClient;
  readonly solutions: SolutionsClient;
  readonly options: OptionsClient;
  readonly documents: DocumentsClient;
  readonly generation: GenerationClient;
  readonly uploads: UploadsClient;
  readonly storage: StorageClient;
  /** Batches (extension): a document per row, as one durable job. */
  readonly batches: BatchesClient;

  constructor(opts: DocgenClientOptions) {
    const t = new Transport(opts);
    this.transport = t;
    this.operations = new OperationsClient(t);
    this.common = new CommonClient(t);
    this.signatures = new SignaturesClient(t);
    this.configurations = new ConfigurationsClient(t);
    this.templates = new TemplatesClient(t);
    this.dataSources = new DataSourcesClient(t);
    this.solutions = new SolutionsClient(t);
    this.options = new OptionsClient(t);
    this.documents = new DocumentsClient(t);
    this.generation = new GenerationClient(t);
    this.uploads = new UploadsClient(t);
    this.storage = new StorageClient(t);
    this.batches = new BatchesClient(t);
  }
}
