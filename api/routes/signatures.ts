// Signatures (spec 4.2): the signature-template delete, plus envelope create and get (extensions) so there
// is something to delete and to summarise on the dashboard (GET /common/summary?type=dashboard).
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import Type, { type Static } from 'typebox';
import { ApiError, innerError } from '../../core/errors.ts';
import {
  createEnvelope,
  deleteSignatureTemplate,
  ENVELOPE_STATUSES,
  type EnvelopeInput,
  type EnvelopeStatus,
  getEnvelope,
  RECIPIENT_STATUSES,
  type RecipientStatus,
} from '../../store/common/envelopes.ts';
import type { Db } from '../../store/db.ts';
import { isUuid } from '../../store/files.ts';
import { captureExternalContext, failure, success } from '../envelope.ts';
import { checkEmailList, requireName, UuidParam } from '../lists.ts';
import { logUnexpected } from '../plugins/errors.ts';
import { errorResponses, ExternalContext, successEnvelope } from '../schemas.ts';

const TAG = 'Signatures';
const NOT_FOUND = 'Envelope not found.';
export const TEMPLATE_DELETED = 'Template deleted.';
export const ENVELOPE_EMPTIED = 'The envelope is not a template: its documents, recipients, sign groups and fields were deleted and the envelope was kept.';

const Nullable = <T extends ReturnType<typeof Type.String>>(t: T, description: string) => Type.Union([t, Type.Null()], { description });
const DateTime = () => Type.String({ format: 'date-time' });

export const Envelope = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  status: Type.String({ description: ENVELOPE_STATUSES.join(', ') }),
  sendDate: Nullable(DateTime(), 'null for drafts and templates'),
  expirationDate: Nullable(DateTime(), 'null when the envelope does not expire'),
  subscriptionId: Type.String({ format: 'uuid' }),
  ownerId: Type.String({ format: 'uuid' }),
  createdDate: DateTime(),
  lastModifiedDate: DateTime(),
  documents: Type.Array(Type.Object({ id: Type.String({ format: 'uuid' }), name: Type.String(), fileFormat: Type.String() })),
  signGroups: Type.Array(Type.Object({ id: Type.String({ format: 'uuid' }), name: Type.String() })),
  recipients: Type.Array(
    Type.Object({
      id: Type.String({ format: 'uuid' }),
      name: Type.String(),
      email: Type.String(),
      userId: Nullable(Type.String({ format: 'uuid' }), 'The recipient as a user of the subscription, when known'),
      signGroupId: Nullable(Type.String({ format: 'uuid' }), 'The sign group, when any'),
      status: Type.String({ description: RECIPIENT_STATUSES.join(', ') }),
      action: Type.String({ description: 'The latest action, e.g. Viewed; empty when none' }),
      actionDate: Nullable(DateTime(), 'When the latest action happened'),
    }),
  ),
  fields: Type.Array(
    Type.Object({
      id: Type.String({ format: 'uuid' }),
      type: Type.String(),
      page: Type.Integer(),
      x: Type.Number(),
      y: Type.Number(),
      value: Type.String(),
      documentId: Nullable(Type.String({ format: 'uuid' }), 'The document the field is placed on'),
      recipientId: Nullable(Type.String({ format: 'uuid' }), 'The recipient who fills the field'),
    }),
  ),
});

