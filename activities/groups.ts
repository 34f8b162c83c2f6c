// A run's local steps grouped into as few local activities as its durability allows (workflows/). Every
// local activity costs the workflow a round of activation in its sandbox, and all of a run's local
// activities run inside one workflow task anyway: a task lost after some of them ran replays all of them,
// whether they are one step or eight. So the grouping changes what the history shows (one marker per
// group, whose summary names the steps) and not what a crash can do. The groups reuse the single steps, so
// errors, limits, idempotency and each step's duration metric are theirs:
//   prepareGeneration = resolve the template (and its relatedItems) -> load the data -> merge (generate); the
//                       merge's warnings (tags left empty for want of data) come back with the merged file;
//                       what is at a remote location the workflow reads first, as transfers (workflows/generate.ts)
//   writeAndRecord    = [count pages || write] -> record -> consume the uploads -> discard scratch (both)
//   endRun            = consume the uploads -> discard scratch (a run that failed before writeAndRecord)
import type { BlobRef } from '../core/blob.ts';
import { type Consumption, generatedConsumption, managedConsumption } from '../core/envelope.ts';
import type { MergeWarnings } from '../core/generate.ts';
import type { RunContext } from '../core/run.ts';
import type { Written, WriteInput } from './deliver.ts';
import type { LoadDataInput } from './load-data.ts';
import type { Merged, MergeInput } from './merge.ts';
import type { BatchRowRecorded, RecordedOutcome, RecordInput } from './record.ts';
import type { ResolveTemplateInput } from './resolve-template.ts';
import type { ConsumeUploadsInput } from './retention.ts';
import { timedStep } from '../telemetry/metrics.ts';

/** The single steps the groups are made of (activities/index.ts builds them once). */
export interface Steps {
  resolveTemplate(input: ResolveTemplateInput): Promise<BlobRef>;
  loadData(input: LoadDataInput): Promise<BlobRef>;
  merge(input: MergeInput): Promise<Merged>;
  measure(input: { blob: BlobRef; bytes?: Uint8Array; fileFormat: string; deadline?: number; subscriptionId?: string }): Promise<number>;
  deliver(input: WriteInput): Promise<Written>;
  undoWrite(input: Pick<WriteInput, 'run' | 'urn' | 'target'>): Promise<boolean>;
  record(input: RecordInput): Promise<{ documentGuid: string; batchRow?: BatchRowRecorded }>;
  recordedOutcome(input: { run: Pick<RunContext, 'subscriptionId' | 'operationId'>; urn: string }): Promise<RecordedOutcome | null>;
  consumeUploads(input: ConsumeUploadsInput): Promise<{ removed: string[] }>;
  discardScratch(refs: BlobRef[]): Promise<void>;
}

export interface PrepareInput {
  run: RunContext;
  template: ResolveTemplateInput['template'];
  /** Included templates ({>name}), each resolved at its own location; `field` names it in messages. */
  related?: { name: string; field: string; template: ResolveTemplateInput['template'] }[];
  data: LoadDataInput['data'];
  /** The merge, without the template, data and related references this step resolves. */
  merge: Omit<MergeInput, 'template' | 'data' | 'related'>;
  /** What the workflow read before this step, as transfers of their own (a template, related item or data
   *  file at a remote location): used as they are, not read again. */
  read?: { template?: BlobRef; related?: Record<string, BlobRef>; data?: BlobRef };
}

export interface Prepared extends MergeWarnings {
  merged: BlobRef;
  /** document.einvoice: the checked XML (activities/einvoice.ts). */
  einvoice?: BlobRef;
  /** What this step left in scratch (drive downloads, a GraphQL result, the merged file). */
  scratch: BlobRef[];
}

/** The end of a run: the uploads it consumes (spec 3) and its scratch files. */
export interface EndRunInput {
  run: Pick<RunContext, 'subscriptionId'>;
  uploads: string[];
  scratch: BlobRef[];
}

export interface WriteAndRecordInput extends WriteInput {
  /** The page count, when it was counted before (a remote target: before its transfer); else counted here. */
  pages?: number;
  /** The write, when it was a transfer of its own (a remote target); else written here. */
  written?: Written;
  /** What the record meters: a generate's pages, a manage's, or nothing (a batch's combined output: its rows
   *  were metered). */
  metering: 'generated' | 'managed' | 'none';
  /** A move: the source's record is carried over to the written file. */
  movedFrom?: string;
  /** X-Email of a manage request (spec 5.2). */
  initiatorEmail?: string;
  /** Once recorded, the run ends here: its uploads consumed, its scratch discarded. */
  end: Omit<EndRunInput, 'run'>;
  /** A batch row's document: its entry is recorded with the document (activities/record.ts). */
  batchRow?: { batchId: string; row: number };
}

export interface Recorded {
  written: Written;
  pages: number;
  documentGuid: string;
  consumption: Consumption[];
  /** A batch row's entry, when this call recorded the document (not when an earlier execution had). */
  batchRow?: BatchRowRecorded;
}

