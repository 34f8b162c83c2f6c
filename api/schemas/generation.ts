// Generation (spec 4.8, 5.3, 6): generate, async generate with its callback, manage. The request bodies are
// core's contracts (core/generate.ts, core/manage.ts), their location fields enums of the registered
// locations (connectors/registry.ts) and their formats of core/formats.ts.
import Type from 'typebox';
import { LOCATION_CATALOG } from '../../connectors/registry.ts';
import { ALL_FORMATS, TEMPLATE_FORMATS } from '../../core/formats.ts';
import { generateMethods, generateRequestSchema, MAX_GENERATE_WARNINGS } from '../../core/generate.ts';
import { LINK_FIELDS, methodsFor, orList, urnWording } from '../../core/locations.ts';
import { manageRequestSchema } from '../../core/manage.ts';
import { component, enumComponent, noContent, propertiesOf, stringEnum, withExample } from './components.ts';
import { Consumption, envelopeTail, ErrorEnvelope, errorResponses, ExternalContext, InnerError, meteredEnvelope } from './envelopes.ts';
import * as examples from './examples.ts';

const TAG = 'Generation';

// One schema per list of formats, whoever declares it (core's request schemas too): clients get one type.
enumComponent(
  'FileFormat',
  ALL_FORMATS,
  "A document's format: a template's own (docx, xlsx, pptx; gdoc, gsheet, gslide at DriveB), pdf or csv",
);
enumComponent('TemplateFormat', TEMPLATE_FORMATS, "A template's format: docx, xlsx, pptx; gdoc, gsheet, gslide load from DriveB only");

/** The optional Idempotency-Key header of generate, async generate and manage. */
export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      description:
        'Optional, 1 to 255 visible ASCII characters, scoped to the subscription. A retry with the same key and the same body gets the outcome of the first request (one document, one callback), also after that request finished; the same key with a different body answers 409 IDEMPOTENCY_KEY_REUSED. Keys are remembered as long as Temporal keeps the run (the namespace retention period).',
    }),
  ),
});

const methods = generateMethods(LOCATION_CATALOG);

/** The body of generate and async generate (core/generate.ts), with externalContext. */
export const GenerateRequest = component(
  'GenerateRequest',
  Type.Object(
    { ...generateRequestSchema(LOCATION_CATALOG).properties, externalContext: Type.Optional(ExternalContext) },
    { description: 'A template, its data and where the document goes (spec 4.8)', examples: [examples.generateRequest] },
  ),
);

export const GeneratedDocument = component(
  'GeneratedDocument',
  Type.Object({
    deliveryMethod: stringEnum(methods.delivery),
    name: Type.String({ description: 'The file name, with its extension' }),
    fileFormat: stringEnum(ALL_FORMATS),
    urn: Type.String({ description: urnWording(LOCATION_CATALOG, 'generate', 'write') }),
    uri: Type.Optional(Type.String({ description: 'Drive deliveries: where the file opens (the drive item web URL)' })),
    ...propertiesOf(LINK_FIELDS, () =>
      Type.Optional(Type.String({ description: 'Drive deliveries: a sharing link made for the file (document.options.driveA / driveB)' })),
    ),
    documentGuid: Type.String({ format: 'uuid', description: 'Extension: the document record of this file' }),
  }),
);

/** Where a tag is in its template, as `docgen inspect` and `docgen render` locate it. */
export const TemplateLocation = component(
  'TemplateLocation',
  Type.Object(
    {
      part: Type.String({
        description: 'The package part holding the tag, e.g. word/document.xml, xl/worksheets/sheet1.xml, ppt/slides/slide2.xml',
      }),
      paragraph: Type.Optional(Type.Integer({ minimum: 1, description: 'Word and PowerPoint: the paragraph of the part, counted from 1' })),
      sheet: Type.Optional(Type.String({ description: "Workbooks: the sheet's name" })),
      cell: Type.Optional(Type.String({ description: 'Workbooks: the cell, A1 style' })),
      offset: Type.Optional(Type.Integer({ minimum: 0, description: "Where the tag starts in the part's visible text (characters)" })),
      line: Type.Optional(
        Type.Integer({ minimum: 1, description: "An e-invoice's XML template (document.einvoice.template): the tag's line, from 1" }),
      ),
      column: Type.Optional(Type.Integer({ minimum: 1, description: "An e-invoice's XML template: the tag's column in its line, from 1" })),
    },
    { description: 'Where a tag is in the template: the part and its paragraph (docx, pptx) or its sheet and cell (xlsx)' },
  ),
);

