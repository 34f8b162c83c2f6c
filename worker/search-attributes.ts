// Custom search attributes that let an operator find a job in the Temporal UI by tenant, operation,
// template and output format. Registered idempotently at start-up (dev server or cluster).
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import type { Connection } from '@temporalio/client';
import proto from '@temporalio/proto';

const KEYWORD = proto.temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD;

export const SA = {
  subscription: defineSearchAttributeKey('DocgenSubscriptionId', SearchAttributeType.KEYWORD),
  operation: defineSearchAttributeKey('DocgenOperationId', SearchAttributeType.KEYWORD),
  template: defineSearchAttributeKey('DocgenTemplate', SearchAttributeType.KEYWORD),
  outputFormat: defineSearchAttributeKey('DocgenOutputFormat', SearchAttributeType.KEYWORD),
} as const;

export async function ensureSearchAttributes(connection: Pick<Connection, 'operatorService'>, namespace: string): Promise<void> {
  const existing = await connection.operatorService.listSearchAttributes({ namespace });
  const missing: Record<string, typeof KEYWORD> = {};
  for (const key of Object.values(SA)) {
    if (!existing.customAttributes?.[key.name]) missing[key.name] = KEYWORD;
  }
  if (Object.keys(missing).length === 0) return;
  try {
    await connection.operatorService.addSearchAttributes({ namespace, searchAttributes: missing });
  } catch (err) {
    // Two processes starting together race here; the loser finds them already registered.
    const again = await connection.operatorService.listSearchAttributes({ namespace });
    if (Object.keys(missing).some((name) => !again.customAttributes?.[name])) throw err;
  }
}
