import { ApplicationFailure } from '@temporalio/common';
import { type ErrorCode, type InnerError, innerError } from '../core/errors.ts';

/** A failure the caller caused: the workflow must not retry it, and the API renders it from `type` (the
 *  error code) and `details[0]` (the inner errors). */
export function callerFailure(code: ErrorCode, message: string, innerErrors?: InnerError[]): ApplicationFailure {
  return ApplicationFailure.create({
    type: code,
    message,
    nonRetryable: true,
    details: [innerErrors ?? [innerError(code, message)]],
  });
}
