// manageDocument (spec 4.8 manage): copy, move, convert (and delete, where a location supports it) of a
// delivered document, without changing its content: resolve the source -> [convert] -> count pages ||
// write the target -> record -> [remove the source]. The write and the record are generate's
// (workflows/steps.ts writeAndRecord). Deterministic code only: no Node built-ins; activities imported as types.
//
// Local steps (a local location's reads and writes, the conversion) run in the workflow task that runs
// them. If that task is lost (the worker killed, the task timed out), the next worker runs them all again:
// each must then end as the first execution did. Up to the record each is repeatable while its inputs
// exist; when they no longer do because the lost task went past the record (a move's source removed, a
// converted file's scratch copy discarded), the failure is answered with what that execution recorded.
import { ActivityFailure, ApplicationFailure, CancellationScope, uuid4, workflowInfo } from '@temporalio/workflow';
import type { Converted } from '../activities/convert.ts';
import type { SourceFile } from '../activities/manage.ts';
import type { BlobRef } from '../core/blob.ts';
import { managedConsumption } from '../core/envelope.ts';
import { contentTypeOf } from '../core/formats.ts';
import type { ManageInput, ManageResult } from '../core/manage.ts';
import { isRemote } from '../core/run.ts';
import { customProperties } from '../core/save-options.ts';
import type { Target } from '../core/target.ts';
import { conversion, movingSteps, steps, writeAndRecord } from './steps.ts';

export type { ManageInput, ManageResult } from '../core/manage.ts';

export async function manageDocument(input: ManageInput): Promise<ManageResult> {
  const { run, source } = input;
  const scratch: BlobRef[] = [];
  // The target's urn, chosen here and not in an activity so that a retried or repeated write produces the
  // same file. It is the run's first random draw, hence the same value in every execution of the run.
  const urn = uuid4();
  let writing = false;
  try {
    const found = await movingSteps(run, source.loadMethod).resolveSource.executeWithOptions(
      { summary: `resolve ${source.loadMethod}:${source.urn} (${source.fileFormat})` },
      [{ run, source }],
    );
    // A source read from a remote location was downloaded into this run's scratch.
    if (found.blob.key.startsWith('scratch/')) scratch.push(found.blob);
    if (input.operation === 'delete' || !input.target) return await deleteSource(input, found);
    const target = input.target;
    let output = found.blob;
    // A conversion to pdf or csv counts its output's pages (activities/convert.ts): metered as they are.
    let pages: number | undefined;
    if (input.operation === 'convert') {
      const { pages: counted, ...converted } = await convert(input, target, found.blob);
      output = converted;
      pages = counted;
      scratch.push(output);
    }
    const embedded = input.embedded && input.operation !== 'convert' ? customProperties(input.embedded) : undefined;
    const copyOrMove = input.operation === 'copy' || input.operation === 'move';
    writing = true;
    const recorded = await writeAndRecord(
      {
        run,
        urn,
        source: output,
        target,
        field: 'targetDocument',
        ...(embedded ? { embedded } : {}),
        ...(copyOrMove
          ? { within: { sourceUrn: source.urn, loadMethod: source.loadMethod, operation: input.operation as 'copy' | 'move' } }
          : {}),
        metering: 'managed',
        ...(pages !== undefined ? { pages } : {}),
        // A move carries the record over to the new file.
        ...(input.operation === 'move' ? { movedFrom: source.urn } : {}),
        ...(input.initiatorEmail ? { initiatorEmail: input.initiatorEmail } : {}),
        // The scratch files go last, after the source's removal (finally).
        end: { uploads: [], scratch: [] },
      },
      { what: input.operation === 'move' ? 'move the document record and record metering' : 'record the new document and metering' },
    );
    // Moved inside its location (DriveA's PATCH): the source is the target now, nothing to remove. A convert
    // that removes its source leaves the source's record soft-deleted.
    if (source.remove !== 'none' && !recorded.written.movedSource) await removeSource(input, input.operation !== 'move');
    const { uri, links } = recorded.written;
    return {
      document: {
        deliveryMethod: target.deliveryMethod,
        name: recorded.written.name,
        fileFormat: target.fileFormat,
        urn: recorded.written.urn,
        ...(uri ? { uri } : {}),
        ...links,
      },
      documentGuid: recorded.documentGuid,
      consumption: recorded.consumption,
    };
  } catch (err) {
    // A step before the write failed (a local activity's failure arrives as the ApplicationFailure itself).
    // Only a local target's write and record run in the task of the steps whose inputs the task destroys; a
    // remote write is a normal activity, whose recorded result is never run again.
    const stepFailed = err instanceof ActivityFailure || err instanceof ApplicationFailure;
    if (!writing && stepFailed && input.target && !isRemote(run, input.target.deliveryMethod)) {
      const outcome = await recordedOutcome(input, input.target, urn);
      if (outcome) return outcome;
    }
    if (err instanceof ActivityFailure && err.cause instanceof ApplicationFailure) throw err.cause;
    throw err;
  } finally {
    if (scratch.length > 0) await discard(input, scratch);
  }
}

