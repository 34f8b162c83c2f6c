// Starting workflows and turning their outcome into API results or ApiErrors.
import { displayUrl } from '../core/display-url.ts';
import { createHash } from 'node:crypto';
import { type Client, WorkflowExecutionAlreadyStartedError, type WorkflowHandle, type WorkflowStartOptions, WorkflowFailedError } from '@temporalio/client';
import { TypedSearchAttributes, type Workflow } from '@temporalio/common';
import { ApiError } from '../core/errors.ts';
import { renderFailure } from '../core/failures.ts';
import type { GenerateInput, GenerateResult } from '../core/generate.ts';
import type { AsyncGenerateInput, generateDocumentAsync } from '../workflows/generate-async.ts';
import type { generateDocument } from '../workflows/generate.ts';
import type { ManageInput, ManageResult } from '../core/manage.ts';
import type { manageDocument } from '../workflows/manage.ts';
import type { UploadSweeperInput, uploadSweeper } from '../workflows/retention.ts';
import { SA } from '../core/search-attributes.ts';

export interface WorkflowStarter {
  client: Client;
  taskQueue: string;
  generateTimeoutMs: number;
  /** True when a worker shares this client's connection in this process (eager workflow start). */
  eagerStart?: boolean;
  /** With the worker in this process: whether it can convert, so pdf/csv requests fail at once (400)
   *  instead of queueing. Without it, the convert activity reports the same error. */
  converter?: () => { available: boolean; reason: string; howToEnable: string };
}

function assertCanConvert(t: WorkflowStarter, input: GenerateInput): void {
  if (input.document.fileFormat === input.template.fileFormat || !t.converter) return;
  const c = t.converter();
  if (!c.available) {
    throw new ApiError('NOT_SUPPORTED', `document.fileFormat ${input.document.fileFormat} needs a converter, and none is available: ${c.reason}. ${c.howToEnable}`);
  }
}

export function generateWorkflowId(operationId: string): string {
  return `generate-${operationId}`;
}

/** What an operator sees of a generate run in the Temporal UI: search attributes, summary, details. */
function describeGenerate(input: GenerateInput, extraDetails: string[] = []) {
  const { run } = input;
  const url = input.template.url ? displayUrl(input.template.url) : undefined;
  const templateLabel = input.template.name ?? url ?? input.template.urn;
  return {
    typedSearchAttributes: new TypedSearchAttributes([
      { key: SA.subscription, value: run.subscriptionId },
      { key: SA.operation, value: run.operationId },
      { key: SA.template, value: templateLabel },
      { key: SA.outputFormat, value: input.document.fileFormat },
    ]),
    staticSummary: `generate ${templateLabel} -> ${input.document.name} (${input.document.fileFormat}, ${input.document.deliveryMethod})`,
    staticDetails: [
      `**operation** ${run.operationId}`,
      `**subscription** ${run.subscriptionId} · **user** ${run.userId}`,
      url ? `**template** url ${url} (${input.template.fileFormat})` : `**template** ${input.template.loadMethod}:${input.template.urn} (${input.template.fileFormat})`,
      `**data** ${input.data.loadMethod}:${input.data.urn}`,
      `**document** ${input.document.name} as ${input.document.fileFormat} to ${input.document.deliveryMethod}:${input.document.path}`,
      `**locale** ${input.document.locale} · **timezone** ${input.document.timezone}`,
      ...extraDetails,
    ].join('\n'),
  };
}

export async function runGenerate(t: WorkflowStarter, input: GenerateInput, idem?: Idempotency): Promise<GenerateResult> {
  assertCanConvert(t, input);
  const handle = await startOnce<typeof generateDocument>(t, 'generateDocument', idem, {
    taskQueue: t.taskQueue,
    workflowId: idem ? idempotentWorkflowId('generate', input.run.subscriptionId, idem) : generateWorkflowId(input.run.operationId),
    args: [input],
    // A synchronous caller gives up at this point; the server then ends the run so nothing is left behind.
    workflowExecutionTimeout: t.generateTimeoutMs,
    ...(t.eagerStart ? { requestEagerStart: true } : {}),
    ...describeGenerate(input),
  });
  try {
    return await handle.result();
  } catch (err) {
    throw toApiError(err, handle.workflowId);
  }
}

/** A failed run's cause becomes the API error: the activity's code and inner errors when it was the
 *  caller's fault, a timeout, or a 500 with an eventId pointing at the workflow. */
export function toApiError(err: unknown, workflowId: string): ApiError {
  if (err instanceof WorkflowFailedError) {
    const r = renderFailure(err.cause, workflowId);
    return new ApiError(r.code, r.message, r.innerErrors, r.externalErrors);
  }
  if (err instanceof ApiError) return err;
  throw err;
}

export function asyncGenerateWorkflowId(operationId: string): string {
  return `generate-async-${operationId}`;
}

/** Starts the async generate and returns once the server has accepted it; the result goes to the callback. */
export async function startGenerateAsync(t: WorkflowStarter, input: AsyncGenerateInput, idem?: Idempotency): Promise<void> {
  assertCanConvert(t, input.generate);
  const described = describeGenerate(input.generate, [`**callback** POST ${input.callback.url} · **webhook-id** ${input.callback.webhookId}`]);
  await startOnce<typeof generateDocumentAsync>(t, 'generateDocumentAsync', idem, {
    taskQueue: t.taskQueue,
    workflowId: idem ? idempotentWorkflowId('generate-async', input.generate.run.subscriptionId, idem) : asyncGenerateWorkflowId(input.generate.run.operationId),
    args: [input],
    ...(t.eagerStart ? { requestEagerStart: true } : {}),
    ...described,
    staticSummary: `${described.staticSummary} [async, callback]`,
  });
}

