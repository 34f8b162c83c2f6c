// A batch (POST /documents/document/generate/batch, extension): one template, many rows, one document per
// row and/or one combined output. The request, its rules (checked before anything is queued), and what the
// workflows and activities exchange: ids, settings and blob references, never rows or document bytes.
import type { EInvoiceOption } from './einvoice.ts';
import type { BlobRef } from './blob.ts';
import { type InnerError, innerError } from './errors.ts';
import type { GenerateInput, GenerateRequest, Variable } from './generate.ts';
import type { ConflictBehavior, LocationCatalog, SharingRequest } from './locations.ts';
import type { RunContext } from './run.ts';
import type { SaveOptions } from './save-options.ts';
import { isRowsPath, ROWS_FORMATS, type RowsFormat } from './rows.ts';
import { type ParsedTarget, parseTarget } from './target.ts';

export const COMBINED_FORMATS = ['zip', 'pdf'] as const;
export type CombinedFormat = (typeof COMBINED_FORMATS)[number];

/** The request body. `document.name` and `document.path` are patterns over the row (`Invoice {number}`);
 *  without `document.deliveryMethod` the rows go only into the combined output. */
export interface BatchRequest extends Omit<GenerateRequest, 'document' | 'data'> {
  data: GenerateRequest['data'] & {
    /** The list inside one JSON value (a GraphQL result's `data.customers`, an uploaded object's `items`). */
    rowsPath?: string;
    /** json (an array, or one value with rowsPath), jsonl or csv; default: read from the first character. */
    rowsFormat?: string;
  };
  document: Omit<GenerateRequest['document'], 'deliveryMethod'> & { deliveryMethod?: string };
  combined?: { format: string; name: string; path: string; deliveryMethod: string };
  /** End the batch (status stopped) once this many rows have failed; default: never. */
  stopAfterFailures?: number;
}

/** The request as a generate request, for generate's checks (template, data, each row's document): rows
 *  that only feed the combined output are checked as if delivered to Storage (their format and options must
 *  still make sense). */
export function generateShapeOf(req: BatchRequest): GenerateRequest {
  const d = req.document;
  const delivered = d.deliveryMethod !== undefined && d.deliveryMethod !== '';
  const { rowsPath: _path, rowsFormat: _format, ...data } = req.data;
  return {
    template: req.template,
    data,
    document: { ...d, deliveryMethod: delivered ? d.deliveryMethod! : 'Storage', path: delivered ? d.path : 'root' },
  };
}

/** The combination rules of a batch beyond a generate's (checkGenerateRules on generateShapeOf). Every
 *  problem at once. */
export function checkBatchRules(req: BatchRequest, catalog: LocationCatalog): InnerError[] {
  const d = req.document;
  const rowsDelivered = d.deliveryMethod !== undefined && d.deliveryMethod !== '';
  const errors: InnerError[] = [];
  if (req.data.rowsPath !== undefined && !isRowsPath(req.data.rowsPath)) {
    errors.push(innerError('VALIDATION_ERROR', 'data.rowsPath must be a dotted path of names or indexes, such as data.customers'));
  }
  if (req.data.rowsFormat !== undefined && !(ROWS_FORMATS as readonly string[]).includes(req.data.rowsFormat)) {
    errors.push(innerError('VALIDATION_ERROR', `data.rowsFormat must be one of ${ROWS_FORMATS.join(', ')}`));
  } else if (req.data.rowsFormat !== undefined && req.data.rowsFormat !== 'json' && req.data.rowsPath !== undefined) {
    errors.push(
      innerError(
        'VALIDATION_ERROR',
        `data.rowsPath names a list inside one JSON value: it cannot be used with data.rowsFormat ${req.data.rowsFormat}`,
      ),
    );
  }
  if (req.data.loadMethod === 'GraphQL' && req.data.rowsPath === undefined) {
    errors.push(
      innerError('VALIDATION_ERROR', 'data.rowsPath is required for GraphQL: the path of the list in the result, such as customers'),
    );
  }
  const c = req.combined;
  if (!rowsDelivered && !c) {
    errors.push(innerError('VALIDATION_ERROR', 'document.deliveryMethod is required unless combined names where the combined output goes'));
  }
  if (c) {
    if (!(COMBINED_FORMATS as readonly string[]).includes(c.format)) {
      errors.push(innerError('VALIDATION_ERROR', `combined.format must be one of ${COMBINED_FORMATS.join(', ')}`));
    } else {
      if (c.format === 'pdf' && d.fileFormat !== 'pdf') {
        errors.push(
          innerError(
            'VALIDATION_ERROR',
            `combined.format pdf merges the rows' PDFs: document.fileFormat must be pdf (it is ${d.fileFormat})`,
          ),
        );
      }
      errors.push(...parseCombined(c, catalog).problems);
    }
  }
  const stop = req.stopAfterFailures;
  if (stop !== undefined && !(Number.isInteger(stop) && stop >= 1))
    errors.push(innerError('VALIDATION_ERROR', 'stopAfterFailures must be a whole number of at least 1'));
  return errors;
}

