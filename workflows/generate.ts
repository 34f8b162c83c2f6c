// generateDocument: resolve template -> load data -> merge -> [convert] -> measure -> deliver -> record ->
// consume the uploads, grouped into two local activities around the conversion (activities/generation.ts).
// Deterministic code only: no Node built-ins, no I/O; activities are imported as types.
import { ActivityFailure, ApplicationFailure, isCancellation, patched, uuid4, workflowInfo } from '@temporalio/workflow';
import type { BlobRef } from '../core/blob.ts';
import type { Delivered } from '../activities/deliver.ts';
import { displayUrl } from '../core/display-url.ts';
import { contentTypeOf } from '../core/formats.ts';
import { generatedConsumption } from '../core/envelope.ts';
import type { GenerateInput, GenerateResult } from '../core/generate.ts';
import { conversion, type ConversionQueue, generateConversion, movingSteps, steps } from './steps.ts';

export async function generateDocument(input: GenerateInput): Promise<GenerateResult> {
  return runGeneration(input, 'main');
}

/** The generation steps, shared by the synchronous workflow and the async one (which adds the callback). */
export async function runGeneration(input: GenerateInput, conversionQueue: ConversionQueue): Promise<GenerateResult> {
  const { workflowId, startTime, executionTimeoutMs } = workflowInfo();
  // A synchronous caller stops waiting when the run times out: conversions must not outlive that.
  const deadline = executionTimeoutMs ? startTime.getTime() + executionTimeoutMs : undefined;
  const budget = { subscriptionId: input.subscriptionId, ...(deadline ? { deadline } : {}) };
  const scratch: BlobRef[] = [];
  // Runs recorded before the steps were grouped (activities/generation.ts) replay the single steps.
  const grouped = patched('grouped-steps');
  let ended = false;
  try {
    // DriveB native merge: the template is copied and merged in place (no export, merge or upload).
    if (input.document.nativeMerge && patched('driveb-native-merge')) return await nativeMergeRun(input, input.document.nativeMerge, scratch);
    if (!grouped) return await singleSteps(input, conversionQueue, budget, scratch);
    const { relatedItems, ...main } = input.template;
    const connections = input.connections ? { connections: input.connections } : {};
    const from = input.template.fileFormat;
    const to = input.document.fileFormat;
    const prepared = await steps.prepareGeneration.executeWithOptions(
      { summary: `${templateSummary(input)}; data ${input.data.urn} (${input.data.loadMethod}); merge into ${from}` },
      [
        {
          template: { subscriptionId: input.subscriptionId, template: main, ...connections },
          ...(relatedItems?.length
            ? { related: relatedItems.map((item, i) => ({ name: item.name, subscriptionId: input.subscriptionId, template: item, field: `template.relatedItems[${i}]`, ...connections })) }
            : {}),
          data: { subscriptionId: input.subscriptionId, data: input.data, ...connections },
          merge: mergeOptions(input, workflowId),
        },
      ],
    );
    scratch.push(...prepared.scratch);
    let output = prepared.merged;
    if (to !== from) {
      output = await convertStep(input, generateConversion(conversionQueue), budget, output, workflowId);
      scratch.push(output);
    }
    // Chosen here, not in the activity, so that a retried delivery writes the same file.
    const urn = uuid4();
    const { document } = input;
    const deliver = { source: output, subscriptionId: input.subscriptionId, userId: input.userId, urn, document, ...connections };
    const end = { consume: { subscriptionId: input.subscriptionId, urns: uploadsOf(input) }, scratch };
    const record = {
      subscriptionId: input.subscriptionId,
      userId: input.userId,
      operationId: input.operationId,
      fileFormat: document.fileFormat,
      deliveryMethod: document.deliveryMethod,
    };
    const measure = { blob: output, fileFormat: to, ...budget };
    let finished: { delivered: Delivered; pages: number; documentGuid: string };
    if (document.deliveryMethod === 'Storage') {
      finished = await steps.finishGeneration.executeWithOptions(
        { summary: `count pages; deliver ${document.name} to Storage:${document.path}; record document and metering; consume uploads` },
        [{ measure, deliver, record, ...end }],
      );
    } else {
      // A drive delivery is a transfer of its own (a normal activity with heartbeats, steps.ts).
      const pages = await steps.measure.executeWithOptions({ summary: 'count pages' }, [measure]);
      const delivered = await movingSteps(document.deliveryMethod).deliver.executeWithOptions(
        { summary: `deliver ${document.name} to ${document.deliveryMethod}:${document.path}` },
        [deliver],
      );
      finished = await steps.finishGeneration.executeWithOptions({ summary: 'record document and metering; consume uploads' }, [
        { pages, delivered, record: { ...record, writeUrn: urn }, ...end },
      ]);
    }
    ended = true;
    return resultOf(input, finished.delivered, finished.documentGuid, finished.pages);
  } catch (err) {
    // Surface the activity's own failure (code + inner errors) rather than the ActivityFailure wrapper.
    if (err instanceof ActivityFailure && err.cause instanceof ApplicationFailure) throw err.cause;
    throw err;
  } finally {
    if (grouped) {
      if (!ended) await endGeneration(input, scratch);
    } else {
      if (scratch.length > 0) await steps.discardScratch.executeWithOptions({ summary: 'discard scratch files' }, [scratch]);
      await consumeUploads(input);
    }
  }
}

