// Batches (extension): POST /documents/document/generate/batch, GET /documents/batch/{id}, /rows and POST
// /documents/batch/{id}/cancel. The request is generate's (core/generate.ts through GenerateRequest) with
// the rows' fields; formats and methods are enums of core/ and the location registry.
import Type from 'typebox';
import { LOCATION_CATALOG } from '../../connectors/registry.ts';
import { COMBINED_FORMATS } from '../../core/batch.ts';
import { pathWording } from '../../core/locations.ts';
import { ROWS_FORMATS } from '../../core/rows.ts';
import { component, documentedEnum, stringEnum } from './components.ts';
import { Consumption, envelopeTail, errorResponses, ExternalContext, InnerError, successEnvelope } from './envelopes.ts';
import { CALLBACK_HEADERS, GenerateRequest, GenerateWarning, IdempotencyHeaders } from './generation.ts';

const TAG = 'Generation';
const request = GenerateRequest.properties;
/** Where rows' documents may go: generate's delivery methods. */
const ROW_DELIVERY = (request.document.properties.deliveryMethod as unknown as { enum: string[] }).enum;
/** Where the combined output may go: any location generate writes to (core/batch.ts parseCombined;
 *  test/unit/openapi.test.ts holds them equal). */
export const COMBINED_DELIVERY: readonly string[] = ROW_DELIVERY;
/** data.variables[].type: what a GraphQL request does with each (core/generate.ts graphqlRequestOf). */
const VARIABLE_TYPES = ['graphql', 'header'];
// The batch's enumerations are checked by the batch's rules, every problem of a request at once (a 400 that
// lists them all): the document lists their values, the route's validation does not stop at the first.

export const BatchRequest = component(
  'BatchRequest',
  Type.Object(
    {
      template: request.template,
      data: Type.Object({
        ...request.data.properties,
        variables: Type.Optional(
          Type.Array(
            Type.Object({
              name: Type.String(),
              value: Type.Unknown(),
              type: documentedEnum(VARIABLE_TYPES, {
                description: 'graphql: a variable of the query; header: a request header for the endpoint (e.g. Authorization)',
              }),
            }),
          ),
        ),
        urn: Type.String({
          description: 'Id of an uploaded data file (.json, .jsonl or .csv), the file at the drive, or the GraphQL endpoint',
        }),
        rowsPath: Type.Optional(
          Type.String({
            description:
              'The list of rows inside one JSON value, as a dotted path: required for GraphQL (e.g. customers, for a result {"customers": [...]}); for a JSON file holding an object',
          }),
        ),
        rowsFormat: Type.Optional(
          documentedEnum(ROWS_FORMATS, {
            description:
              "json (an array of objects, or one value with rowsPath), jsonl (one object per line) or csv (first line names the columns; comma, semicolon or tab); default: read from the first character. Checked with the batch's other rules, every problem at once",
          }),
        ),
      }),
      document: Type.Object({
        ...request.document.properties,
        name: Type.String({
          minLength: 1,
          description: 'A pattern over the row with the template tag syntax, e.g. "Invoice {number}" or "{customer.name | upper}"',
        }),
        path: Type.String({ description: `A pattern over the row (e.g. root/{region}): ${pathWording(LOCATION_CATALOG, 'generate')}` }),
        deliveryMethod: Type.Optional(
          documentedEnum(ROW_DELIVERY, {
            description: 'One document per row there. Leave out to put the rows only into the combined output',
          }),
        ),
      }),
      combined: Type.Optional(
        Type.Object({
          format: documentedEnum(COMBINED_FORMATS, {
            description: "zip (every row's document) or pdf (every row's pages in row order; document.fileFormat must be pdf)",
          }),
          name: Type.String({ minLength: 1 }),
          path: Type.String({ description: pathWording(LOCATION_CATALOG, 'generate') }),
          deliveryMethod: documentedEnum(COMBINED_DELIVERY),
        }),
      ),
      stopAfterFailures: Type.Optional(
        Type.Integer({
          description:
            'At least 1: end the batch (status stopped, no combined output) once this many rows have failed; default: a failed row never ends the batch',
        }),
      ),
      externalContext: Type.Optional(ExternalContext),
    },
    { description: 'One template, rows of a data file, one document per row and/or one combined output' },
  ),
);

