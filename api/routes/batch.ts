// Batches (extension): POST /documents/document/generate/batch starts one durable job for many rows; GET
// /documents/batch/{id} reads its progress, /rows its rows, POST /documents/batch/{id}/cancel stops it.
// Everything a request can be checked for is checked before anything starts: generate's checks on the
// template, data and each row's document; the batch's own rules; the name and path patterns; then the
// admission workflow reads the rows and merges and names the first ones (a problem there is the 400, and
// nothing runs). The answer is 201 with the batch id as soon as the batch runs.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { WorkflowNotFoundError } from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import type { Config } from '../../config/env.ts';
import {
  type BatchInput,
  batchAdmissionWorkflowId,
  checkBatchRules,
  COMBINED_FORMATS,
  generateShapeOf,
  parseCombined,
} from '../../core/batch.ts';
import { ApiError, type ErrorCode, type InnerError, innerError, isErrorCode } from '../../core/errors.ts';
import { ROWS_FORMATS } from '../../core/rows.ts';
import { SA } from '../../core/search-attributes.ts';
import { outboundPolicy } from '../../connectors/http/address-policy.ts';
import { LOCATION_CATALOG, type LocationRegistry, problemCode } from '../../connectors/registry.ts';
import { parseGenerateRequest } from '../../core/generate.ts';
import type { LocationNeed } from '../../core/locations.ts';
import { compileTextPattern, TemplateError } from '../../engine/text-pattern.ts';
import { readClientToken } from '../../security/client-token.ts';
import type { Db } from '../../store/db.ts';
import { getBatch, listBatchRows, requestBatchCancel, type Batch } from '../../store/records/batches.ts';
import type { AdmissionResult, batchAdmission } from '../../workflows/batch.ts';
import { captureExternalContext, origin, success } from '../envelope.ts';
import { cancelBatch, getBatch as getBatchSchema, listBatchRows as listBatchRowsSchema, startBatch } from '../schemas/batches.ts';
import { idempotencyOf, idempotentWorkflowId, startOnce, toApiError, type WorkflowStarter } from '../temporal.ts';
import { assertCallbackReachable } from './client-token.ts';
import { runContext, sealed } from './generate.ts';

const HEADER = 'x-client-authorization';

/** The code of a 400 with several problems: the first problem's. */
function codeOf(problems: InnerError[]): ErrorCode {
  const first = problems[0]?.code;
  return isErrorCode(first) ? first : 'VALIDATION_ERROR';
}

export interface BatchRouteOptions {
  temporal: WorkflowStarter;
  db: Db;
  config: Config;
  locations: LocationRegistry;
}

/** The progress of a batch as answered: counters, rate and estimated end, a page of failures. */
async function progressOf(db: Db, batch: Batch, paging: { top: number; skip: number }) {
  const failures = await listBatchRows(db, batch.subscriptionId, batch.id, { status: 'failed', ...paging });
  const processed = batch.rowsDone + batch.rowsFailed;
  const until = batch.endedDate ?? (batch.status === 'running' ? new Date() : (batch.progressDate ?? new Date()));
  const seconds = Math.max(0.001, (until.getTime() - batch.createdDate.getTime()) / 1000);
  const rate = processed / seconds;
  const left = batch.rowsTotal - processed;
  return {
    id: batch.id,
    // Running with a cancel asked for: cancelling (no row starts; the rows in progress finish).
    status: batch.status === 'running' && batch.cancelRequested ? 'cancelling' : batch.status,
    rowsTotal: batch.rowsTotal,
    rowsDone: batch.rowsDone,
    rowsFailed: batch.rowsFailed,
    pages: batch.pages,
    rate: Math.round(rate * 100) / 100,
    ...(batch.status === 'running' && rate > 0 ? { estimatedEnd: new Date(Date.now() + (left / rate) * 1000).toISOString() } : {}),
    createdDate: batch.createdDate.toISOString(),
    ...(batch.endedDate ? { endedDate: batch.endedDate.toISOString() } : {}),
    ...(batch.combined
      ? {
          combined: {
            format: batch.combined.format,
            ...(batch.combined.urn ? { urn: batch.combined.urn, name: batch.combined.name } : {}),
            ...(batch.combined.pages !== undefined ? { pages: batch.combined.pages } : {}),
          },
        }
      : {}),
    ...(batch.error ? { error: batch.error } : {}),
    failures: { rowCount: failures.rowCount, items: failures.rows.map((r) => ({ row: r.row, code: r.code, message: r.message })) },
  };
}

