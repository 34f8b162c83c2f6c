// generateDocument: resolve the template -> load the data -> merge -> [convert] -> count pages || write ->
// record -> consume the uploads, in as few local activities as its durability allows (activities/groups.ts):
// [reads at remote locations, as transfers], prepareGeneration, [convertDocument], writeAndRecord. Deterministic code only: no Node built-ins, no I/O;
// activities are imported as types.
import { ActivityFailure, ApplicationFailure, CancellationScope, patched, uuid4, workflowInfo } from '@temporalio/workflow';
import type { Converted } from '../activities/convert.ts';
import type { PrepareInput, Recorded, WriteAndRecordInput } from '../activities/groups.ts';
import type { BlobRef } from '../core/blob.ts';
import { displayUrl } from '../core/display-url.ts';
import { generatedConsumption } from '../core/envelope.ts';
import { contentTypeOf } from '../core/formats.ts';
import type { GenerateInput, GenerateResult, MergeWarnings } from '../core/generate.ts';
import { isRemote } from '../core/run.ts';
import { customProperties } from '../core/save-options.ts';
import { conversion, type ConversionQueue, movingSteps, steps, transfers, writeAndRecord } from './steps.ts';

type PrepareRead = NonNullable<PrepareInput['read']>;

/** Patch (ARCHITECTURE.md "Changing a workflow"): what a run reads at a remote location is a transfer of its
 *  own before the prepare step. Runs started before it read inside the local prepare step (its old branch;
 *  replay fixture test/fixtures/histories/before-remote-reads-as-transfers.json). Asked only by a run that
 *  reads at a remote location, so other runs carry no marker. */
const REMOTE_READS = 'remote-reads-as-transfers';

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
async function generate(
  input: GenerateInput,
  conversionQueue: ConversionQueue,
  scratch: BlobRef[],
): Promise<{ recorded: Recorded; warnings: MergeWarnings }> {
  // The document's urn: the run's first random draw, so the same value in every execution of the run, and
  // chosen here, not in an activity, so that a retried write finds or overwrites the same file.
  const urn = uuid4();
  const read = readsRemotely(input) && patched(REMOTE_READS) ? await readRemote(input, scratch) : undefined;
  let output: BlobRef;
  let warnings: MergeWarnings;
  // A conversion to pdf or csv counts its output's pages from the bytes it holds (activities/convert.ts):
  // the write step meters them instead of reading the file again. Deterministic on replay: the count is
  // in the conversion's recorded result (absent from results recorded before it, when the write step counts).
  let pages: number | undefined;
  try {
    const {
      merged,
      scratch: prepareScratch,
      einvoice,
      ...merge
    } = await steps.prepareGeneration.executeWithOptions({ summary: prepareSummary(input) }, [
      { ...prepareInput(input), ...(read ? { read } : {}), ...countAhead(input) },
    ]);
    scratch.push(...prepareScratch);
    warnings = merge;
    output = merged;
    if (input.document.fileFormat !== input.template.fileFormat) {
      // Listed before the conversion runs: a run cancelled or failed meanwhile discards what it wrote.
      const slot = scratch.push(outputOf(input)) - 1;
      const { pages: counted, ...converted } = await convert(input, conversionQueue, output, einvoice);
      output = converted;
      pages = counted;
      scratch[slot] = output;
    }
  } catch (err) {
    // The files the transfers read are in the history, not read again: a workflow task lost after its
    // local write and record had discarded them (the worker killed, the task timed out) fails here when
    // the next worker runs it again. That execution answers with what the lost one recorded (its merge's
    // warnings are not recorded: none are listed).
    const stepFailed = err instanceof ActivityFailure || err instanceof ApplicationFailure;
    if (read && stepFailed && !isRemote(input.run, input.document.deliveryMethod)) {
      const recorded = await recordedBefore(input, urn);
      if (recorded) return { recorded, warnings: {} };
    }
    throw err;
  }
  const recorded = await writeAndRecord(
    { ...writeInput(input, urn, output, scratch), ...(pages !== undefined ? { pages } : {}) },
    {
      write: 'deliver',
      what: 'record document and metering; consume uploads',
    },
  );
  return { recorded, warnings };
}

/** Whether the run reads a template, related item or data file at a remote location. */
function readsRemotely({ run, template, data }: GenerateInput): boolean {
  return (
    (!template.url && isRemote(run, template.loadMethod)) ||
    (template.relatedItems ?? []).some((i) => isRemote(run, i.loadMethod)) ||
    isRemote(run, data.loadMethod)
  );
}