const Index = (what: string) => Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000, description: `0-based index into this request's ${what}` }));
export const EnvelopeBody = Type.Object({
  envelope: Type.Object({
    name: Type.Optional(Type.String({ maxLength: 500, description: 'Required; missing or blank gives 400 DATA_NAME_REQUIRED' })),
    status: Type.Optional(Type.String({ description: `${ENVELOPE_STATUSES.join(', ')} (case-insensitive; default Draft)` })),
    sendDate: Type.Optional(Type.String({ format: 'date-time', description: 'Default: now, except for Draft and Template (none)' })),
    expirationDate: Type.Optional(Type.String({ format: 'date-time' })),
    documents: Type.Optional(Type.Array(Type.Object({ name: Type.String({ minLength: 1 }), fileFormat: Type.Optional(Type.String()) }), { maxItems: 100 })),
    signGroups: Type.Optional(Type.Array(Type.Object({ name: Type.String({ minLength: 1 }) }), { maxItems: 100 })),
    recipients: Type.Optional(
      Type.Array(
        Type.Object({
          name: Type.String({ minLength: 1 }),
          email: Type.String({ minLength: 3 }),
          userId: Type.Optional(Type.String({ format: 'uuid' })),
          status: Type.Optional(Type.String({ description: `${RECIPIENT_STATUSES.join(', ')} (case-insensitive; default Pending)` })),
          action: Type.Optional(Type.String({ description: 'The latest action, e.g. Viewed' })),
          actionDate: Type.Optional(Type.String({ format: 'date-time' })),
          signGroupIndex: Index('signGroups'),
        }),
        { maxItems: 100 },
      ),
    ),
    fields: Type.Optional(
      Type.Array(
        Type.Object({
          type: Type.String({ minLength: 1, description: 'e.g. Signature, Initials, Date, Text' }),
          page: Type.Optional(Type.Integer({ minimum: 1 })),
          x: Type.Optional(Type.Number()),
          y: Type.Optional(Type.Number()),
          value: Type.Optional(Type.String()),
          documentIndex: Index('documents'),
          recipientIndex: Index('recipients'),
        }),
        { maxItems: 1000 },
      ),
    ),
  }),
  externalContext: Type.Optional(ExternalContext),
});
type EnvelopeRequest = Static<typeof EnvelopeBody>['envelope'];

const invalid = (message: string) => new ApiError('VALIDATION_ERROR', message);

function pick<T extends string>(values: readonly T[], raw: string | undefined, fallback: T, field: string): T {
  if (raw === undefined) return fallback;
  const v = values.find((x) => x.toLowerCase() === raw.trim().toLowerCase());
  if (!v) throw invalid(`${field}: ${JSON.stringify(raw.slice(0, 80))} is not one of ${values.join(', ')}`);
  return v;
}

function readEnvelope(e: EnvelopeRequest): EnvelopeInput {
  const documents = e.documents ?? [];
  const signGroups = e.signGroups ?? [];
  const recipients = e.recipients ?? [];
  const index = (i: number | undefined, length: number, field: string) => {
    if (i === undefined) return null;
    if (i >= length) throw invalid(`${field}: ${i} is out of range`);
    return i;
  };
  return {
    name: requireName(e.name, 'envelope.'),
    status: pick<EnvelopeStatus>(ENVELOPE_STATUSES, e.status, 'Draft', 'envelope.status'),
    sendDate: e.sendDate ?? null,
    expirationDate: e.expirationDate ?? null,
    documents: documents.map((d) => ({ name: d.name, fileFormat: d.fileFormat ?? '' })),
    signGroups: signGroups.map((g) => ({ name: g.name })),
    recipients: recipients.map((r, i) => {
      if (r.email.includes(',')) throw invalid(`envelope.recipients[${i}].email: one e-mail address is required`);
      checkEmailList(r.email, `envelope.recipients[${i}].email`);
      return {
        name: r.name,
        email: r.email.trim(),
        userId: r.userId?.toLowerCase() ?? null,
        status: pick<RecipientStatus>(RECIPIENT_STATUSES, r.status, 'Pending', `envelope.recipients[${i}].status`),
        action: r.action ?? '',
        actionDate: r.actionDate ?? null,
        signGroupIndex: index(r.signGroupIndex, signGroups.length, `envelope.recipients[${i}].signGroupIndex`),
      };
    }),
    fields: (e.fields ?? []).map((f, i) => ({
      type: f.type,
      page: f.page ?? 1,
      x: f.x ?? 0,
      y: f.y ?? 0,
      value: f.value ?? '',
      documentIndex: index(f.documentIndex, documents.length, `envelope.fields[${i}].documentIndex`),
      recipientIndex: index(f.recipientIndex, recipients.length, `envelope.fields[${i}].recipientIndex`),
    })),
  };
}

/** Spec 4.2 documents 500 with ENVELOPE_ID_INVALID for the template delete: unexpected failures use it, with an eventId. */
function deleteErrors(error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply): void {
  const fe = error as FastifyError & { validation?: unknown };
  if (error instanceof ApiError || fe.validation || (typeof fe.statusCode === 'number' && fe.statusCode < 500)) throw error;
  const eventId = logUnexpected(request, error);
  const msg = 'The template could not be deleted.';
  reply.code(500).type('application/json').send(failure(request, 500, msg, [innerError('ENVELOPE_ID_INVALID', msg, eventId)]));
}

