// Registers docgen's custom search attributes (core/search-attributes.ts) idempotently at start-up, on
// the dev server or a cluster.
import type { Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { SA } from '../core/search-attributes.ts';

const KEYWORD = proto.temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD;

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
