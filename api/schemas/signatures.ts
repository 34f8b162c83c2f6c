// Signatures (spec 4.2): the signature-template delete, and the envelope create and get extensions.
import Type from 'typebox';
import { ENVELOPE_STATUSES, RECIPIENT_STATUSES } from '../../store/common/envelopes.ts';
import { component } from './components.ts';
import { errorResponses, ExternalContext, successEnvelope } from './envelopes.ts';
import { UuidParam } from './records.ts';

const TAG = 'Signatures';
export const TEMPLATE_DELETED = 'Template deleted.';
export const ENVELOPE_EMPTIED =
  'The envelope is not a template: its documents, recipients, sign groups and fields were deleted and the envelope was kept.';

const Nullable = <T extends ReturnType<typeof Type.String>>(t: T, description: string) => Type.Union([t, Type.Null()], { description });
const DateTime = () => Type.String({ format: 'date-time' });

export const Envelope = component(
  'Envelope',
  Type.Object({
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
  }),
);

const Index = (what: string) =>
  Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000, description: `0-based index into this request's ${what}` }));
export const EnvelopeInput = component(
  'EnvelopeInput',
  Type.Object({
    name: Type.Optional(Type.String({ maxLength: 500, description: 'Required; missing or blank gives 400 DATA_NAME_REQUIRED' })),
    status: Type.Optional(Type.String({ description: `${ENVELOPE_STATUSES.join(', ')} (case-insensitive; default Draft)` })),
    sendDate: Type.Optional(Type.String({ format: 'date-time', description: 'Default: now, except for Draft and Template (none)' })),
    expirationDate: Type.Optional(Type.String({ format: 'date-time' })),
    documents: Type.Optional(
      Type.Array(Type.Object({ name: Type.String({ minLength: 1 }), fileFormat: Type.Optional(Type.String()) }), { maxItems: 100 }),
    ),
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
);

export const EnvelopeBody = Type.Object({ envelope: EnvelopeInput, externalContext: Type.Optional(ExternalContext) });

export const deleteSignatureTemplate = {
  operationId: 'deleteSignatureTemplate',
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
};

export const createEnvelope = {
  operationId: 'createEnvelope',
  tags: [TAG],
  summary: 'Create an envelope or a signature template (extension)',
  description:
    'The spec shows envelopes only as identifiers; this creates one with its documents, sign groups, recipients and fields in one transaction. `status` Template makes a signature template. Recipients are matched to users by `userId` or by e-mail address for the dashboard summary; fields and recipients refer to documents, recipients and sign groups of the same request by 0-based index. `name` is required (400 DATA_NAME_REQUIRED); an unknown status or an index out of range gives 400 VALIDATION_ERROR. Answers 201 with result.data.envelope.',
  body: EnvelopeBody,
  response: { 201: successEnvelope(Type.Object({ envelope: Envelope })), ...errorResponses(400, 401, 500) },
};

export const getEnvelope = {
  operationId: 'getEnvelope',
  tags: [TAG],
  summary: 'Get an envelope with its documents, sign groups, recipients and fields (extension)',
  description:
    "Visible to its owner and to its recipients. An unknown id, or one the caller cannot see (another subscription's included), gives 400 ENVELOPE_ID_INVALID `Envelope not found.`, as the template delete does; a non-uuid gives 400 VALIDATION_ERROR.",
  params: Type.Object({ envelopeId: UuidParam('The envelope') }),
  response: { 200: successEnvelope(Type.Object({ envelope: Envelope })), ...errorResponses(400, 401, 500) },
};
