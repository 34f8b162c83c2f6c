// A run's local steps grouped into as few local activities as its durability allows (workflows/). Every
// local activity costs the workflow a round of activation in its sandbox, and all of a run's local
// activities run inside one workflow task anyway: a task lost after some of them ran replays all of them,
// whether they are one step or eight. So the grouping changes what the history shows (one marker per
// group, whose summary names the steps) and not what a crash can do. The groups reuse the single steps, so
// errors, limits, idempotency and each step's duration metric are theirs:
//   prepareGeneration = resolve the template (and its relatedItems) || load the data -> merge [-> the page
//                       count started for the write step: CountsAhead] (generate); the merge's warnings (tags
//                       left empty for want of data) come back with the merged file; what is at a remote
//                       location the workflow reads first, as transfers (workflows/generate.ts)
//   writeAndRecord    = [count pages (or take the count started ahead, or the conversion's) || write] -> record
//                       -> consume the uploads -> discard scratch (both)
//   endRun            = consume the uploads -> discard scratch (a run that failed before writeAndRecord)
import type { BlobRef } from '../core/blob.ts';
import { type Consumption, generatedConsumption, managedConsumption } from '../core/envelope.ts';
import { bytesFormatOf } from '../core/formats.ts';
import type { GenerateWarning, MergeWarnings } from '../core/generate.ts';
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
  merge: Omit<MergeInput, 'template' | 'data' | 'related' | 'einvoiceTemplate'>;
  /** What the workflow read before this step, as transfers of their own (a template, related item or data
   *  file at a remote location): used as they are, not read again. */
  read?: { template?: BlobRef; related?: Record<string, BlobRef>; data?: BlobRef };
  /** The merged file is delivered as it is (no conversion), in this format, by this worker's write step
   *  (a local target): its page count starts as soon as it is merged, and the write step takes it (see
   *  CountsAhead). Absent from inputs recorded before it. */
  countAhead?: string;
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
  /** A batch row's document: its entry is recorded with the document (activities/record.ts), with the row's
   *  warnings (its e-invoice's EINVOICE_RULE). */
  batchRow?: { batchId: string; row: number; warnings?: GenerateWarning[] };
}

export interface Recorded {
  written: Written;
  pages: number;
  documentGuid: string;
  consumption: Consumption[];
  /** A batch row's entry, when this call recorded the document (not when an earlier execution had). */
  batchRow?: BatchRowRecorded;
}

/** The page counts prepareGeneration started for the write step that follows it in the same workflow task,
 *  on this worker: the count (LibreOffice's layout of a docx, about as long as the rest of the generate) runs
 *  while the prepare step returns, the workflow schedules the write step and that step starts, instead of
 *  after. Keyed by the merged file's key, checksum and format, so the write step takes only the count of the
 *  very bytes it delivers; the promise is the measure step's own (the same limits, PAGE_COUNT rules and
 *  failures). A write step on another worker (the task lost and run again elsewhere), or an attempt after a
 *  first one took it, counts again; a count nobody takes is dropped after a while. Nothing of it is durable:
 *  it is a cache of a result the write step would compute from the same bytes. */
class CountsAhead {
  private readonly counts = new Map<string, { pages: Promise<number>; timer: NodeJS.Timeout }>();

  private readonly keepMs: number;

  constructor(keepMs = 120_000) {
    this.keepMs = keepMs;
  }

  start(blob: BlobRef, fileFormat: string, count: () => Promise<number>): void {
    const key = CountsAhead.key(blob, fileFormat);
    this.drop(key);
    const pages = count();
    // Taken or not, its failure is the write step's to report: never an unhandled rejection here.
    pages.catch(() => undefined);
    const timer = setTimeout(() => this.counts.delete(key), this.keepMs);
    timer.unref();
    this.counts.set(key, { pages, timer });
  }

  take(blob: BlobRef, fileFormat: string): Promise<number> | undefined {
    const key = CountsAhead.key(blob, fileFormat);
    const found = this.counts.get(key);
    this.drop(key);
    return found?.pages;
  }

  private drop(key: string): void {
    const found = this.counts.get(key);
    if (!found) return;
    clearTimeout(found.timer);
    this.counts.delete(key);
  }

  private static key(blob: BlobRef, fileFormat: string): string {
    return `${blob.key}\n${blob.sha256}\n${fileFormat}`;
  }
}

/** Formats whose page count LibreOffice lays out (converter/pages.ts): the ones worth counting ahead. */
const LAID_OUT = new Set(['docx', 'xlsx']);

