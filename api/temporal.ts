// Starting workflows and turning their outcome into API results or ApiErrors.
import { displayUrl } from '../core/display-url.ts';
import { createHash } from 'node:crypto';
import {
  type Client,
  isGrpcServiceError,
  WorkflowExecutionAlreadyStartedError,
  type WorkflowHandle,
  type WorkflowStartOptions,
  WorkflowFailedError,
} from '@temporalio/client';
import { TypedSearchAttributes, type Workflow } from '@temporalio/common';
import { ApiError } from '../core/errors.ts';
import { renderFailure } from '../core/failures.ts';
import type { GenerateInput, GenerateResult } from '../core/generate.ts';
import type { AsyncGenerateInput, generateDocumentAsync } from '../workflows/generate-async.ts';
import type { generateDocument } from '../workflows/generate.ts';
import type { ManageInput, ManageResult } from '../core/manage.ts';
import type { manageDocument } from '../workflows/manage.ts';
import type { UploadSweeperInput, uploadSweeper } from '../workflows/retention.ts';
import { RUN_TIME_LIMIT_MS } from '../core/run.ts';
import { SA } from '../core/search-attributes.ts';

export interface WorkflowStarter {
  client: Client;
  taskQueue: string;
  /** How long a synchronous generate or manage waits for its run (GENERATE_TIMEOUT_MS): the API's wait, not
   *  the run's life. */
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
    throw new ApiError(
      'NOT_SUPPORTED',
      `document.fileFormat ${input.document.fileFormat} needs a converter, and none is available: ${c.reason}. ${c.howToEnable}`,
    );
  }
}

/** The workflow id of a synchronous generate: its Idempotency-Key's, or without one its operationId's (the
 *  key a caller sends to read the outcome after a 504). */
export function generateWorkflowId(subscriptionId: string, key: string): string {
  return idempotentWorkflowId('generate', subscriptionId, key);
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
      url
        ? `**template** url ${url} (${input.template.fileFormat})`
        : `**template** ${input.template.loadMethod}:${input.template.urn} (${input.template.fileFormat})`,
      `**data** ${input.data.loadMethod}:${input.data.urn}`,
      `**document** ${input.document.name} as ${input.document.fileFormat} to ${input.document.deliveryMethod}:${input.document.path}`,
      `**locale** ${input.document.locale} · **timezone** ${input.document.timezone}`,
      ...extraDetails,
    ].join('\n'),
  };
}

export async function runGenerate(t: WorkflowStarter, input: GenerateInput, idem: Idempotency): Promise<GenerateResult> {
  assertCanConvert(t, input);
  const key = keyOf(input.run.operationId, idem);
  return waitForOutcome<typeof generateDocument>(t, 'generateDocument', idem, key, {
    taskQueue: t.taskQueue,
    workflowId: generateWorkflowId(input.run.subscriptionId, key),
    args: [{ ...input, run: { ...input.run, callerDeadline: Date.now() + t.generateTimeoutMs } }],
    ...describeGenerate(input),
  });
}

/** A failed run's cause becomes the API error: the activity's code and inner errors when it was the
 *  caller's fault, a run stopped at its time limit, or a 500 with an eventId pointing at the workflow. */
export function toApiError(
  err: unknown,
  workflowId: string,
  run: { timeLimitMs: number; made: string } = { timeLimitMs: RUN_TIME_LIMIT_MS, made: 'document' },
): ApiError {
  if (err instanceof WorkflowFailedError) {
    if (err.message === 'Workflow execution timed out') {
      const limit = run.timeLimitMs % 3_600_000 === 0 ? `${run.timeLimitMs / 3_600_000} h` : `${run.timeLimitMs / 1000} s`;
      return new ApiError(
        'GENERATION_TIMEOUT',
        `the run was stopped at its time limit (${limit}) before it finished: whether it made its ${run.made} is not known; look for its ${run.made} before sending the request again (workflow ${workflowId})`,
      );
    }
    const r = renderFailure(err.cause, workflowId);
    return new ApiError(r.code, r.message, r.innerErrors, r.externalErrors, r.retryAfterSeconds);
  }
  if (err instanceof ApiError) return err;
  throw err;
}

