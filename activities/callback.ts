// One delivery attempt of an async generate's callback (spec 6). The workflow owns the retry schedule and
// calls this once per attempt with Temporal retries disabled, so each attempt is one visible activity.
// The bearer token (the `sub` claim) is read here from the sealed client token: it never enters the
// workflow history in clear text, and neither does the webhook secret.
import { readClientToken, signingKeyById, webhookSecretFor } from '../security/client-token.ts';
import { OutboundBlockedError, OutboundError, safeFetch } from '../connectors/http/safe-fetch.ts';
import { signWebhook } from '../security/webhooks.ts';
import { ApiError } from '../core/errors.ts';
import { type ActivityDeps, outboundOf } from './deps.ts';

export interface CallbackAttemptInput {
  subscriptionId: string;
  /** The X-Client-Authorization value the request carried (encrypted; validated when it was accepted). */
  clientToken: string;
  webhookId: string;
  /** The exact JSON text to send; the same bytes on every attempt. */
  body: string;
  /** timeoutMs matches the workflow's activity timeout; the address policy is the worker's
   *  (ActivityDeps.outbound), never a value carried in the input. */
  outbound: { timeoutMs: number };
}

export interface CallbackAttemptResult {
  /** delivered: 2xx. retry: worth another attempt. stop: the receiver or the policy said no for good. */
  outcome: 'delivered' | 'retry' | 'stop';
  status?: number;
  /** From a Retry-After answer: wait at least this long before the next attempt. */
  retryAfterMs?: number;
  reason: string;
}

const MAX_RETRY_AFTER_MS = 24 * 3_600_000;

/** Retry-After as delta-seconds or an HTTP date, in milliseconds from now. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const v = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!v) return undefined;
  if (/^\d+$/.test(v)) return Math.min(Number(v) * 1000, MAX_RETRY_AFTER_MS);
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.min(Math.max(0, at - now), MAX_RETRY_AFTER_MS);
}

/** 2xx delivered; 3xx a failure (never followed); 410 stops; other 4xx stop except 408 and 429. */
export function classify(status: number): CallbackAttemptResult['outcome'] {
  if (status >= 200 && status < 300) return 'delivered';
  if (status === 410) return 'stop';
  if (status >= 400 && status < 500 && status !== 408 && status !== 429) return 'stop';
  return 'retry';
}

export function callbackActivity(deps: ActivityDeps) {
  return async function callbackAttempt(input: CallbackAttemptInput): Promise<CallbackAttemptResult> {
    let url: string;
    let bearer: string;
    let secret: string;
    try {
      const token = await readClientToken(deps.db, input.clientToken, { subscriptionId: input.subscriptionId, ignoreExpiry: true });
      const key = await signingKeyById(deps.db, token.kid);
      if (!key) throw new ApiError('X_CLIENT_AUTH_ERROR', 'the key of the client token is gone');
      url = token.callbackUrl;
      bearer = token.claims.sub;
      secret = webhookSecretFor(key, input.subscriptionId);
    } catch (err) {
      return { outcome: 'stop', reason: `the client token can no longer be read: ${(err as Error).message}` };
    }
    const timestamp = Math.floor(Date.now() / 1000);
    try {
      const res = await safeFetch(url, {
        method: 'POST',
        policy: outboundOf(deps).policy,
        timeoutMs: input.outbound.timeoutMs,
        maxResponseBytes: 1024 * 1024,
        redirect: 'manual',
        body: input.body,
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${bearer}`,
          'webhook-id': input.webhookId,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signWebhook(secret, input.webhookId, timestamp, input.body),
          'user-agent': 'docgen-webhooks',
        },
      });
      const outcome = classify(res.status);
      const retryAfterMs = outcome === 'retry' ? parseRetryAfter(res.headers['retry-after']) : undefined;
      const location =
        res.status >= 300 && res.status < 400 ? ` (redirect to ${String(res.headers.location ?? 'nowhere')} not followed)` : '';
      return {
        outcome,
        status: res.status,
        ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
        reason: `HTTP ${res.status}${location}`,
      };
    } catch (err) {
      // A refused address will not become acceptable by waiting; everything else (refused connection,
      // timeout, DNS failure) might.
      if (err instanceof OutboundBlockedError) return { outcome: 'stop', reason: err.message };
      if (err instanceof OutboundError && err.code === 'EBADURL') return { outcome: 'stop', reason: err.message };
      return { outcome: 'retry', reason: (err as Error).message || String(err) };
    }
  };
}
