// Callback delivery for the async generate (spec 6): the retry schedule lives here, as durable timers
// between attempts, and each attempt is one local activity with Temporal retries disabled, so the history
// (and the UI) shows every attempt and every wait with a summary. Deterministic code only.
//
// Local, not a normal activity: an attempt is one signed POST, and as a normal activity it cost the
// server a task dispatch and a second workflow task (bench/async-throughput.ts prints the CPU per
// generation). As a local activity the first attempt runs in the same workflow task as the generation.
// At least once per attempt (a worker that dies mid-attempt repeats it, with the same webhook-id), the
// waits are durable timers, and the attempt's outcome is in the history (a marker with the summary).
import { ActivityFailure, proxyLocalActivities, sleep } from '@temporalio/workflow';
import type { Activities, CallbackAttemptResult } from '../activities/index.ts';

export interface CallbackPlan {
  subscriptionId: string;
  /** For summaries only; the activity takes the URL from the sealed client token. */
  url: string;
  /** The sealed X-Client-Authorization value: the bearer (sub) stays encrypted in the history. */
  clientToken: string;
  /** Standard Webhooks message id, the same on every attempt. */
  webhookId: string;
  /** Delay before each attempt in ms; the first is before the first attempt. */
  scheduleMs: number[];
  outbound: { timeoutMs: number };
}

export interface CallbackOutcome {
  delivered: boolean;
  attempts: number;
  status?: number;
  reason: string;
}

function attemptProxy(timeoutMs: number) {
  return proxyLocalActivities<Activities>({ startToCloseTimeout: timeoutMs + 10_000, retry: { maximumAttempts: 1 } });
}

function human(ms: number): string {
  if (ms < 1_000) return `${ms} ms`;
  if (ms < 120_000) return `${Math.round(ms / 100) / 10} s`;
  if (ms < 7_200_000) return `${Math.round(ms / 6_000) / 10} min`;
  return `${Math.round(ms / 360_000) / 10} h`;
}

export async function deliverCallback(plan: CallbackPlan, body: string): Promise<CallbackOutcome> {
  const { callbackAttempt } = attemptProxy(plan.outbound.timeoutMs);
  const total = plan.scheduleMs.length;
  let retryAfterMs = 0;
  let last: CallbackAttemptResult = { outcome: 'retry', reason: 'no attempt was made' };
  for (let i = 0; i < total; i++) {
    // Retry-After can only lengthen the planned wait, never shorten it.
    const wait = Math.max(plan.scheduleMs[i] ?? 0, i === 0 ? 0 : retryAfterMs);
    if (wait > 0) {
      await sleep(wait, {
        summary: `wait ${human(wait)} before callback attempt ${i + 1}/${total}${retryAfterMs > (plan.scheduleMs[i] ?? 0) ? ' (Retry-After)' : ''}`,
      });
    }
    try {
      last = await callbackAttempt.executeWithOptions({ summary: `callback attempt ${i + 1}/${total}: POST ${plan.url}` }, [
        { subscriptionId: plan.subscriptionId, clientToken: plan.clientToken, webhookId: plan.webhookId, body, outbound: plan.outbound },
      ]);
    } catch (err) {
      // The attempt itself crashed or timed out: count it as a failed attempt.
      const cause = err instanceof ActivityFailure && err.cause ? err.cause : err;
      last = { outcome: 'retry', reason: cause instanceof Error ? cause.message : String(cause) };
    }
    const status = last.status !== undefined ? { status: last.status } : {};
    if (last.outcome === 'delivered') return { delivered: true, attempts: i + 1, ...status, reason: last.reason };
    if (last.outcome === 'stop') return { delivered: false, attempts: i + 1, ...status, reason: last.reason };
    retryAfterMs = last.retryAfterMs ?? 0;
  }
  return {
    delivered: false,
    attempts: total,
    ...(last.status !== undefined ? { status: last.status } : {}),
    reason: `gave up after ${total} attempts: ${last.reason}`,
  };
}