const Failure = Type.Object({
  row: Type.Integer({ description: '1-based, as in the data file' }),
  code: Type.String(),
  message: Type.String(),
});

export const BatchRow = component(
  'BatchRow',
  Type.Object({
    row: Type.Integer(),
    status: stringEnum(['done', 'failed']),
    urn: Type.Optional(Type.String({ description: 'The document (done rows delivered to a location)' })),
    name: Type.Optional(Type.String()),
    path: Type.Optional(Type.String()),
    pages: Type.Optional(Type.Integer()),
    code: Type.Optional(Type.String()),
    message: Type.Optional(Type.String()),
    warnings: Type.Optional(
      Type.Array(GenerateWarning, {
        description:
          "Extension, done rows, present only when not empty: the warnings of the row's e-invoice (document.einvoice): its warning-level rules (EINVOICE_RULE, tag the rule, location.part the field) and, with document.einvoice.template, the XML template's tags that rendered empty (MISSING_VALUE), as a single generate lists them in result.data.warnings",
      }),
    ),
  }),
);

export const BatchProgress = component(
  'BatchProgress',
  Type.Object({
    id: Type.String({ format: 'uuid' }),
    status: stringEnum(['running', 'cancelling', 'completed', 'stopped', 'cancelled', 'failed'], {
      description:
        'running; cancelling (a cancel came: no row starts, the rows in progress finish); completed, stopped (stopAfterFailures), cancelled or failed',
    }),
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
        pages: Type.Optional(Type.Integer({ description: "The merged PDF's pages (the sum of the rows')" })),
      }),
    ),
    error: Type.Optional(Type.Object({ code: Type.String(), message: Type.String() })),
    failures: Type.Object(
      { rowCount: Type.Integer(), items: Type.Array(Failure) },
      { description: 'Failed rows, a page of them (top, skip)' },
    ),
  }),
);

export const BatchStarted = component(
  'BatchStarted',
  Type.Object({
    id: Type.String({ format: 'uuid' }),
    status: stringEnum(['running'], { description: 'A batch starts running; GET /documents/batch/{id} follows it' }),
    rowsTotal: Type.Integer(),
  }),
);

/** What the summary callback says of the batch (workflows/batch.ts). */
export const BatchSummary = component(
  'BatchSummary',
  Type.Object({
    id: Type.String({ format: 'uuid' }),
    status: stringEnum(['completed', 'stopped', 'cancelled', 'failed']),
    rowsTotal: Type.Integer(),
    rowsDone: Type.Integer(),
    rowsFailed: Type.Integer(),
    pages: Type.Integer(),
    combined: Type.Optional(Type.Object({ urn: Type.String(), name: Type.String(), pages: Type.Optional(Type.Integer()) })),
  }),
);

/** The summary callback's body when the batch ended (completed, stopped or cancelled): a metered envelope. */
export const BatchSummaryResult = component(
  'BatchSummaryResult',
  Type.Object({
    result: Type.Object({
      statusCode: Type.Integer({ examples: [201] }),
      message: Type.String(),
      data: Type.Object({ batch: BatchSummary }),
    }),
    consumption: Consumption,
    ...envelopeTail,
  }),
);

/** The summary callback's body when the batch failed: the error envelope with the batch's counts. */
export const BatchSummaryError = component(
  'BatchSummaryError',
  Type.Object({
    error: Type.Object({ statusCode: Type.Integer({ examples: [500] }), message: Type.String(), innerErrors: Type.Array(InnerError) }),
    batch: BatchSummary,
    ...envelopeTail,
  }),
);

const Paging = Type.Object({
  top: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
  skip: Type.Optional(Type.Integer({ minimum: 0, default: 0 })),
});
const BatchParams = Type.Object({ id: Type.String({ description: 'The batch id (of the 201)' }) });
const oneBatch = successEnvelope(Type.Object({ batch: BatchProgress }));