/** The steps one by one, as runs recorded before 'grouped-steps' made them (kept for their replay). */
async function singleSteps(input: GenerateInput, conversionQueue: ConversionQueue, budget: { subscriptionId: string; deadline?: number }, scratch: BlobRef[]): Promise<GenerateResult> {
  const { workflowId } = workflowInfo();
  const { relatedItems, ...main } = input.template;
  const connections = input.connections ? { connections: input.connections } : {};
  const template = await steps.resolveTemplate.executeWithOptions({ summary: templateSummary(input) }, [{ subscriptionId: input.subscriptionId, template: main, ...connections }]);
  if (template.key.startsWith('scratch/')) scratch.push(template);
  // Included templates ({>name}), one resolve each; runs recorded before relatedItems reached the
  // workflow never had any, so the patch only marks the change for the history.
  const related: Record<string, BlobRef> = {};
  if (relatedItems?.length && patched('related-items')) {
    for (const [i, item] of relatedItems.entries()) {
      related[item.name] = await steps.resolveTemplate.executeWithOptions({ summary: `included template ${item.name} (${item.loadMethod})` }, [
        { subscriptionId: input.subscriptionId, template: item, field: `template.relatedItems[${i}]`, ...connections },
      ]);
      if (related[item.name]!.key.startsWith('scratch/')) scratch.push(related[item.name]!);
    }
  }
  const data = await steps.loadData.executeWithOptions({ summary: `data ${input.data.urn} (${input.data.loadMethod})` }, [
    { subscriptionId: input.subscriptionId, data: input.data, ...connections },
  ]);
  scratch.push(data);
  const merged = await steps.merge.executeWithOptions({ summary: `merge into ${input.template.fileFormat}` }, [
    { ...mergeOptions(input, workflowId), template, data, ...(Object.keys(related).length > 0 ? { related } : {}) },
  ]);
  scratch.push(merged);
  let output = merged;
  if (input.document.fileFormat !== input.template.fileFormat) {
    output = await convertStep(input, conversion(conversionQueue), budget, merged, workflowId);
    scratch.push(output);
  }
  const pages = await steps.measure.executeWithOptions({ summary: 'count pages' }, [{ blob: output, fileFormat: input.document.fileFormat, ...budget }]);
  const urn = uuid4();
  const delivered = await movingSteps(input.document.deliveryMethod).deliver.executeWithOptions(
    { summary: `deliver ${input.document.name} to ${input.document.deliveryMethod}:${input.document.path}` },
    [{ source: output, subscriptionId: input.subscriptionId, userId: input.userId, urn, document: input.document, ...connections }],
  );
  return await recordGenerated(input, urn, delivered, pages);
}

function templateSummary(input: GenerateInput): string {
  const t = input.template;
  return t.url ? `template ${displayUrl(t.url)}` : `template ${t.name ?? t.urn} (${t.loadMethod})`;
}

function mergeOptions(input: GenerateInput, workflowId: string) {
  return {
    outputKey: `scratch/${workflowId}/merged.${input.template.fileFormat}`,
    contentType: contentTypeOf(input.template.fileFormat),
    locale: input.document.locale,
    timezone: input.document.timezone,
    ...(input.data.variables ? { variables: input.data.variables } : {}),
    ...(input.data.embedded ? { embedded: input.data.embedded } : {}),
    subscriptionId: input.subscriptionId,
  };
}

async function convertStep(input: GenerateInput, proxy: Pick<typeof steps, 'convertDocument'>, budget: { subscriptionId: string; deadline?: number }, source: BlobRef, workflowId: string): Promise<BlobRef> {
  const from = input.template.fileFormat;
  const to = input.document.fileFormat;
  const save = input.document.saveOptions ?? {};
  const embedded = input.data.embedded ? stringValues(JSON.parse(input.data.embedded) as Record<string, unknown>) : undefined;
  return proxy.convertDocument.executeWithOptions({ summary: `convert ${from} to ${to}${save.pdf?.conformance ? ` (${save.pdf.conformance})` : ''}` }, [
    {
      source,
      from,
      to,
      outputKey: `scratch/${workflowId}/output.${to}`,
      contentType: contentTypeOf(to),
      ...(save.pdf ? { pdf: save.pdf as never } : {}),
      ...(save.csv ? { csv: save.csv } : {}),
      ...(embedded ? { embedded } : {}),
      ...budget,
    },
  ]);
}

/** Native merge: load the data, then one step reads the template's tags (refusing, before anything is
 *  written, a tag the Docs/Sheets/Slides APIs cannot express), copies the template into the target folder,
 *  merges it and shares it; then the record. */
