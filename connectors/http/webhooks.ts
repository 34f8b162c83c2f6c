// Standard Webhooks signatures (https://www.standardwebhooks.com): every delivery carries
//   webhook-id         the message id, the same on every retry of one message (receivers deduplicate on it)
//   webhook-timestamp  seconds since the epoch when this attempt was sent
//   webhook-signature  `v1,<base64 HMAC-SHA256(secret, "<id>.<timestamp>.<body>")>`
// The secret is shown as `whsec_<base64 key>`; the HMAC key is the base64-decoded part. Receivers verify
// with any Standard Webhooks library, or with verifyWebhook below: recompute the HMAC over the raw body,
// compare in constant time, and reject timestamps more than five minutes away from their clock.
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';

export function webhookSecret(key: Uint8Array): string {
  return `${SECRET_PREFIX}${Buffer.from(key).toString('base64')}`;
}

function keyOf(secret: string): Buffer {
  return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
}

export function signWebhook(secret: string, id: string, timestampSeconds: number, body: string): string {
  const mac = createHmac('sha256', keyOf(secret)).update(`${id}.${timestampSeconds}.${body}`, 'utf8').digest('base64');
  return `v1,${mac}`;
}

/** Request headers with lower-case names (node:http's IncomingHttpHeaders fits). */
export type WebhookHeaders = Record<string, string | string[] | undefined>;

/** The receiver's side. The signature header may list several space-separated signatures (key rotation). */
export function verifyWebhook(secret: string, headers: WebhookHeaders, body: string, opts: { toleranceSeconds?: number; now?: number } = {}): boolean {
  const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
  const id = one(headers['webhook-id']);
  const ts = one(headers['webhook-timestamp']);
  const sigs = one(headers['webhook-signature']);
  if (!id || !ts || !sigs || !/^\d+$/.test(ts)) return false;
  const now = Math.floor((opts.now ?? Date.now()) / 1000);
  if (Math.abs(now - Number(ts)) > (opts.toleranceSeconds ?? 300)) return false;
  const expected = Buffer.from(signWebhook(secret, id, Number(ts), body).slice(3), 'base64');
  return sigs.split(' ').some((s) => {
    if (!s.startsWith('v1,')) return false;
    const given = Buffer.from(s.slice(3), 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
