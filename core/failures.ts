// Error codes to and from Temporal failures. An activity that fails because of the caller throws a
// non-retryable ApplicationFailure whose type is the error code and whose details carry the inner errors;
// the API (a sync answer) and the async workflow (a callback body) read it back the same way.
import { ApplicationFailure, TimeoutFailure } from '@temporalio/common';
import { type ErrorCode, errorRegistry, type InnerError, innerError, isErrorCode } from './errors.ts';

/** What else a caller's failure says: when to send the request again (a 429's Retry-After, seconds). */
export interface FailureHints {
  retryAfterSeconds?: number;
}

/** A failure the caller caused: the workflow must not retry it. */
export function callerFailure(
  code: ErrorCode,
  message: string,
  innerErrors?: InnerError[],
  externalErrors?: unknown[],
  hints?: FailureHints,
): ApplicationFailure {
  const inner = innerErrors ?? [innerError(code, message)];
  return ApplicationFailure.create({
    type: code,
    message,
    nonRetryable: true,
    // The external service's own errors (a drive's, Salesforce's) travel as a second detail, hints as a third.
    details: hints ? [inner, externalErrors ?? [], hints] : externalErrors?.length ? [inner, externalErrors] : [inner],
  });
}

export interface FailureRendering {
  code: ErrorCode;
  status: number;
  message: string;
  innerErrors: InnerError[];
  /** What an external location reported (manage's error.externalErrors). */
  externalErrors?: unknown[];
  /** A 429's Retry-After (seconds). */
  retryAfterSeconds?: number;
}

/** How a run's failure cause is answered: the activity's code and inner errors when the caller caused it,
 *  GENERATION_TIMEOUT for a run that ran out of time, else a 500 whose eventId names the workflow. */
export function renderFailure(cause: unknown, workflowId: string): FailureRendering {
  if (cause instanceof ApplicationFailure && isErrorCode(cause.type)) {
    const inner = Array.isArray(cause.details?.[0]) ? (cause.details[0] as InnerError[]) : [innerError(cause.type, cause.message)];
    const external = Array.isArray(cause.details?.[1]) && cause.details[1].length > 0 ? (cause.details[1] as unknown[]) : undefined;
    const hints = (cause.details?.[2] ?? {}) as FailureHints;
    const retryAfter =
      typeof hints.retryAfterSeconds === 'number' && hints.retryAfterSeconds > 0 ? Math.ceil(hints.retryAfterSeconds) : undefined;
    return {
      code: cause.type,
      status: errorRegistry[cause.type].status,
      message: cause.message,
      innerErrors: inner,
      ...(external ? { externalErrors: external } : {}),
      ...(retryAfter !== undefined ? { retryAfterSeconds: retryAfter } : {}),
    };
  }
  if (cause instanceof TimeoutFailure) {
    // A step of the run ran out of time (its time limit, after its retries) and the run failed: final, and
    // nothing more is known of what the step did.
    const limit = cause.timeoutType ? cause.timeoutType.toLowerCase().replace(/_/g, '-') : 'time limit';
    const message = `a step of the operation ran out of time (${limit}) and the operation failed (workflow ${workflowId})`;
    return { code: 'GENERATION_TIMEOUT', status: 504, message, innerErrors: [innerError('GENERATION_TIMEOUT', message, workflowId)] };
  }
  return {
    code: 'FUNCTION_EXECUTION_ERROR',
    status: 500,
    message: errorRegistry.FUNCTION_EXECUTION_ERROR.message,
    innerErrors: [innerError('FUNCTION_EXECUTION_ERROR', `the generation failed unexpectedly (workflow ${workflowId})`, workflowId)],
  };
}
