import type { BlobRef } from '../core/blob.ts';
import type { GenerateInput } from '../core/generate.ts';
import type { RunContext } from '../core/run.ts';
import type { ResolvedActivityDeps } from './deps.ts';
import { atLocation, contextOf } from './locations.ts';

export interface ResolveTemplateInput {
  run: RunContext;
  template: Pick<GenerateInput['template'], 'urn' | 'loadMethod' | 'fileFormat' | 'url' | 'sealedUrl'>;
  /** The request field the template came from (template, or template.relatedItems[i]); default template. */
  field?: string;
}

export function resolveTemplateActivity(deps: ResolvedActivityDeps) {
  /** Finds the template at its location (template.url: the `url` location) and returns a reference to its
   *  bytes; the bytes stay in the blob store. */
  return async function resolveTemplate(input: ResolveTemplateInput): Promise<BlobRef> {
    const { template } = input;
    const field = input.field ?? 'template';
    const byUrl = Boolean(template.url);
    const method = byUrl ? 'url' : template.loadMethod;
    const need = {
      method,
      capability: 'readTemplate',
      field: byUrl ? `${field}.url` : `${field}.loadMethod`,
      // An e-invoice's XML template has no Office format to hold the location to ('').
      ...(template.fileFormat ? { fileFormat: template.fileFormat } : {}),
    } as const;
    // template.url: the url location opens the sealed URL (inputs recorded before sealing carry it in url).
    const at = byUrl ? (template.sealedUrl ?? template.url!) : template.urn;
    return atLocation(
      deps.locations,
      need,
      (l) => l.readTemplate!(contextOf(input.run, method), at, template.fileFormat),
      input.run.callerDeadline,
    );
  };
}