function convert(input: ManageInput, target: Target, source: BlobRef): Promise<Converted> {
  const { pdf, csv } = target.saveOptions ?? {};
  return conversion('local').convertDocument.executeWithOptions({ summary: `convert ${input.source.fileFormat} to ${target.fileFormat}` }, [
    {
      source,
      from: input.source.fileFormat,
      to: target.fileFormat,
      outputKey: `scratch/${workflowInfo().workflowId}/output.${target.fileFormat}`,
      contentType: contentTypeOf(target.fileFormat),
      ...(pdf ? { pdf } : {}),
      // An accessible pdf's title when the document has none: the target's name (manage has no locale: the
      // document keeps its own language).
      ...(pdf?.accessible ? { title: target.name.replace(/\.pdf$/i, '').trim() || target.name } : {}),
      ...(csv ? { csv } : {}),
      ...(input.embedded ? { embedded: customProperties(input.embedded) } : {}),
      subscriptionId: input.run.subscriptionId,
    },
  ]);
}

/** Delete: no target. Only locations that can delete get here (the API refuses the others). */
async function deleteSource(input: ManageInput, found: SourceFile): Promise<ManageResult> {
  const { run, source } = input;
  const pages = await steps.measure.executeWithOptions({ summary: 'count pages' }, [
    { blob: found.blob, fileFormat: source.fileFormat, subscriptionId: run.subscriptionId },
  ]);
  const consumption = managedConsumption(pages);
  const { documentGuid } = await movingSteps(run, source.loadMethod).removeSource.executeWithOptions(
    { summary: `${source.remove} ${source.loadMethod}:${source.urn}` },
    [{ run, source, markRecordDeleted: true, consumption }],
  );
  return {
    document: { deliveryMethod: source.loadMethod, name: found.name, fileFormat: source.fileFormat, urn: source.urn },
    documentGuid: documentGuid ?? '',
    consumption,
  };
}

function removeSource(input: ManageInput, markRecordDeleted: boolean) {
  const { run, source } = input;
  return movingSteps(run, source.loadMethod).removeSource.executeWithOptions(
    { summary: `${source.remove} source ${source.loadMethod}:${source.urn}` },
    [{ run, source, markRecordDeleted }],
  );
}

/** The outcome of an earlier execution of this operation whose workflow task was lost after its record:
 *  its record (at the urn this run chose) and its metering, once the removal it may not have finished is
 *  done (removing again what is gone is a no-op). Undefined when it never recorded: then the failure stands. */
async function recordedOutcome(input: ManageInput, target: Target, urn: string): Promise<ManageResult | undefined> {
  const found = await steps.recordedOutcome.executeWithOptions(
    { summary: `find the record an earlier execution made at ${target.deliveryMethod}:${urn}` },
    [{ run: input.run, urn }],
  );
  if (!found) return undefined;
  if (input.source.remove !== 'none') await removeSource(input, input.operation !== 'move');
  const pages = found.consumption.find((c) => c.dimension === 'pages-managed')?.value ?? 0;
  return {
    document: { deliveryMethod: target.deliveryMethod, name: found.name, fileFormat: target.fileFormat, urn },
    documentGuid: found.documentGuid,
    consumption: managedConsumption(pages),
  };
}

async function discard(input: ManageInput, scratch: BlobRef[]): Promise<void> {
  try {
    // A cancelled run discards too (outside the cancellation, or the step would be cancelled unrun).
    await CancellationScope.nonCancellable(() =>
      steps.endRun.executeWithOptions({ summary: 'discard scratch files' }, [{ run: input.run, uploads: [], scratch }]),
    );
  } catch {
    // The scratch sweep removes what this step could not.
  }
}
