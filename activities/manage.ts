// The manage workflow's own steps: read the source, and remove it (a move, a convert that removes its
// source, a Delete). The write and the record are generate's (deliver.ts, record.ts, groups.ts).
// Locations are reached through the registry (connectors/registry.ts), the same one generate uses.
import type { FoundFile } from '../connectors/location.ts';
import type { Consumption } from '../core/envelope.ts';
import type { ManageInput } from '../core/manage.ts';
import type { RunContext } from '../core/run.ts';
import { callerFailure } from '../core/failures.ts';
import { markDocumentDeleted, recordConsumption } from '../store/records/documents.ts';
import type { ResolvedActivityDeps } from './deps.ts';
import { countMetering } from '../telemetry/metrics.ts';
import { atLocation, contextOf } from './locations.ts';

export type SourceFile = FoundFile;

export interface RemoveSourceInput {
  run: RunContext;
  source: ManageInput['source'];
  markRecordDeleted: boolean;
  /** Metering, recorded with the removal when the operation is a Delete. */
  consumption?: Consumption[];
}

export function manageActivities(deps: ResolvedActivityDeps) {
  return {
    /** Resolves the source document; an unknown urn is TEMPLATE_NOT_FOUND (spec 7: "generate or manage
     *  cannot resolve the template"), a fileFormat that is not the file's own is a VALIDATION_ERROR. */
    async resolveSource(input: { run: RunContext; source: ManageInput['source'] }): Promise<SourceFile> {
      const { source } = input;
      const need = { method: source.loadMethod, capability: 'readDocument', field: 'sourceDocument.loadMethod' } as const;
      const file = await atLocation(
        deps.locations,
        need,
        (l) => l.readDocument!(contextOf(input.run, source.loadMethod), source.urn),
        input.run.callerDeadline,
      );
      if (file.fileFormat !== source.fileFormat) {
        throw callerFailure(
          'VALIDATION_ERROR',
          `sourceDocument.fileFormat is ${source.fileFormat} but the document ${source.urn} is a ${file.fileFormat} file`,
        );
      }
      return file;
    },

    /** Removes the source (source.remove) and, unless its record moved with it, soft-deletes its record. */
    async removeSource(input: RemoveSourceInput): Promise<{ documentGuid?: string }> {
      const { source, run } = input;
      if (source.remove === 'none') return {};
      const mode = source.remove;
      // A Delete (metered here) is the manage operation of its own; a Move's removal is part of the move.
      const capability = input.consumption ? 'delete' : 'remove';
      const need = { method: source.loadMethod, capability, field: 'sourceDocument.loadMethod' } as const;
      await atLocation(deps.locations, need, (l) => l.remove!(contextOf(run, source.loadMethod), source.urn, mode), run.callerDeadline);
      const documentGuid = input.markRecordDeleted
        ? await markDocumentDeleted(deps.db, run.subscriptionId, source.urn, run.userId)
        : undefined;
      if (input.consumption)
        countMetering(await recordConsumption(deps.db, run.subscriptionId, run.userId, run.operationId, input.consumption));
      return documentGuid ? { documentGuid } : {};
    },
  };
}