/** A tag that rendered empty for want of data (extension). */
export const GenerateWarning = component(
  'GenerateWarning',
  Type.Object(
    {
      code: stringEnum(['MISSING_VALUE', 'IMAGE_INVALID', 'IMAGE_WITHOUT_ALT_TEXT', 'TABLE_WITHOUT_HEADER_ROW', 'EINVOICE_RULE'], {
        description:
          "MISSING_VALUE: the data has no value for the tag, which rendered empty; IMAGE_INVALID: the image the data gives for the tag is damaged (a truncated PNG) and was left out (an error under document.options.strict). With document.options.accessible (docs/accessibility.md), what a screen reader would miss, located by part with an empty tag: IMAGE_WITHOUT_ALT_TEXT, a picture with neither alternative text (an image tag value's alt, or its description in the template) nor the decorative mark; TABLE_WITHOUT_HEADER_ROW, a Word table whose first row is not a header row. Under strict these are a 400 TEMPLATE_ERROR. EINVOICE_RULE: a warning-level rule of the e-invoice's standard (document.einvoice), tag the rule (BG-16), location.part the field of the invoice data",
      }),
      message: Type.String({
        description: 'For people: which tag, and where',
        examples: ['no value for tag "customer.rep" (word/document.xml, paragraph 3)'],
      }),
      tag: Type.String({ description: 'The tag as written between its delimiters, e.g. customer.rep', examples: ['customer.rep'] }),
      location: TemplateLocation,
    },
    {
      description:
        'Extension: a tag of the template that rendered empty because the data has no value for it (each tag once, however many loop items it rendered in); with document.options.accessible, also what a screen reader would miss in the document (a picture without alternative text, a table without a header row). document.options.strict turns these into a 400 TEMPLATE_ERROR.',
    },
  ),
);

/** The 201 of generate, and the body of the async generate's callback on success. */
export const GenerateResult = component(
  'GenerateResult',
  meteredEnvelope(
    Type.Object({
      document: GeneratedDocument,
      warnings: Type.Optional(
        Type.Array(GenerateWarning, {
          description: `Extension, present only when not empty: the tags that rendered empty because the data has no value for them, in template order, then (document.options.accessible) what a screen reader would miss, then the warning-level rules of document.einvoice's standard (EINVOICE_RULE); at most ${MAX_GENERATE_WARNINGS}`,
        }),
      ),
      warningsOmitted: Type.Optional(
        Type.Integer({
          minimum: 1,
          description: `Extension, present only when there were more than ${MAX_GENERATE_WARNINGS} warnings: how many are not listed (the merge counts up to 1000 tags)`,
        }),
      ),
    }),
    { examples: [examples.generateResult] },
  ),
);

export const generateDocument = {
  operationId: 'generateDocument',
  tags: [TAG],
  summary: 'Generate a document synchronously',
  description:
    'Merges the template with the data, converts if asked, delivers the file and answers 201 with the document; a tag that rendered empty because the data has no value for it is listed in result.data.warnings (extension; with document.options.strict true it fails the request instead). A failure answers 400 with the reason in error.innerErrors (TEMPLATE_NOT_FOUND, DATA_NOT_FOUND, INVALID_TEMPLATE_FORMAT when the template is of another kind than template.fileFormat, TEMPLATE_ERROR, TEMPLATE_TOO_COMPLEX when a template limit, MERGE_MAX_MEMORY_MB or MERGE_TIMEOUT_MS is exceeded, EINVOICE_INVALID when the invoice of document.einvoice breaks a rule of its standard (one inner error per rule: `<rule> <field>: <why>`, e.g. BR-CO-15 invoice.totals.grandTotal), VALIDATION_ERROR, NOT_SUPPORTED) and nothing is written to the target.',
  headers: IdempotencyHeaders,
  body: GenerateRequest,
  response: {
    201: GenerateResult,
    ...errorResponses(401, 409, 504),
    400: withExample(ErrorEnvelope, examples.templateNotFound),
  },
};

export const CALLBACK_HEADERS = [
  {
    name: 'webhook-id',
    in: 'header',
    required: true,
    description:
      'Standard Webhooks message id: `msg_` and the operationId of the request, the same on every attempt of one callback (deduplicate on it)',
    schema: { type: 'string', examples: ['msg_9e4c7a2b-1d5f-4b8e-a3c6-5f2d8b1e7c94'] },
  },
  {
    name: 'webhook-timestamp',
    in: 'header',
    required: true,
    description: 'Seconds since the epoch when this attempt was sent (reject one too far from now)',
    schema: { type: 'string', pattern: '^[0-9]+$', examples: ['1772442847'] },
  },
  {
    name: 'webhook-signature',
    in: 'header',
    required: true,
    description:
      '`v1,` followed by base64(HMAC-SHA256(key, "<webhook-id>.<webhook-timestamp>.<raw body>")), the key being the base64-decoded `webhookSecret` of the client token after `whsec_`. Any Standard Webhooks library verifies it, or the SDK\'s verifyCallback.',
    schema: { type: 'string', examples: ['v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4='] },
  },
  {
    name: 'user-agent',
    in: 'header',
    required: true,
    description: 'Always docgen-webhooks',
    schema: { type: 'string', enum: ['docgen-webhooks'] },
  },
];

