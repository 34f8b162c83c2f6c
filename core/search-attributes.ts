// Custom search attributes that let an operator find a job in the Temporal UI by tenant, operation,
// template and output format. The API sets them when it starts a workflow; the worker registers them.
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const SA = {
  subscription: defineSearchAttributeKey('DocgenSubscriptionId', SearchAttributeType.KEYWORD),
  operation: defineSearchAttributeKey('DocgenOperationId', SearchAttributeType.KEYWORD),
  template: defineSearchAttributeKey('DocgenTemplate', SearchAttributeType.KEYWORD),
  outputFormat: defineSearchAttributeKey('DocgenOutputFormat', SearchAttributeType.KEYWORD),
  /** A batch (POST /documents/document/generate/batch): its admission and its generateBatch runs. */
  batch: defineSearchAttributeKey('DocgenBatchId', SearchAttributeType.KEYWORD),
} as const;
