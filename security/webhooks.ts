// Standard Webhooks signatures (https://www.standardwebhooks.com): every delivery carries
//   webhook-id         the message id, the same on every retry of one message (receivers deduplicate on it)
//   webhook-timestamp  seconds since the epoch when this attempt was sent
//   webhook-signature  `v1,<base64 HMAC-SHA256(secret, "<id>.<timestamp>.<body>")>`
// The secret is shown as `whsec_<base64 key>`; the HMAC key is the base64-decoded part. Receivers verify
// with any Standard Webhooks library, or with the SDK's verifyCallback (client/webhooks.ts).
import { createHmac } from 'node:crypto';

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
