// generateDocumentAsync: the same generation steps as the synchronous workflow, then the callback of spec
// 6 with the body the synchronous operation would have answered: the 201 success envelope, or the error
// envelope (no result, no consumption). The body is built once, so every attempt sends the same bytes.
// A callback that could not be delivered fails the run, so operators find it under status Failed.
import { ActivityFailure, ApplicationFailure, isCancellation, workflowInfo } from '@temporalio/workflow';
import { errorRegistry, type InnerError, innerError, isErrorCode } from '../core/errors.ts';
import type { GenerateInput, GenerateResult } from '../core/generate.ts';
import { type CallbackOutcome, type CallbackPlan, deliverCallback } from './callback.ts';
import { runGeneration } from './generate.ts';

export interface AsyncGenerateInput {
  generate: GenerateInput;
  /** Captured when the request was accepted, echoed in the callback body. */
  envelope: { origin: string; externalContext?: Record<string, unknown> };
  callback: CallbackPlan;
}

export interface AsyncGenerateResult {
  generated: boolean;
  document?: GenerateResult['document'] & { documentGuid: string };
  errorCode?: string;
  callback: CallbackOutcome;
}

function envelopeTail(input: AsyncGenerateInput): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (input.envelope.externalContext !== undefined) out.externalContext = input.envelope.externalContext;
  out.origin = input.envelope.origin;
  out.dateTime = new Date().toISOString();
  out.operationId = input.generate.operationId;
  out.userId = input.generate.userId;
  return out;
}

/** The API's rendering of a failed generation (api/temporal.ts toApiError), as a plain envelope. */
function errorOf(err: unknown): { code: string; statusCode: number; message: string; innerErrors: InnerError[] } {
  const cause = err instanceof ActivityFailure && err.cause ? err.cause : err;
  if (cause instanceof ApplicationFailure && isErrorCode(cause.type)) {
    const inner = Array.isArray(cause.details?.[0]) ? (cause.details[0] as InnerError[]) : [innerError(cause.type, cause.message)];
    return { code: cause.type, statusCode: errorRegistry[cause.type].status, message: cause.message, innerErrors: inner };
  }
  const { workflowId } = workflowInfo();
  const message = errorRegistry.FUNCTION_EXECUTION_ERROR.message;
  return {
    code: 'FUNCTION_EXECUTION_ERROR',
    statusCode: 500,
    message,
    innerErrors: [innerError('FUNCTION_EXECUTION_ERROR', `the generation failed unexpectedly (workflow ${workflowId})`, workflowId)],
  };
}

export async function generateDocumentAsync(input: AsyncGenerateInput): Promise<AsyncGenerateResult> {
  let body: Record<string, unknown>;
  let outcome: Omit<AsyncGenerateResult, 'callback'>;
  try {
    // Nobody waits on the answer: conversions queue on the office task queue (see steps.ts).
    const result = await runGeneration(input.generate, 'office');
    const document = { ...result.document, documentGuid: result.documentGuid };
    body = { result: { statusCode: 201, message: 'Created', data: { document } }, consumption: result.consumption, ...envelopeTail(input) };
    outcome = { generated: true, document };
  } catch (err) {
    if (isCancellation(err)) throw err;
    const e = errorOf(err);
    body = { error: { statusCode: e.statusCode, message: e.message, innerErrors: e.innerErrors }, ...envelopeTail(input) };
    outcome = { generated: false, errorCode: e.code };
  }
  const callback = await deliverCallback(input.callback, JSON.stringify(body));
  if (!callback.delivered) {
    throw ApplicationFailure.create({
      type: 'CALLBACK_NOT_DELIVERED',
      nonRetryable: true,
      message: `the callback to ${input.callback.url} was not delivered after ${callback.attempts} attempt(s): ${callback.reason}`,
      details: [{ ...outcome, callback }],
    });
  }
  return { ...outcome, callback };
}
