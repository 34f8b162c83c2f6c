import type { BlobRef } from '../core/blob.ts';
import type { Written } from '../connectors/location.ts';
import type { ResolvedActivityDeps } from './deps.ts';
import { atLocation } from './locations.ts';

export interface DeliverInput {
  source: BlobRef;
  subscriptionId: string;
  userId: string;
  /** Chosen by the workflow (deterministically), so a retried delivery overwrites the same file. */
  urn: string;
  document: { name: string; fileFormat: string; deliveryMethod: string; path: string };
}

export type Delivered = Written;

export function deliverActivity(deps: ResolvedActivityDeps) {
  /** Writes the finished file to its target. This is the only step that writes where the caller can see. */
  return async function deliver(input: DeliverInput): Promise<Delivered> {
    const { document } = input;
    const need = { method: document.deliveryMethod, capability: 'write', field: 'document.deliveryMethod' } as const;
    return atLocation(deps.locations, need, (l) =>
      l.write!(
        { subscriptionId: input.subscriptionId, userId: input.userId },
        { urn: input.urn, name: document.name, path: document.path, fileFormat: document.fileFormat, source: input.source },
      ),
    );
  };
}