export const startBatch = {
  operationId: 'startBatch',
  tags: [TAG],
  summary: 'Generate one document per row of a data file, as one durable batch (extension)',
  description: [
    'One template, the rows of an uploaded JSON array, JSON Lines or CSV file (or such a file at a drive, or a list in a GraphQL result, named by data.rowsPath), one document per row delivered like a generate\'s (document.name and document.path are patterns over the row, e.g. "Invoice {number}") and/or one combined output: a zip of every document, or one PDF of every row\'s pages in row order.',
    "Checked before anything runs: the template, data and document as a generate request, the batch's rules, the patterns, and the first rows (merged and named): any problem answers 400 and nothing is queued or consumed. Then 201 with the batch id at once; follow it with GET /documents/batch/{id}.",
    "A failed row never fails the batch (unless stopAfterFailures); each done row is metered as a document (pages-generated, documents-generated) and recorded like a generated document; each row's document is written once, whatever crashes happen. The uploads the request names are consumed when the batch ends. With `X-Client-Authorization` (POST /common/client/token), the batch's summary is POSTed to the callback when it ends, signed like an async generate's callback.",
  ].join('\n\n'),
  headers: Type.Object({
    'x-client-authorization': Type.Optional(
      Type.String({
        description: "Optional: a client-authorization token; the batch's summary is POSTed to its callback when the batch ends",
      }),
    ),
    ...IdempotencyHeaders.properties,
  }),
  body: BatchRequest,
  response: { 201: successEnvelope(Type.Object({ batch: BatchStarted })), ...errorResponses(400, 401, 409, 504) },
  // What @fastify/swagger cannot express, merged into the operation by plugins/openapi.ts.
  'x-openapi': {
    callbacks: {
      summary: {
        '{$request.header.X-Client-Authorization}': {
          post: {
            operationId: 'startBatchSummary',
            summary: 'The summary of a batch that ended',
            description:
              "POSTed once the batch has ended to iss joined with dest of the request's client-authorization token, with `Authorization: Bearer <sub>` and Standard Webhooks headers, as an async generate's callback: the batch's counts in a metered envelope (completed, stopped, cancelled), or the error envelope with the batch's counts (failed).",
            security: [{ callbackBearer: [] }],
            parameters: CALLBACK_HEADERS,
            requestBody: {
              required: true,
              content: { 'application/json': { schema: { oneOf: [BatchSummaryResult, BatchSummaryError] } } },
            },
            responses: {
              '2XX': { description: 'Delivered: no further attempt' },
              '410': { description: 'Gone: no further attempt' },
              '4XX': { description: 'No further attempt, except for 408 and 429, which are retried (never sooner than Retry-After)' },
              '5XX': { description: 'Retried on CALLBACK_RETRY_SCHEDULE, never sooner than Retry-After' },
            },
          },
        },
      },
    },
  },
};

export const getBatch = {
  operationId: 'getBatch',
  tags: [TAG],
  summary: 'Progress of a batch (extension)',
  description:
    "Rows total, done and failed, the rate and the estimated end, the combined output once written, and a page of the failed rows (top, skip) with their row number, code and message. Another subscription's batch reads as 404.",
  params: BatchParams,
  querystring: Paging,
  response: { 200: oneBatch, ...errorResponses(401, 404) },
};

export const listBatchRows = {
  operationId: 'listBatchRows',
  tags: [TAG],
  summary: 'The rows of a batch processed so far (extension)',
  description:
    "In row order, a page at a time (top, skip), optionally only done or only failed ones (status): a done row's document (urn, name, path, pages), a failed row's code and message.",
  params: BatchParams,
  querystring: Type.Object({ ...Paging.properties, status: Type.Optional(Type.Union([Type.Literal('done'), Type.Literal('failed')])) }),
  response: {
    200: successEnvelope(Type.Object({ rowCount: Type.Integer(), rows: Type.Array(BatchRow) })),
    ...errorResponses(400, 401, 404),
  },
};

export const cancelBatch = {
  operationId: 'cancelBatch',
  tags: [TAG],
  summary: 'Cancel a batch (extension)',
  description:
    'Stops the batch: no row starts after the cancel (each chunk checks between rows); the rows in progress (at most one per chunk running) finish. The rows done stay (documents, records, metering), nothing is half-written, no combined output (zip or merged PDF) is made, the uploads are consumed, and the summary callback says cancelled. Answers the progress as it is: status cancelling until the batch has stopped, then cancelled; cancelling an ended batch changes nothing.',
  params: BatchParams,
  response: { 200: oneBatch, ...errorResponses(401, 404) },
};
