// POST /documents/document/manage against the real worker, Temporal, database and LibreOffice: each row of
// the spec 4.8 table (copy, move, convert, delete) and its rules, and manage's own envelopes (statusCode
// as a string, externalErrors).
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Credentials } from '../../../api/auth/credentials.ts';
import { pdfPageCount } from '../../../converter/index.ts';
import { SA } from '../../../core/search-attributes.ts';
import { localActivities } from '../../support/history.ts';
import { docxParagraphs, makeDocx } from '../../support/office.ts';
import { client, generateBody } from '../../support/http.ts';
import { type Stack, startStack } from '../../support/stack.ts';
import { manageWorkflowId } from '../../../api/temporal.ts';

const MISSING = '3f1e9a43-1111-4c1f-9f3e-3d2b0c8a9e11';

describe('POST /documents/document/manage', () => {
  let stack: Stack;
  let creds: Credentials;
  let api: ReturnType<typeof client>;

  beforeAll(async () => {
    // client.example (a client token's callback host) does not resolve: allow-listed by name, it is accepted.
    stack = await startStack({ outboundAllow: ['client.example'] });
    creds = await stack.credentials();
    api = client(creds);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  /** A docx delivered to Storage by a real generate. */
  async function generated(text = 'Hello {name}') {
    const t = await api.upload('template', [{ name: 't.docx', bytes: makeDocx([text]) }]);
    const d = await api.upload('data', [{ name: 'd.json', bytes: JSON.stringify({ name: 'World' }) }]);
    const gen = await api.call('POST', '/documents/document/generate', {
      json: generateBody(t.body.result.data.files[0].id, d.body.result.data.files[0].id),
    });
    expect(gen.status, JSON.stringify(gen.body)).toBe(201);
    return gen.body.result.data.document as { urn: string; documentGuid: string; name: string };
  }
  const manage = (json: unknown, headers: Record<string, string> = {}) => api.call('POST', '/documents/document/manage', { json, headers });
  const source = (urn: string, remove = 'none', fileFormat = 'docx') => ({ urn, fileFormat, loadMethod: 'Storage', remove });
  const target = (name: string, fileFormat = 'docx', extra: Record<string, unknown> = {}) => ({
    name,
    fileFormat,
    deliveryMethod: 'Storage',
    path: 'root/managed',
    ...extra,
  });
  async function record(where: string, args: unknown[]) {
    const r = await stack.service.db.query<{
      document_guid: string;
      urn: string;
      title: string;
      path: string;
      file_format: string;
      is_deleted: boolean;
    }>(`SELECT document_guid, urn, title, path, file_format, is_deleted FROM documents WHERE subscription_guid = $1 AND ${where}`, [
      creds.subscriptionId,
      ...args,
    ]);
    return r.rows;
  }
  async function blobOf(urn: string) {
    const r = await stack.service.db.query<{ blob_key: string; removed_date: Date | null }>(
      'SELECT blob_key, removed_date FROM stored_files WHERE id = $1',
      [urn],
    );
    const row = r.rows[0]!;
    return { removed: row.removed_date !== null, exists: await stack.blobs.exists(row.blob_key) };
  }
  function expectManageError(res: { status: number; body: any }, status: number, code: string, message?: RegExp) {
    expect(res.status, JSON.stringify(res.body)).toBe(status);
    expect(res.body.error.statusCode).toBe(String(status));
    expect(res.body.error.externalErrors).toEqual([]);
    expect(res.body.error.innerErrors[0].code).toBe(code);
    if (message) expect(res.body.error.innerErrors.map((e: any) => e.message).join('\n')).toMatch(message);
    expect(res.body.result).toBeUndefined();
    expect(res.body.consumption).toBeUndefined();
  }

  it('Copy: same fileFormat, remove none -> a new file and a new record; the source stays', async () => {
    const doc = await generated();
    const res = await manage({ sourceDocument: source(doc.urn), targetDocument: target('copy'), externalContext: { ref: 'c-1' } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.result).toMatchObject({ statusCode: '201', message: 'Created' });
    const out = res.body.result.data.document;
    expect(out).toMatchObject({ deliveryMethod: 'Storage', name: 'copy.docx', fileFormat: 'docx' });
    expect(out.urn).not.toBe(doc.urn);
    expect(out.documentGuid).not.toBe(doc.documentGuid);
    expect(res.body.consumption).toEqual([
      { dimension: 'pages-managed', value: 1 },
      { dimension: 'documents-managed', value: 1 },
    ]);
    expect(res.body.externalContext).toEqual({ ref: 'c-1' });
    expect(res.body.origin).toBe(`POST ${creds.baseUrl}/documents/document/manage`);
    expect(res.body.userId).toBe(creds.userId);
    expect(docxParagraphs((await api.download(out.urn)).bytes)).toEqual(['Hello World']);
    expect(docxParagraphs((await api.download(doc.urn)).bytes)).toEqual(['Hello World']);
    expect(await record('urn = $2', [out.urn])).toEqual([
      { document_guid: out.documentGuid, urn: out.urn, title: 'copy.docx', path: 'root/managed', file_format: 'docx', is_deleted: false },
    ]);
    expect((await record('document_guid = $2', [doc.documentGuid]))[0]?.urn).toBe(doc.urn);
  });

  it('Move with remove delete: the record moves with the file; the old urn stops resolving, its bytes are kept (soft)', async () => {
    const doc = await generated();
    const res = await manage({ sourceDocument: source(doc.urn, 'delete'), targetDocument: target('moved') });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const out = res.body.result.data.document;
    expect(out).toMatchObject({ name: 'moved.docx', fileFormat: 'docx', documentGuid: doc.documentGuid });
    expect((await api.download(doc.urn)).status).toBe(404);
    expect((await api.download(out.urn)).status).toBe(200);
    expect(await blobOf(doc.urn)).toEqual({ removed: true, exists: true });
    expect(await record('document_guid = $2', [doc.documentGuid])).toEqual([
      { document_guid: doc.documentGuid, urn: out.urn, title: 'moved.docx', path: 'root/managed', file_format: 'docx', is_deleted: false },
    ]);
    // The moved file can be moved again, this time erasing the source's bytes.
    const again = await manage({ sourceDocument: source(out.urn, 'permanentDelete'), targetDocument: target('moved-again') });
    expect(again.status, JSON.stringify(again.body)).toBe(201);
    expect(await blobOf(out.urn)).toEqual({ removed: true, exists: false });
    expect((await record('document_guid = $2', [doc.documentGuid]))[0]?.urn).toBe(again.body.result.data.document.urn);
  });

  it('Convert: docx to pdf with LibreOffice, a new record; the source stays unless removed', async () => {
    const doc = await generated();
    const res = await manage({
      sourceDocument: source(doc.urn),
      targetDocument: target('as-pdf', 'pdf'),
      data: { embedded: JSON.stringify({ batch: 7 }) },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const out = res.body.result.data.document;
    expect(out).toMatchObject({ deliveryMethod: 'Storage', name: 'as-pdf.pdf', fileFormat: 'pdf' });
    const pdf = await api.download(out.urn);
    expect(Buffer.from(pdf.bytes.subarray(0, 5)).toString()).toBe('%PDF-');
    expect(pdfPageCount(pdf.bytes)).toBe(1);
    expect(res.body.consumption).toEqual([
      { dimension: 'pages-managed', value: 1 },
      { dimension: 'documents-managed', value: 1 },
    ]);
    expect((await record('urn = $2', [out.urn]))[0]).toMatchObject({ file_format: 'pdf', title: 'as-pdf.pdf' });
    expect((await api.download(doc.urn)).status).toBe(200);
    // The caller waits: the conversion is a local activity (workflows/steps.ts manageConversion), in the
    // same workflow task as the steps around it, with no activity task to dispatch.
    const connection = await Connection.connect({ address: inject('temporalAddress') });
    try {
      const events =
        (await new Client({ connection }).workflow.getHandle(manageWorkflowId(creds.subscriptionId, res.body.operationId)).fetchHistory())
          .events ?? [];
      expect(
        localActivities(events)
          .filter((a) => a.type === 'convertDocument')
          .map((a) => a.summary),
      ).toEqual(['convert docx to pdf']);
      expect(events.filter((e) => e.activityTaskScheduledEventAttributes)).toHaveLength(0);
    } finally {
      await connection.close();
    }

    const removing = await manage({ sourceDocument: source(doc.urn, 'permanentDelete'), targetDocument: target('as-pdf-2', 'pdf') });
    expect(removing.status, JSON.stringify(removing.body)).toBe(201);
    expect((await api.download(doc.urn)).status).toBe(404);
    expect((await record('document_guid = $2', [doc.documentGuid]))[0]?.is_deleted).toBe(true);
  });

  it('the run is visible to operators: manageDocument with search attributes and a summary', async () => {
    const doc = await generated();
    const res = await manage({ sourceDocument: source(doc.urn), targetDocument: target('seen') });
    expect(res.status).toBe(201);
    const connection = await Connection.connect({ address: inject('temporalAddress') });
    try {
      const described = await new Client({ connection }).workflow
        .getHandle(manageWorkflowId(creds.subscriptionId, res.body.operationId))
        .describe();
      expect(described.type).toBe('manageDocument');
      expect(described.status.name).toBe('COMPLETED');
      expect(described.typedSearchAttributes.get(SA.subscription)).toBe(creds.subscriptionId);
      expect(described.typedSearchAttributes.get(SA.operation)).toBe(res.body.operationId);
      expect(await described.staticSummary()).toContain('manage copy');
    } finally {
      await connection.close();
    }
  });

  describe('rules and error bodies (statusCode as a string, externalErrors)', () => {
    it('Delete (source only) is DriveA-only: a Storage delete is 400 NOT_SUPPORTED and nothing is removed', async () => {
      const doc = await generated();
      for (const remove of ['delete', 'permanentDelete']) {
        expectManageError(
          await manage({ sourceDocument: source(doc.urn, remove) }),
          400,
          'NOT_SUPPORTED',
          /Delete is supported only by DriveA or DriveB/,
        );
      }
      expect((await api.download(doc.urn)).status).toBe(200);
      expectManageError(
        await manage({ sourceDocument: source(doc.urn, 'none') }),
        400,
        'VALIDATION_ERROR',
        /Delete, which needs sourceDocument\.remove/,
      );
      expectManageError(
        await manage({ sourceDocument: { ...source(doc.urn, 'delete'), loadMethod: 'DriveA' } }),
        400,
        'CONNECTION_MISSING',
        /sourceDocument\.loadMethod DriveA: the subscription has no driveA connection/,
      );
    });

    it('format and location rules are checked before anything runs', async () => {
      const doc = await generated();
      expectManageError(
        await manage({ sourceDocument: source(doc.urn), targetDocument: target('x', 'xlsx') }),
        400,
        'VALIDATION_ERROR',
        /Convert from docx to xlsx is not possible/,
      );
      expectManageError(
        await manage({ sourceDocument: source(doc.urn), targetDocument: target('x', 'csv') }),
        400,
        'VALIDATION_ERROR',
        /xlsx to csv/,
      );
      expectManageError(
        await manage({ sourceDocument: source(doc.urn, 'sometimes') }),
        400,
        'VALIDATION_ERROR',
        /sourceDocument\.remove must be one of/,
      );
      expectManageError(
        await manage({ sourceDocument: source(doc.urn), targetDocument: target('x', 'docx', { path: 'elsewhere' }) }),
        400,
        'VALIDATION_ERROR',
        /targetDocument\.path/,
      );
      expectManageError(
        await manage({ sourceDocument: source(doc.urn), targetDocument: target('x', 'docx', { deliveryMethod: 'DriveB' }) }),
        400,
        'VALIDATION_ERROR',
        /not DriveB/,
      );
      expectManageError(
        await manage({ sourceDocument: source(doc.urn), targetDocument: target('x', 'docx', { deliveryMethod: 'DriveA' }) }),
        400,
        'CONNECTION_MISSING',
        /targetDocument\.deliveryMethod DriveA/,
      );
      expectManageError(
        await manage({
          sourceDocument: source(doc.urn),
          targetDocument: target('x', 'pdf', { options: { pdfSaveOptions: '{"pdfConformanceLevel":"PdfZ"}' } }),
        }),
        400,
        'VALIDATION_ERROR',
        /targetDocument\.options\.pdfSaveOptions/,
      );
      expectManageError(
        await manage({ sourceDocument: source(doc.urn), targetDocument: target('x'), data: { embedded: '[1]' } }),
        400,
        'VALIDATION_ERROR',
        /data\.embedded/,
      );
      const missing = await manage({ targetDocument: target('x'), externalContext: { a: 1 } });
      expectManageError(missing, 400, 'VALIDATION_ERROR', /sourceDocument is required/);
      expect(missing.body.externalContext).toEqual({ a: 1 });
      expect(await record('title = $2', ['x.docx'])).toEqual([]);
    });

    it('an unknown or foreign urn is TEMPLATE_NOT_FOUND; a wrong sourceDocument.fileFormat is named', async () => {
      const doc = await generated();
      expectManageError(
        await manage({ sourceDocument: source(MISSING), targetDocument: target('x') }),
        400,
        'TEMPLATE_NOT_FOUND',
        new RegExp(MISSING),
      );
      const other = client(await stack.credentials('manage-other'));
      const foreign = await other.call('POST', '/documents/document/manage', {
        json: { sourceDocument: source(doc.urn), targetDocument: target('x') },
      });
      expectManageError(foreign, 400, 'TEMPLATE_NOT_FOUND');
      expectManageError(
        await manage({ sourceDocument: source(doc.urn, 'none', 'pptx'), targetDocument: target('x', 'pdf') }),
        400,
        'VALIDATION_ERROR',
        /sourceDocument\.fileFormat is pptx but the document .* is a docx file/,
      );
    });

    it('X-Client-Authorization is optional, but a value that is sent is validated (spec 5.3), in the manage error shape', async () => {
      const doc = await generated();
      const body = { sourceDocument: source(doc.urn), targetDocument: target('copied-with-token') };
      expectManageError(await manage(body, { 'x-client-authorization': 'not-a-token' }), 400, 'X_CLIENT_AUTH_ERROR', /Invalid format/);
      const made = await api.call('POST', '/common/client/token', { json: { sub: 's', iss: 'https://client.example', dest: '/cb' } });
      expect(made.status).toBe(200);
      const token = made.body.result.data.token as string;
      // A token of another subscription does not pass.
      const other = client(await stack.credentials('manage-other'));
      const foreign = await other.call('POST', '/documents/document/manage', { json: body, headers: { 'x-client-authorization': token } });
      expect(foreign.status, JSON.stringify(foreign.body)).toBe(401);
      expect(foreign.body.error.statusCode).toBe('401');
      // Nothing ran for the refused requests; the valid token is accepted.
      expect(await record('title = $2', ['copied-with-token.docx'])).toHaveLength(0);
      const ok = await manage(body, { 'x-client-authorization': token });
      expect(ok.status, JSON.stringify(ok.body)).toBe(201);
      expect(await record('title = $2', ['copied-with-token.docx'])).toHaveLength(1);
    });

    it('401 in the manage error shape', async () => {
      const res = await fetch(`${creds.baseUrl}/documents/document/manage`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      const body = (await res.json()) as any;
      expect(res.status).toBe(401);
      expect(body.error).toMatchObject({ statusCode: '401', externalErrors: [] });
      expect(body.error.innerErrors[0].code).toBe('UNAUTHORIZED');
    });
  });
});
