// Signatures (spec 4.2): the signature-template delete, plus envelope create and get (extensions) so there
// is something to delete and to summarise on the dashboard (GET /common/summary?type=dashboard).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { Static } from 'typebox';
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
import { checkEmailList, requireName } from '../lists.ts';
import { logUnexpected } from '../plugins/errors.ts';
import * as S from '../schemas/signatures.ts';
import { ENVELOPE_EMPTIED, TEMPLATE_DELETED } from '../schemas/signatures.ts';

const NOT_FOUND = 'Envelope not found.';

type EnvelopeRequest = Static<typeof S.EnvelopeInput>;

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
  reply
    .code(500)
    .type('application/json')
    .send(failure(request, 500, msg, [innerError('ENVELOPE_ID_INVALID', msg, eventId)]));
}

const signatureRoutes: FastifyPluginAsyncTypebox<{ db: Db }> = async (app, opts) => {
  const { db } = opts;

  app.delete(
    '/signatures/template/:templateId/delete',
    {
      errorHandler: deleteErrors,
      schema: S.deleteSignatureTemplate,
    },
    async (request) => {
      const { templateId: id } = request.params;
      const r = isUuid(id) ? await deleteSignatureTemplate(db, request.auth.subscriptionId, request.auth.userId, id) : undefined;
      if (!r) throw new ApiError('ENVELOPE_ID_INVALID', NOT_FOUND);
      return success(request, 200, { template: { id, message: r.parentDeleted ? TEMPLATE_DELETED : ENVELOPE_EMPTIED } });
    },
  );

  app.post(
    '/signatures/envelope/create',
    {
      preValidation: async (request) => captureExternalContext(request),
      schema: S.createEnvelope,
    },
    async (request, reply) => {
      const { envelope } = request.body;
      const input = readEnvelope(envelope);
      const id = await createEnvelope(db, request.auth.subscriptionId, request.auth.userId, input);
      const created = await getEnvelope(db, request.auth.subscriptionId, request.auth.userId, id);
      if (!created) throw new Error(`envelope ${id} was created but cannot be read back`);
      return reply.code(201).send(success(request, 201, { envelope: created }));
    },
  );

  app.get(
    '/signatures/envelope/:envelopeId/get',
    {
      schema: S.getEnvelope,
    },
    async (request) => {
      const { envelopeId: id } = request.params;
      const e = await getEnvelope(db, request.auth.subscriptionId, request.auth.userId, id);
      if (!e) throw new ApiError('ENVELOPE_ID_INVALID', NOT_FOUND);
      return success(request, 200, { envelope: e });
    },
  );
};

export default signatureRoutes;
