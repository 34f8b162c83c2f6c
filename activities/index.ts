// The workflows' steps: generate's, manage's, and the async generate's callback attempt. Each is a thin
// adapter between Temporal and the engine, connectors and store; workflows import this file's type only.
import { callbackActivity } from './callback.ts';
import { convertActivity } from './convert.ts';
import { createLocationRegistry } from '../connectors/registry.ts';
import { type ActivityDeps, outboundOf } from './deps.ts';
import { connectionStore } from '../connectors/connection-store.ts';
import { DEFAULT_CONNECTOR_SETTINGS } from '../connectors/connections.ts';
import { writeActivities } from './deliver.ts';
import { loadDataActivity } from './load-data.ts';
import { mergeActivity } from './merge.ts';
import { measureActivity } from './measure.ts';
import { recordActivities } from './record.ts';
import { manageActivities } from './manage.ts';
import { resolveTemplateActivity } from './resolve-template.ts';
import { retentionActivities } from './retention.ts';
import { scratchActivities } from './scratch.ts';
import { nativeMergeActivities } from './native-merge.ts';
import { groupActivities } from './groups.ts';
import { batchActivities } from './batch/index.ts';

export function createActivities(given: ActivityDeps) {
  const locations =
    given.locations ??
    createLocationRegistry({
      db: given.db,
      blobs: given.blobs,
      settings: given.connectors ?? DEFAULT_CONNECTOR_SETTINGS,
      connections: connectionStore(given.db),
      outbound: outboundOf(given),
    });
  const deps = { ...given, locations };
  const single = {
    resolveTemplate: resolveTemplateActivity(deps),
    loadData: loadDataActivity(deps),
    merge: mergeActivity(deps),
    measure: measureActivity(deps),
    ...writeActivities(deps),
    ...recordActivities(deps),
    ...scratchActivities(deps),
    ...retentionActivities(deps),
  };
  const groups = groupActivities(single, (method) => Boolean(locations.get(method)?.discard));
  return {
    // The single steps: the groups are made of them, and the workflows use some on their own (a remote
    // target's count, a native merge's data).
    ...single,
    // A write can overlap the count where its location can undo it (Location.discard).
    ...groups,
    convertDocument: convertActivity(deps),
    callbackAttempt: callbackActivity(deps),
    ...manageActivities(deps),
    ...nativeMergeActivities(deps),
    // A batch's rows go through the same write and record, one row at a time inside a chunk activity.
    ...batchActivities({ ...deps, steps: single, writeAndRecord: groups.writeAndRecord }),
  };
}

export type Activities = ReturnType<typeof createActivities>;
export type { ActivityDeps } from './deps.ts';
export type { CallbackAttemptInput, CallbackAttemptResult } from './callback.ts';