/** The combined output as a target: generate's target rules (a location generate may write to, its path
 *  rule, the file-name rule), the zip being a file any writing location holds. Its needs are what the API
 *  asks of the locations. `combined.format` is one of COMBINED_FORMATS (checked first). */
export function parseCombined(c: NonNullable<BatchRequest['combined']>, catalog: LocationCatalog): ParsedTarget {
  return parseTarget(
    { name: c.name, fileFormat: c.format, deliveryMethod: c.deliveryMethod, path: c.path },
    { field: 'combined', request: 'generate', containers: ['zip'] },
    catalog,
  );
}

/** How a batch's work is cut and paced (config/env.ts BATCH_*). */
export interface BatchTuning {
  /** Rows per page of the rows blob, and the fewest rows a chunk activity takes (but the last page's). */
  chunkRows: number;
  /** Most pages one chunk activity takes (chunkPages): absent in runs started before chunks grew, which take
   *  one page each. */
  chunkMaxPages?: number;
  /** Chunk activities in flight at once for one batch. */
  window: number;
  /** A chunk that stops heartbeating for this long is retried elsewhere (resuming after its last row). */
  heartbeatTimeoutMs: number;
  /** Chunks per workflow run before continue-as-new (history stays bounded). */
  chunksPerRun: number;
  /** Most rows in one batch. */
  maxRows: number;
}

/** How many pages the next chunk takes, `remaining` pages not yet started: a window's share of them, so the
 *  window stays full to the end, between one page and `maxPages`. A long batch pays Temporal's cost per chunk
 *  (its scheduling, start, heartbeats, completion and workflow task) once per `maxPages` pages; a short one
 *  keeps its parallelism, and every batch ends on one-page chunks (its last rows are not left to one chunk).
 *  Deterministic (the workflow's own arithmetic). */
export function chunkPages(remaining: number, window: number, maxPages = 1): number {
  return Math.max(1, Math.min(maxPages, remaining, Math.floor(remaining / window)));
}

/** Most pages one chunk of `batch` may take: the tuning's chunkMaxPages (absent in runs from before chunks
 *  grew), but 1 for a batch that stops after failures: the workflow hears of failures as chunks end, so the
 *  chunks running at the stop finish their rows, as many as before chunks grew. */
export function chunkMaxPagesOf(batch: Pick<BatchInput, 'tuning' | 'stopAfterFailures'>): number {
  return batch.stopAfterFailures === undefined ? (batch.tuning.chunkMaxPages ?? 1) : 1;
}

/** Rows merged and named at admission: a problem there is the request's 400. */
export const ADMISSION_CHECK_ROWS = 3;

/** The task queue of chunk and combine activities: workers take only BATCH_SLOTS of them at once, so
 *  batches never hold every activity slot of a worker (single generates keep theirs). */
export function batchTaskQueue(mainTaskQueue: string): string {
  return `${mainTaskQueue}-batch`;
}

/** What the batch workflows receive: the request as generate's workflow input (template, data, document)
 *  plus the batch's own settings. `document.name` and `document.path` are the patterns. */
export interface BatchInput {
  batchId: string;
  /** Who runs it (operationId = batchId), the connections its locations use, which are remote. */
  run: RunContext;
  template: GenerateInput['template'];
  data: GenerateInput['data'] & { rowsPath?: string; rowsFormat?: RowsFormat };
  /** The uploads the request names: consumed once, when the batch ends. */
  uploads: string[];
  /** Without deliveryMethod the rows go only into the combined output. */
  document: Omit<GenerateInput['document'], 'deliveryMethod'> & { deliveryMethod?: string };
  combined?: { format: CombinedFormat; name: string; path: string; deliveryMethod: string };
  stopAfterFailures?: number;
  tuning: BatchTuning;
  /** The summary callback (X-Client-Authorization given), and what its body echoes. */
  callback?: {
    url: string;
    clientToken: string;
    webhookId: string;
    scheduleMs: number[];
    outbound: { allow: string[]; timeoutMs: number };
  };
  envelope: { origin: string; externalContext?: Record<string, unknown> };
}

/** What the admission step made of the request: the batch's own copy of the templates and its rows, cut into
 *  pages of `tuning.chunkRows` rows (blob keys derived from the page number: batchPageKey). */
export interface PreparedBatch {
  rowsTotal: number;
  pages: number;
  template: BlobRef;
  related?: Record<string, BlobRef>;
  /** document.einvoice.template: the batch's copy of the XML template. */
  einvoiceTemplate?: BlobRef;
}

/** Where a batch keeps its own files while it runs (template copies, row pages, row documents for the
 *  combined output): removed when it ends. Under scratch/ like every run's intermediate files. */
export function batchScratch(batchWorkflowId: string): string {
  return `scratch/${batchWorkflowId.replace(/[^A-Za-z0-9._-]/g, '_')}/`;
}

