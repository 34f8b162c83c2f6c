import type { BlobRef } from '../core/blob.ts';
import type { GenerateInput } from '../core/generate.ts';
import type { ResolvedActivityDeps } from './deps.ts';
import { atLocation } from './locations.ts';

export function resolveTemplateActivity(deps: ResolvedActivityDeps) {
  /** Finds the template at its location and returns a reference to its bytes; the bytes stay in the blob store. */
  return async function resolveTemplate(input: Pick<GenerateInput, 'subscriptionId' | 'template'>): Promise<BlobRef> {
    const { template } = input;
    const need = { method: template.loadMethod, capability: 'readTemplate', field: 'template.loadMethod' } as const;
    return atLocation(deps.locations, need, (l) => l.readTemplate!({ subscriptionId: input.subscriptionId }, template.urn));
  };
}