/** The outcome an earlier execution of this run recorded at `urn` (its record and metering), or undefined. */
async function recordedBefore(input: GenerateInput, urn: string): Promise<Recorded | undefined> {
  const { run, document } = input;
  const found = await steps.recordedOutcome.executeWithOptions(
    { summary: `find the record an earlier execution made at ${document.deliveryMethod}:${urn}` },
    [{ run, urn }],
  );
  if (!found) return undefined;
  const pages = found.consumption.find((c) => c.dimension === 'pages-generated')?.value ?? 0;
  return {
    written: { urn, name: found.name, path: found.path },
    pages,
    documentGuid: found.documentGuid,
    consumption: generatedConsumption(pages),
  };
}

/** The template, related items and data that are at a remote location (a drive), read before the local
 *  prepare step by transfers of their own: normal activities that heartbeat, so a large file on a slow link
 *  is bounded by a transfer's limits (15 minutes an attempt) rather than a local step's (60 s), and a worker
 *  that dies mid-download is noticed and the read retried on another. Read at once; a failure names the
 *  first of them that failed, in the order the prepare step reads them. Undefined when none is remote. */
async function readRemote(input: GenerateInput, scratch: BlobRef[]): Promise<PrepareRead | undefined> {
  const { run, template, data } = input;
  const reads: { put: (ref: BlobRef, read: PrepareRead) => void; ref: Promise<BlobRef> }[] = [];
  const { relatedItems, name: _name, ...main } = template;
  if (!template.url && isRemote(run, template.loadMethod)) {
    const ref = transfers.resolveTemplate.executeWithOptions(
      { summary: `read template ${template.name ?? template.urn} from ${template.loadMethod}` },
      [{ run, template: main }],
    );
    reads.push({ ref, put: (r, read) => (read.template = r) });
  }
  for (const [i, item] of (relatedItems ?? []).entries()) {
    if (!isRemote(run, item.loadMethod)) continue;
    const { name, ...related } = item;
    const ref = transfers.resolveTemplate.executeWithOptions({ summary: `read related template ${name} from ${item.loadMethod}` }, [
      { run, template: related, field: `template.relatedItems[${i}]` },
    ]);
    reads.push({ ref, put: (r, read) => ((read.related ??= {})[name] = r) });
  }
  if (isRemote(run, data.loadMethod)) {
    reads.push({
      ref: transfers.loadData.executeWithOptions({ summary: `read ${dataSummary(input)}` }, [{ run, data }]),
      put: (r, read) => (read.data = r),
    });
  }
  if (reads.length === 0) return undefined;
  const settled = await Promise.allSettled(reads.map((r) => r.ref));
  const read: PrepareRead = {};
  settled.forEach((s, i) => {
    if (s.status === 'fulfilled') {
      reads[i]!.put(s.value, read);
      scratch.push(s.value);
    }
  });
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) throw failed.reason;
  return read;
}

/** Native merge (DriveB): load the data, then one step reads the template's tags (refusing, before anything
 *  is written, a tag the Docs/Sheets/Slides APIs cannot express), copies the template into the target
 *  folder, merges and shares it; then the record. */
async function nativeMerge(input: GenerateInput, merge: { images: boolean }, scratch: BlobRef[]): Promise<Recorded> {
  const { run, template, document } = input;
  // Data at a remote location is a transfer (since REMOTE_READS); an upload or a GraphQL result a local step.
  const load = isRemote(run, input.data.loadMethod) && patched(REMOTE_READS) ? transfers : steps;
  const data = await load.loadData.executeWithOptions({ summary: dataSummary(input) }, [{ run, data: input.data }]);
  scratch.push(data);
  // Chosen here, not in the activity, so that a retried step finds the copy its earlier attempt made.
  const urn = uuid4();
  const written = await movingSteps(run, template.loadMethod).nativeMerge.executeWithOptions(
    { summary: `native merge of ${template.loadMethod}:${template.urn} into ${document.deliveryMethod}:${document.path}` },
    [
      {
        run,
        urn,
        template: { urn: template.urn, loadMethod: template.loadMethod, fileFormat: template.fileFormat },
        data,
        images: merge.images,
        target: document,
      },
    ],
  );
  return writeAndRecord(
    { ...writeInput(input, urn, data, scratch), written, pages: written.pages },
    { what: 'record document and metering; consume uploads' },
  );
}

