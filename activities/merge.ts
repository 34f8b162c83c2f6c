import { Context } from '@temporalio/activity';
import type { BlobRef } from '../connectors/storage/blob-store.ts';
import { MAX_GENERATE_WARNINGS, type MergeWarnings, templateVariables, type Variable } from '../core/generate.ts';
import { innerError } from '../core/errors.ts';
import { templateFormat, type TemplateErrorEntry } from '../engine/index.ts';
import { mergeWarnings, templateFailure } from './template-errors.ts';
import { ALL_FORMATS, bytesFormatOf, FORMATS, otherKindMessage } from '../core/formats.ts';
import { type ActivityDeps, outboundOf } from './deps.ts';
import { callerFailure } from '../core/failures.ts';
import { accessibilityProblems } from '../converter/accessible.ts';
import type { EInvoiceOption } from '../core/einvoice.ts';
import { eInvoiceXml } from './einvoice.ts';
import { holdBytes } from './held.ts';
import { MergeLimitError, type MergeOutput, MergePool, MergeTemplateError } from './merge-pool.ts';

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
  /** Whose merge this is: waiting merges are served round-robin per subscription. Absent in histories
   *  recorded before it existed: the template's storage key tells it then. */
  subscriptionId?: string;
  /** Templates for the include directive ({>name}), by name. */
  related?: Record<string, BlobRef>;
  /** document.options.strict: a tag whose data is missing fails the merge (TEMPLATE_ERROR). */
  strict?: boolean;
  /** document.options.accessible: what a screen reader would miss is a warning (an error under strict). */
  accessible?: boolean;
  /** document.einvoice: the XML is made from the data and checked first (activities/einvoice.ts), and
   *  written beside the merged file (`<outputKey>.einvoice.xml`). */
  einvoice?: EInvoiceOption;
  /** document.einvoice.template: the XML template, resolved as the template is (activities/groups.ts). */
  einvoiceTemplate?: BlobRef;
}

/** The merged file, and the tags that rendered empty for want of data (the first MAX_GENERATE_WARNINGS:
 *  they travel in the workflow's history). */
export interface Merged extends MergeWarnings {
  blob: BlobRef;
  /** document.einvoice: the checked XML, for the conversion to embed or deliver. */
  einvoice?: BlobRef;
}

let sharedPool: MergePool | undefined;

/** The pool of a worker started without one (tests, scripts): defaults, outbound settings of the deps. */
function poolOf(deps: ActivityDeps): MergePool {
  if (deps.merge) return deps.merge;
  const o = outboundOf(deps);
  sharedPool ??= new MergePool({
    outbound: { allow: [...o.policy.entries], timeoutMs: o.timeoutMs, maxResponseBytes: o.maxResponseBytes },
  });
  return sharedPool;
}

export function mergeActivity(deps: ActivityDeps) {
  /** Renders template + data in a merge thread (activities/merge-pool.ts). Template problems become one
   *  400 TEMPLATE_ERROR with an entry per problem (with `strict`, each tag whose data is missing is one);
   *  a limit (size, elements, loop iterations, output, memory, time) a 400 TEMPLATE_TOO_COMPLEX naming it.
   *  Both are final: retrying cannot help. Without `strict`, the tags that rendered empty come back as
   *  warnings. */
  return async function merge(input: MergeInput): Promise<Merged> {
    const [template, data] = await Promise.all([deps.blobs.get(input.template.key), deps.blobs.get(input.data.key)]);
    const related = input.related
      ? Object.fromEntries(
          await Promise.all(Object.entries(input.related).map(async ([name, ref]) => [name, await deps.blobs.get(ref.key)] as const)),
        )
      : undefined;
    refuseOtherKind(template, input.contentType);
    // An invalid e-invoice is refused before the merge costs anything.
    const invoice = input.einvoice
      ? await eInvoiceXml(input.einvoice, data, input.einvoiceTemplate ? await deps.blobs.get(input.einvoiceTemplate.key) : undefined, {
          locale: input.locale,
          timezone: input.timezone,
          ...(input.strict ? { strict: true } : {}),
        })
      : undefined;
    const tenant = input.subscriptionId ?? /^subscriptions\/([^/]+)\//.exec(input.template.key)?.[1] ?? 'unknown';
    const signal = cancellationSignal();
    const { output, warnings } = await mergeBytes(
      deps,
      tenant,
      template,
      data,
      {
        locale: input.locale,
        timezone: input.timezone,
        ...(input.variables ? { variables: input.variables } : {}),
        ...(input.embedded ? { embedded: input.embedded } : {}),
        ...(related ? { relatedItems: related } : {}),
        ...(input.strict ? { strict: true } : {}),
        ...(input.accessible ? { accessible: true } : {}),
      },
      signal,
    );
    // A cancelled run's merge writes nothing into the scratch its end discards.
    const put = await deps.blobs.put(input.outputKey, output, signal ? { signal } : {});
    // The next step on this worker (a count ahead, a sync conversion) takes these bytes, vetted (activities/held.ts).
    holdBytes({ key: input.outputKey, sha256: put.sha256 }, output);
    const merged = mergeWarnings(warnings);
    if (!invoice) return { blob: { key: input.outputKey, sha256: put.sha256, size: put.size, contentType: input.contentType }, ...merged };
    const xmlKey = `${input.outputKey}.einvoice.xml`;
    const xml = await deps.blobs.put(xmlKey, new TextEncoder().encode(invoice.xml));
    const listed = [...(merged.warnings ?? []), ...invoice.warnings];
    return {
      blob: { key: input.outputKey, sha256: put.sha256, size: put.size, contentType: input.contentType },
      ...(listed.length > 0 ? { warnings: listed.slice(0, MAX_GENERATE_WARNINGS) } : {}),
      ...(merged.warningsOmitted ? { warningsOmitted: merged.warningsOmitted } : {}),
      einvoice: { key: xmlKey, sha256: xml.sha256, size: xml.size, contentType: 'application/xml' },
    };
  };
}