export function groupActivities(single: Steps, undoable: (method: string) => boolean) {
  const ahead = new CountsAhead();
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
        // The template, its related items and the data are read at once (each a lookup and a file read),
        // and a failure names the first that failed in this order, as when they were read one by one. A
        // GraphQL query (a request to the caller's endpoint) is made only once the templates resolved.
        // What a read made in scratch is listed even when another failed, so that it is discarded.
        // document.einvoice.template (an upload), resolved like the others, after them.
        const xmlTemplate = input.merge.einvoice?.template;
        const templates = [
          { given: read.template, read: () => steps.resolveTemplate({ run, template: input.template }) },
          ...(input.related ?? []).map((item) => ({
            given: read.related?.[item.name],
            read: () => steps.resolveTemplate({ run, template: item.template, field: item.field }),
          })),
          ...(xmlTemplate
            ? [
                {
                  given: undefined,
                  read: () =>
                    steps.resolveTemplate({ run, template: { ...xmlTemplate, fileFormat: '' }, field: 'document.einvoice.template' }),
                },
              ]
            : []),
        ];
        const readData = () => (read.data ? Promise.resolve(read.data) : steps.loadData({ run, data: input.data }));
        const dataFirst = input.data.loadMethod !== 'GraphQL' ? readData() : undefined;
        dataFirst?.catch(() => undefined);
        const resolved = await Promise.allSettled(templates.map((t) => (t.given ? Promise.resolve(t.given) : t.read())));
        resolved.forEach((r, i) => {
          // A template read from a drive is an export or download in scratch (an uploaded one is not).
          if (r.status === 'fulfilled' && !templates[i]!.given && r.value.key.startsWith('scratch/')) scratch.push(r.value);
        });
        const loaded = await Promise.allSettled([dataFirst ?? (resolved.every((r) => r.status === 'fulfilled') ? readData() : undefined)]);
        // A GraphQL result or a drive download is in scratch; an uploaded file is not (discard only removes scratch/ keys).
        const dataRead = loaded[0]!;
        if (dataRead.status === 'fulfilled' && dataRead.value && !read.data) scratch.push(dataRead.value);
        const failed = [...resolved, dataRead].find((r): r is PromiseRejectedResult => r.status === 'rejected');
        if (failed) throw failed.reason;
        const template = (resolved[0] as PromiseFulfilledResult<BlobRef>).value;
        let related: Record<string, BlobRef> | undefined;
        for (const [i, item] of (input.related ?? []).entries())
          (related ??= {})[item.name] = (resolved[i + 1] as PromiseFulfilledResult<BlobRef>).value;
        const data = (dataRead as PromiseFulfilledResult<BlobRef>).value;
        const einvoiceTemplate = xmlTemplate ? (resolved.at(-1) as PromiseFulfilledResult<BlobRef>).value : undefined;
        const { blob: merged, ...warnings } = await steps.merge({
          ...input.merge,
          template,
          data,
          ...(related ? { related } : {}),
          ...(einvoiceTemplate ? { einvoiceTemplate } : {}),
        });
        scratch.push(merged);
        // document.einvoice: the checked XML beside the merged file (the workflow hands it to the conversion).
        if (warnings.einvoice) scratch.push(warnings.einvoice);
        const countAs = input.countAhead;
        if (countAs !== undefined && LAID_OUT.has(bytesFormatOf(countAs))) {
          ahead.start(merged, countAs, () => steps.measure({ blob: merged, fileFormat: countAs, subscriptionId: run.subscriptionId }));
        }
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
      // A location that keeps a record of its files (Storage) hands the written file's record to the record
      // step, which stores it with the document record and the metering in one statement (the file resolves
      // from then on), instead of a statement of its own before it.
      const writeInput: WriteInput = { run, urn, target, ...write, recordLater: true };
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
          : (ahead.take(input.source, target.fileFormat) ??
            steps.measure({ blob: input.source, fileFormat: target.fileFormat, subscriptionId: run.subscriptionId }));
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
      const { file, ...writtenFile } = written.value;
      const recorded = await steps.record({
        run,
        urn,
        written: writtenFile,
        ...(file ? { file } : {}),
        target,
        consumption,
        ...(movedFrom ? { movedFrom } : {}),
        ...(initiatorEmail ? { initiatorEmail } : {}),
        ...(batchRow ? { batchRow: { ...batchRow, pages: pages.value } } : {}),
      });
      await consumed;
      if (end.scratch.length > 0) await steps.discardScratch(end.scratch);
      return {
        written: writtenFile,
        pages: pages.value,
        documentGuid: recorded.documentGuid,
        consumption,
        ...(recorded.batchRow ? { batchRow: recorded.batchRow } : {}),
      };
    },

    endRun,
  };
}
