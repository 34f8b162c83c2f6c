// manageDocument (spec 4.8 manage): copy, move, convert (and delete, where a connector supports it) of a
// delivered document, without changing its content. resolve source -> [convert] -> measure -> write target
// -> record -> [remove source]. Deterministic code only: no Node built-ins; activities imported as types.
//
// Storage steps and the conversion are local activities, all in the workflow task that runs them (before
// patch 'manage-local-conversion' the conversion was a normal activity, which ended a task). If that task is
// lost (the worker killed, the task timed out), the next worker runs them all again: each must then end as
// the first execution did. Up to the record, each is repeatable while its inputs exist; when they no longer do
// because the lost task went past the record (a move's source removed, a converted file's scratch copy
// discarded), the failing step is answered with what that execution recorded (`recordedOutcome`).
import { ActivityFailure, ApplicationFailure, patched, uuid4, workflowInfo } from '@temporalio/workflow';
import type { BlobRef } from '../core/blob.ts';
import { contentTypeOf } from '../core/formats.ts';
import type { ManageInput, ManageResult } from '../core/manage.ts';
import { manageConversion, movingSteps, steps } from './steps.ts';

export type { ManageInput, ManageResult } from '../core/manage.ts';

export async function manageDocument(input: ManageInput): Promise<ManageResult> {
  const { workflowId } = workflowInfo();
  const scratch: BlobRef[] = [];
  const { source } = input;
  const connections = input.connections ? { connections: input.connections } : {};
  // The target's urn, chosen here and not in the activity so that a retried or repeated write produces
  // the same file. It is the run's first random draw, hence the same value in every execution of the run
  // (and the value earlier code drew after the measure step).
  const urn = uuid4();
  let recorded = false;
  const removeSource = (markRecordDeleted: boolean) =>
    steps.manageRemoveSource.executeWithOptions({ summary: `${source.remove} source ${source.loadMethod}:${source.urn}` }, [
      { subscriptionId: input.subscriptionId, userId: input.userId, operationId: input.operationId, source, markRecordDeleted, ...connections },
    ]);
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
      output = await manageConversion().convertDocument.executeWithOptions({ summary: `convert ${source.fileFormat} to ${target.fileFormat}` }, [
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
    recorded = true;
    // Moved inside its location (DriveA's PATCH): the source is the target now, nothing to remove.
    const movedInside = written.movedSource === true && patched('manage-move-within');
    // A move carries the record over to the new file; a convert that removes its source leaves the
    // source's record soft-deleted.
    if (source.remove !== 'none' && !movedInside) await removeSource(input.operation !== 'move');
    return {
      document: { deliveryMethod: target.deliveryMethod, name: written.name, fileFormat: target.fileFormat, urn: written.urn, ...(uri ? { uri } : {}), ...links },
      documentGuid,
      consumption,
    };
  } catch (err) {
    // A step before the record failed (a local activity's failure arrives as the ApplicationFailure
    // itself). Only a Storage target's write and record run in the task of the steps whose inputs the
    // task destroys; a remote write is a normal activity, whose recorded result is never run again.
    const stepFailed = err instanceof ActivityFailure || err instanceof ApplicationFailure;
    if (!recorded && stepFailed && input.target?.deliveryMethod === 'Storage' && patched('manage-recorded-outcome')) {
      const outcome = await recordedOutcome(input, urn, removeSource);
      if (outcome) return outcome;
    }
    if (err instanceof ActivityFailure && err.cause instanceof ApplicationFailure) throw err.cause;
    throw err;
  } finally {
    if (scratch.length > 0) await steps.discardScratch.executeWithOptions({ summary: 'discard scratch files' }, [scratch]);
  }
}

/** The outcome of an earlier execution of this operation whose workflow task was lost after its record
 *  step: its record (at the urn this run chose) and its metering, once the removal it may not have finished
 *  is done (removing again what is gone is a no-op). Undefined when it never recorded: then the failure
 *  stands. */
async function recordedOutcome(input: ManageInput, urn: string, removeSource: (markRecordDeleted: boolean) => Promise<unknown>): Promise<ManageResult | undefined> {
  const target = input.target!;
  const found = await steps.manageRecordedOutcome.executeWithOptions({ summary: `find the record an earlier execution made at Storage:${urn}` }, [
    { subscriptionId: input.subscriptionId, operationId: input.operationId, urn },
  ]);
  if (!found) return undefined;
  if (input.source.remove !== 'none') await removeSource(input.operation !== 'move');
  const pages = found.consumption.find((c) => c.dimension === 'pages-managed')?.value ?? 0;
  return {
    document: { deliveryMethod: target.deliveryMethod, name: found.name, fileFormat: target.fileFormat, urn },
    documentGuid: found.documentGuid,
    consumption: managed(pages),
  };
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
