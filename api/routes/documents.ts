// Generated document records (spec 2.5, 4.7): update, and the get and list extensions that let a client
// find a generated document's documentGuid. The generate workflow writes the records. The schemas and
// their prose are in api/schemas/records.ts.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ApiError } from '../../core/errors.ts';
import type { Db } from '../../store/db.ts';
import {
  DOCUMENT_COLUMNS,
  DOCUMENT_UPDATABLE,
  type DocumentUpdate,
  getDocumentRecord,
  listDocumentRecords,
  updateDocumentRecord,
} from '../../store/records/documents.ts';
import { success } from '../envelope.ts';
import { checkEmailList, parseList, unexpectedAs } from '../lists.ts';
import * as S from '../schemas/records.ts';

const documentRoutes: FastifyPluginAsyncTypebox<{ db: Db }> = async (app, opts) => {
  const { db } = opts;
  const guarded = unexpectedAs('GET_DATA_SOURCE_ERROR');

  app.put(
    '/documents/document/:documentGuid/update',
    {
      errorHandler: guarded,
      schema: S.updateDocument,
    },
    async (request) => {
      const id = request.params.documentGuid.toLowerCase();
      const body = request.body;
      const change: DocumentUpdate = {};
      for (const [f] of DOCUMENT_UPDATABLE) {
        if (typeof body[f] === 'string') change[f] = body[f];
      }
      for (const f of S.EMAIL_LISTS) if (change[f] !== undefined) checkEmailList(change[f], f);
      const d = await updateDocumentRecord(db, request.auth.subscriptionId, request.auth.userId, id, change);
      if (!d) throw new ApiError('NOT_FOUND_BY_ID', `no document ${id}`);
      return success(request, 200, { document: d });
    },
  );

  app.get(
    '/documents/document/:documentGuid/get',
    {
      errorHandler: guarded,
      schema: S.getDocument,
    },
    async (request) => {
      const id = request.params.documentGuid.toLowerCase();
      const d = await getDocumentRecord(db, request.auth.subscriptionId, id);
      if (!d) throw new ApiError('NOT_FOUND_BY_ID', `no document ${id}`);
      return success(request, 200, { document: d });
    },
  );

  app.get(
    '/documents/document/list',
    {
      errorHandler: guarded,
      schema: S.listDocuments,
    },
    async (request) => {
      const r = await listDocumentRecords(db, request.auth.subscriptionId, parseList(request.query, DOCUMENT_COLUMNS));
      return success(request, 200, { documents: r.rows, rowCount: r.rowCount });
    },
  );
};

export default documentRoutes;