export const generateDocumentAsync = {
  operationId: 'generateDocumentAsync',
  tags: [TAG],
  summary: 'Generate a document asynchronously',
  description: [
    'Same body and validation as the synchronous operation. Requires `X-Client-Authorization` (from `POST /common/client/token`): absent, undecryptable (400 X_CLIENT_AUTH_ERROR), unsigned, wrongly signed or expired (401), missing claims (400), a callback target the service cannot reach (a loopback, private, link-local or metadata address, or a name resolving to one or to nothing, unless OUTBOUND_ALLOW lists it: 400 X_CLIENT_AUTH_ERROR).',
    'Answers 201 with an empty body once queued. The result is then POSTed to iss joined with dest with `Authorization: Bearer <sub>`: the synchronous 201 body on success, the error envelope on failure (no result, no consumption), externalContext echoed (see the callback `result`).',
    'Each delivery carries Standard Webhooks headers (`webhook-id` stable across retries, `webhook-timestamp`, `webhook-signature` verifiable with the `webhookSecret` of the token response). Failed deliveries are retried on the CALLBACK_RETRY_SCHEDULE (default immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h), never sooner than a Retry-After; a 3xx counts as a failure and is not followed; 410 and other 4xx except 408 and 429 stop the retries.',
  ].join('\n\n'),
  headers: Type.Object({
    'x-client-authorization': Type.Optional(
      Type.String({ description: 'Client-authorization token from POST /common/client/token (required)' }),
    ),
    ...IdempotencyHeaders.properties,
  }),
  body: GenerateRequest,
  response: {
    201: noContent('Queued; the result follows as a callback. Empty body.'),
    ...errorResponses(400, 401, 409),
  },
  // What @fastify/swagger cannot express, merged into the operation by plugins/openapi.ts.
  'x-openapi': {
    callbacks: {
      result: {
        // The callback URL is inside that header: iss joined with dest, claims of the client token.
        '{$request.header.X-Client-Authorization}': {
          post: {
            operationId: 'generateDocumentAsyncResult',
            summary: 'The result of an asynchronous generate',
            description:
              "POSTed to iss joined with dest of the request's client-authorization token, with `Authorization: Bearer <sub>` (the token's sub claim). The body is the synchronous operation's 201 answer on success, the error envelope on failure (no result, no consumption); externalContext is echoed. The same bytes are sent on every attempt.",
            security: [{ callbackBearer: [] }],
            parameters: CALLBACK_HEADERS,
            requestBody: {
              required: true,
              content: {
                'application/json': {
                  schema: { oneOf: [GenerateResult, ErrorEnvelope] },
                  examples: { success: { value: examples.generateResult }, failure: { value: examples.templateNotFound } },
                },
              },
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

// ---- manage ----

const manageSchema = manageRequestSchema(LOCATION_CATALOG);
const managed = {
  all: methodsFor(LOCATION_CATALOG, 'manage', 'write'),
  deleting: methodsFor(LOCATION_CATALOG, 'manage', 'delete'),
  connected: LOCATION_CATALOG.filter((e) => e.requests.includes('manage') && e.connection).map((e) => e.method),
  named: LOCATION_CATALOG.filter((e) => e.requests.includes('manage') && e.wording).map((e) => `${e.method} (${e.wording!.what})`),
};

/** The body of manage (core/manage.ts), with externalContext. */
export const ManageRequest = component(
  'ManageRequest',
  Type.Object(
    { externalContext: Type.Optional(ExternalContext), ...manageSchema.properties },
    { description: 'A source document and, except for Delete, a target (spec 4.8)', examples: [examples.manageRequest] },
  ),
);

export const ManagedDocument = component(
  'ManagedDocument',
  Type.Object({
    deliveryMethod: stringEnum(managed.all),
    name: Type.String(),
    fileFormat: stringEnum(ALL_FORMATS),
    urn: Type.String({ description: urnWording(LOCATION_CATALOG, 'manage', 'write') }),
    uri: Type.Optional(Type.String({ description: 'Drive targets: where the file opens' })),
    ...propertiesOf(LINK_FIELDS, () =>
      Type.Optional(Type.String({ description: 'Drive targets: a sharing link made for the file (targetDocument.options.driveA)' })),
    ),
    documentGuid: Type.String({ description: 'Extension: the document record (new for copy and convert, the moved record for move)' }),
  }),
);

export const ManageResult = component(
  'ManageResult',
  Type.Object(
    {
      result: Type.Object({
        statusCode: Type.String({ description: 'The manage operation answers its status as a string: "201"', examples: ['201'] }),
        message: Type.String({ examples: ['Created'] }),
        data: Type.Object({ document: ManagedDocument }),
      }),
      consumption: Consumption,
      ...envelopeTail,
    },
    { examples: [examples.manageResult] },
  ),
);

export const ManageErrorEnvelope = component(
  'ManageErrorEnvelope',
  Type.Object(
    {
      error: Type.Object({
        statusCode: Type.String({ description: 'The HTTP status, as a string', examples: ['400'] }),
        message: Type.String(),
        innerErrors: Type.Array(InnerError),
        externalErrors: Type.Array(Type.Unknown(), { description: 'Errors reported by an external location (drive); empty for Storage' }),
      }),
      ...envelopeTail,
    },
    { description: "Manage's error envelope: statusCode as a string, and externalErrors" },
  ),
);

export const manageDocument = {
  operationId: 'manageDocument',
  tags: [TAG],
  summary: 'Copy, move, convert or delete a delivered document',
  description: [
    `The payload chooses the operation (spec 4.8): **Copy** = source and target with the same fileFormat and sourceDocument.remove none; **Move** = the same with remove delete or permanentDelete; **Convert** = source and target with different fileFormats (docx, xlsx, pptx to pdf; xlsx to csv), in the same or another location, remove optional; **Delete** = source only, remove delete or permanentDelete, supported only by ${orList(managed.deleting)} (elsewhere 400 NOT_SUPPORTED).`,
    `Locations: ${orList(managed.named).replace(/ or /, ' and ')}; ${orList(managed.connected).replace(/ or /, ' and ')} are connected per subscription with PUT /common/connection/{kind} (400 CONNECTION_MISSING otherwise). sourceDocument.urn is the urn the location gave: ${urnWording(LOCATION_CATALOG, 'manage', 'readDocument')}. Inside one drive a copy or move acts on the file itself (Graph copy/PATCH, Drive copy/parents). Copy and convert create a new document record; move carries the source record over to the new file. An unknown urn answers 400 TEMPLATE_NOT_FOUND; errors the drive or Salesforce reported are in error.externalErrors.`,
    "crm (Salesforce Files, through the subscription's crm connection: PUT /common/connection/crm): as a target, a new ContentVersion with targetDocument.options.crm {fileParentId -> FirstPublishLocationId, networkId -> NetworkId, ownerId -> OwnerId, fileId -> a new version of that file (its ContentDocument id 069..., or a ContentVersion id 068... of it), fileType (optional, must match fileFormat)}; result.data.document.urn is the ContentVersion id. As a source, sourceDocument.urn is a ContentVersion id and remove delete deletes its file (ContentDocument) into the org's recycle bin. A refused connection is 400 CONNECTION_ERROR; a Salesforce refusal of a crm option is 400 VALIDATION_ERROR naming targetDocument.options.crm.<field>, with Salesforce's errors in error.externalErrors.",
    'Success: 201 with result.statusCode "201" (a string), result.data.document and consumption pages-managed / documents-managed. Failure: the error envelope with error.statusCode as a string and error.externalErrors. Optional `Idempotency-Key` as for generate.',
  ].join('\n\n'),
  headers: Type.Object({
    'x-client-authorization': Type.Optional(
      Type.String({
        description:
          'Optional (spec 5.2); when sent it is validated as for async generate (400 X_CLIENT_AUTH_ERROR, 401), though no location needs a client side',
      }),
    ),
    'x-service-authorization': Type.Optional(
      Type.String({
        description:
          'Optional (spec 5.2): a user without an account at the identity provider who may use the subscription. Made by POST /common/service/token (extension) from claims sub (the user id, a UUID), email and full_name: a JWS (ES256, typ docgen-service+jwt, the service signing key) encrypted as a JWE (dir + A256GCM, key derived from the service key under its own label, so a client token is not a service token). Validated like the client token (spec 5.3): undecryptable, tampered or bad base64 -> 400 X_SERVICE_AUTH_ERROR "Invalid format"; unsigned, wrongly signed, expired or of another subscription -> 401; a required claim missing -> 400 X_SERVICE_AUTH_ERROR naming it. When valid, its sub is the acting user: the owner (ownerGuid, lastModifiedUserGuid) of the document record, the metered user, and the user shown in the workflow summary.',
      }),
    ),
    'x-email': Type.Optional(
      Type.String({
        description:
          'Optional (spec 5.2): e-mail of the user who starts the process. Recorded as the initiator: initiatorEmail of the document record (extension column) and the workflow summary. Not an e-mail address -> 400 VALIDATION_ERROR.',
      }),
    ),
    ...IdempotencyHeaders.properties,
  }),
  body: ManageRequest,
  response: {
    201: ManageResult,
    400: ManageErrorEnvelope,
    401: ManageErrorEnvelope,
    409: ManageErrorEnvelope,
    500: ManageErrorEnvelope,
    504: ManageErrorEnvelope,
  },
};
