// DriveB's native merge (document.options.driveBGenerate.nativeMergeEnabled): copy the native template
// into the target folder and merge its fields in place, instead of export -> merge -> upload.
import type { Written } from '../connectors/location.ts';
import type { RunContext } from '../core/run.ts';
import type { Target } from '../core/target.ts';
import { LocationError } from '../connectors/location.ts';
import type { BlobRef } from '../core/blob.ts';
import type { ResolvedActivityDeps } from './deps.ts';
import { atLocation, contextOf } from './locations.ts';

export interface NativeMergeInput {
  run: RunContext;
  /** Chosen by the workflow: a retried step finds the copy its earlier attempt made. */
  urn: string;
  template: { urn: string; loadMethod: string; fileFormat: string };
  data: BlobRef;
  images: boolean;
  /** Where the merged copy goes, with the delivery drive's sharing options, as the default route's write. */
  target: Target;
}

export function nativeMergeActivities(deps: ResolvedActivityDeps) {
  return {
    /** Native merge: the tags are read and checked (a tag the native APIs cannot express is a 400 naming
     *  it) before the template is copied; then the copy is merged and shared. */
    async nativeMerge(input: NativeMergeInput): Promise<Written & { pages: number }> {
      const need = {
        method: input.template.loadMethod,
        capability: 'write',
        field: 'document.options.driveBGenerate.nativeMergeEnabled',
      } as const;
      return atLocation(deps.locations, need, (l) => {
        if (!l.nativeMerge)
          throw new LocationError(
            'NOT_SUPPORTED',
            `document.options.driveBGenerate.nativeMergeEnabled is not available for ${input.template.loadMethod}`,
          );
        const { target } = input;
        return l.nativeMerge(contextOf(input.run, input.template.loadMethod), {
          template: { urn: input.template.urn, fileFormat: input.template.fileFormat },
          data: input.data,
          images: input.images,
          write: {
            urn: input.urn,
            name: target.name,
            path: target.path,
            ...(target.sharing ? { sharing: target.sharing } : {}),
            ...(target.conflict ? { conflict: target.conflict } : {}),
          },
        });
      });
    },
  };
}