async function nativeMergeRun(input: GenerateInput, merge: { images: boolean }, scratch: BlobRef[]): Promise<GenerateResult> {
  const connections = input.connections ? { connections: input.connections } : {};
  const data = await steps.loadData.executeWithOptions({ summary: `data ${input.data.urn} (${input.data.loadMethod})` }, [
    { subscriptionId: input.subscriptionId, data: input.data, ...connections },
  ]);
  scratch.push(data);
  // Chosen here, not in the activity, so that a retried step finds the copy its earlier attempt made.
  const urn = uuid4();
  const { document } = input;
  const delivered = await movingSteps(document.deliveryMethod).nativeMerge.executeWithOptions(
    { summary: `native merge of ${input.template.loadMethod}:${input.template.urn} into ${document.deliveryMethod}:${document.path}` },
    [
      {
        subscriptionId: input.subscriptionId,
        userId: input.userId,
        urn,
        template: { urn: input.template.urn, loadMethod: input.template.loadMethod, fileFormat: input.template.fileFormat },
        data,
        images: merge.images,
        document: { name: document.name, path: document.path, deliveryMethod: document.deliveryMethod },
        ...(document.sharing ? { sharing: document.sharing } : {}),
        ...(document.conflict ? { conflict: document.conflict } : {}),
        ...connections,
      },
    ],
  );
  return recordGenerated(input, urn, delivered, delivered.pages);
}

/** The record step of the native-merge route and of runs recorded before the grouping (document record +
 *  metering, the write journal dropped) and the workflow's result. */
async function recordGenerated(input: GenerateInput, writeUrn: string, delivered: Delivered, pages: number): Promise<GenerateResult> {
  const { document } = input;
  const { uri, links, emails } = delivered;
  const { documentGuid } = await steps.record.executeWithOptions({ summary: 'record document and metering' }, [
    {
      subscriptionId: input.subscriptionId,
      userId: input.userId,
      operationId: input.operationId,
      urn: delivered.urn,
      title: delivered.name,
      path: delivered.path,
      fileFormat: document.fileFormat,
      deliveryMethod: document.deliveryMethod,
      consumption: generatedConsumption(pages),
      // Only the remote locations journal their writes (store/location-writes.ts).
      ...(document.deliveryMethod !== 'Storage' ? { writeUrn } : {}),
      ...(uri ? { url: uri } : {}),
      ...(links ? { links } : {}),
      ...(emails ? { emails } : {}),
    },
  ]);
  return resultOf(input, delivered, documentGuid, pages);
}

/** The workflow's result: the delivered file, with its uri and sharing links for a drive. */
function resultOf(input: GenerateInput, delivered: Delivered, documentGuid: string, pages: number): GenerateResult {
  const { document } = input;
  const { uri, links } = delivered;
  return {
    document: { deliveryMethod: document.deliveryMethod, name: delivered.name, fileFormat: document.fileFormat, urn: delivered.urn, ...(uri ? { uri } : {}), ...links },
    documentGuid,
    consumption: generatedConsumption(pages),
  };
}

/** The Storage uploads a request names (template, data, relatedItems): the generate consumes them. */
function uploadsOf(input: GenerateInput): string[] {
  return [
    ...(input.template.loadMethod === 'Storage' && input.template.urn ? [input.template.urn] : []),
    ...(input.data.loadMethod === 'Storage' && input.data.urn ? [input.data.urn] : []),
    ...(input.template.relatedItems ?? []).filter((r) => r.loadMethod === 'Storage' && r.urn).map((r) => r.urn!),
  ];
}

/** A run that did not finish (it failed, or native merge) consumes its uploads and discards its scratch
 *  here. If this step fails, the upload sweep removes them after their retention period. */
async function endGeneration(input: GenerateInput, scratch: BlobRef[]): Promise<void> {
  const urns = uploadsOf(input);
  if (urns.length === 0 && scratch.length === 0) return;
  try {
    await steps.endGeneration.executeWithOptions({ summary: `consume uploads${urns.length ? ` ${urns.join(', ')}` : ''}; discard scratch files` }, [
      { consume: { subscriptionId: input.subscriptionId, urns }, scratch },
    ]);
  } catch (err) {
    if (isCancellation(err)) throw err;
  }
}

/** Spec 3: a generate request that was accepted (its workflow ran) consumes the uploaded files it names,
 *  whether it succeeds or fails, and at whichever step it fails: even a request whose template does not
 *  resolve consumes its data file. A request rejected by validation before queueing started no workflow
 *  and consumes nothing. If this step fails the upload sweep removes the files after their retention period. */
async function consumeUploads(input: GenerateInput): Promise<void> {
  const urns = uploadsOf(input);
  if (urns.length === 0) return;
  try {
    await steps.consumeUploads.executeWithOptions({ summary: `remove consumed uploads ${urns.join(', ')}` }, [
      { subscriptionId: input.subscriptionId, urns },
    ]);
  } catch (err) {
    if (isCancellation(err)) throw err;
  }
}

/** Custom properties are text: numbers and booleans as written, anything else as JSON. */
function stringValues(o: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(o)) out[k] = typeof v === 'string' ? v : JSON.stringify(v);
  return out;
}