// --- Idempotency-Key (GUIDE 4): the key becomes part of the workflow id. A retry while the first run is
// open attaches to it (workflowIdConflictPolicy USE_EXISTING); a retry after it closed is refused a new
// run (workflowIdReusePolicy REJECT_DUPLICATE) and reads the first run's outcome instead. The request's
// fingerprint travels in the run's memo, so a different request under the same key is a 409.

export interface Idempotency {
  key: string;
  /** sha256 of the canonical JSON of what the request asks for. */
  fingerprint: string;
}

const KEY = /^[\x21-\x7e]{1,255}$/;

/** Reads the Idempotency-Key header: absent -> undefined; present -> 1 to 255 visible ASCII characters. */
export function idempotencyOf(headers: Record<string, string | string[] | undefined>, request: unknown): Idempotency | undefined {
  const raw = headers['idempotency-key'];
  const key = (Array.isArray(raw) ? raw[0] : raw)?.trim();
  if (key === undefined) return undefined;
  if (!KEY.test(key)) {
    throw new ApiError('VALIDATION_ERROR', 'header Idempotency-Key must be 1 to 255 visible ASCII characters');
  }
  return { key, fingerprint: createHash('sha256').update(canonicalJson(request)).digest('hex') };
}

/** JSON with object keys sorted, so that key order does not make two identical requests differ. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

export function idempotentWorkflowId(kind: string, subscriptionId: string, idem: Idempotency): string {
  return `${kind}-${subscriptionId}-key-${idem.key}`;
}

export async function startOnce<W extends Workflow>(
  t: WorkflowStarter,
  type: string,
  idem: Idempotency | undefined,
  options: WorkflowStartOptions<W>,
): Promise<WorkflowHandle<W>> {
  if (!idem) return t.client.workflow.start<W>(type, options);
  let handle: WorkflowHandle<W>;
  try {
    handle = await t.client.workflow.start<W>(type, {
      ...options,
      workflowIdConflictPolicy: 'USE_EXISTING',
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      memo: { idempotencyFingerprint: idem.fingerprint },
    } as WorkflowStartOptions<W>);
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    handle = t.client.workflow.getHandle<W>(options.workflowId);
  }
  const described = await handle.describe();
  if (described.type !== type || described.memo?.idempotencyFingerprint !== idem.fingerprint) {
    throw new ApiError(
      'IDEMPOTENCY_KEY_REUSED',
      `Idempotency-Key ${JSON.stringify(idem.key)} was already used with a different request: send a new key for a new request`,
    );
  }
  return handle;
}

// --- manage (spec 4.8) -------------------------------------------------------------------------------

export function manageWorkflowId(operationId: string): string {
  return `manage-${operationId}`;
}

export async function runManage(t: WorkflowStarter, input: ManageInput, idem?: Idempotency): Promise<ManageResult> {
  const { target, run } = input;
  const handle = await startOnce<typeof manageDocument>(t, 'manageDocument', idem, {
    taskQueue: t.taskQueue,
    workflowId: idem ? idempotentWorkflowId('manage', run.subscriptionId, idem) : manageWorkflowId(run.operationId),
    args: [input],
    workflowExecutionTimeout: t.generateTimeoutMs,
    ...(t.eagerStart ? { requestEagerStart: true } : {}),
    typedSearchAttributes: new TypedSearchAttributes([
      { key: SA.subscription, value: run.subscriptionId },
      { key: SA.operation, value: run.operationId },
      { key: SA.template, value: input.source.urn },
      { key: SA.outputFormat, value: target?.fileFormat ?? input.source.fileFormat },
    ]),
    staticSummary: target
      ? `manage ${input.operation} ${input.source.loadMethod}:${input.source.urn} -> ${target.name} (${target.fileFormat}, ${target.deliveryMethod})`
      : `manage ${input.operation} ${input.source.loadMethod}:${input.source.urn}`,
    staticDetails: [
      `**operation** ${run.operationId} (${input.operation})`,
      `**subscription** ${run.subscriptionId} · **user** ${run.userId}${input.serviceUser ? ` (X-Service-Authorization: ${input.serviceUser.email})` : ''}`,
      ...(input.initiatorEmail ? [`**initiator** ${input.initiatorEmail} (X-Email)`] : []),
      `**source** ${input.source.loadMethod}:${input.source.urn} (${input.source.fileFormat}), remove ${input.source.remove}`,
      ...(target ? [`**target** ${target.name} as ${target.fileFormat} to ${target.deliveryMethod}:${target.path}`] : []),
    ].join('\n'),
  });
  try {
    return await handle.result();
  } catch (err) {
    throw toApiError(err, handle.workflowId);
  }
}

// --- upload retention (spec 3) -------------------------------------------------------------------------

export function uploadSweeperId(taskQueue: string): string {
  return `upload-sweeper-${taskQueue}`;
}

/** Starts this task queue's upload sweeper, or hands the running one these settings (signal-with-start:
 *  every API process calls it at start-up, and there is still one sweeper). */
export async function ensureUploadSweeper(t: Pick<WorkflowStarter, 'client' | 'taskQueue'>, input: UploadSweeperInput): Promise<void> {
  await t.client.workflow.signalWithStart<typeof uploadSweeper, [UploadSweeperInput]>('uploadSweeper', {
    taskQueue: t.taskQueue,
    workflowId: uploadSweeperId(t.taskQueue),
    args: [input],
    signal: 'sweepSettings',
    signalArgs: [input],
    staticSummary: `erases uploaded templates and data files whose retention period is over, every ${input.intervalMs / 1000} s`,
  });
}