const batchRoutes: FastifyPluginAsyncTypebox<BatchRouteOptions> = async (app, opts) => {
  const policy = outboundPolicy(opts.config.outboundAllow);
  const clientTokens = new WeakMap<FastifyRequest, { url: string; value: string }>();
  const tuning = {
    chunkRows: opts.config.batchChunkRows,
    chunkMaxPages: Math.max(1, Math.floor(opts.config.batchChunkMaxRows / opts.config.batchChunkRows)),
    window: opts.config.batchWindow,
    heartbeatTimeoutMs: opts.config.batchHeartbeatSeconds * 1000,
    chunksPerRun: opts.config.batchChunksPerRun,
    maxRows: opts.config.batchMaxRows,
  };

  app.post(
    '/documents/document/generate/batch',
    {
      preValidation: async (request) => {
        captureExternalContext(request);
        const raw = request.headers[HEADER];
        const value = (Array.isArray(raw) ? raw[0] : raw)?.trim();
        if (!value) return;
        const token = await readClientToken(opts.db, value, { subscriptionId: request.auth.subscriptionId });
        await assertCallbackReachable(token.callbackUrl, policy);
        clientTokens.set(request, { url: token.callbackUrl, value });
      },
      schema: startBatch,
    },
    async (request, reply) => {
      const body = request.body;
      const problems: InnerError[] = [...checkBatchRules(body, LOCATION_CATALOG)];
      for (const [field, pattern] of [
        ['document.name', body.document.name],
        ['document.path', body.document.path],
      ] as const) {
        try {
          compileTextPattern(pattern, field);
        } catch (err) {
          if (!(err instanceof TemplateError)) throw err;
          problems.push(...err.errors.map((e) => innerError('VALIDATION_ERROR', e.message)));
        }
      }
      // Generate's rules (template, data, each row's document), then what the locations can do.
      const parsed = parseGenerateRequest(generateShapeOf(body), LOCATION_CATALOG);
      problems.unshift(...parsed.problems);
      const rowsDelivered = Boolean(body.document.deliveryMethod);
      // Rows only in the combined output write nothing of their own: no write need for them.
      const needs: LocationNeed[] = parsed.needs.filter(
        (n) => rowsDelivered || n.capability !== 'write' || n.field !== 'document.deliveryMethod',
      );
      if (body.combined) needs.push(...parseCombined(body.combined, LOCATION_CATALOG).needs);
      const converter = opts.temporal.converter?.();
      if (converter && !converter.available && body.document.fileFormat !== body.template.fileFormat) {
        problems.push(
          innerError(
            'NOT_SUPPORTED',
            `document.fileFormat ${body.document.fileFormat} needs a converter, and none is available: ${converter.reason}. ${converter.howToEnable}`,
          ),
        );
      }
      if (problems.length > 0) throw new ApiError(codeOf(problems), problems.map((p) => p.message).join('; '), problems);
      const { subscriptionId, userId } = request.auth;
      const { problems: unavailable, connections } = await opts.locations.check(subscriptionId, needs);
      if (unavailable.length > 0) throw new ApiError(problemCode(unavailable), unavailable.map((p) => p.message).join('; '), unavailable);
      const run = runContext({ operationId: request.ctx.operationId, subscriptionId, userId }, needs, connections);
      const { input: generate } = parsed;
      const secret = await sealed(opts.db, subscriptionId, generate);
      const { deliveryMethod: _checkedAs, ...rowDocument } = generate.document;
      const client = clientTokens.get(request);
      // Checked by checkBatchRules above; found in their lists, they carry the lists' types.
      const rowsFormat = ROWS_FORMATS.find((f) => f === body.data.rowsFormat);
      const combinedFormat = COMBINED_FORMATS.find((f) => f === body.combined?.format);
      const input: BatchInput = {
        batchId: run.operationId,
        run,
        // As a generate's: template.url and GraphQL header variables sealed, so no history shows them.
        template: secret.template,
        data: {
          ...secret.data,
          ...(body.data.rowsPath !== undefined ? { rowsPath: body.data.rowsPath } : {}),
          ...(rowsFormat ? { rowsFormat } : {}),
        },
        // Rows only in the combined output have no delivery (they were checked as Storage at root).
        document: body.document.deliveryMethod
          ? { ...rowDocument, deliveryMethod: body.document.deliveryMethod }
          : { ...rowDocument, path: 'root' },
        ...(body.combined && combinedFormat ? { combined: { ...body.combined, format: combinedFormat } } : {}),
        ...(body.stopAfterFailures !== undefined ? { stopAfterFailures: body.stopAfterFailures } : {}),
        uploads: generate.uploads,
        tuning,
        ...(client
          ? {
              callback: {
                url: client.url,
                clientToken: client.value,
                webhookId: `msg_${run.operationId}`,
                scheduleMs: opts.config.callbackRetryScheduleMs,
                outbound: { allow: opts.config.outboundAllow, timeoutMs: opts.config.callbackTimeoutMs },
              },
            }
          : {}),
        envelope: {
          origin: origin(request),
          ...(request.ctx.externalContext !== undefined ? { externalContext: request.ctx.externalContext } : {}),
        },
      };
      // Without an Idempotency-Key the admission is the batch's own run (its id is fresh).
      const given = idempotencyOf(request.headers, { body: request.body, callback: client?.url });
      const idem = given.key !== undefined ? given : undefined;
      const t = opts.temporal;
      const handle = await startOnce<typeof batchAdmission>(t, 'batchAdmission', idem, {
        taskQueue: t.taskQueue,
        workflowId:
          idem?.key !== undefined ? idempotentWorkflowId('batch', subscriptionId, idem.key) : batchAdmissionWorkflowId(input.batchId),
        args: [input],
        workflowExecutionTimeout: t.generateTimeoutMs,
        ...(t.eagerStart ? { requestEagerStart: true } : {}),
        typedSearchAttributes: new TypedSearchAttributes([
          { key: SA.subscription, value: subscriptionId },
          { key: SA.operation, value: input.batchId },
          { key: SA.batch, value: input.batchId },
          { key: SA.template, value: input.template.name ?? input.template.url ?? input.template.urn },
          { key: SA.outputFormat, value: input.document.fileFormat },
        ]),
        staticSummary: `batch admission ${input.batchId}: rows of ${input.data.loadMethod}:${input.data.urn}`,
      });
      let admitted: AdmissionResult;
      try {
        admitted = await handle.result();
      } catch (err) {
        // The admission's time limit is the caller's wait (it may have started the batch before it stopped).
        throw toApiError(err, handle.workflowId, { timeLimitMs: t.generateTimeoutMs, made: 'batch' });
      }
      if (!admitted.accepted) {
        throw new ApiError(codeOf(admitted.problems), admitted.problems.map((p) => p.message).join('; '), admitted.problems);
      }
      // A retry with the same Idempotency-Key answers the first request's batch.
      const batchId = admitted.workflowId.replace(/^batch-/, '');
      return reply.code(201).send(success(request, 201, { batch: { id: batchId, status: 'running', rowsTotal: admitted.rowsTotal } }));
    },
  );

  app.get('/documents/batch/:id', { schema: getBatchSchema }, async (request) => {
    const { id } = request.params;
    const q = request.query;
    const batch = await getBatch(opts.db, request.auth.subscriptionId, id);
    if (!batch) throw new ApiError('NOT_FOUND_BY_ID', `batch ${id} not found`);
    return success(request, 200, { batch: await progressOf(opts.db, batch, { top: q.top ?? 100, skip: q.skip ?? 0 }) });
  });

  app.get('/documents/batch/:id/rows', { schema: listBatchRowsSchema }, async (request) => {
    const { id } = request.params;
    const q = request.query;
    const batch = await getBatch(opts.db, request.auth.subscriptionId, id);
    if (!batch) throw new ApiError('NOT_FOUND_BY_ID', `batch ${id} not found`);
    const page = await listBatchRows(opts.db, batch.subscriptionId, batch.id, {
      ...(q.status ? { status: q.status } : {}),
      top: q.top ?? 100,
      skip: q.skip ?? 0,
    });
    return success(request, 200, {
      rowCount: page.rowCount,
      rows: page.rows.map((r) =>
        r.status === 'done'
          ? {
              row: r.row,
              status: r.status,
              ...(r.urn ? { urn: r.urn } : {}),
              name: r.name,
              path: r.path,
              pages: r.pages,
              ...(r.warnings.length > 0 ? { warnings: r.warnings } : {}),
            }
          : { row: r.row, status: r.status, code: r.code, message: r.message },
      ),
    });
  });

  app.post('/documents/batch/:id/cancel', { schema: cancelBatch }, async (request) => {
    const { id } = request.params;
    const batch = await getBatch(opts.db, request.auth.subscriptionId, id);
    if (!batch) throw new ApiError('NOT_FOUND_BY_ID', `batch ${id} not found`);
    if (batch.status === 'running') {
      // First the rows' signal (read between rows), then the workflow's cancellation.
      await requestBatchCancel(opts.db, request.auth.subscriptionId, id);
      try {
        await opts.temporal.client.workflow.getHandle(batch.workflowId).cancel();
      } catch (err) {
        if (!(err instanceof WorkflowNotFoundError)) throw err;
      }
    }
    const now = (await getBatch(opts.db, request.auth.subscriptionId, id)) ?? batch;
    return success(request, 200, { batch: await progressOf(opts.db, now, { top: 100, skip: 0 }) });
  });
};

export default batchRoutes;