function prepareInput(input: GenerateInput) {
  const { run, template, document, data } = input;
  const { relatedItems, ...main } = template;
  return {
    run,
    template: main,
    ...(relatedItems?.length
      ? { related: relatedItems.map((item, i) => ({ name: item.name, field: `template.relatedItems[${i}]`, template: item })) }
      : {}),
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
      ...(document.saveOptions?.pdf?.accessible ? { accessible: true } : {}),
      ...(document.einvoice ? { einvoice: document.einvoice } : {}),
    },
  };
}

/** The merged file is delivered as it is to a local target, whose write step runs on this worker right
 *  after the prepare step: its page count may start as soon as it is merged (activities/groups.ts
 *  CountsAhead). An input of the step, not a command: runs recorded before it replay as they ran. */
function countAhead({ run, template, document }: GenerateInput): { countAhead?: string } {
  return document.fileFormat === template.fileFormat && !isRemote(run, document.deliveryMethod) ? { countAhead: document.fileFormat } : {};
}

/** Where the conversion writes its output (no checksum yet: a reference for discarding it). */
function outputOf(input: GenerateInput): BlobRef {
  const to = input.document.fileFormat;
  return { key: `scratch/${workflowInfo().workflowId}/output.${to}`, sha256: '', size: 0, contentType: contentTypeOf(to) };
}

function convert(input: GenerateInput, queue: ConversionQueue, source: BlobRef, xml: BlobRef | undefined): Promise<Converted> {
  const from = input.template.fileFormat;
  const to = input.document.fileFormat;
  const { pdf, csv } = input.document.saveOptions ?? {};
  const option = input.document.einvoice;
  const einvoice = option && xml ? { xml, option, name: input.document.name } : undefined;
  return conversion(queue).convertDocument.executeWithOptions(
    {
      summary: `convert ${from} to ${to}${pdf?.conformance ? ` (${pdf.conformance})` : ''}${option ? `; e-invoice ${option.standard} ${option.profile}` : ''}`,
    },
    [
      {
        source,
        from,
        to,
        outputKey: `scratch/${workflowInfo().workflowId}/output.${to}`,
        contentType: contentTypeOf(to),
        ...(pdf ? { pdf } : {}),
        ...(pdf?.accessible ? accessibleText(input.document) : {}),
        ...(csv ? { csv } : {}),
        ...(einvoice ? { einvoice } : {}),
        ...(input.data.embedded ? { embedded: customProperties(input.data.embedded) } : {}),
        subscriptionId: input.run.subscriptionId,
        ...(input.run.callerDeadline !== undefined ? { abandonAt: input.run.callerDeadline } : {}),
      },
    ],
  );
}

/** An accessible pdf's title when the template has none (the document's name without its extension), and
 *  its language when the template sets none (document.locale). */
function accessibleText(document: { name: string; locale?: string }): { title: string; language?: string } {
  const title = document.name.replace(/\.pdf$/i, '').trim() || document.name;
  return { title, ...(document.locale ? { language: document.locale } : {}) };
}

function writeInput(input: GenerateInput, urn: string, source: BlobRef, scratch: BlobRef[]): WriteAndRecordInput {
  return {
    run: input.run,
    urn,
    source,
    target: input.document,
    metering: 'generated',
    end: { uploads: input.uploads, scratch: [...scratch] },
  };
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
    document: {
      deliveryMethod: document.deliveryMethod,
      name: recorded.written.name,
      fileFormat: document.fileFormat,
      urn: recorded.written.urn,
      ...(uri ? { uri } : {}),
      ...links,
    },
    documentGuid: recorded.documentGuid,
    consumption: recorded.consumption,
    ...warnings,
  };
}

/** Spec 3: a generate request that was accepted (its workflow ran) consumes the uploads it names, whether
 *  it succeeds, fails (at whichever step) or is cancelled; a request refused before queueing consumes
 *  nothing. If this step fails, the upload sweep removes them after their retention period. */
async function endRun(input: GenerateInput, scratch: BlobRef[]): Promise<void> {
  const { uploads } = input;
  if (uploads.length === 0 && scratch.length === 0) return;
  try {
    // A cancelled run ends too: outside the cancellation, or the step would be cancelled before it ran.
    await CancellationScope.nonCancellable(() =>
      steps.endRun.executeWithOptions(
        { summary: `consume uploads${uploads.length ? ` ${uploads.join(', ')}` : ''}; discard scratch files` },
        [{ run: input.run, uploads, scratch }],
      ),
    );
  } catch {
    // The original outcome stands; the upload sweep and the scratch sweep remove what this step could not.
  }
}
