// Generated document records (spec 2.5, 4.7): update, and the get and list extensions that let a client
// find a generated document's documentGuid. The generate workflow writes the records.
import type { FastifyInstance } from 'fastify';
import Type from 'typebox';
import { ApiError } from '../../core/errors.ts';
import type { Db } from '../../store/db.ts';
import { DOCUMENT_COLUMNS, DOCUMENT_UPDATABLE, type DocumentUpdate, getDocumentRecord, listDocumentRecords, updateDocumentRecord } from '../../store/records/documents.ts';
import { success } from '../envelope.ts';
import { checkEmailList, listDescription, ListQuerystring, parseList, unexpectedAs, UuidParam } from '../lists.ts';
import { errorResponses, successEnvelope } from '../schemas.ts';

const TAG = 'Document record';

const EMAIL_LISTS = ['succeededViewUserEmailList', 'succeededEditUserEmailList', 'failedViewUserEmailList', 'failedEditUserEmailList'] as const;

const UpdateBody = Type.Object(
  Object.fromEntries(
    Object.keys(DOCUMENT_UPDATABLE).map((f) => [
      f,
      Type.Optional(Type.String({ maxLength: 10_000, ...((EMAIL_LISTS as readonly string[]).includes(f) ? { description: 'Comma-separated e-mail addresses' } : {}) })),
    ]),
  ),
  { description: 'Only the fields sent change. Other fields (ids, links, timestamps, isDeleted) are server-managed and ignored when sent' },
);

/** The update body's fields by name (the schema above is built from the same list). */
export type DocumentUpdateBody = DocumentUpdate;

const link = { description: 'Empty when absent' };
export const DocumentRecord = Type.Object({
  documentGuid: Type.String({ format: 'uuid' }),
  subscriptionGuid: Type.String({ format: 'uuid' }),
  ownerGuid: Type.String({ format: 'uuid' }),
  lastModifiedUserGuid: Type.String({ format: 'uuid' }),
  title: Type.String(),
  urn: Type.String(),
  url: Type.String(),
  path: Type.String(),
  fileFormat: Type.String(),
  deliveryMethod: Type.String(),
  viewAnonymousLink: Type.String(link),
  editAnonymousLink: Type.String(link),
  viewUserLink: Type.String(link),
  editUserLink: Type.String(link),
  viewOrganizationLink: Type.String(link),
  editOrganizationLink: Type.String(link),
  succeededViewUserEmailList: Type.String(),
  succeededEditUserEmailList: Type.String(),
  failedViewUserEmailList: Type.String(),
  failedEditUserEmailList: Type.String(),
  initiatorEmail: Type.String({ description: 'Extension: the X-Email header of the manage request that made or moved the document (spec 5.2); empty otherwise' }),
  createdDate: Type.String({ format: 'date-time' }),
  lastModifiedDate: Type.String({ format: 'date-time' }),
  isDeleted: Type.Boolean(),
});

const Params = Type.Object({ documentGuid: UuidParam('The document record (documentGuid of the generate response)') });
const one = successEnvelope(Type.Object({ document: DocumentRecord }));

export default async function documentRoutes(app: FastifyInstance, opts: { db: Db }) {
  const { db } = opts;
  const guarded = unexpectedAs('GET_DATA_SOURCE_ERROR');

  app.put(
    '/documents/document/:documentGuid/update',
    {
      errorHandler: guarded,
      schema: {
        tags: [TAG],
        summary: 'Update a document record',
        description:
          "Changes the record's metadata, not the file: only the fields sent change (all strings). The e-mail list fields take comma-separated addresses (400 VALIDATION_ERROR naming the field otherwise). An unknown, deleted or other subscription's documentGuid gives 404 NOT_FOUND_BY_ID; a non-uuid one 400 VALIDATION_ERROR.",
        params: Params,
        body: UpdateBody,
        response: { 200: one, ...errorResponses(400, 401, 404, 500) },
      },
    },
    async (request) => {
      const id = (request.params as { documentGuid: string }).documentGuid.toLowerCase();
      const body = (request.body ?? {}) as DocumentUpdate;
      const change: DocumentUpdate = {};
      for (const f of Object.keys(DOCUMENT_UPDATABLE) as (keyof DocumentUpdate)[]) {
        if (typeof body[f] === 'string') change[f] = body[f];
      }
      for (const f of EMAIL_LISTS) if (change[f] !== undefined) checkEmailList(change[f], f);
      const d = await updateDocumentRecord(db, request.auth.subscriptionId, request.auth.userId, id, change);
      if (!d) throw new ApiError('NOT_FOUND_BY_ID', `no document ${id}`);
      return success(request, 200, { document: d });
    },
  );

  app.get(
    '/documents/document/:documentGuid/get',
    {
      errorHandler: guarded,
      schema: {
        tags: [TAG],
        summary: 'Get a document record (extension)',
        description: "An unknown, deleted or other subscription's documentGuid gives 404 NOT_FOUND_BY_ID; a non-uuid one 400 VALIDATION_ERROR.",
        params: Params,
        response: { 200: one, ...errorResponses(400, 401, 404, 500) },
      },
    },
    async (request) => {
      const id = (request.params as { documentGuid: string }).documentGuid.toLowerCase();
      const d = await getDocumentRecord(db, request.auth.subscriptionId, id);
      if (!d) throw new ApiError('NOT_FOUND_BY_ID', `no document ${id}`);
      return success(request, 200, { document: d });
    },
  );

  app.get(
    '/documents/document/list',
    {
      errorHandler: guarded,
      schema: {
        tags: [TAG],
        summary: 'List document records (extension)',
        description: `${listDescription(DOCUMENT_COLUMNS)} Newest first by default; e.g. filter by Urn to find the record of a generated file.`,
        querystring: ListQuerystring,
        response: {
          200: successEnvelope(Type.Object({ documents: Type.Array(DocumentRecord), rowCount: Type.Integer() })),
          ...errorResponses(400, 401, 500),
        },
      },
    },
    async (request) => {
      const r = await listDocumentRecords(db, request.auth.subscriptionId, parseList(request.query as Record<string, never>, DOCUMENT_COLUMNS));
      return success(request, 200, { documents: r.rows, rowCount: r.rowCount });
    },
  );
}