export default async function signatureRoutes(app: FastifyInstance, opts: { db: Db }) {
  const { db } = opts;

  app.delete(
    '/signatures/template/:templateId/delete',
    {
      errorHandler: deleteErrors,
      schema: {
        tags: [TAG],
        summary: 'Delete a signature template',
        description: [
          "A signature template is an envelope with status Template. The id is looked up among the caller's own envelopes without a status filter;",
          "the envelope's fields, recipients, sign groups and documents are deleted, then the envelope itself only if its status is Template.",
          `So a non-template envelope owned by the caller loses its children but stays (200, message "${ENVELOPE_EMPTIED}"); a template is deleted with its children (200, message "${TEMPLATE_DELETED}").`,
          "An unknown id, a non-uuid, another user's envelope or another subscription's gives 400 ENVELOPE_ID_INVALID with message `Envelope not found.`; an unexpected failure gives 500 ENVELOPE_ID_INVALID with an eventId.",
        ].join(' '),
        params: Type.Object({ templateId: Type.String({ maxLength: 200, description: 'The template (an envelope id)' }) }),
        response: {
          200: successEnvelope(Type.Object({ template: Type.Object({ id: Type.String(), message: Type.String() }) })),
          ...errorResponses(400, 401, 500),
        },
      },
    },
    async (request) => {
      const { templateId: id } = request.params as { templateId: string };
      const r = isUuid(id) ? await deleteSignatureTemplate(db, request.auth.subscriptionId, request.auth.userId, id) : undefined;
      if (!r) throw new ApiError('ENVELOPE_ID_INVALID', NOT_FOUND);
      return success(request, 200, { template: { id, message: r.parentDeleted ? TEMPLATE_DELETED : ENVELOPE_EMPTIED } });
    },
  );

  app.post(
    '/signatures/envelope/create',
    {
      preValidation: async (request) => captureExternalContext(request),
      schema: {
        tags: [TAG],
        summary: 'Create an envelope or a signature template (extension)',
        description:
          'The spec shows envelopes only as identifiers; this creates one with its documents, sign groups, recipients and fields in one transaction. `status` Template makes a signature template. Recipients are matched to users by `userId` or by e-mail address for the dashboard summary; fields and recipients refer to documents, recipients and sign groups of the same request by 0-based index. `name` is required (400 DATA_NAME_REQUIRED); an unknown status or an index out of range gives 400 VALIDATION_ERROR. Answers 201 with result.data.envelope.',
        body: EnvelopeBody,
        response: { 201: successEnvelope(Type.Object({ envelope: Envelope })), ...errorResponses(400, 401, 500) },
      },
    },
    async (request, reply) => {
      const { envelope } = request.body as { envelope: EnvelopeRequest };
      const input = readEnvelope(envelope);
      const id = await createEnvelope(db, request.auth.subscriptionId, request.auth.userId, input);
      const created = await getEnvelope(db, request.auth.subscriptionId, request.auth.userId, id);
      return reply.code(201).send(success(request, 201, { envelope: created as unknown as Record<string, unknown> }));
    },
  );

  app.get(
    '/signatures/envelope/:envelopeId/get',
    {
      schema: {
        tags: [TAG],
        summary: 'Get an envelope with its documents, sign groups, recipients and fields (extension)',
        description:
          "Visible to its owner and to its recipients. An unknown id, or one the caller cannot see (another subscription's included), gives 400 ENVELOPE_ID_INVALID `Envelope not found.`, as the template delete does; a non-uuid gives 400 VALIDATION_ERROR.",
        params: Type.Object({ envelopeId: UuidParam('The envelope') }),
        response: { 200: successEnvelope(Type.Object({ envelope: Envelope })), ...errorResponses(400, 401, 500) },
      },
    },
    async (request) => {
      const { envelopeId: id } = request.params as { envelopeId: string };
      const e = await getEnvelope(db, request.auth.subscriptionId, request.auth.userId, id);
      if (!e) throw new ApiError('ENVELOPE_ID_INVALID', NOT_FOUND);
      return success(request, 200, { envelope: e as unknown as Record<string, unknown> });
    },
  );
}
