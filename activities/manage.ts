// The manage workflow's steps. Locations are reached through the registry (connectors/registry.ts), the
// same one generate uses: a location that can read, write or remove becomes a valid loadMethod /
// deliveryMethod of manage without touching the workflow.
import type { FoundFile, Written } from '../connectors/location.ts';
import type { BlobRef } from '../core/blob.ts';
import type { Consumption } from '../core/envelope.ts';
import { isOfficeFormat } from '../core/formats.ts';
import type { ManageInput, ManageOperation } from '../core/manage.ts';
import { callerFailure } from '../core/failures.ts';
import { setOfficeCustomProperties } from '../converter/index.ts';
import { markDocumentDeleted, moveDocumentRecord, type NewDocument, recordConsumption, recordDocumentWithConsumption, recordedOperation } from '../store/records/documents.ts';
import type { ResolvedActivityDeps } from './deps.ts';
import { countMetering } from '../telemetry/metrics.ts';
import { atLocation, contextOf } from './locations.ts';
import { forgetLocationWrites } from '../store/location-writes.ts';
import { scratchRunId } from './scratch.ts';

export type SourceFile = FoundFile;

export interface ManageWriteInput {
  subscriptionId: string;
  userId: string;
  urn: string;
  source: BlobRef;
  target: NonNullable<ManageInput['target']>;
  embedded?: Record<string, string>;
  connections?: Record<string, string>;
  /** A copy or move (not a convert): when the source is in the target's location and that location can
   *  copy or move inside itself (DriveA, DriveB), that is used instead of writing the bytes again. */
  within?: { sourceUrn: string; loadMethod: string; operation: 'copy' | 'move' };
}

export type ManageWritten = Written & {
  /** The source itself was moved (moveWithin): there is nothing left to remove. */
  movedSource?: boolean;
};

export interface ManageRecordInput {
  subscriptionId: string;
  userId: string;
  operationId: string;
  operation: ManageOperation;
  sourceUrn: string;
  urn: string;
  title: string;
  path: string;
  fileFormat: string;
  deliveryMethod: string;
  consumption: Consumption[];
  url?: string;
  links?: NewDocument['links'];
  emails?: NewDocument['emails'];
  /** X-Email (spec 5.2). */
  initiatorEmail?: string;
  /** The urn the workflow chose for the write: its journal entries are dropped once recorded. */
  writeUrn?: string;
}

export interface ManageRemoveInput {
  subscriptionId: string;
  userId: string;
  operationId: string;
  source: ManageInput['source'];
  markRecordDeleted: boolean;
  /** Metering, recorded with the removal when the operation is a Delete. */
  consumption?: Consumption[];
  connections?: Record<string, string>;
}

/** What an earlier execution of a manage operation recorded: its record and metering. */
export interface RecordedManage {
  documentGuid: string;
  /** The written file's name and folder, as the record holds them. */
  name: string;
  path: string;
  consumption: Consumption[];
}

