// Starting workflows and turning their outcome into API results or ApiErrors.
import { type Client, WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure, TimeoutFailure, TypedSearchAttributes } from '@temporalio/common';
import { ApiError, type InnerError, innerError, isErrorCode } from '../core/errors.ts';
import type { GenerateInput, GenerateResult } from '../core/generate.ts';
import type { AsyncGenerateInput, generateDocumentAsync } from '../workflows/generate-async.ts';
import type { generateDocument } from '../workflows/generate.ts';
import { SA } from '../worker/search-attributes.ts';

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
  const templateLabel = input.template.name ?? input.template.urn;
  return {
    typedSearchAttributes: new TypedSearchAttributes([
      { key: SA.subscription, value: input.subscriptionId },
      { key: SA.operation, value: input.operationId },
      { key: SA.template, value: templateLabel },
      { key: SA.outputFormat, value: input.document.fileFormat },
    ]),
    staticSummary: `generate ${templateLabel} -> ${input.document.name} (${input.document.fileFormat}, ${input.document.deliveryMethod})`,
    staticDetails: [
      `**operation** ${input.operationId}`,
      `**subscription** ${input.subscriptionId} · **user** ${input.userId}`,
      `**template** ${input.template.loadMethod}:${input.template.urn} (${input.template.fileFormat})`,
      `**data** ${input.data.loadMethod}:${input.data.urn}`,
      `**document** ${input.document.name} as ${input.document.fileFormat} to ${input.document.deliveryMethod}:${input.document.path}`,
      `**locale** ${input.document.locale} · **timezone** ${input.document.timezone}`,
      ...extraDetails,
    ].join('\n'),
  };
}

export async function runGenerate(t: WorkflowStarter, input: GenerateInput): Promise<GenerateResult> {
  assertCanConvert(t, input);
  const handle = await t.client.workflow.start<typeof generateDocument>('generateDocument', {
    taskQueue: t.taskQueue,
    workflowId: generateWorkflowId(input.operationId),
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
    const cause = err.cause;
    if (cause instanceof ApplicationFailure && isErrorCode(cause.type)) {
      const inner = Array.isArray(cause.details?.[0]) ? (cause.details[0] as InnerError[]) : [innerError(cause.type, cause.message)];
      return new ApiError(cause.type, cause.message, inner);
    }
    if (cause instanceof TimeoutFailure) return new ApiError('GENERATION_TIMEOUT');
    return new ApiError('FUNCTION_EXECUTION_ERROR', 'the generation failed unexpectedly', [
      innerError('FUNCTION_EXECUTION_ERROR', `the generation failed unexpectedly (workflow ${workflowId})`, workflowId),
    ]);
  }
  if (err instanceof ApiError) return err;
  throw err;
}

export function asyncGenerateWorkflowId(operationId: string): string {
  return `generate-async-${operationId}`;
}

/** Starts the async generate and returns once the server has accepted it; the result goes to the callback. */
export async function startGenerateAsync(t: WorkflowStarter, input: AsyncGenerateInput): Promise<void> {
  assertCanConvert(t, input.generate);
  const described = describeGenerate(input.generate, [`**callback** POST ${input.callback.url} · **webhook-id** ${input.callback.webhookId}`]);
  await t.client.workflow.start<typeof generateDocumentAsync>('generateDocumentAsync', {
    taskQueue: t.taskQueue,
    workflowId: asyncGenerateWorkflowId(input.generate.operationId),
    args: [input],
    ...(t.eagerStart ? { requestEagerStart: true } : {}),
    ...described,
    staticSummary: `${described.staticSummary} [async, callback]`,
  });
}
