// generateDocument: resolve the template -> load the data -> merge -> [convert] -> count pages || write ->
// record -> consume the uploads, in as few local activities as its durability allows (activities/groups.ts):
// prepareGeneration, [convertDocument], writeAndRecord. Deterministic code only: no Node built-ins, no I/O;
// activities are imported as types.
import { ActivityFailure, ApplicationFailure, isCancellation, uuid4, workflowInfo } from '@temporalio/workflow';
import type { Recorded, WriteAndRecordInput } from '../activities/groups.ts';
import type { BlobRef } from '../core/blob.ts';
import { displayUrl } from '../core/display-url.ts';
import { contentTypeOf } from '../core/formats.ts';
import type { GenerateInput, GenerateResult, MergeWarnings } from '../core/generate.ts';
import { customProperties } from '../core/save-options.ts';
import { conversion, type ConversionQueue, movingSteps, steps, writeAndRecord } from './steps.ts';

export async function generateDocument(input: GenerateInput): Promise<GenerateResult> {
  return runGeneration(input, 'local');
}

/** The generation, shared by the synchronous workflow and the async one (which adds the callback). A run
 *  that does not get to its record consumes its uploads and discards its scratch on the way out. */
export async function runGeneration(input: GenerateInput, conversionQueue: ConversionQueue): Promise<GenerateResult> {
  const scratch: BlobRef[] = [];
  let ended = false;
  try {
    const { recorded, warnings } = input.document.nativeMerge
      ? { recorded: await nativeMerge(input, input.document.nativeMerge, scratch), warnings: {} }
      : await generate(input, conversionQueue, scratch);
    ended = true;
    return resultOf(input, recorded, warnings);
  } catch (err) {
    // Surface the activity's own failure (code + inner errors) rather than the ActivityFailure wrapper.
    if (err instanceof ActivityFailure && err.cause instanceof ApplicationFailure) throw err.cause;
    throw err;
  } finally {
    if (!ended) await endRun(input, scratch);
  }
}

/** The document recorded, and the merge's warnings (the tags that rendered empty for want of data). */
async function generate(input: GenerateInput, conversionQueue: ConversionQueue, scratch: BlobRef[]): Promise<{ recorded: Recorded; warnings: MergeWarnings }> {
  const { merged, scratch: prepareScratch, ...warnings } = await steps.prepareGeneration.executeWithOptions({ summary: prepareSummary(input) }, [prepareInput(input)]);
  scratch.push(...prepareScratch);
  let output = merged;
  if (input.document.fileFormat !== input.template.fileFormat) {
    output = await convert(input, conversionQueue, output);
    scratch.push(output);
  }
  // Chosen here, not in an activity, so that a retried write finds or overwrites the same file.
  const urn = uuid4();
  const recorded = await writeAndRecord(writeInput(input, urn, output, scratch), { write: 'deliver', what: 'record document and metering; consume uploads' });
  return { recorded, warnings };
}

/** Native merge (DriveB): load the data, then one step reads the template's tags (refusing, before anything
 *  is written, a tag the Docs/Sheets/Slides APIs cannot express), copies the template into the target
 *  folder, merges and shares it; then the record. */
async function nativeMerge(input: GenerateInput, merge: { images: boolean }, scratch: BlobRef[]): Promise<Recorded> {
  const { run, template, document } = input;
  const data = await steps.loadData.executeWithOptions({ summary: dataSummary(input) }, [{ run, data: input.data }]);
  scratch.push(data);
  // Chosen here, not in the activity, so that a retried step finds the copy its earlier attempt made.
  const urn = uuid4();
  const written = await movingSteps(run, template.loadMethod).nativeMerge.executeWithOptions(
    { summary: `native merge of ${template.loadMethod}:${template.urn} into ${document.deliveryMethod}:${document.path}` },
    [{ run, urn, template: { urn: template.urn, loadMethod: template.loadMethod, fileFormat: template.fileFormat }, data, images: merge.images, target: document }],
  );
  return writeAndRecord({ ...writeInput(input, urn, data, scratch), written, pages: written.pages }, { what: 'record document and metering; consume uploads' });
}

