import { safeFetch } from '../connectors/http/safe-fetch.ts';
import type { OutboundDeps } from './deps.ts';

/** Largest image the engine accepts (engine/images.ts). */
const MAX_IMAGE_BYTES = 20 * 1024 * 1024;

/** `{%logo}` with an http(s) URL: fetched through the guarded client with the worker's allow-list, the
 *  size and time limits, redirects re-checked hop by hop, and an image/* answer required. A failure
 *  becomes a template error at the tag. */
export function imageFetcher(outbound: OutboundDeps): (url: string) => Promise<Uint8Array> {
  return async (url) => {
    const res = await safeFetch(url, {
      policy: outbound.policy,
      timeoutMs: outbound.timeoutMs,
      maxResponseBytes: Math.min(outbound.maxResponseBytes, MAX_IMAGE_BYTES),
      redirect: 'follow',
      maxRedirects: 3,
      headers: { accept: 'image/*' },
    });
    if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
    const type =
      String(res.headers['content-type'] ?? '')
        .split(';')[0]
        ?.trim()
        .toLowerCase() ?? '';
    if (!type.startsWith('image/')) throw new Error(`the answer is ${type || 'untyped'}, not an image`);
    return new Uint8Array(res.body);
  };
}
