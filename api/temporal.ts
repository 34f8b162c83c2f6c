// Starting workflows and turning their outcome into API results or ApiErrors.
import { type Client, WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure, TimeoutFailure, TypedSearchAttributes } from '@temporalio/common';
import { ApiError, type InnerError, innerError, isErrorCode } from '../core/errors.ts';
import type { GenerateInput, GenerateResult } from '../core/generate.ts';
import type { generateDocument } from '../workflows/generate.ts';
import { SA } from '../worker/search-attributes.ts';

export interface WorkflowStarter {
  client: Client;
  taskQueue: string;
  generateTimeoutMs: number;
}

export function generateWorkflowId(operationId: string): string {
  return `generate-${operationId}`;
}

export async function runGenerate(t: WorkflowStarter, input: GenerateInput): Promise<GenerateResult> {
  const templateLabel = input.template.name ?? input.template.urn;
  const handle = await t.client.workflow.start<typeof generateDocument>('generateDocument', {
    taskQueue: t.taskQueue,
    workflowId: generateWorkflowId(input.operationId),
    args: [input],
    // A synchronous caller gives up at this point; the server then ends the run so nothing is left behind.
    workflowExecutionTimeout: t.generateTimeoutMs,
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
    ].join('\n'),
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
