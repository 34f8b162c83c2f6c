// Batches (extension): POST /documents/document/generate/batch starts one durable job for many rows; GET
// /documents/batch/{id} reads its progress, /rows its rows, POST /documents/batch/{id}/cancel stops it.
// Everything a request can be checked for is checked before anything starts: generate's checks on the
// template, data and each row's document; the batch's own rules; the name and path patterns; then the
// admission workflow reads the rows and merges and names the first ones (a problem there is the 400, and
// nothing runs). The answer is 201 with the batch id as soon as the batch runs.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import Type from 'typebox';
import { WorkflowNotFoundError } from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import type { Config } from '../../config/env.ts';
import { type BatchInput, type BatchRequest, batchAdmissionWorkflowId, checkBatchRules, type CombinedFormat, generateShapeOf } from '../../core/batch.ts';
import { ApiError, type ErrorCode, type InnerError, innerError, isErrorCode } from '../../core/errors.ts';
import type { RowsFormat } from '../../core/rows.ts';
import { SA } from '../../core/search-attributes.ts';
import { outboundPolicy } from '../../connectors/http/address-policy.ts';
import { LOCATION_CATALOG, type LocationRegistry, problemCode } from '../../connectors/registry.ts';
import { sealTemplateUrl } from '../../connectors/url/location.ts';
import { sealHeaderVariables } from '../../security/sealed.ts';
import { parseGenerateRequest } from '../../core/generate.ts';
import type { LocationNeed } from '../../core/locations.ts';
import { compileTextPattern, TemplateError } from '../../engine/text-pattern.ts';
import { readClientToken } from '../../security/client-token.ts';
import type { Db } from '../../store/db.ts';
import { getBatch, listBatchRows, type Batch } from '../../store/records/batches.ts';
import type { AdmissionResult, batchAdmission } from '../../workflows/batch.ts';
import { captureExternalContext, origin, success } from '../envelope.ts';
import { errorResponses, ExternalContext, successEnvelope } from '../schemas.ts';
import { idempotencyOf, idempotentWorkflowId, startOnce, toApiError, type WorkflowStarter } from '../temporal.ts';
import { assertCallbackReachable } from './client-token.ts';
import { GenerateBody, IdempotencyHeaders, runContext } from './generate.ts';

const HEADER = 'x-client-authorization';

export const BatchBody = Type.Object({
  template: GenerateBody.properties.template,
  data: Type.Object({
    ...GenerateBody.properties.data.properties,
    loadMethod: Type.String({ description: 'Storage (an uploaded .json, .jsonl or .csv data file), DriveA or DriveB (such a file at the drive), or GraphQL' }),
    urn: Type.String({ description: 'Id of an uploaded data file, the file at the drive, or the GraphQL endpoint' }),
    rowsPath: Type.Optional(Type.String({ description: 'The list of rows inside one JSON value, as a dotted path: required for GraphQL (e.g. customers, for a result {"customers": [...]}); for a JSON file holding an object' })),
    rowsFormat: Type.Optional(Type.String({ description: 'json (an array of objects, or one value with rowsPath), jsonl (one object per line) or csv (first line names the columns; comma, semicolon or tab); default: read from the first character' })),
  }),
  document: Type.Object({
    ...GenerateBody.properties.document.properties,
    name: Type.String({ minLength: 1, description: 'A pattern over the row with the template tag syntax, e.g. "Invoice {number}" or "{customer.name | upper}"' }),
    path: Type.String({ description: "A pattern over the row: 'root' or 'root/<folder>' for Storage (e.g. root/{region}); '' or a folder for the drives" }),
    deliveryMethod: Type.Optional(Type.String({ description: 'Storage, DriveA or DriveB: one document per row there. Leave out to put the rows only into the combined output' })),
  }),
  combined: Type.Optional(
    Type.Object({
      format: Type.String({ description: 'zip (every row\'s document) or pdf (every row\'s pages in row order; document.fileFormat must be pdf)' }),
      name: Type.String({ minLength: 1 }),
      path: Type.String({ description: "'root' or 'root/<folder>' for Storage; '' or a folder for the drives" }),
      deliveryMethod: Type.String({ description: 'Storage, DriveA or DriveB' }),
    }),
  ),
  stopAfterFailures: Type.Optional(Type.Integer({ description: 'End the batch (status stopped, no combined output) once this many rows have failed; default: a failed row never ends the batch' })),
  externalContext: Type.Optional(ExternalContext),
});

