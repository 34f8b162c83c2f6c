// The one write of both workflows: generate's delivery and manage's target. A copy or move inside one
// location acts on the file itself; otherwise the bytes are written, with manage's data.embedded in the
// office file's custom properties first.
import { Context } from '@temporalio/activity';
import type { BlobRef } from '../core/blob.ts';
import { isOfficeFormat } from '../core/formats.ts';
import type { RunContext } from '../core/run.ts';
import type { Target } from '../core/target.ts';
import type { Written as LocationWritten } from '../connectors/location.ts';
import { setOfficeCustomProperties } from '../converter/index.ts';
import type { ResolvedActivityDeps } from './deps.ts';
import { atLocation, contextOf } from './locations.ts';
import { scratchRunId } from './scratch.ts';

export interface WriteInput {
  run: RunContext;
  /** Chosen by the workflow (deterministically), so a retried write finds or overwrites the same file. */
  urn: string;
  source: BlobRef;
  /** The source's bytes, held by the caller (a batch row's document written straight to a location that
   *  writes bytes, connectors/location.ts `writesBytes`): `source.key` then names no blob. */
  bytes?: Uint8Array;
  target: Target;
  /** data.embedded of a manage copy or move: written into an office file's custom properties. */
  embedded?: Record<string, string>;
  /** A manage copy or move: when the source is at the target's location and that location can copy or move
   *  inside itself (DriveA, DriveB), that is used instead of writing the bytes again. */
  within?: { sourceUrn: string; loadMethod: string; operation: 'copy' | 'move' };
  /** The request field of the target, for messages: document (generate, the default) or targetDocument. */
  field?: string;
  /** The caller stores the file's record itself (connectors/location.ts WriteRequest.recordLater). */
  recordLater?: boolean;
}

export type Written = LocationWritten & {
  /** The source itself was moved (moveWithin): there is nothing left to remove. */
  movedSource?: boolean;
};

export function writeActivities(deps: ResolvedActivityDeps) {
  return {
    /** Writes the file to its target. This is the only step that writes where the caller can see. */
    deliver: (input: WriteInput) => deliver(deps, input),

    /** Undoes a write nothing recorded (activities/groups.ts: the count that ran beside it failed); false
     *  where the location cannot. */
    async undoWrite(input: Pick<WriteInput, 'run' | 'urn' | 'target'>): Promise<boolean> {
      const { target } = input;
      const location = deps.locations.get(target.deliveryMethod);
      if (!location?.discard) return false;
      await location.discard(contextOf(input.run, target.deliveryMethod), input.urn);
      return true;
    },
  };
}

async function deliver(deps: ResolvedActivityDeps, input: WriteInput): Promise<Written> {
  const { target, run } = input;
  const need = { method: target.deliveryMethod, capability: 'write', field: `${input.field ?? 'document'}.deliveryMethod` } as const;
  const req = {
    urn: input.urn,
    name: target.name,
    path: target.path,
    fileFormat: target.fileFormat,
    ...(target.sharing ? { sharing: target.sharing } : {}),
    ...(target.conflict ? { conflict: target.conflict } : {}),
    ...(target.options ? { options: target.options } : {}),
    ...(input.recordLater ? { recordLater: true } : {}),
  };
  const ctx = () => contextOf(run, target.deliveryMethod);
  const { within } = input;
  if (within && !input.embedded && within.loadMethod === target.deliveryMethod) {
    const inside = await atLocation(deps.locations, need, async (l): Promise<Written | undefined> => {
      if (within.operation === 'move' && l.moveWithin) {
        const moved = await l.moveWithin(ctx(), within.sourceUrn, req);
        return moved ? { ...moved, movedSource: true } : undefined;
      }
      if (within.operation === 'copy' && l.copyWithin) return l.copyWithin(ctx(), within.sourceUrn, req);
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
    const bytes = !temporary ? input.bytes : undefined;
    const written = await atLocation(
      deps.locations,
      need,
      (l) => {
        if (bytes && !l.writesBytes) throw new Error(`${target.deliveryMethod} does not write bytes in hand; the source must be a blob`);
        return l.write!(ctx(), { ...req, source, ...(bytes ? { bytes } : {}) });
      },
      run.callerDeadline,
    );
    // What the drive refused without failing the write (a tenant policy against anonymous links, an
    // invitation that could not be sent): in the step's result (the workflow history) and in the log.
    if (written.externalErrors?.length)
      Context.current().log.warn('the write target refused part of the sharing', { externalErrors: written.externalErrors });
    return written;
  } finally {
    if (temporary) await deps.blobs.delete(temporary);
  }
}
