// manageDocument (spec 4.8 manage): copy, move, convert (and delete, where a connector supports it) of a
// delivered document, without changing its content. resolve source -> [convert] -> measure -> write target
// -> record -> [remove source]. Deterministic code only: no Node built-ins; activities imported as types.
import { ActivityFailure, ApplicationFailure, patched, uuid4, workflowInfo } from '@temporalio/workflow';
import type { BlobRef } from '../core/blob.ts';
import { contentTypeOf } from '../core/formats.ts';
import type { ManageInput, ManageResult } from '../core/manage.ts';
import { conversion, movingSteps, steps } from './steps.ts';

export type { ManageInput, ManageResult } from '../core/manage.ts';

export async function manageDocument(input: ManageInput): Promise<ManageResult> {
  const { workflowId } = workflowInfo();
  const scratch: BlobRef[] = [];
  const { source } = input;
  const connections = input.connections ? { connections: input.connections } : {};
  try {
    const found = await movingSteps(source.loadMethod).manageResolveSource.executeWithOptions(
      { summary: `resolve ${source.loadMethod}:${source.urn} (${source.fileFormat})` },
      [{ subscriptionId: input.subscriptionId, source, ...connections }],
    );
    // A source read from an external location (DriveA) was downloaded into this run's scratch.
    if (found.blob.key.startsWith('scratch/') && patched('manage-discard-downloaded-source')) scratch.push(found.blob);
    const embedded = input.embedded ? stringValues(JSON.parse(input.embedded) as Record<string, unknown>) : undefined;
    if (input.operation === 'delete' || !input.target) {
      // Delete: no target. Only connectors that can delete get here (the API refuses the others).
      const pages = await steps.measure.executeWithOptions({ summary: 'count pages' }, [{ blob: found.blob, fileFormat: source.fileFormat }]);
      const consumption = managed(pages);
      const { documentGuid } = await steps.manageRemoveSource.executeWithOptions(
        { summary: `${source.remove} ${source.loadMethod}:${source.urn}` },
        [{ subscriptionId: input.subscriptionId, userId: input.userId, operationId: input.operationId, source, markRecordDeleted: true, consumption, ...connections }],
      );
      return {
        document: { deliveryMethod: source.loadMethod, name: found.name, fileFormat: source.fileFormat, urn: source.urn },
        documentGuid: documentGuid ?? '',
        consumption,
      };
    }
    const target = input.target;
    let output = found.blob;
    if (input.operation === 'convert') {
      const save = target.saveOptions ?? {};
      output = await conversion('main').convertDocument.executeWithOptions({ summary: `convert ${source.fileFormat} to ${target.fileFormat}` }, [
        {
          source: found.blob,
          from: source.fileFormat,
          to: target.fileFormat,
          outputKey: `scratch/${workflowId}/output.${target.fileFormat}`,
          contentType: contentTypeOf(target.fileFormat),
          ...(save.pdf ? { pdf: save.pdf as never } : {}),
          ...(save.csv ? { csv: save.csv } : {}),
          ...(embedded ? { embedded } : {}),
        },
      ]);
      scratch.push(output);
    }
    const pages = await steps.measure.executeWithOptions({ summary: 'count pages' }, [{ blob: output, fileFormat: target.fileFormat }]);
    const consumption = managed(pages);
    // Chosen here, not in the activity, so that a retried write produces the same file.
    const urn = uuid4();
    const written = await movingSteps(target.deliveryMethod).manageWriteTarget.executeWithOptions(
      { summary: `write ${target.name} to ${target.deliveryMethod}:${target.path}` },
      [
        {
          subscriptionId: input.subscriptionId,
          userId: input.userId,
          urn,
          source: output,
          target,
          ...(embedded && input.operation !== 'convert' ? { embedded } : {}),
          ...connections,
          ...(input.operation === 'copy' || input.operation === 'move'
            ? { within: { sourceUrn: source.urn, loadMethod: source.loadMethod, operation: input.operation } }
            : {}),
        },
      ],
    );
    const { uri, links, emails } = written;
    const { documentGuid } = await steps.manageRecord.executeWithOptions(
      { summary: input.operation === 'move' ? 'move the document record and record metering' : 'record the new document and metering' },
      [
        {
          subscriptionId: input.subscriptionId,
          userId: input.userId,
          operationId: input.operationId,
          operation: input.operation,
          sourceUrn: source.urn,
          urn: written.urn,
          title: written.name,
          path: written.path,
          fileFormat: target.fileFormat,
          deliveryMethod: target.deliveryMethod,
          consumption,
          ...(target.deliveryMethod !== 'Storage' ? { writeUrn: urn } : {}),
          ...(uri ? { url: uri } : {}),
          ...(links ? { links } : {}),
          ...(emails ? { emails } : {}),
          ...(input.initiatorEmail ? { initiatorEmail: input.initiatorEmail } : {}),
        },
      ],
    );
    // Moved inside its location (DriveA's PATCH): the source is the target now, nothing to remove.
    const movedInside = written.movedSource === true && patched('manage-move-within');
    if (source.remove !== 'none' && !movedInside) {
      await steps.manageRemoveSource.executeWithOptions({ summary: `${source.remove} source ${source.loadMethod}:${source.urn}` }, [
        {
          subscriptionId: input.subscriptionId,
          userId: input.userId,
          operationId: input.operationId,
          source,
          // A move carries the record over to the new file; a convert that removes its source leaves the
          // source's record soft-deleted.
          markRecordDeleted: input.operation !== 'move',
          ...connections,
        },
      ]);
    }
    return {
      document: { deliveryMethod: target.deliveryMethod, name: written.name, fileFormat: target.fileFormat, urn: written.urn, ...(uri ? { uri } : {}), ...links },
      documentGuid,
      consumption,
    };
  } catch (err) {
    if (err instanceof ActivityFailure && err.cause instanceof ApplicationFailure) throw err.cause;
    throw err;
  } finally {
    if (scratch.length > 0) await steps.discardScratch.executeWithOptions({ summary: 'discard scratch files' }, [scratch]);
  }
}

function managed(pages: number) {
  return [
    { dimension: 'pages-managed', value: pages },
    { dimension: 'documents-managed', value: 1 },
  ];
}

function stringValues(o: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(o)) out[k] = typeof v === 'string' ? v : JSON.stringify(v);
  return out;
}
