// The record of a written file, for generate and manage alike: the document record (a new one, or the
// source's carried over by a move) and the metering in one transaction, idempotent per operation; the
// write journal of a remote write dropped once recorded. And what an earlier execution recorded, for the
// lost-task recovery of both workflows.
import type { GenerateWarning } from '../core/generate.ts';
import type { Consumption } from '../core/envelope.ts';
import { isRemote, type RunContext } from '../core/run.ts';
import type { Target } from '../core/target.ts';
import { type FileRecord, insertFile } from '../store/files.ts';
import { forgetLocationWrites } from '../store/location-writes.ts';
import { recordBatchRowDocument } from '../store/records/batches.ts';
import { moveDocumentRecord, recordDocumentWithConsumption, recordedOperation } from '../store/records/documents.ts';
import { countMetering } from '../telemetry/metrics.ts';
import type { Written } from './deliver.ts';
import type { ActivityDeps } from './deps.ts';

export interface RecordInput {
  run: RunContext;
  /** The urn the workflow chose for the write: a remote write's journal entries (store/location-writes.ts)
   *  are dropped once recorded. */
  urn: string;
  /** The file as its location wrote it (its urn may be the location's own, e.g. a DriveA item id). */
  written: Pick<Written, 'urn' | 'name' | 'path' | 'uri' | 'links' | 'emails'>;
  target: Pick<Target, 'fileFormat' | 'deliveryMethod'>;
  consumption: Consumption[];
  /** The written file's record, when its location left it to this step (Storage: WriteRequest.recordLater);
   *  stored in the same statement as the document record where that is one statement. */
  file?: FileRecord;
  /** A move: the source's record (at this urn) is carried over to the written file. */
  movedFrom?: string;
  /** X-Email of a manage request (spec 5.2). */
  initiatorEmail?: string;
  /** A batch row's document: its entry and the batch's counters are recorded in the same statement. */
  batchRow?: { batchId: string; row: number; pages: number; warnings?: GenerateWarning[] };
}

/** A batch row's entry, as the record wrote it: false when an earlier attempt had; whether a cancel of the
 *  batch was asked for (read as the counters changed). */
export interface BatchRowRecorded {
  inserted: boolean;
  cancelRequested?: boolean;
}

/** What an earlier execution of an operation recorded at the urn its run chose. */
export interface RecordedOutcome {
  documentGuid: string;
  /** The written file's name and folder, as the record holds them. */
  name: string;
  path: string;
  consumption: Consumption[];
}

export function recordActivities(deps: ActivityDeps) {
  return {
    async record(input: RecordInput): Promise<{ documentGuid: string; batchRow?: BatchRowRecorded }> {
      const { run, written } = input;
      const document = {
        subscriptionId: run.subscriptionId,
        userId: run.userId,
        operationId: run.operationId,
        title: written.name,
        urn: written.urn,
        path: written.path,
        fileFormat: input.target.fileFormat,
        deliveryMethod: input.target.deliveryMethod,
        ...(written.uri ? { url: written.uri } : {}),
        ...(written.links ? { links: written.links } : {}),
        ...(written.emails ? { emails: written.emails } : {}),
        ...(input.initiatorEmail ? { initiatorEmail: input.initiatorEmail } : {}),
      };
      let batchRow: BatchRowRecorded | undefined;
      // A move's and a batch row's record are statements of their own: the file's record goes first.
      if (input.file && (input.movedFrom || input.batchRow)) await insertFile(deps.db, input.file);
      const { documentGuid, metered } = input.movedFrom
        ? await moveDocumentRecord(deps.db, input.movedFrom, document, input.consumption)
        : input.batchRow
          ? await recordBatchRowDocument(deps.db, document, input.consumption, {
              subscriptionId: run.subscriptionId,
              batchId: input.batchRow.batchId,
              row: input.batchRow.row,
              urn: written.urn,
              name: written.name,
              path: written.path,
              pages: input.batchRow.pages,
              ...(input.batchRow.warnings?.length ? { warnings: input.batchRow.warnings } : {}),
            }).then(({ inserted, cancelRequested, ...recorded }) => {
              batchRow = { inserted, ...(cancelRequested !== undefined ? { cancelRequested } : {}) };
              return recorded;
            })
          : await recordDocumentWithConsumption(deps.db, document, input.consumption, input.file);
      if (isRemote(run, input.target.deliveryMethod)) await forgetLocationWrites(deps.db, run.subscriptionId, input.urn);
      countMetering(metered);
      return { documentGuid, ...(batchRow ? { batchRow } : {}) };
    },

    /** The outcome an earlier execution of this operation recorded at `urn` (its workflow task was lost after
     *  the record: the worker killed, the task timed out), or null when it never recorded. */
    async recordedOutcome(input: {
      run: Pick<RunContext, 'subscriptionId' | 'operationId'>;
      urn: string;
    }): Promise<RecordedOutcome | null> {
      const found = await recordedOperation(deps.db, input.run.subscriptionId, input.run.operationId, input.urn);
      return found ? { documentGuid: found.documentGuid, name: found.title, path: found.path, consumption: found.consumption } : null;
    },
  };
}