// --- The caller's wait (issue 28): a synchronous generate or manage waits GENERATE_TIMEOUT_MS for its run,
// which is not bound to that wait: a run that outlives its caller (a slow conversion, a Temporal server
// paused, a lost workflow task replayed later) finishes, or fails, and records its outcome, which a
// retry with the same Idempotency-Key reads. A request without a key has its operationId as its key, so
// every caller can read the outcome; the 504 says which key to send.

/** The run's own limit (the server ends it past this): far beyond any caller's wait. */
const RUN_OPTIONS = { workflowExecutionTimeout: RUN_TIME_LIMIT_MS } as const;

/** gRPC codes after which the same call, made again before the caller's deadline, may succeed (the server
 *  paused or restarting, a connection being re-established), or that the caller's deadline itself raised:
 *  the worker's native connection (shared by `docgen start`) reports a call past its deadline as CANCELLED
 *  "Timeout expired", the JavaScript one as DEADLINE_EXCEEDED. */
const TRANSIENT = new Set([
  1 /* CANCELLED */, 4 /* DEADLINE_EXCEEDED */, 8 /* RESOURCE_EXHAUSTED */, 10 /* ABORTED */, 14 /* UNAVAILABLE */,
]);

function isTransient(err: unknown): boolean {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    if (isGrpcServiceError(e)) return TRANSIENT.has(e.code);
  }
  return false;
}

function keyOf(operationId: string, idem: Idempotency): string {
  return idem.key ?? operationId;
}

/** The 504 of a caller whose wait ended before its run did: what is known (the run may still complete) and
 *  how to read the outcome. */
export function stillRunning(t: Pick<WorkflowStarter, 'generateTimeoutMs'>, idem: Idempotency, key: string): ApiError {
  const retry = idem.key !== undefined ? 'the same Idempotency-Key' : `the header "Idempotency-Key: ${key}" (this request's operationId)`;
  return new ApiError(
    'GENERATION_TIMEOUT',
    `the operation did not finish within GENERATE_TIMEOUT_MS (${t.generateTimeoutMs / 1000} s) and goes on: it may still deliver. Send the same request again with ${retry} to get its outcome (the document, or why it failed); nothing runs twice`,
  );
}

/** Starts the run (or attaches to the one its key names) and waits for its outcome until the caller's
 *  deadline; transient server errors are retried until then. Past it: 504, saying the run may still
 *  complete and how to read its outcome. Every server call carries the deadline, and a timer guards it. */
