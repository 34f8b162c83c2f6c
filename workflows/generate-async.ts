// generateDocumentAsync: the same generation steps as the synchronous workflow, then the callback of spec
// 6 with the body the synchronous operation would have answered: the 201 success envelope, or the error
// envelope (no result, no consumption). The body is built once, so every attempt sends the same bytes.
// A callback that could not be delivered fails the run, so operators find it under status Failed.
import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  isCancellation,
  workflowInfo,
} from '@temporalio/workflow';
import { errorRegistry, innerError } from '../core/errors.ts';
import { type EnvelopeTail, errorEnvelope, generatedData, successEnvelope } from '../core/envelope.ts';
import { renderFailure } from '../core/failures.ts';
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

function envelopeTail(input: AsyncGenerateInput): EnvelopeTail {
  return {
    ...(input.envelope.externalContext !== undefined ? { externalContext: input.envelope.externalContext } : {}),
    origin: input.envelope.origin,
    dateTime: new Date().toISOString(),
    operationId: input.generate.run.operationId,
    userId: input.generate.run.userId,
  };
}

export async function generateDocumentAsync(input: AsyncGenerateInput): Promise<AsyncGenerateResult> {
  let body: Record<string, unknown>;
  let outcome: Omit<AsyncGenerateResult, 'callback'>;
  try {
    // Nobody waits on the answer: conversions queue on the office task queue (see steps.ts).
    const result = await runGeneration(input.generate, 'office');
    const data = generatedData(result);
    body = successEnvelope(201, data, envelopeTail(input), { consumption: result.consumption });
    outcome = { generated: true, document: data.document };
  } catch (err) {
    // A cancel that reached a step as its own failure (a conversion killed: "conversion cancelled") is the
    // run's cancellation all the same.
    if (isCancellation(err) || CancellationScope.current().consideredCancelled) {
      // Cancelled (from the Temporal UI or CLI): the run has ended its steps (scratch discarded, uploads
      // consumed); the caller still hears how it ended, then the run ends cancelled.
      const message = `the operation was cancelled before it finished (workflow ${workflowInfo().workflowId}); nothing was delivered`;
      const cancelled = errorEnvelope(errorRegistry.CANCELLED.status, message, [innerError('CANCELLED', message)], envelopeTail(input));
      await CancellationScope.nonCancellable(() => deliverCallback(input.callback, JSON.stringify(cancelled)));
      if (isCancellation(err)) throw err;
      throw new CancelledFailure(message);
    }
    // The API's rendering of a failed generation, as a plain envelope.
    const e = renderFailure(err instanceof ActivityFailure && err.cause ? err.cause : err, workflowInfo().workflowId);
    body = errorEnvelope(e.status, e.message, e.innerErrors, envelopeTail(input));
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
