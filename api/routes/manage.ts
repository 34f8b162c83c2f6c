// POST /documents/document/manage (spec 4.8): copy, move, convert and delete of a delivered document,
// chosen by the payload exactly as the spec's table says. Everything checkable is checked before the
// manageDocument workflow starts. Unlike every other operation, manage answers its statusCode as a string
// and its error carries `externalErrors`.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import Type from 'typebox';
import { type LocationNeed, type LocationRegistry, problemCode } from '../../connectors/registry.ts';
import { ApiError, type InnerError, innerError } from '../../core/errors.ts';
import { driveOptionsKey, type GenerateRequest, LINK_FIELDS, parseDriveOptions, parseSaveOptions } from '../../core/generate.ts';
import { checkManageRules, type ManageInput, type ManageRequestShape, parseCrmOptions } from '../../core/manage.ts';
import type { Db } from '../../store/db.ts';
import { readClientToken } from '../../security/client-token.ts';
import { readServiceToken, type ServiceToken } from '../../security/service-token.ts';
import { captureExternalContext, success } from '../envelope.ts';
import { ExternalContext } from '../schemas.ts';
import { idempotencyOf, runManage, type WorkflowStarter } from '../temporal.ts';
import { IdempotencyHeaders } from './generate.ts';

const JsonObject = Type.Object({}, { additionalProperties: true });