export function manageActivities(deps: ResolvedActivityDeps) {
  return {
    /** Resolves the source document; an unknown urn is TEMPLATE_NOT_FOUND (spec 7: "generate or manage
     *  cannot resolve the template"), a fileFormat that is not the file's own is a VALIDATION_ERROR. */
    async manageResolveSource(input: { subscriptionId: string; source: ManageInput['source']; connections?: Record<string, string> }): Promise<SourceFile> {
      const { source } = input;
      const need = { method: source.loadMethod, capability: 'readDocument', field: 'sourceDocument.loadMethod' } as const;
      const file = await atLocation(deps.locations, need, (l) => l.readDocument!(contextOf(input, source.loadMethod), source.urn));
      if (file.fileFormat !== source.fileFormat) {
        throw callerFailure('VALIDATION_ERROR', `sourceDocument.fileFormat is ${source.fileFormat} but the document ${source.urn} is a ${file.fileFormat} file`);
      }
      return file;
    },

    /** Writes the target. `data.embedded` on an office copy or move goes into the file's custom
     *  properties first (a scratch blob beside the run's others, removed once written). */
    async manageWriteTarget(input: ManageWriteInput): Promise<ManageWritten> {
      const { target, within } = input;
      if (within && !input.embedded && within.loadMethod === target.deliveryMethod) {
        const need = { method: target.deliveryMethod, capability: 'write', field: 'targetDocument.deliveryMethod' } as const;
        const inside = await atLocation(deps.locations, need, async (l): Promise<ManageWritten | undefined> => {
          const req = {
            urn: input.urn,
            name: target.name,
            path: target.path,
            fileFormat: target.fileFormat,
            ...(target.sharing ? { sharing: target.sharing } : {}),
            ...(target.conflict ? { conflict: target.conflict } : {}),
          };
          const ctx = contextOf(input, target.deliveryMethod);
          if (within.operation === 'move' && l.moveWithin) {
            const moved = await l.moveWithin(ctx, within.sourceUrn, req);
            return moved ? { ...moved, movedSource: true } : undefined;
          }
          if (within.operation === 'copy' && l.copyWithin) return l.copyWithin(ctx, within.sourceUrn, req);
          return undefined;
        });
        if (inside) return inside;
      }
      let source = input.source;
      let temporary: string | undefined;
      if (input.embedded && isOfficeFormat(target.fileFormat)) {
        temporary = `scratch/${scratchRunId()}/embedded-${input.urn}.${target.fileFormat}`;
        const put = await deps.blobs.put(temporary, setOfficeCustomProperties(await deps.blobs.get(source.key), input.embedded));
        source = { key: temporary, sha256: put.sha256, size: put.size, contentType: source.contentType };
      }
      try {
        const need = { method: target.deliveryMethod, capability: 'write', field: 'targetDocument.deliveryMethod' } as const;
        return await atLocation(deps.locations, need, (l) =>
          l.write!(contextOf(input, target.deliveryMethod), {
            urn: input.urn,
            name: target.name,
            path: target.path,
            fileFormat: target.fileFormat,
            source,
            ...(target.sharing ? { sharing: target.sharing } : {}),
            ...(target.conflict ? { conflict: target.conflict } : {}),
            ...(target.options?.crm ? { options: { crm: target.options.crm } } : {}),
          }),
        );
      } finally {
        if (temporary) await deps.blobs.delete(temporary);
      }
    },

    /** Copy and convert get a new document record; a move carries the source's record over to the new
     *  file (urn, title, path, format). Idempotent per operation, in one transaction with the metering. */
    async manageRecord(input: ManageRecordInput): Promise<{ documentGuid: string }> {
      const document = {
        subscriptionId: input.subscriptionId,
        userId: input.userId,
        operationId: input.operationId,
        title: input.title,
        urn: input.urn,
        path: input.path,
        fileFormat: input.fileFormat,
        deliveryMethod: input.deliveryMethod,
        ...(input.url ? { url: input.url } : {}),
        ...(input.links ? { links: input.links } : {}),
        ...(input.emails ? { emails: input.emails } : {}),
        ...(input.initiatorEmail ? { initiatorEmail: input.initiatorEmail } : {}),
      };
      const { documentGuid, metered } =
        input.operation === 'move'
          ? await moveDocumentRecord(deps.db, input.sourceUrn, document, input.consumption)
          : await recordDocumentWithConsumption(deps.db, document, input.consumption);
      if (input.writeUrn) await forgetLocationWrites(deps.db, input.subscriptionId, input.writeUrn);
      countMetering(metered);
      return { documentGuid };
    },

    /** Removes the source (source.remove) and, unless its record moved with it, soft-deletes its record. */
    async manageRemoveSource(input: ManageRemoveInput): Promise<{ documentGuid?: string }> {
      const { source } = input;
      if (source.remove === 'none') return {};
      const mode = source.remove;
      // A Delete (metered here) is the manage operation of its own; a Move's removal is part of the move.
      const capability = input.consumption ? 'delete' : 'remove';
      const need = { method: source.loadMethod, capability, field: 'sourceDocument.loadMethod' } as const;
      await atLocation(deps.locations, need, (l) => l.remove!(contextOf(input, source.loadMethod), source.urn, mode));
      const documentGuid = input.markRecordDeleted ? await markDocumentDeleted(deps.db, input.subscriptionId, source.urn, input.userId) : undefined;
      if (input.consumption) countMetering(await recordConsumption(deps.db, input.subscriptionId, input.userId, input.operationId, input.consumption));
      return documentGuid ? { documentGuid } : {};
    },

    /** The outcome of an earlier execution of this operation whose workflow task was lost after its record
     *  step (worker killed, task timed out): null when it never recorded. Asked only after a step before
     *  the record failed on the second execution (the source already removed, a scratch file discarded). */
    async manageRecordedOutcome(input: { subscriptionId: string; operationId: string; urn: string }): Promise<RecordedManage | null> {
      const found = await recordedOperation(deps.db, input.subscriptionId, input.operationId, input.urn);
      return found ? { documentGuid: found.documentGuid, name: found.title, path: found.path, consumption: found.consumption } : null;
    },
  };
}
