import type { Consumption } from '../core/envelope.ts';
import { forgetLocationWrites } from '../store/location-writes.ts';
import { type NewDocument, recordDocumentWithConsumption } from '../store/records/documents.ts';
import { countMetering } from '../telemetry/metrics.ts';
import type { ActivityDeps } from './deps.ts';

export interface RecordInput {
  subscriptionId: string;
  userId: string;
  operationId: string;
  urn: string;
  title: string;
  path: string;
  fileFormat: string;
  deliveryMethod: string;
  consumption: Consumption[];
  /** Drive deliveries: the file's web URL, sharing links and per-recipient results (spec 2.5). */
  url?: string;
  links?: NewDocument['links'];
  emails?: NewDocument['emails'];
  /** The urn the workflow chose for the write: its journal entries (store/location-writes.ts) are dropped. */
  writeUrn?: string;
}

export function recordActivity(deps: ActivityDeps) {
  /** Writes the document record and the metering in one transaction; idempotent per operation. */
  return async function record(input: RecordInput): Promise<{ documentGuid: string }> {
    const { consumption, writeUrn, ...document } = input;
    const { documentGuid, metered } = await recordDocumentWithConsumption(deps.db, document, consumption);
    if (writeUrn) await forgetLocationWrites(deps.db, input.subscriptionId, writeUrn);
    countMetering(metered);
    return { documentGuid };
  };
}