const EMAIL = /^[^\s@<>(),;:"]+@[^\s@<>(),;:"]+\.[^\s@<>(),;:"]+$/;

/** The validated optional headers of one request (spec 5.2). */
const manageHeaders = new WeakMap<FastifyRequest, { service?: ServiceToken; email?: string }>();

function header(request: FastifyRequest, name: string): string | undefined {
  const raw = request.headers[name];
  return Array.isArray(raw) ? raw[0] : raw;
}

export const ManageBody = Type.Object({
  externalContext: Type.Optional(ExternalContext),
  sourceDocument: Type.Object({
    urn: Type.String({ minLength: 1, description: 'The urn the location gave: Storage, a delivered document (result.data.document.urn of generate or manage); DriveA an item id, driveId!itemId or root:/path:; DriveB a file id; crm a ContentVersion id' }),
    fileFormat: Type.String({ description: 'The format of the source file: docx, xlsx, pptx, pdf, csv, gdoc, gsheet, gslide' }),
    loadMethod: Type.String({ description: 'Storage, DriveA, DriveB or crm (urn: a ContentVersion id)' }),
    remove: Type.Optional(
      Type.String({
        description:
          'none (default), delete or permanentDelete. Storage: delete makes the urn stop resolving and soft-deletes the record, keeping the bytes for an operator; permanentDelete also erases the bytes.',
      }),
    ),
    options: Type.Optional(JsonObject),
  }),
  targetDocument: Type.Optional(
    Type.Object({
      name: Type.String({ minLength: 1 }),
      fileFormat: Type.String({ description: 'Same as the source for copy and move; different for convert (docx/xlsx/pptx to pdf, xlsx to csv)' }),
      deliveryMethod: Type.String({ description: 'Storage, DriveA, DriveB or crm (options.crm)' }),
      path: Type.String({ description: "'root' or 'root/<folder>' for Storage; a folder path from the drive root for DriveA and DriveB ('' = the root; folders are created); ignored by crm" }),
      options: Type.Optional(
        Type.Object(
          {
            pdfSaveOptions: Type.Optional(Type.Unknown({ description: 'JSON text, read when fileFormat is pdf' })),
            docxSaveOptions: Type.Optional(Type.Unknown()),
            crm: Type.Optional(JsonObject),
            driveA: Type.Optional(JsonObject),
          },
          { additionalProperties: true },
        ),
      ),
    }),
  ),
  data: Type.Optional(Type.Object({ embedded: Type.Optional(Type.String({ description: 'JSON text of an object written to the output file properties' })) })),
});

const common = {
  externalContext: Type.Optional(ExternalContext),
  origin: Type.String({ description: 'METHOD followed by the full URL of the operation' }),
  dateTime: Type.String({ format: 'date-time' }),
  operationId: Type.String(),
  userId: Type.Optional(Type.String({ format: 'uuid' })),
};

export const ManageSuccess = Type.Object({
  result: Type.Object({
    statusCode: Type.String({ description: 'The manage operation answers its status as a string: "201"' }),
    message: Type.String(),
    data: Type.Object({
      document: Type.Object({
        deliveryMethod: Type.String(),
        name: Type.String(),
        fileFormat: Type.String(),
        urn: Type.String({ description: 'For Storage: download with GET /documents/storage/{urn}/content' }),
        uri: Type.Optional(Type.String({ description: 'Drive targets: where the file opens' })),
        ...Object.fromEntries(LINK_FIELDS.map((f) => [f, Type.Optional(Type.String({ description: 'Drive targets: a sharing link made for the file (targetDocument.options.driveA)' }))])),
        documentGuid: Type.String({ description: 'Extension: the document record (new for copy and convert, the moved record for move)' }),
      }),
    }),
  }),
  consumption: Type.Array(Type.Object({ dimension: Type.String(), value: Type.Integer() }), { description: 'pages-managed and documents-managed' }),
  ...common,
});

const ManageError = Type.Object({
  error: Type.Object({
    statusCode: Type.String({ description: 'The HTTP status, as a string' }),
    message: Type.String(),
    innerErrors: Type.Array(
      Type.Object({ code: Type.String(), message: Type.String(), userMessage: Type.String(), eventId: Type.Optional(Type.String()) }),
    ),
    externalErrors: Type.Array(Type.Unknown(), { description: 'Errors reported by an external location (drive); empty for Storage' }),
  }),
  ...common,
});

/** Spec 4.8 table -> the operation, or every problem with the payload; then what the locations cannot do
 *  for this subscription. Throws the 400 the caller gets: nothing is queued. */
export async function manageInput(
  request: FastifyRequest,
  locations: LocationRegistry,
  headers: { service?: ServiceToken; email?: string } = {},
): Promise<ManageInput> {
  const body = request.body as ManageRequestShape;
  const { operation, remove, problems } = checkManageRules(body);
  const src = body.sourceDocument;
  const tgt = body.targetDocument;
  // targetDocument.options.crm is read when the target is crm (like driveA's sharing for DriveA).
  const crm = tgt?.deliveryMethod === 'crm' ? parseCrmOptions(tgt.options?.crm, tgt.fileFormat) : undefined;
  if (crm) problems.push(...crm.problems);
  if (src.loadMethod === 'crm' && remove === 'permanentDelete') {
    problems.push(
      innerError(
        'VALIDATION_ERROR',
        'sourceDocument.remove permanentDelete is not available for crm: Salesforce keeps a deleted file in the org\'s recycle bin; use remove delete',
      ),
    );
  }
  const saved = tgt
    ? parseSaveOptions({ ...tgt, timezone: '', locale: '' } as GenerateRequest['document'])
    : { options: {}, errors: [] as InnerError[] };
  for (const e of saved.errors) problems.push({ ...e, message: e.message.replace('document.', 'targetDocument.'), userMessage: e.userMessage.replace('document.', 'targetDocument.') });
  const key = tgt ? driveOptionsKey(tgt.deliveryMethod) : undefined;
  const drive = key ? parseDriveOptions(tgt?.options?.[key], `targetDocument.options.${key}`) : { delivery: {}, errors: [] };
  problems.push(...drive.errors);
  if (problems.length > 0) throw new ApiError('VALIDATION_ERROR', problems.map((p) => p.message).join('; '), problems);
  const field = 'sourceDocument.loadMethod';
  const needs: LocationNeed[] =
    operation === 'delete'
      ? [{ method: src.loadMethod, capability: 'delete', field }]
      : [
          { method: src.loadMethod, capability: 'readDocument', field },
          ...(remove !== 'none' ? [{ method: src.loadMethod, capability: 'remove' as const, field }] : []),
          { method: tgt!.deliveryMethod, capability: 'write', field: 'targetDocument.deliveryMethod', fileFormat: tgt!.fileFormat, target: { name: tgt!.name, path: tgt!.path, field: 'targetDocument' } },
          ...(drive.delivery.sharing ? [{ method: tgt!.deliveryMethod, capability: 'share' as const, field: `targetDocument.options.${key}` }] : []),
        ];
  const { problems: unsupported, connections } = await locations.check(request.auth.subscriptionId, needs);
  if (unsupported.length > 0) throw new ApiError(problemCode(unsupported), unsupported.map((p) => p.message).join('; '), unsupported);
  const embedded = body.data?.embedded;
  const service = headers.service;
  return {
    operationId: request.ctx.operationId,
    subscriptionId: request.auth.subscriptionId,
    userId: service ? service.claims.sub : request.auth.userId,
    ...(service ? { serviceUser: { email: service.claims.email, ...(service.claims.full_name ? { fullName: service.claims.full_name } : {}) } } : {}),
    ...(headers.email ? { initiatorEmail: headers.email } : {}),
    operation,
    source: { urn: src.urn, fileFormat: src.fileFormat, loadMethod: src.loadMethod, remove },
    ...(tgt
      ? {
          target: {
            name: tgt.name,
            fileFormat: tgt.fileFormat,
            deliveryMethod: tgt.deliveryMethod,
            path: tgt.path,
            saveOptions: saved.options,
            ...drive.delivery,
            ...(crm && Object.keys(crm.options).length > 0 ? { options: { crm: crm.options } } : {}),
          },
        }
      : {}),
    ...(embedded ? { embedded } : {}),
    ...(Object.keys(connections).length > 0 ? { connections } : {}),
  };
}

export default async function manageRoutes(app: FastifyInstance, opts: { temporal: WorkflowStarter; db: Db; locations: LocationRegistry }) {
  // Manage's error envelope: statusCode as a string, plus externalErrors (spec 2.1). Applies to every
  // failure of this route, including authentication and schema validation.
  app.addHook('preSerialization', async (_request, _reply, payload: unknown) => {
    const p = payload as { error?: { statusCode?: unknown; message?: string; innerErrors?: unknown[]; externalErrors?: unknown[] } } | null;
    if (p && typeof p === 'object' && p.error && typeof p.error === 'object') {
      const { statusCode, message, innerErrors, externalErrors } = p.error;
      return { ...p, error: { statusCode: String(statusCode), message, innerErrors: innerErrors ?? [], externalErrors: externalErrors ?? [] } };
    }
    return payload;
  });
  app.post(
    '/documents/document/manage',
    {
      preValidation: async (request) => {
        captureExternalContext(request);
        // Optional here (spec 5.2), but a value that is sent must be valid: the 5.3 table applies, so a
        // stale or foreign token is refused rather than silently ignored.
        const value = header(request, 'x-client-authorization');
        if (value !== undefined && value.trim() !== '') await readClientToken(opts.db, value, { subscriptionId: request.auth.subscriptionId });
        // Spec 5.2: a user without an account at the identity provider, vouched for by the service's own
        // token; the same failure table as the client token.
        const service = header(request, 'x-service-authorization');
        if (service !== undefined && service.trim() !== '') {
          manageHeaders.set(request, { service: await readServiceToken(opts.db, service, { subscriptionId: request.auth.subscriptionId }) });
        }
        const email = header(request, 'x-email')?.trim();
        if (email) {
          if (email.length > 320 || !EMAIL.test(email)) throw new ApiError('VALIDATION_ERROR', 'the X-Email header must be an e-mail address (name@domain)');
          manageHeaders.set(request, { ...manageHeaders.get(request), email });
        }
      },
      schema: {
        tags: ['Generation'],
        summary: 'Copy, move, convert or delete a delivered document',
        description: [
          'The payload chooses the operation (spec 4.8): **Copy** = source and target with the same fileFormat and sourceDocument.remove none; **Move** = the same with remove delete or permanentDelete; **Convert** = source and target with different fileFormats (docx, xlsx, pptx to pdf; xlsx to csv), in the same or another location, remove optional; **Delete** = source only, remove delete or permanentDelete, supported for the drives only (DriveA, DriveB), so a Storage delete answers 400 NOT_SUPPORTED.',
          'Locations: Storage, DriveA, DriveB and crm (Salesforce Files); the drives and crm are connected per subscription with PUT /common/connection/{kind} (400 CONNECTION_MISSING otherwise). sourceDocument.urn is the urn the location gave: a Storage document urn, a DriveA item id (or driveId!itemId, root:/path:), a DriveB file id, a crm ContentVersion id. Inside one drive a copy or move acts on the file itself (Graph copy/PATCH, Drive copy/parents). Copy and convert create a new document record; move carries the source record over to the new file. An unknown urn answers 400 TEMPLATE_NOT_FOUND; errors the drive or Salesforce reported are in error.externalErrors.',
          'crm (Salesforce Files, through the subscription\'s crm connection: PUT /common/connection/crm): as a target, a new ContentVersion with targetDocument.options.crm {fileParentId -> FirstPublishLocationId, networkId -> NetworkId, ownerId -> OwnerId, fileId -> a new version of that file (its ContentDocument id 069..., or a ContentVersion id 068... of it), fileType (optional, must match fileFormat)}; result.data.document.urn is the ContentVersion id. As a source, sourceDocument.urn is a ContentVersion id and remove delete deletes its file (ContentDocument) into the org\'s recycle bin. A refused connection is 400 CONNECTION_ERROR; a Salesforce refusal of a crm option is 400 VALIDATION_ERROR naming targetDocument.options.crm.<field>, with Salesforce\'s errors in error.externalErrors.',
          'Success: 201 with result.statusCode "201" (a string), result.data.document and consumption pages-managed / documents-managed. Failure: the error envelope with error.statusCode as a string and error.externalErrors. Optional `Idempotency-Key` as for generate.',
        ].join('\n\n'),
        headers: Type.Object({
          'x-client-authorization': Type.Optional(
            Type.String({ description: 'Optional (spec 5.2); when sent it is validated as for async generate (400 X_CLIENT_AUTH_ERROR, 401), though no location needs a client side' }),
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
        body: ManageBody,
        response: { 201: ManageSuccess, 400: ManageError, 401: ManageError, 409: ManageError, 500: ManageError, 504: ManageError },
      },
    },
    async (request, reply) => {
      const input = await manageInput(request, opts.locations, manageHeaders.get(request));
      const result = await runManage(opts.temporal, input, idempotencyOf(request.headers, request.body));
      const body = success(request, 201, { document: { ...result.document, documentGuid: result.documentGuid } }, { consumption: result.consumption });
      (body.result as { statusCode: unknown }).statusCode = '201';
      return reply.code(201).send(body);
    },
  );
}
