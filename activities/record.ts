import type { Consumption } from '../store/documents.ts';
import { recordConsumption, recordDocument } from '../store/documents.ts';
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
}

export function recordActivity(deps: ActivityDeps) {
  /** Writes the document record and the metering in one transaction; idempotent per operation. */
  return async function record(input: RecordInput): Promise<{ documentGuid: string }> {
    const { documentGuid, metered } = await deps.db.transaction(async (tx) => {
      const documentGuid = await recordDocument(tx, {
        subscriptionId: input.subscriptionId,
        userId: input.userId,
        operationId: input.operationId,
        title: input.title,
        urn: input.urn,
        path: input.path,
        fileFormat: input.fileFormat,
        deliveryMethod: input.deliveryMethod,
      });
      const metered = await recordConsumption(tx, input.subscriptionId, input.userId, input.operationId, input.consumption);
      return { documentGuid, metered };
    });
    countMetering(metered);
    return { documentGuid };
  };
}