const Failure = Type.Object({ row: Type.Integer({ description: '1-based, as in the data file' }), code: Type.String(), message: Type.String() });
export const BatchRowSchema = Type.Object({
  row: Type.Integer(),
  status: Type.String({ description: 'done or failed' }),
  urn: Type.Optional(Type.String({ description: 'The document (done rows delivered to a location)' })),
  name: Type.Optional(Type.String()),
  path: Type.Optional(Type.String()),
  pages: Type.Optional(Type.Integer()),
  code: Type.Optional(Type.String()),
  message: Type.Optional(Type.String()),
});

export const BatchProgressSchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  status: Type.String({ description: 'running, completed, stopped (stopAfterFailures), cancelled or failed' }),
  rowsTotal: Type.Integer(),
  rowsDone: Type.Integer(),
  rowsFailed: Type.Integer(),
  pages: Type.Integer({ description: 'pages-generated so far' }),
  rate: Type.Number({ description: 'Rows per second since the batch started (done and failed)' }),
  estimatedEnd: Type.Optional(Type.String({ format: 'date-time', description: 'While running, at the current rate' })),
  createdDate: Type.String({ format: 'date-time' }),
  endedDate: Type.Optional(Type.String({ format: 'date-time' })),
  combined: Type.Optional(
    Type.Object({
      format: Type.String(),
      urn: Type.Optional(Type.String({ description: 'Once written: for Storage, download with GET /documents/storage/{urn}/content' })),
      name: Type.Optional(Type.String()),
      pages: Type.Optional(Type.Integer({ description: 'The merged PDF\'s pages (the sum of the rows\')' })),
    }),
  ),
  error: Type.Optional(Type.Object({ code: Type.String(), message: Type.String() })),
  failures: Type.Object({ rowCount: Type.Integer(), items: Type.Array(Failure) }, { description: 'Failed rows, a page of them (top, skip)' }),
});

const Paging = Type.Object({
  top: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
  skip: Type.Optional(Type.Integer({ minimum: 0, default: 0 })),
});

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
    status: batch.status,
    rowsTotal: batch.rowsTotal,
    rowsDone: batch.rowsDone,
    rowsFailed: batch.rowsFailed,
    pages: batch.pages,
    rate: Math.round(rate * 100) / 100,
    ...(batch.status === 'running' && rate > 0 ? { estimatedEnd: new Date(Date.now() + (left / rate) * 1000).toISOString() } : {}),
    createdDate: batch.createdDate.toISOString(),
    ...(batch.endedDate ? { endedDate: batch.endedDate.toISOString() } : {}),
    ...(batch.combined
      ? { combined: { format: batch.combined.format, ...(batch.combined.urn ? { urn: batch.combined.urn, name: batch.combined.name } : {}), ...(batch.combined.pages !== undefined ? { pages: batch.combined.pages } : {}) } }
      : {}),
    ...(batch.error ? { error: batch.error } : {}),
    failures: { rowCount: failures.rowCount, items: failures.rows.map((r) => ({ row: r.row, code: r.code, message: r.message })) },
  };
}