export function batchPageKey(batchWorkflowId: string, page: number): string {
  return `${batchScratch(batchWorkflowId)}rows/${String(page).padStart(6, '0')}.jsonl`;
}

/** The operation id a row is recorded and metered under (unique per batch and row). */
export function rowOperationId(batchId: string, row: number): string {
  return `${batchId}:row:${row}`;
}

export function batchWorkflowId(batchId: string): string {
  return `batch-${batchId}`;
}

export function batchAdmissionWorkflowId(batchId: string): string {
  return `batch-admission-${batchId}`;
}

/** A batch's progress as the API answers it (GET /documents/batch/{id}). */
export interface BatchProgress {
  id: string;
  status: string;
  rowsTotal: number;
  rowsDone: number;
  rowsFailed: number;
  pages: number;
  /** Rows per second since the batch started (done and failed). */
  rate: number;
  estimatedEnd?: string;
}

/** What every step of one batch needs, built by the workflow from its input and the admission's result. */
export interface BatchRun {
  batchId: string;
  /** The batch workflow's id: its scratch prefix (batchScratch). */
  workflowId: string;
  subscriptionId: string;
  userId: string;
  template: BlobRef;
  templateFormat: string;
  related?: Record<string, BlobRef>;
  /** document.einvoice.template: the batch's copy of the XML template. */
  einvoiceTemplate?: BlobRef;
  document: {
    /** Patterns over the row. */
    name: string;
    path: string;
    fileFormat: string;
    /** Where each row's document goes; none (undefined, or '' in a batch started before this was optional):
     *  the rows go only into the combined output. */
    deliveryMethod?: string;
    locale: string;
    timezone: string;
    saveOptions?: SaveOptions;
    sharing?: SharingRequest;
    conflict?: ConflictBehavior;
    /** document.options.strict: a row whose data misses a tag's value fails (TEMPLATE_ERROR). */
    strict?: true;
    /** document.einvoice: each row is an e-invoice made from the invoice in the row (activities/einvoice.ts). */
    einvoice?: EInvoiceOption;
  };
  variables?: Variable[];
  embedded?: string;
  connections?: Record<string, string>;
  /** The run's remote locations (RunContext.remote). */
  remote?: string[];
  /** The rows' documents stay in scratch until the combined output is made. */
  keepDocuments: boolean;
}

/** The run context of a batch's steps. */
export function runOf(
  batch: BatchInput,
  workflowId: string,
  prepared: Pick<PreparedBatch, 'template' | 'related' | 'einvoiceTemplate'>,
): BatchRun {
  const d = batch.document;
  return {
    batchId: batch.batchId,
    workflowId,
    subscriptionId: batch.run.subscriptionId,
    userId: batch.run.userId,
    template: prepared.template,
    templateFormat: batch.template.fileFormat,
    ...(prepared.related ? { related: prepared.related } : {}),
    ...(prepared.einvoiceTemplate ? { einvoiceTemplate: prepared.einvoiceTemplate } : {}),
    document: {
      name: d.name,
      path: d.path,
      fileFormat: d.fileFormat,
      ...(d.deliveryMethod ? { deliveryMethod: d.deliveryMethod } : {}),
      locale: d.locale,
      timezone: d.timezone,
      ...(d.saveOptions ? { saveOptions: d.saveOptions } : {}),
      ...(d.sharing ? { sharing: d.sharing } : {}),
      ...(d.conflict ? { conflict: d.conflict } : {}),
      ...(d.strict ? { strict: d.strict } : {}),
      ...(d.einvoice ? { einvoice: d.einvoice } : {}),
    },
    ...(batch.data.variables ? { variables: batch.data.variables } : {}),
    ...(batch.data.embedded ? { embedded: batch.data.embedded } : {}),
    ...(batch.run.connections ? { connections: batch.run.connections } : {}),
    ...(batch.run.remote ? { remote: batch.run.remote } : {}),
    keepDocuments: batch.combined !== undefined,
  };
}

/** The run context of one of a batch's own operations (a row, the combined output): the batch's
 *  subscription, user, connections and remote locations under that operation's id. */
export function batchOperationRun(
  run: Pick<BatchRun, 'subscriptionId' | 'userId' | 'connections' | 'remote'>,
  operationId: string,
): RunContext {
  return {
    operationId,
    subscriptionId: run.subscriptionId,
    userId: run.userId,
    ...(run.connections ? { connections: run.connections } : {}),
    ...(run.remote ? { remote: run.remote } : {}),
  };
}

/** The run context of row `row` of a batch: its own operation id, so its record and metering are its own. */
export function rowRun(run: Pick<BatchRun, 'batchId' | 'subscriptionId' | 'userId' | 'connections' | 'remote'>, row: number): RunContext {
  return batchOperationRun(run, rowOperationId(run.batchId, row));
}

/** The operation id the combined output is recorded under (not metered: its rows were). */
export function combinedOperationId(batchId: string): string {
  return `${batchId}:combined`;
}
