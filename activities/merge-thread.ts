// The body of one merge thread (activities/merge-pool.ts): renders template + data with the engine,
// one job at a time, under the heap cap the pool gave the thread. Nothing here may outlive a job.
import { createHash } from 'node:crypto';
import { parentPort, workerData } from 'node:worker_threads';
import { outboundPolicy } from '../connectors/http/address-policy.ts';
import { checkConversionCost } from '../engine/cost.ts';
import { renderParts, TemplateError, zipParts } from '../engine/index.ts';
import { readZip } from '../engine/zip.ts';
import { ConvertError } from '../converter/errors.ts';
import { sanitizeParts } from '../converter/sanitize.ts';
import type { TemplateLimits } from '../engine/index.ts';
import { imageFetcher } from './image-fetcher.ts';
import type { MergeThreadJob, MergeThreadReply } from './merge-pool.ts';

const { limits, outbound } = workerData as {
  limits: TemplateLimits;
  outbound: { allow: string[]; timeoutMs: number; maxResponseBytes: number };
};
const fetchImage = imageFetcher({
  policy: outboundPolicy(outbound.allow),
  timeoutMs: outbound.timeoutMs,
  maxResponseBytes: outbound.maxResponseBytes,
});

/** Templates whose own content passed the cost limits (by sha-256): a batch's rows, and a template's every
 *  generate, check it once per thread. Bounded. */
const passedTemplates = new Set<string>();

/** The templates this thread was sent, by the pool's number for their array (merge-pool.ts sends a template
 *  once per thread), with their SHA-256 (hashed here once): the most recently used, up to 16 or 64 MB. A job
 *  naming one no longer here is answered `missingTemplate`. */
const templates = new Map<number, { bytes: Uint8Array; hash: string }>();
let templateBytes = 0;
const MAX_TEMPLATES = 16;
const MAX_TEMPLATE_BYTES = 64 * 1024 * 1024;

function templateOf(job: MergeThreadJob): { bytes: Uint8Array; hash: string } | undefined {
  const id = job.templateId;
  let held = templates.get(id);
  if (held) templates.delete(id);
  else if (job.template) {
    held = { bytes: job.template, hash: createHash('sha256').update(job.template).digest('base64') };
    templateBytes += job.template.byteLength;
  } else return undefined;
  templates.set(id, held);
  for (const [key, t] of templates) {
    if (templates.size <= MAX_TEMPLATES && templateBytes <= MAX_TEMPLATE_BYTES) break;
    if (key === id) continue;
    templates.delete(key);
    templateBytes -= t.bytes.byteLength;
  }
  return held;
}

parentPort?.on('message', (job: MergeThreadJob) => {
  // The merged document's memory moves to the pool's thread (transferred, not copied) when the array owns
  // all of its buffer.
  void run(job).then((reply) =>
    parentPort?.postMessage(
      reply,
      reply.ok &&
        reply.output.byteOffset === 0 &&
        reply.output.byteLength === reply.output.buffer.byteLength &&
        reply.output.buffer instanceof ArrayBuffer
        ? [reply.output.buffer]
        : [],
    ),
  );
});
// The engine is loaded: the pool may start the clock of a job.
parentPort?.postMessage({ ready: true });

async function run(job: MergeThreadJob): Promise<MergeThreadReply> {
  const held = templateOf(job);
  if (!held) return { id: job.id, ok: false, missingTemplate: true };
  const { bytes: template, hash } = held;
  try {
    // What LibreOffice would have to lay out (pages, paragraph length, table rows, cells, image pixels),
    // refused here, before a conversion or page count holds an instance for it: first the template's own
    // content (a template already past a limit is not rendered: its render would cost this thread seconds
    // and a large heap for a document refused anyway), then the merged document.
    if (!passedTemplates.has(hash)) {
      checkConversionCost(template, limits);
      if (passedTemplates.size >= 1_000) passedTemplates.clear();
      passedTemplates.add(hash);
    }
    const data: unknown = JSON.parse(Buffer.from(job.data).toString('utf8'));
    // The render's parts are judged before they are zipped: the sanitizer and the estimate read the rendered
    // parts as they are in hand and the template's own as its entries, without reading the package back.
    const { parts, warnings } = await renderParts(template, data, { ...job.options, limits, fetchImage, templateHash: hash });
    // Every merged document, delivered as it is or converted, leaves without what would make Word, Excel or
    // LibreOffice fetch, run or link something when it is opened: DDE fields and formulas, INCLUDE* and LINK
    // fields, external templates (attachedTemplate), images and objects; a macro or a DDE link refuses it
    // (converter/sanitize.ts, the same rules as before a conversion).
    const sanitized = sanitizeParts(parts, 'merged document');
    const clean = sanitized.entries ?? parts;
    const output = zipParts(clean, limits);
    // The package limits (parts, part sizes, total size, names), as a conversion reading these bytes would
    // hold them: its central directory only, nothing inflated.
    readZip(output, limits);
    const cost = checkConversionCost(clean, limits);
    // What both passes found travels with the document: the converter takes it as vetted (converter/vetted.ts).
    return { id: job.id, ok: true, output, warnings, vetted: { pages: cost.pages, embedsFonts: sanitized.embedsFonts } };
  } catch (err) {
    if (err instanceof TemplateError) return { id: job.id, ok: false, templateErrors: err.errors, message: err.message };
    if (err instanceof ConvertError && err.code === 'BAD_INPUT') {
      return { id: job.id, ok: false, templateErrors: [{ id: 'unsafe_content', message: err.message }], message: err.message };
    }
    return { id: job.id, ok: false, message: err instanceof Error ? err.message : String(err) };
  }
}
