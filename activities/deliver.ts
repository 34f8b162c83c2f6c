import { Context } from '@temporalio/activity';
import type { BlobRef } from '../core/blob.ts';
import type { Written } from '../connectors/location.ts';
import type { ResolvedActivityDeps } from './deps.ts';
import { atLocation, contextOf } from './locations.ts';
import type { ConflictBehavior, SharingRequest } from '../core/locations.ts';

export interface DeliverInput {
  source: BlobRef;
  subscriptionId: string;
  userId: string;
  /** Chosen by the workflow (deterministically), so a retried delivery overwrites the same file. */
  urn: string;
  document: { name: string; fileFormat: string; deliveryMethod: string; path: string; sharing?: SharingRequest; conflict?: ConflictBehavior };
  connections?: Record<string, string>;
}

export type Delivered = Written;

export function deliverActivity(deps: ResolvedActivityDeps) {
  /** Writes the finished file to its target. This is the only step that writes where the caller can see. */
  return async function deliver(input: DeliverInput): Promise<Delivered> {
    const { document } = input;
    const need = { method: document.deliveryMethod, capability: 'write', field: 'document.deliveryMethod' } as const;
    const written = await atLocation(deps.locations, need, (l) =>
      l.write!(contextOf(input, document.deliveryMethod), {
        urn: input.urn,
        name: document.name,
        path: document.path,
        fileFormat: document.fileFormat,
        source: input.source,
        ...(document.sharing ? { sharing: document.sharing } : {}),
        ...(document.conflict ? { conflict: document.conflict } : {}),
      }),
    );
    // What the drive refused without failing the delivery (a tenant policy against anonymous links, an
    // invitation that could not be sent): in the step's result (the workflow history) and in the log.
    if (written.externalErrors?.length) Context.current().log.warn('the delivery target refused part of the sharing', { externalErrors: written.externalErrors });
    return written;
  };
}
