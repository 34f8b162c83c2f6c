// A generate's steps grouped into as few local activities as its durability allows (workflows/generate.ts).
// Every local activity costs the workflow a round of activation in its sandbox, and all of a generate's
// local activities run inside one workflow task anyway: a task lost after some of them ran replays all of
// them, whether they are one step or eight. So the grouping changes what the history shows (one marker per
// group, whose summary names the steps) and not what a crash can do. The groups reuse the single steps, so
// errors, limits and idempotency are theirs:
//   prepareGeneration = resolve the template (and its relatedItems) -> load the data -> merge
//   finishGeneration  = [count pages -> write to Storage] -> record -> consume the uploads -> discard scratch
//   endGeneration     = consume the uploads -> discard scratch (for a run that failed before finishing)
import type { BlobRef } from '../core/blob.ts';
import type { Delivered, DeliverInput } from './deliver.ts';
import type { MergeInput } from './merge.ts';
import type { RecordInput } from './record.ts';
import type { ResolveTemplateInput } from './resolve-template.ts';
import type { ConsumeUploadsInput } from './retention.ts';
import { generatedConsumption } from '../core/envelope.ts';
import type { GenerateInput } from '../core/generate.ts';
import type { recordedOperation } from '../store/records/documents.ts';
import { timedStep } from '../telemetry/metrics.ts';

/** The single steps the groups are made of (activities/index.ts builds them once). */
export interface Steps {
  resolveTemplate(input: ResolveTemplateInput): Promise<BlobRef>;
  loadData(input: Pick<GenerateInput, 'subscriptionId' | 'data' | 'connections'>): Promise<BlobRef>;
  merge(input: MergeInput): Promise<BlobRef>;
  measure(input: { blob: BlobRef; fileFormat: string; deadline?: number; subscriptionId?: string }): Promise<number>;
  deliver(input: DeliverInput): Promise<Delivered>;
  record(input: RecordInput): Promise<{ documentGuid: string }>;
  consumeUploads(input: ConsumeUploadsInput): Promise<{ removed: string[] }>;
  discardScratch(refs: BlobRef[]): Promise<void>;
}

export interface PrepareInput {
  template: ResolveTemplateInput;
  /** Included templates ({>name}), each resolved at its own location. */
  related?: (ResolveTemplateInput & { name: string })[];
  data: Pick<GenerateInput, 'subscriptionId' | 'data' | 'connections'>;
  /** The merge, without the template, data and related references this step resolves. */
  merge: Omit<MergeInput, 'template' | 'data' | 'related'>;
}

export interface Prepared {
  merged: BlobRef;
  /** What this step left in scratch (drive downloads, a GraphQL result, the merged file). */
  scratch: BlobRef[];
}

export interface EndRunInput {
  consume: ConsumeUploadsInput;
  scratch: BlobRef[];
}

export interface FinishInput extends EndRunInput {
  /** Count the pages of `blob` (when the count is not given). */
  measure?: { blob: BlobRef; fileFormat: string; deadline?: number; subscriptionId?: string };
  pages?: number;
  /** Write to Storage here (when the delivery is not given: a drive delivery is its own step). */
  deliver?: DeliverInput;
  delivered?: Delivered;
  /** The record, less what this step finds out (urn, name, path, links, the page count). */
  record: Omit<RecordInput, 'urn' | 'title' | 'path' | 'url' | 'links' | 'emails' | 'consumption'>;
}

export interface Finished {
  delivered: Delivered;
  pages: number;
  documentGuid: string;
}

/** The outcome an earlier execution of this operation recorded at `urn` (store/records/documents.ts). */
export type RecordedLookup = (subscriptionId: string, operationId: string, urn: string) => ReturnType<typeof recordedOperation>;

export function generationActivities(single: Steps, recorded: RecordedLookup) {
  // Each step keeps its own duration metric (docgen_activity_duration_seconds{activity="merge"}).
  const steps = Object.fromEntries(
    Object.entries(single).map(([name, run]) => [name, (input: never) => timedStep(name, () => (run as (i: never) => Promise<unknown>)(input))]),
  ) as unknown as Steps;
  /** Consumes the uploads, then discards the run's scratch files (in this order: the consumed uploads are
   *  the request's promise to the caller; scratch is only ours). */
  async function endGeneration(input: EndRunInput): Promise<void> {
    await steps.consumeUploads(input.consume);
    if (input.scratch.length > 0) await steps.discardScratch(input.scratch);
  }

  return {
    /** resolve template + relatedItems -> load data -> merge, one after another (a failure names the first
     *  input that failed, as the single steps did). */
    async prepareGeneration(input: PrepareInput): Promise<Prepared> {
      const scratch: BlobRef[] = [];
      try {
        const template = await steps.resolveTemplate(input.template);
        // A template read from a drive is an export or download in scratch (an uploaded one is not).
        if (template.key.startsWith('scratch/')) scratch.push(template);
        let related: Record<string, BlobRef> | undefined;
        for (const item of input.related ?? []) {
          const { name, ...resolve } = item;
          const ref = await steps.resolveTemplate(resolve);
          if (ref.key.startsWith('scratch/')) scratch.push(ref);
          (related ??= {})[name] = ref;
        }
        const data = await steps.loadData(input.data);
        // A GraphQL result is written to scratch; an uploaded file is not (discard only removes scratch/ keys).
        scratch.push(data);
        const merged = await steps.merge({ ...input.merge, template, data, ...(related ? { related } : {}) });
        scratch.push(merged);
        return { merged, scratch };
      } catch (err) {
        // The workflow never learns what a failed step left in scratch (a download, a GraphQL result): it
        // goes now. A discard that fails is not the caller's error: the original failure stands.
        if (scratch.length > 0) await steps.discardScratch(scratch).catch(() => undefined);
        throw err;
      }
    },

    /** [count pages -> write to Storage] -> record (document + metering, one transaction, idempotent per
     *  operation) -> consume the uploads -> discard scratch. The count comes before the write, so a count
     *  that fails leaves nothing written. */
    async finishGeneration(input: FinishInput): Promise<Finished> {
      let pages: number | undefined;
      let delivered: Delivered | undefined;
      try {
        pages = input.pages ?? (input.measure ? await steps.measure(input.measure) : undefined);
        delivered = input.delivered ?? (input.deliver ? await steps.deliver(input.deliver) : undefined);
      } catch (err) {
        // Run again after its workflow task was lost past the end (a converted file's task: this step
        // alone), the file it counts is gone with the scratch it discarded. What it recorded then stands.
        const before = input.deliver ? await recorded(input.record.subscriptionId, input.record.operationId, input.deliver.urn) : undefined;
        if (!before) throw err;
        const counted = before.consumption.find((c) => c.dimension === 'pages-generated')?.value ?? 0;
        await endGeneration(input);
        return { delivered: { urn: input.deliver!.urn, name: before.title, path: before.path }, pages: counted, documentGuid: before.documentGuid };
      }
      if (pages === undefined) throw new Error('finishGeneration needs the page count or what to measure');
      if (!delivered) throw new Error('finishGeneration needs the delivery or what to deliver');
      const { uri, links, emails } = delivered;
      const { documentGuid } = await steps.record({
        ...input.record,
        urn: delivered.urn,
        title: delivered.name,
        path: delivered.path,
        consumption: generatedConsumption(pages),
        ...(uri ? { url: uri } : {}),
        ...(links ? { links } : {}),
        ...(emails ? { emails } : {}),
      });
      await endGeneration(input);
      return { delivered, pages, documentGuid };
    },

    endGeneration,
  };
}