export default async function batchRoutes(app: FastifyInstance, opts: BatchRouteOptions) {
  const policy = outboundPolicy(opts.config.outboundAllow);
  const clientTokens = new WeakMap<FastifyRequest, { url: string; value: string }>();
  const tuning = {
    chunkRows: opts.config.batchChunkRows,
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
      schema: {
        tags: ['Generation'],
        summary: 'Generate one document per row of a data file, as one durable batch (extension)',
        description: [
          'One template, the rows of an uploaded JSON array, JSON Lines or CSV file (or such a file at a drive, or a list in a GraphQL result, named by data.rowsPath), one document per row delivered like a generate\'s (document.name and document.path are patterns over the row, e.g. "Invoice {number}") and/or one combined output: a zip of every document, or one PDF of every row\'s pages in row order.',
          'Checked before anything runs: the template, data and document as a generate request, the batch\'s rules, the patterns, and the first rows (merged and named): any problem answers 400 and nothing is queued or consumed. Then 201 with the batch id at once; follow it with GET /documents/batch/{id}.',
          'A failed row never fails the batch (unless stopAfterFailures); each done row is metered as a document (pages-generated, documents-generated) and recorded like a generated document; each row\'s document is written once, whatever crashes happen. The uploads the request names are consumed when the batch ends. With `X-Client-Authorization` (POST /common/client/token), the batch\'s summary is POSTed to the callback when it ends, signed like an async generate\'s callback.',
        ].join('\n\n'),
        headers: Type.Object({
          'x-client-authorization': Type.Optional(Type.String({ description: 'Optional: a client-authorization token; the batch\'s summary is POSTed to its callback when the batch ends' })),
          ...IdempotencyHeaders.properties,
        }),
        body: BatchBody,
        response: {
          201: successEnvelope(Type.Object({ batch: Type.Object({ id: Type.String({ format: 'uuid' }), status: Type.String(), rowsTotal: Type.Integer() }) })),
          ...errorResponses(400, 401, 409, 504),
        },
      },
    },
    async (request, reply) => {
      const body = request.body as BatchRequest;
      const problems: InnerError[] = [...checkBatchRules(body)];
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
      const needs: LocationNeed[] = parsed.needs.filter((n) => rowsDelivered || n.capability !== 'write' || n.field !== 'document.deliveryMethod');
      if (body.combined) {
        const c = body.combined;
        needs.push({ method: c.deliveryMethod, capability: 'write', field: 'combined.deliveryMethod', ...(c.format === 'pdf' ? { fileFormat: 'pdf' } : {}), target: { name: c.name, path: c.path, field: 'combined' } });
      }
      const converter = opts.temporal.converter?.();
      if (converter && !converter.available && body.document.fileFormat !== body.template.fileFormat) {
        problems.push(innerError('NOT_SUPPORTED', `document.fileFormat ${body.document.fileFormat} needs a converter, and none is available: ${converter.reason}. ${converter.howToEnable}`));
      }
      if (problems.length > 0) throw new ApiError(codeOf(problems), problems.map((p) => p.message).join('; '), problems);
      const { subscriptionId, userId } = request.auth;
      const { problems: unavailable, connections } = await opts.locations.check(subscriptionId, needs);
      if (unavailable.length > 0) throw new ApiError(problemCode(unavailable), unavailable.map((p) => p.message).join('; '), unavailable);
      const run = runContext({ operationId: request.ctx.operationId, subscriptionId, userId }, needs, connections);
      const { input: generate } = parsed;
      const { variables } = generate.data;
      const client = clientTokens.get(request);
      const input: BatchInput = {
        batchId: run.operationId,
        run,
        // As a generate's: template.url and GraphQL header variables sealed, so no history shows them.
        template: { ...generate.template, ...(generate.template.url ? await sealTemplateUrl(opts.db, subscriptionId, generate.template.url) : {}) },
        data: {
          ...generate.data,
          ...(variables ? { variables: await sealHeaderVariables(opts.db, subscriptionId, variables) } : {}),
          ...(body.data.rowsPath !== undefined ? { rowsPath: body.data.rowsPath } : {}),
          ...(body.data.rowsFormat !== undefined ? { rowsFormat: body.data.rowsFormat as RowsFormat } : {}),
        },
        document: { ...generate.document, deliveryMethod: body.document.deliveryMethod ?? '', path: body.document.deliveryMethod ? body.document.path : 'root' },
        ...(body.combined ? { combined: { ...body.combined, format: body.combined.format as CombinedFormat } } : {}),
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
        envelope: { origin: origin(request), ...(request.ctx.externalContext !== undefined ? { externalContext: request.ctx.externalContext } : {}) },
      };
      const idem = idempotencyOf(request.headers, { body: request.body, callback: client?.url });
      const t = opts.temporal;
      const handle = await startOnce<typeof batchAdmission>(t, 'batchAdmission', idem, {
        taskQueue: t.taskQueue,
        workflowId: idem ? idempotentWorkflowId('batch', subscriptionId, idem) : batchAdmissionWorkflowId(input.batchId),
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
        throw toApiError(err, handle.workflowId);
      }
      if (!admitted.accepted) {
        throw new ApiError(codeOf(admitted.problems), admitted.problems.map((p) => p.message).join('; '), admitted.problems);
      }
      // A retry with the same Idempotency-Key answers the first request's batch.
      const batchId = admitted.workflowId.replace(/^batch-/, '');
      return reply.code(201).send(success(request, 201, { batch: { id: batchId, status: 'running', rowsTotal: admitted.rowsTotal } }));
    },
  );

  app.get(
    '/documents/batch/:id',
    {
      schema: {
        tags: ['Generation'],
        summary: 'Progress of a batch (extension)',
        description: 'Rows total, done and failed, the rate and the estimated end, the combined output once written, and a page of the failed rows (top, skip) with their row number, code and message. Another subscription\'s batch reads as 404.',
        params: Type.Object({ id: Type.String() }),
        querystring: Paging,
        response: { 200: successEnvelope(Type.Object({ batch: BatchProgressSchema })), ...errorResponses(401, 404) },
      },
    },
    async (request) => {
      const { id } = request.params as { id: string };
      const q = request.query as { top?: number; skip?: number };
      const batch = await getBatch(opts.db, request.auth.subscriptionId, id);
      if (!batch) throw new ApiError('NOT_FOUND_BY_ID', `batch ${id} not found`);
      return success(request, 200, { batch: await progressOf(opts.db, batch, { top: q.top ?? 100, skip: q.skip ?? 0 }) });
    },
  );

  app.get(
    '/documents/batch/:id/rows',
    {
      schema: {
        tags: ['Generation'],
        summary: 'The rows of a batch processed so far (extension)',
        description: 'In row order, a page at a time (top, skip), optionally only done or only failed ones (status): a done row\'s document (urn, name, path, pages), a failed row\'s code and message.',
        params: Type.Object({ id: Type.String() }),
        querystring: Type.Object({ ...Paging.properties, status: Type.Optional(Type.Union([Type.Literal('done'), Type.Literal('failed')])) }),
        response: { 200: successEnvelope(Type.Object({ rowCount: Type.Integer(), rows: Type.Array(BatchRowSchema) })), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const { id } = request.params as { id: string };
      const q = request.query as { top?: number; skip?: number; status?: 'done' | 'failed' };
      const batch = await getBatch(opts.db, request.auth.subscriptionId, id);
      if (!batch) throw new ApiError('NOT_FOUND_BY_ID', `batch ${id} not found`);
      const page = await listBatchRows(opts.db, batch.subscriptionId, batch.id, { ...(q.status ? { status: q.status } : {}), top: q.top ?? 100, skip: q.skip ?? 0 });
      return success(request, 200, {
        rowCount: page.rowCount,
        rows: page.rows.map((r) =>
          r.status === 'done' ? { row: r.row, status: r.status, ...(r.urn ? { urn: r.urn } : {}), name: r.name, path: r.path, pages: r.pages } : { row: r.row, status: r.status, code: r.code, message: r.message },
        ),
      });
    },
  );

  app.post(
    '/documents/batch/:id/cancel',
    {
      schema: {
        tags: ['Generation'],
        summary: 'Cancel a batch (extension)',
        description: 'Stops the batch after the rows in progress, which finish: the rows done stay (documents, records, metering), nothing is half-written, no combined output is made, the uploads are consumed. Answers the progress as it is (status running until the batch has stopped, then cancelled); cancelling an ended batch changes nothing.',
        params: Type.Object({ id: Type.String() }),
        response: { 200: successEnvelope(Type.Object({ batch: BatchProgressSchema })), ...errorResponses(401, 404) },
      },
    },
    async (request) => {
      const { id } = request.params as { id: string };
      const batch = await getBatch(opts.db, request.auth.subscriptionId, id);
      if (!batch) throw new ApiError('NOT_FOUND_BY_ID', `batch ${id} not found`);
      if (batch.status === 'running') {
        try {
          await opts.temporal.client.workflow.getHandle(batch.workflowId).cancel();
        } catch (err) {
          if (!(err instanceof WorkflowNotFoundError)) throw err;
        }
      }
      const now = (await getBatch(opts.db, request.auth.subscriptionId, id)) ?? batch;
      return success(request, 200, { batch: await progressOf(opts.db, now, { top: 100, skip: 0 }) });
    },
  );
}