export function groupActivities(single: Steps, undoable: (method: string) => boolean) {
  // Each step keeps its own duration metric (docgen_activity_duration_seconds{activity="merge"}).
  const steps = Object.fromEntries(
    Object.entries(single).map(([name, run]) => [
      name,
      (input: never) => timedStep(name, () => (run as (i: never) => Promise<unknown>)(input)),
    ]),
  ) as unknown as Steps;

  /** Consumes the uploads, then discards the run's scratch files (in this order: the consumed uploads are
   *  the request's promise to the caller; scratch is only ours). */
  async function endRun(input: EndRunInput): Promise<void> {
    if (input.uploads.length > 0) await steps.consumeUploads({ subscriptionId: input.run.subscriptionId, urns: input.uploads });
    if (input.scratch.length > 0) await steps.discardScratch(input.scratch);
  }

  return {
    /** resolve template + relatedItems -> load data -> merge, one after another (a failure names the first
     *  input that failed, as the single steps did). */
    async prepareGeneration(input: PrepareInput): Promise<Prepared> {
      const { run, read = {} } = input;
      // What this step makes goes in `scratch` (the workflow holds what it read before).
      const scratch: BlobRef[] = [];
      try {
        const template = read.template ?? (await steps.resolveTemplate({ run, template: input.template }));
        // A template read from a drive is an export or download in scratch (an uploaded one is not).
        if (!read.template && template.key.startsWith('scratch/')) scratch.push(template);
        let related: Record<string, BlobRef> | undefined;
        for (const item of input.related ?? []) {
          const given = read.related?.[item.name];
          const ref = given ?? (await steps.resolveTemplate({ run, template: item.template, field: item.field }));
          if (!given && ref.key.startsWith('scratch/')) scratch.push(ref);
          (related ??= {})[item.name] = ref;
        }
        const data = read.data ?? (await steps.loadData({ run, data: input.data }));
        // A GraphQL result or a drive download is in scratch; an uploaded file is not (discard only removes scratch/ keys).
        if (!read.data) scratch.push(data);
        const { blob: merged, ...warnings } = await steps.merge({ ...input.merge, template, data, ...(related ? { related } : {}) });
        scratch.push(merged);
        // document.einvoice: the checked XML beside the merged file (the workflow hands it to the conversion).
        if (warnings.einvoice) scratch.push(warnings.einvoice);
        // The tags that rendered empty for want of data: the workflow's result lists them (result.data.warnings).
        return { merged, scratch, ...warnings };
      } catch (err) {
        // The workflow never learns what a failed step left in scratch (a download, a GraphQL result): it
        // goes now. A discard that fails is not the caller's error: the original failure stands.
        if (scratch.length > 0) await steps.discardScratch(scratch).catch(() => undefined);
        throw err;
      }
    },

    /** The one write-and-record of both workflows: [count pages || write] -> record (document + metering,
     *  one transaction, idempotent per operation; a remote write's journal dropped) -> end of the run. The
     *  write overlaps the count where its location can undo it (a count that fails leaves nothing written);
     *  elsewhere the count comes first. Run again after its workflow task was lost past the record (the
     *  file it counts is gone with the scratch it discarded), it answers with what it recorded then. */
    async writeAndRecord(input: WriteAndRecordInput): Promise<Recorded> {
      const {
        run,
        urn,
        target,
        end,
        written: transferred,
        pages: counted,
        metering,
        movedFrom,
        initiatorEmail,
        batchRow,
        ...write
      } = input;
      const writeInput: WriteInput = { run, urn, target, ...write };
      const meter = metering === 'generated' ? generatedConsumption : metering === 'managed' ? managedConsumption : () => [];
      // A run that ran consumes its uploads whatever its outcome: no need to wait for the count.
      const consumed =
        end.uploads.length > 0
          ? steps.consumeUploads({ subscriptionId: run.subscriptionId, urns: end.uploads })
          : Promise.resolve(undefined);
      consumed.catch(() => undefined);
      const counting =
        counted !== undefined
          ? Promise.resolve(counted)
          : steps.measure({ blob: input.source, fileFormat: target.fileFormat, subscriptionId: run.subscriptionId });
      const writing = transferred
        ? Promise.resolve(transferred)
        : undoable(target.deliveryMethod)
          ? steps.deliver(writeInput)
          : counting.then(() => steps.deliver(writeInput));
      const [pages, written] = await Promise.allSettled([counting, writing]);
      if (pages.status === 'rejected' || written.status === 'rejected') {
        const before = await steps.recordedOutcome({ run, urn });
        if (!before) {
          // Nothing recorded this write: a file written while the count failed goes with it.
          if (written.status === 'fulfilled' && !transferred) await steps.undoWrite(writeInput);
          throw pages.status === 'rejected' ? pages.reason : (written as PromiseRejectedResult).reason;
        }
        await endRun({ run, ...end });
        const recordedPages = before.consumption.find((c) => c.dimension === `pages-${metering}`)?.value ?? 0;
        return {
          written: { urn, name: before.name, path: before.path },
          pages: recordedPages,
          documentGuid: before.documentGuid,
          consumption: meter(recordedPages),
        };
      }
      const consumption = meter(pages.value);
      const recorded = await steps.record({
        run,
        urn,
        written: written.value,
        target,
        consumption,
        ...(movedFrom ? { movedFrom } : {}),
        ...(initiatorEmail ? { initiatorEmail } : {}),
        ...(batchRow ? { batchRow: { ...batchRow, pages: pages.value } } : {}),
      });
      await consumed;
      if (end.scratch.length > 0) await steps.discardScratch(end.scratch);
      return {
        written: written.value,
        pages: pages.value,
        documentGuid: recorded.documentGuid,
        consumption,
        ...(recorded.batchRow ? { batchRow: recorded.batchRow } : {}),
      };
    },

    endRun,
  };
}