/**
 * The merge writes the kind `template.fileFormat` declares (its content type is the merge's): a package of
 * another kind (a Word document declared xlsx) would be delivered under the wrong name, and no application
 * opens it. Final, like a template error.
 */
function refuseOtherKind(template: Uint8Array, contentType: string): void {
  const declared = ALL_FORMATS.find((f) => FORMATS[f].contentType === contentType);
  if (declared === undefined) return;
  const expected = bytesFormatOf(declared);
  const actual = templateFormat(template);
  if (actual === undefined || actual === expected) return;
  const message = otherKindMessage(declared, actual);
  throw callerFailure('INVALID_TEMPLATE_FORMAT', message, [innerError('INVALID_TEMPLATE_FORMAT', message)]);
}

/** One merge in the worker's merge pool (a batch's rows call it with bytes they hold), with the failures a
 *  caller is told: TEMPLATE_ERROR (an entry per problem) or TEMPLATE_TOO_COMPLEX, both final. */
export async function mergeBytes(
  deps: ActivityDeps,
  tenant: string,
  template: Uint8Array,
  data: Uint8Array,
  options: {
    locale: string;
    timezone: string;
    variables?: Variable[];
    embedded?: string;
    relatedItems?: Record<string, Uint8Array>;
    strict?: boolean;
    accessible?: boolean;
  },
  signal?: AbortSignal,
): Promise<MergeOutput> {
  const merged = await mergeInPool(deps, tenant, template, data, options, signal);
  return options.accessible ? withAccessibility(merged, options.strict === true) : merged;
}

/**
 * An accessible pdf's merge (document.options.accessible): each picture without alternative text and each
 * Word table without a header row in the merged document (converter/accessible.ts), after the engine's
 * warnings; under strict, one 400 TEMPLATE_ERROR listing them, and nothing is delivered.
 */
function withAccessibility(merged: MergeOutput, strict: boolean): MergeOutput {
  const format = templateFormat(merged.output);
  if (format === undefined) return merged;
  const found = accessibilityProblems(merged.output, format);
  if (found.length === 0) return merged;
  if (strict) {
    const inner = found.map((p) => ({ ...innerError('TEMPLATE_ERROR', p.message), eventId: p.code }));
    throw callerFailure('TEMPLATE_ERROR', `the document would not be accessible: ${found.map((p) => p.message).join('; ')}`, inner);
  }
  const entries: TemplateErrorEntry[] = found.map((p) => ({ id: p.code, message: p.message, location: { part: p.part }, tag: '' }));
  return { output: merged.output, warnings: [...merged.warnings, ...entries] };
}

async function mergeInPool(
  deps: ActivityDeps,
  tenant: string,
  template: Uint8Array,
  data: Uint8Array,
  options: Parameters<typeof mergeBytes>[4],
  signal?: AbortSignal,
): Promise<MergeOutput> {
  try {
    return await poolOf(deps).merge(
      tenant,
      template,
      data,
      {
        locale: options.locale,
        timezone: options.timezone,
        ...(options.variables ? { variables: templateVariables(options.variables) ?? [] } : {}),
        ...(options.embedded ? { embedded: options.embedded } : {}),
        ...(options.relatedItems ? { relatedItems: options.relatedItems } : {}),
        ...(options.strict ? { strict: true } : {}),
      },
      signal,
    );
  } catch (err) {
    if (err instanceof MergeLimitError) throw callerFailure('TEMPLATE_TOO_COMPLEX', `the template cannot be merged: ${err.message}`);
    if (err instanceof MergeTemplateError) throw templateFailure(err, 'the template');
    throw err;
  }
}

/** The activity's cancellation (workflow ended, local activity timed out); none outside an activity. */
function cancellationSignal(): AbortSignal | undefined {
  try {
    return Context.current().cancellationSignal;
  } catch {
    return undefined;
  }
}
