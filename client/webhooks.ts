// Verifying docgen's callbacks on the receiving side (Standard Webhooks, https://www.standardwebhooks.com).
// Every delivery of an async generate's result carries
//   webhook-id         the message id, the same on every retry of one message: deduplicate on it
//   webhook-timestamp  seconds since the epoch when this attempt was sent
//   webhook-signature  `v1,<base64 HMAC-SHA256(key, "<id>.<timestamp>.<body>")>` (space-separated list)
// The secret is the `webhookSecret` returned with the client token (`whsec_<base64 key>`).
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Request headers with lower-case names (node:http's IncomingHttpHeaders fits). */
export type CallbackHeaders = Record<string, string | string[] | undefined>;

/**
 * True when `rawBody` (the exact bytes received, as text) was signed with `secret` and the timestamp is
 * within `toleranceSeconds` (default 5 minutes) of now. Compares in constant time.
 *
 *   if (!verifyCallback(secret, req.headers, rawBody)) return res.writeHead(401).end();
 *   if (alreadyProcessed(req.headers['webhook-id'])) return res.writeHead(200).end();
 */
export function verifyCallback(
  secret: string,
  headers: CallbackHeaders,
  rawBody: string,
  opts: { toleranceSeconds?: number; now?: number } = {},
): boolean {
  const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
  const id = one(headers['webhook-id']);
  const ts = one(headers['webhook-timestamp']);
  const signatures = one(headers['webhook-signature']);
  if (!id || !ts || !signatures || !/^\d+$/.test(ts)) return false;
  const now = Math.floor((opts.now ?? Date.now()) / 1000);
  if (Math.abs(now - Number(ts)) > (opts.toleranceSeconds ?? 300)) return false;
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${ts}.${rawBody}`, 'utf8').digest();
  return signatures.split(' ').some((s) => {
    if (!s.startsWith('v1,')) return false;
    const given = Buffer.from(s.slice(3), 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
