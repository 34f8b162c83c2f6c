// generateDocument: resolve template -> load data -> merge -> measure -> deliver -> record.
// Deterministic code only: no Node built-ins, no I/O; activities are imported as types.
import { ActivityFailure, ApplicationFailure, proxyActivities, uuid4, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import type { BlobRef } from '../connectors/storage/blob-store.ts';
import type { GenerateInput, GenerateResult } from '../core/generate.ts';

const CONTENT_TYPES: Record<string, string> = {
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  pdf: 'application/pdf',
  csv: 'text/csv',
};

// Short steps: a synchronous caller is waiting. Caller mistakes are non-retryable ApplicationFailures;
// anything else (a database blip, a full disk) is retried a few times before the request fails.
const steps = proxyActivities<Activities>({
  startToCloseTimeout: '60 seconds',
  retry: { initialInterval: '200 milliseconds', backoffCoefficient: 2, maximumInterval: '5 seconds', maximumAttempts: 5 },
});

export async function generateDocument(input: GenerateInput): Promise<GenerateResult> {
  const { workflowId } = workflowInfo();
  const scratch: BlobRef[] = [];
  try {
    const template = await steps.resolveTemplate.executeWithOptions(
      { summary: `template ${input.template.name ?? input.template.urn} (${input.template.loadMethod})` },
      [{ subscriptionId: input.subscriptionId, template: input.template }],
    );
    const data = await steps.loadData.executeWithOptions({ summary: `data ${input.data.urn} (${input.data.loadMethod})` }, [
      { subscriptionId: input.subscriptionId, data: input.data },
    ]);
    if (input.document.fileFormat !== input.template.fileFormat) {
      throw ApplicationFailure.create({
        type: 'NOT_SUPPORTED',
        nonRetryable: true,
        message: `conversion from ${input.template.fileFormat} to ${input.document.fileFormat} is not available in this deployment yet`,
      });
    }
    const merged = await steps.merge.executeWithOptions({ summary: `merge into ${input.document.fileFormat}` }, [
      {
        template,
        data,
        outputKey: `scratch/${workflowId}/merged.${input.document.fileFormat}`,
        contentType: CONTENT_TYPES[input.document.fileFormat] ?? 'application/octet-stream',
        locale: input.document.locale,
        timezone: input.document.timezone,
        ...(input.data.variables ? { variables: input.data.variables } : {}),
        ...(input.data.embedded ? { embedded: input.data.embedded } : {}),
      },
    ]);
    scratch.push(merged);
    const pages = await steps.measure.executeWithOptions({ summary: 'count pages' }, [
      { blob: merged, fileFormat: input.document.fileFormat },
    ]);
    // Chosen here, not in the activity, so that a retried delivery writes the same file.
    const urn = uuid4();
    const delivered = await steps.deliver.executeWithOptions(
      { summary: `deliver ${input.document.name} to ${input.document.deliveryMethod}:${input.document.path}` },
      [{ source: merged, subscriptionId: input.subscriptionId, userId: input.userId, urn, document: input.document }],
    );
    const consumption = [
      { dimension: 'pages-generated', value: pages },
      { dimension: 'documents-generated', value: 1 },
    ];
    const { documentGuid } = await steps.record.executeWithOptions({ summary: 'record document and metering' }, [
      {
        subscriptionId: input.subscriptionId,
        userId: input.userId,
        operationId: input.operationId,
        urn: delivered.urn,
        title: delivered.name,
        path: delivered.path,
        fileFormat: input.document.fileFormat,
        deliveryMethod: input.document.deliveryMethod,
        consumption,
      },
    ]);
    return {
      document: {
        deliveryMethod: input.document.deliveryMethod,
        name: delivered.name,
        fileFormat: input.document.fileFormat,
        urn: delivered.urn,
      },
      documentGuid,
      consumption,
    };
  } catch (err) {
    // Surface the activity's own failure (code + inner errors) rather than the ActivityFailure wrapper.
    if (err instanceof ActivityFailure && err.cause instanceof ApplicationFailure) throw err.cause;
    throw err;
  } finally {
    if (scratch.length > 0) await steps.discardScratch.executeWithOptions({ summary: 'discard scratch files' }, [scratch]);
  }
}