async function waitForOutcome<W extends Workflow>(
  t: WorkflowStarter,
  type: string,
  idem: Idempotency,
  key: string,
  options: WorkflowStartOptions<W>,
): Promise<Awaited<ReturnType<W>>> {
  const deadline = Date.now() + t.generateTimeoutMs;
  let workflowId = options.workflowId;
  const attempt = async (): Promise<Awaited<ReturnType<W>>> => {
    for (let pause = 100; ; pause = Math.min(pause * 2, 2_000)) {
      try {
        const handle = await startOnce<W>(t, type, idem, {
          ...options,
          ...RUN_OPTIONS,
          ...(t.eagerStart ? { requestEagerStart: true } : {}),
        } as WorkflowStartOptions<W>);
        workflowId = handle.workflowId;
        return (await handle.result()) as Awaited<ReturnType<W>>;
      } catch (err) {
        if (!isTransient(err) || Date.now() + pause >= deadline) throw err;
        await new Promise((r) => setTimeout(r, pause));
      }
    }
  };
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<'expired'>((resolve) => (timer = setTimeout(() => resolve('expired'), Math.max(0, deadline - Date.now()))));
  const outcome = t.client.withDeadline(deadline, attempt);
  try {
    const first = await Promise.race([outcome, expired]);
    if (first === 'expired') {
      outcome.catch(() => undefined);
      throw stillRunning(t, idem, key);
    }
    return first;
  } catch (err) {
    if (err instanceof ApiError) throw err;
    if (err instanceof WorkflowFailedError) throw toApiError(err, workflowId);
    if (isTransient(err)) throw stillRunning(t, idem, key);
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

export function asyncGenerateWorkflowId(operationId: string): string {
  return `generate-async-${operationId}`;
}

/** Starts the async generate and returns once the server has accepted it; the result goes to the callback. */
export async function startGenerateAsync(t: WorkflowStarter, input: AsyncGenerateInput, idem: Idempotency): Promise<void> {
  assertCanConvert(t, input.generate);
  const described = describeGenerate(input.generate, [
    `**callback** POST ${input.callback.url} · **webhook-id** ${input.callback.webhookId}`,
  ]);
  await startOnce<typeof generateDocumentAsync>(t, 'generateDocumentAsync', idem.key !== undefined ? idem : undefined, {
    taskQueue: t.taskQueue,
    workflowId:
      idem.key !== undefined
        ? idempotentWorkflowId('generate-async', input.generate.run.subscriptionId, idem.key)
        : asyncGenerateWorkflowId(input.generate.run.operationId),
    args: [input],
    ...(t.eagerStart ? { requestEagerStart: true } : {}),
    ...described,
    staticSummary: `${described.staticSummary} [async, callback]`,
  });
}

// --- Idempotency-Key (GUIDE 4): the key becomes part of the workflow id. A retry while the first run is
// open attaches to it (workflowIdConflictPolicy USE_EXISTING); a retry after it closed is refused a new
// run (workflowIdReusePolicy REJECT_DUPLICATE) and reads the first run's outcome instead, for as long as
// Temporal keeps the closed run (the namespace's retention period). The request's fingerprint travels in
// the run's memo, so a different request under the same key is a 409. A synchronous request without the
// header has its operationId as its key.

export interface Idempotency {
  /** The Idempotency-Key header; undefined when the request has none. */
  key?: string;
  /** sha256 of the canonical JSON of what the request asks for. */
  fingerprint: string;
}

const KEY = /^[\x21-\x7e]{1,255}$/;

/** Reads the Idempotency-Key header (absent, or 1 to 255 visible ASCII characters) and fingerprints the
 *  request. */
export function idempotencyOf(headers: Record<string, string | string[] | undefined>, request: unknown): Idempotency {
  const raw = headers['idempotency-key'];
  const key = (Array.isArray(raw) ? raw[0] : raw)?.trim();
  if (key !== undefined && !KEY.test(key)) {
    throw new ApiError('VALIDATION_ERROR', 'header Idempotency-Key must be 1 to 255 visible ASCII characters');
  }
  return { ...(key !== undefined ? { key } : {}), fingerprint: createHash('sha256').update(canonicalJson(request)).digest('hex') };
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

export function idempotentWorkflowId(kind: string, subscriptionId: string, key: string): string {
  return `${kind}-${subscriptionId}-key-${key}`;
}

/** Starts the run, or with an idempotency fingerprint attaches to the run its workflow id already names
 *  (running or closed). The fingerprint is compared when the caller chose the key; a key the API chose (a
 *  fresh operationId) can only name a run this very request started (a start retried after a lost answer),
 *  so it costs no describe. */
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
    if (idem.key === undefined) return handle;
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    handle = t.client.workflow.getHandle<W>(options.workflowId);
  }
  const described = await handle.describe();
  if (described.type !== type || described.memo?.idempotencyFingerprint !== idem.fingerprint) {
    throw new ApiError(
      'IDEMPOTENCY_KEY_REUSED',
      `Idempotency-Key ${JSON.stringify(idem.key ?? '')} was already used with a different request: send a new key for a new request`,
    );
  }
  return handle;
}

// --- manage (spec 4.8) -------------------------------------------------------------------------------

/** The workflow id of a manage: its Idempotency-Key's, or without one its operationId's. */
export function manageWorkflowId(subscriptionId: string, key: string): string {
  return idempotentWorkflowId('manage', subscriptionId, key);
}

export async function runManage(t: WorkflowStarter, input: ManageInput, idem: Idempotency): Promise<ManageResult> {
  const { target, run } = input;
  const key = keyOf(run.operationId, idem);
  return waitForOutcome<typeof manageDocument>(t, 'manageDocument', idem, key, {
    taskQueue: t.taskQueue,
    workflowId: manageWorkflowId(run.subscriptionId, key),
    args: [{ ...input, run: { ...run, callerDeadline: Date.now() + t.generateTimeoutMs } }],
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
    staticSummary: `erases uploaded templates and data files whose retention period is over, and scratch files older than the longest run, every ${input.intervalMs / 1000} s`,
  });
}
