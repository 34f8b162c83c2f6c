import type { BlobRef } from '../connectors/storage/blob-store.ts';
import { safeFetch } from '../connectors/http/safe-fetch.ts';
import { templateVariables, type Variable } from '../core/generate.ts';
import { innerError } from '../core/errors.ts';
import { render, TemplateError } from '../engine/index.ts';
import { type ActivityDeps, type OutboundDeps, outboundOf } from './deps.ts';
import { callerFailure } from '../core/failures.ts';

export interface MergeInput {
  template: BlobRef;
  data: BlobRef;
  /** Where the merged file goes (a scratch key owned by this workflow run). */
  outputKey: string;
  contentType: string;
  locale: string;
  timezone: string;
  variables?: Variable[];
  embedded?: string;
}

export function mergeActivity(deps: ActivityDeps) {
  /** Renders template + data with the engine; template problems become one 400 with an entry per problem. */
  return async function merge(input: MergeInput): Promise<BlobRef> {
    const [template, dataBytes] = await Promise.all([deps.blobs.get(input.template.key), deps.blobs.get(input.data.key)]);
    const data: unknown = JSON.parse(Buffer.from(dataBytes).toString('utf8'));
    let output: Uint8Array;
    try {
      output = await render(template, data, {
        locale: input.locale,
        timezone: input.timezone,
        ...(input.variables ? { variables: templateVariables(input.variables) ?? [] } : {}),
        ...(input.embedded ? { embedded: input.embedded } : {}),
        fetchImage: imageFetcher(outboundOf(deps)),
      });
    } catch (err) {
      if (err instanceof TemplateError) {
        const inner = err.errors.map((e) => {
          const where = e.location ? ` (at ${[e.location.part, e.location.paragraph, e.location.cell, e.location.offset].filter((x) => x !== undefined).join(':')})` : '';
          return { ...innerError('TEMPLATE_ERROR', `${e.message}${where}`), code: 'TEMPLATE_ERROR', eventId: e.id };
        });
        throw callerFailure('TEMPLATE_ERROR', `the template cannot be rendered: ${err.message}`, inner);
      }
      throw err;
    }
    const put = await deps.blobs.put(input.outputKey, output);
    return { key: input.outputKey, sha256: put.sha256, size: put.size, contentType: input.contentType };
  };
}

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
    const type = String(res.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
    if (!type.startsWith('image/')) throw new Error(`the answer is ${type || 'untyped'}, not an image`);
    return new Uint8Array(res.body);
  };
}