function prepareInput(input: GenerateInput) {
  const { run, template, document, data } = input;
  const { relatedItems, ...main } = template;
  return {
    run,
    template: main,
    ...(relatedItems?.length ? { related: relatedItems.map((item, i) => ({ name: item.name, field: `template.relatedItems[${i}]`, template: item })) } : {}),
    data,
    merge: {
      outputKey: `scratch/${workflowInfo().workflowId}/merged.${template.fileFormat}`,
      contentType: contentTypeOf(template.fileFormat),
      locale: document.locale,
      timezone: document.timezone,
      ...(data.variables ? { variables: data.variables } : {}),
      ...(data.embedded ? { embedded: data.embedded } : {}),
      subscriptionId: run.subscriptionId,
      ...(document.strict ? { strict: true } : {}),
    },
  };
}

function convert(input: GenerateInput, queue: ConversionQueue, source: BlobRef): Promise<BlobRef> {
  const from = input.template.fileFormat;
  const to = input.document.fileFormat;
  const { pdf, csv } = input.document.saveOptions ?? {};
  const deadline = deadlineOf();
  return conversion(queue).convertDocument.executeWithOptions({ summary: `convert ${from} to ${to}${pdf?.conformance ? ` (${pdf.conformance})` : ''}` }, [
    {
      source,
      from,
      to,
      outputKey: `scratch/${workflowInfo().workflowId}/output.${to}`,
      contentType: contentTypeOf(to),
      ...(pdf ? { pdf } : {}),
      ...(csv ? { csv } : {}),
      ...(input.data.embedded ? { embedded: customProperties(input.data.embedded) } : {}),
      subscriptionId: input.run.subscriptionId,
      ...(deadline ? { deadline } : {}),
    },
  ]);
}

function writeInput(input: GenerateInput, urn: string, source: BlobRef, scratch: BlobRef[]): WriteAndRecordInput {
  const deadline = deadlineOf();
  return { run: input.run, urn, source, target: input.document, metering: 'generated', end: { uploads: input.uploads, scratch: [...scratch] }, ...(deadline ? { deadline } : {}) };
}

/** When a synchronous caller stops waiting (the run's execution timeout): conversions and counts must not
 *  outlive it. */
function deadlineOf(): number | undefined {
  const { startTime, executionTimeoutMs } = workflowInfo();
  return executionTimeoutMs ? startTime.getTime() + executionTimeoutMs : undefined;
}

function prepareSummary(input: GenerateInput): string {
  const t = input.template;
  const template = t.url ? `template ${displayUrl(t.url)}` : `template ${t.name ?? t.urn} (${t.loadMethod})`;
  return `${template}; ${dataSummary(input)}; merge into ${t.fileFormat}`;
}

function dataSummary(input: GenerateInput): string {
  return `data ${input.data.urn} (${input.data.loadMethod})`;
}

/** The workflow's result: the written file, with its uri and sharing links at a drive, and the merge's
 *  warnings when it has any. */
function resultOf(input: GenerateInput, recorded: Recorded, warnings: MergeWarnings): GenerateResult {
  const { document } = input;
  const { uri, links } = recorded.written;
  return {
    document: { deliveryMethod: document.deliveryMethod, name: recorded.written.name, fileFormat: document.fileFormat, urn: recorded.written.urn, ...(uri ? { uri } : {}), ...links },
    documentGuid: recorded.documentGuid,
    consumption: recorded.consumption,
    ...warnings,
  };
}

/** Spec 3: a generate request that was accepted (its workflow ran) consumes the uploads it names, whether
 *  it succeeds or fails, at whichever step it fails; a request refused before queueing consumes nothing.
 *  If this step fails, the upload sweep removes them after their retention period. */
async function endRun(input: GenerateInput, scratch: BlobRef[]): Promise<void> {
  const { uploads } = input;
  if (uploads.length === 0 && scratch.length === 0) return;
  try {
    await steps.endRun.executeWithOptions({ summary: `consume uploads${uploads.length ? ` ${uploads.join(', ')}` : ''}; discard scratch files` }, [
      { run: input.run, uploads, scratch },
    ]);
  } catch (err) {
    if (isCancellation(err)) throw err;
  }
}
