// The HTTP API against the real worker, Temporal dev server and database: authentication, validation that
// names the field, uploads (limits, extension rule, all-or-nothing) and generate failures that leave nothing
// behind.
import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import * as jose from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import type { Credentials } from '../../api/auth/credentials.ts';
import { issueAccessToken } from '../../security/tokens.ts';
import { docxParagraphs, makeDocx } from '../support/office.ts';
import { pptx, row, shape, xlsx, zip } from '../unit/engine/helpers.ts';
import { client, generateBody } from '../support/http.ts';
import { type Stack, startStack } from '../support/stack.ts';

const MAX = 64 * 1024;

describe('HTTP API', () => {
  let stack: Stack;
  let creds: Credentials;
  let api: ReturnType<typeof client>;
  let base: string;

  beforeAll(async () => {
    stack = await startStack({ uploadMaxBytes: MAX });
    creds = await stack.credentials();
    api = client(creds);
    base = creds.baseUrl;
  });
  afterAll(async () => {
    await stack?.stop();
  });

  async function countRows(table: 'stored_files' | 'documents', where = 'true'): Promise<number> {
    const r = await stack.service.db.query<{ n: string | number }>(`SELECT count(*) AS n FROM ${table} WHERE ${where}`);
    return Number(r.rows[0]?.n);
  }
  /** Every blob of the stack's store (its directory or its S3 bucket). */
  function blobFiles(): Promise<string[]> {
    return stack.blobs.list('');
  }
  const uploadPair = (template?: Uint8Array, data?: unknown) => api.uploadPair(template, data);

  describe('authentication (401 UNAUTHORIZED in the error envelope)', () => {
    const expect401 = async (headers: Record<string, string>, query = '') => {
      const res = await fetch(`${base}/documents/storage/00000000-0000-4000-8000-000000000000/content${query}`, { headers });
      const body = (await res.json()) as any;
      expect(res.status).toBe(401);
      expect(body.error.statusCode).toBe(401);
      expect(body.error.innerErrors[0].code).toBe('UNAUTHORIZED');
      expect(body.origin).toMatch(/^GET http:\/\/127\.0\.0\.1:\d+\/v1\/documents\/storage\//);
      expect(body.operationId).toBeTruthy();
      return body;
    };

    it('rejects a request without credentials, or with only one of the two', async () => {
      await expect401({});
      await expect401({ authorization: `Bearer ${creds.accessToken}` });
      await expect401({ 'x-api-key': creds.apiKey });
    });

    it('rejects an unknown API key and a malformed one', async () => {
      await expect401({ authorization: `Bearer ${creds.accessToken}`, 'x-api-key': `${creds.apiKey.slice(0, -2)}xx` });
      await expect401({ authorization: `Bearer ${creds.accessToken}`, 'x-api-key': 'not-a-key' });
    });

    it('rejects tokens that are forged, unsigned, expired, or for another audience', async () => {
      const key = { 'x-api-key': creds.apiKey };
      const { privateKey } = await jose.generateKeyPair('ES256');
      const forged = await new jose.SignJWT({ sid: creds.subscriptionId })
        .setProtectedHeader({ alg: 'ES256' })
        .setSubject(creds.userId)
        .setIssuer(stack.config.jwtIssuer)
        .setAudience(stack.config.jwtAudience)
        .setExpirationTime('1h')
        .sign(privateKey);
      expect((await expect401({ ...key, authorization: `Bearer ${forged}` })).error.message).toBe(
        'the bearer token is not valid (signature, issuer or audience)',
      );
      const unsigned = new jose.UnsecuredJWT({ sid: creds.subscriptionId })
        .setSubject(creds.userId)
        .setIssuer(stack.config.jwtIssuer)
        .setAudience(stack.config.jwtAudience)
        .setExpirationTime('1h')
        .encode();
      await expect401({ ...key, authorization: `Bearer ${unsigned}` });
      const exp = Math.floor(Date.now() / 1000) - 60;
      const expired = await issueAccessToken(
        stack.service.db,
        stack.config,
        { userId: creds.userId, subscriptionId: creds.subscriptionId },
        exp as unknown as string,
      );
      // An expired token says so, and when (issue 32), in the envelope's message and inner error.
      const body = await expect401({ ...key, authorization: `Bearer ${expired}` });
      expect(body.error.message).toBe(`the bearer token expired at ${new Date(exp * 1000).toISOString()}: get a new access token`);
      expect(body.error.innerErrors[0].message).toBe(body.error.message);
      // A forged token past its expiry is forged, not expired: the signature is checked first.
      const forgedExpired = await new jose.SignJWT({ sid: creds.subscriptionId })
        .setProtectedHeader({ alg: 'ES256' })
        .setSubject(creds.userId)
        .setIssuer(stack.config.jwtIssuer)
        .setAudience(stack.config.jwtAudience)
        .setExpirationTime(exp)
        .sign(privateKey);
      expect((await expect401({ ...key, authorization: `Bearer ${forgedExpired}` })).error.message).not.toMatch(/expired/);
      const otherAudience = await issueAccessToken(
        stack.service.db,
        { ...stack.config, jwtAudience: 'someone-else' },
        { userId: creds.userId, subscriptionId: creds.subscriptionId },
      );
      await expect401({ ...key, authorization: `Bearer ${otherAudience}` });
    });

    it("rejects one subscription's token with another subscription's key", async () => {
      const other = await stack.credentials('tenant-b');
      await expect401({ authorization: `Bearer ${creds.accessToken}`, 'x-api-key': other.apiKey });
    });

    it('trusts a verified pair for AUTH_CACHE_SECONDS, and only that exact pair', async () => {
      const other = await stack.credentials('tenant-auth-cache');
      const url = `${base}/documents/storage/00000000-0000-4000-8000-000000000000/content`;
      const get = (token: string) => fetch(url, { headers: { authorization: `Bearer ${token}`, 'x-api-key': other.apiKey } });
      expect((await get(other.accessToken)).status).toBe(404); // verified: remembered
      await stack.service.db.query('UPDATE api_keys SET revoked_date = now() WHERE subscription_id = $1', [other.subscriptionId]);
      // The revoked key still works with the token it was verified with, for up to AUTH_CACHE_SECONDS (30 s
      // here, the default)...
      expect(stack.config.authCacheSeconds).toBe(30);
      expect((await get(other.accessToken)).status).toBe(404);
      // ...but never with another token, even a valid one for the same user: that pair is checked, and refused.
      const second = await issueAccessToken(
        stack.service.db,
        stack.config,
        { userId: other.userId, subscriptionId: other.subscriptionId },
        '29d',
      );
      expect(second).not.toBe(other.accessToken);
      expect((await get(second)).status).toBe(401);
      // A refused pair is not remembered either: a wrong token for a good key is refused every time.
      await expect401({ authorization: `Bearer ${other.accessToken}x`, 'x-api-key': creds.apiKey });
    });

    it('accepts the API key as the apiKey query parameter', async () => {
      const res = await fetch(
        `${base}/documents/storage/00000000-0000-4000-8000-000000000000/content?apiKey=${encodeURIComponent(creds.apiKey)}`,
        {
          headers: { authorization: `Bearer ${creds.accessToken}` },
        },
      );
      expect(res.status).toBe(404);
      expect(((await res.json()) as any).error.innerErrors[0].code).toBe('NOT_FOUND_BY_ID');
    });
  });

  describe('uploads', () => {
    it('returns every file in form-data order, under any field names', async () => {
      const res = await api.upload('template', [
        { name: 'a.docx', bytes: makeDocx(['a']), field: 'first' },
        { name: 'b.XLSX', bytes: xlsx({ strings: ['b'], rows: row(1, [['A1', 's:0']]) }), field: 'second' },
        { name: 'c.pptx', bytes: pptx([shape(2, 'c')]), field: 'first' },
      ]);
      expect(res.status).toBe(201);
      expect(res.body.result).toMatchObject({ statusCode: 201, message: 'Created' });
      expect(res.body.result.data.files.map((f: any) => f.fileName)).toEqual(['a.docx', 'b.XLSX', 'c.pptx']);
      expect(new Set(res.body.result.data.files.map((f: any) => f.id)).size).toBe(3);
    });

    it('refuses a disallowed extension with INVALID_TEMPLATE_FORMAT and stores none of the request', async () => {
      const before = { rows: await countRows('stored_files'), blobs: (await blobFiles()).length };
      const res = await api.upload('template', [
        { name: 'ok.docx', bytes: makeDocx(['ok']) },
        { name: 'evil.docm', bytes: makeDocx(['x']) },
      ]);
      expect(res.status).toBe(400);
      expect(res.body.error.innerErrors[0].code).toBe('INVALID_TEMPLATE_FORMAT');
      expect(res.body.error.innerErrors[0].message).toContain('evil.docm');
      expect({ rows: await countRows('stored_files'), blobs: (await blobFiles()).length }).toEqual(before);
    });

    it('refuses a package of another kind than its extension (a Word document named .xlsx), storing nothing', async () => {
      const before = { rows: await countRows('stored_files'), blobs: (await blobFiles()).length };
      const res = await api.upload('template', [
        { name: 'ok.docx', bytes: makeDocx(['ok']) },
        { name: 'report.xlsx', bytes: makeDocx(['a Word document']) },
      ]);
      expect(res.status).toBe(400);
      expect(res.body.error.innerErrors[0].code).toBe('INVALID_TEMPLATE_FORMAT');
      expect(res.body.error.innerErrors[0].message).toBe('file "report.xlsx" is a Word document (docx), not .xlsx: upload it as .docx');
      expect({ rows: await countRows('stored_files'), blobs: (await blobFiles()).length }).toEqual(before);
    });

    it('refuses a plain-text file or a zip that is no Office package named .docx/.pptx (INVALID_TEMPLATE_FORMAT naming it), storing nothing', async () => {
      const before = { rows: await countRows('stored_files'), blobs: (await blobFiles()).length };
      const cases: Array<[string, Uint8Array, RegExp]> = [
        [
          'notes.docx',
          new TextEncoder().encode('this is not a docx'),
          /^file "notes\.docx" is not a \.docx template: the template is not a zip package/,
        ],
        [
          'photos.pptx',
          zip({ 'a.txt': 'a zip, but no Office package' }),
          /^file "photos\.pptx" is not a \.pptx template: the zip file is not an Office document \(no \[Content_Types\]\.xml\)/,
        ],
      ];
      for (const [name, bytes, message] of cases) {
        const res = await api.upload('template', [
          { name: 'ok.docx', bytes: makeDocx(['ok']) },
          { name, bytes },
        ]);
        expect(res.status, name).toBe(400);
        expect(res.body.error.innerErrors[0].code).toBe('INVALID_TEMPLATE_FORMAT');
        expect(res.body.error.innerErrors[0].message).toMatch(message);
      }
      expect({ rows: await countRows('stored_files'), blobs: (await blobFiles()).length }).toEqual(before);
    });

    it('enforces the size limit while streaming: 413 FILE_TOO_LARGE, nothing kept', async () => {
      const before = { rows: await countRows('stored_files'), blobs: (await blobFiles()).length };
      const res = await api.upload('template', [
        { name: 'small.docx', bytes: makeDocx(['ok']) },
        { name: 'big.docx', bytes: new Uint8Array(MAX * 4).fill(65) },
      ]);
      expect(res.status).toBe(413);
      expect(res.body.error.innerErrors[0].code).toBe('FILE_TOO_LARGE');
      expect(res.body.error.innerErrors[0].message).toContain(String(MAX));
      expect({ rows: await countRows('stored_files'), blobs: (await blobFiles()).length }).toEqual(before);
    });

    it('refuses data files that are not JSON, and requests without files', async () => {
      const bad = await api.upload('data', [{ name: 'd.json', bytes: '{"unterminated": ' }]);
      expect(bad.status).toBe(400);
      expect(bad.body.error.innerErrors[0]).toMatchObject({ code: 'VALIDATION_ERROR' });
      expect(bad.body.error.innerErrors[0].message).toContain('d.json');
      // A rows file is read as it streams, keeping no row: a broken line is found and named.
      const lines = Array.from({ length: 1000 }, (_, i) => JSON.stringify({ n: i, text: 'x'.repeat(30) }));
      lines[800] = '{"n": 800, "text": ';
      const badRows = await api.upload('data', [{ name: 'rows.jsonl', bytes: lines.join('\n') }]);
      expect(badRows.status).toBe(400);
      expect(badRows.body.error.innerErrors[0].message).toMatch(/rows\.jsonl.*line 801 is not valid JSON/);
      expect((await api.upload('data', [{ name: 'rows.jsonl', bytes: lines.filter((_, i) => i !== 800).join('\n') }])).status).toBe(201);
      const none = await api.call('POST', '/documents/template/upload', { json: { not: 'multipart' } });
      expect(none.status).toBe(400);
      expect(none.body.error.innerErrors[0].message).toContain('multipart/form-data');
    });
  });

  describe('generate: validation before any workflow starts', () => {
    const post = (json: unknown) => api.call('POST', '/documents/document/generate', { json });
    const valid = generateBody('00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000002');

    it('answers malformed JSON with 400 VALIDATION_ERROR', async () => {
      const res = await api.call('POST', '/documents/document/generate', {
        headers: { 'content-type': 'application/json' },
        form: undefined,
        json: undefined,
      });
      expect(res.status).toBe(400);
      const raw = await fetch(`${base}/documents/document/generate`, {
        method: 'POST',
        headers: { authorization: `Bearer ${creds.accessToken}`, 'x-api-key': creds.apiKey, 'content-type': 'application/json' },
        body: '{"template": ',
      });
      const body = (await raw.json()) as any;
      expect(raw.status).toBe(400);
      expect(body.error.innerErrors[0]).toMatchObject({ code: 'VALIDATION_ERROR' });
      expect(body.error.innerErrors[0].message).toContain('not valid JSON');
    });

    it('names each missing section and field', async () => {
      const { document: _d, ...noDocument } = valid;
      const res = await post(noDocument);
      expect(res.status).toBe(400);
      expect(res.body.error.innerErrors.map((e: any) => e.message)).toContain('document is required');
      const noLocale = await post({ ...valid, document: { ...valid.document, locale: undefined } });
      expect(noLocale.body.error.innerErrors.map((e: any) => e.message)).toContain('document.locale is required');
      expect(noLocale.body.externalContext).toEqual(valid.externalContext);
    });

    it('needs a template location: TEMPLATE_NOT_FOUND', async () => {
      const res = await post({ ...valid, template: { fileFormat: 'docx' } });
      expect(res.status).toBe(400);
      expect(res.body.error.innerErrors[0].code).toBe('TEMPLATE_NOT_FOUND');
    });

    it('applies the combination rules of section 4.8', async () => {
      const cases: [Record<string, unknown>, Record<string, unknown>, RegExp][] = [
        [{}, { fileFormat: 'odt' }, /document\.fileFormat must be one of/],
        [{}, { fileFormat: 'xlsx' }, /must equal template\.fileFormat \(docx\)/],
        [{}, { fileFormat: 'csv' }, /csv can only be produced from an xlsx template/],
        [{ fileFormat: 'gdoc' }, { fileFormat: 'gdoc', deliveryMethod: 'DriveB' }, /gdoc loads only from DriveB/],
        [{ fileFormat: 'xlsx' }, { fileFormat: 'xlsx', deliveryMethod: 'DriveB' }, /delivered to Storage or DriveA, not DriveB/],
        [{}, { timezone: 'Mars/Olympus' }, /document\.timezone/],
        [{}, { path: 'elsewhere' }, /document\.path must be 'root'/],
      ];
      for (const [template, document, message] of cases) {
        const res = await post({ ...valid, template: { ...valid.template, ...template }, document: { ...valid.document, ...document } });
        expect(res.status, JSON.stringify({ template, document })).toBe(400);
        expect(res.body.error.innerErrors.map((e: any) => e.message).join('\n')).toMatch(message);
      }
    });
  });

  describe('generate: failures inside the workflow leave nothing behind', () => {
    async function runningWorkflows(): Promise<number> {
      const connection = await Connection.connect({ address: inject('temporalAddress') });
      try {
        const c = new Client({ connection });
        return (await c.workflow.count(`DocgenSubscriptionId = "${creds.subscriptionId}" AND ExecutionStatus = "Running"`)).count;
      } finally {
        await connection.close();
      }
    }

    it('unknown template or data urn', async () => {
      const { templateUrn, dataUrn } = await uploadPair();
      const t = await api.call('POST', '/documents/document/generate', {
        json: generateBody('3f1e9a43-1111-4c1f-9f3e-3d2b0c8a9e11', dataUrn),
      });
      expect(t.status).toBe(400);
      expect(t.body.error.innerErrors[0].code).toBe('TEMPLATE_NOT_FOUND');
      const d = await api.call('POST', '/documents/document/generate', {
        json: generateBody(templateUrn, '3f1e9a43-1111-4c1f-9f3e-3d2b0c8a9e11'),
      });
      expect(d.status).toBe(400);
      expect(d.body.error.innerErrors[0].code).toBe('DATA_NOT_FOUND');
      expect(d.body.externalContext).toEqual({ correlation: 'abc-123', nested: { n: 1 } });
    });

    it('a template with template errors: 400 TEMPLATE_ERROR, no document, no workflow left', async () => {
      const docsBefore = await countRows('documents');
      const outputsBefore = await countRows('stored_files', "kind = 'document'");
      const broken = await uploadPair(makeDocx(['{#items}never closed', '{unclosed']));
      const b = await api.call('POST', '/documents/document/generate', { json: generateBody(broken.templateUrn, broken.dataUrn) });
      expect(b.status).toBe(400);
      expect(b.body.error.innerErrors.length).toBeGreaterThanOrEqual(1);
      expect(b.body.error.innerErrors.every((e: any) => e.code === 'TEMPLATE_ERROR')).toBe(true);
      expect(await countRows('documents')).toBe(docsBefore);
      expect(await countRows('stored_files', "kind = 'document'")).toBe(outputsBefore);
      expect((await blobFiles()).filter((f) => f.startsWith('scratch'))).toEqual([]);
      expect(await runningWorkflows()).toBe(0);
    });

    it('an uploaded template of another kind than template.fileFormat: 400 INVALID_TEMPLATE_FORMAT naming the field before any workflow starts; nothing consumed', async () => {
      const docsBefore = await countRows('documents');
      const { templateUrn, dataUrn } = await uploadPair(makeDocx(['Hello {name}']));
      const res = await api.call('POST', '/documents/document/generate', {
        json: generateBody(templateUrn, dataUrn, { template: { fileFormat: 'xlsx' }, document: { fileFormat: 'xlsx' } }),
      });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.error.innerErrors).toEqual([
        expect.objectContaining({
          code: 'INVALID_TEMPLATE_FORMAT',
          message: 'template.fileFormat is xlsx, but the template is a Word document (docx)',
        }),
      ]);
      expect(await countRows('documents')).toBe(docsBefore);
      // The upload's kind is known: no run was started for the operation...
      const connection = await Connection.connect({ address: inject('temporalAddress') });
      try {
        await expect(new Client({ connection }).workflow.getHandle(`generate-${res.body.operationId}`).describe()).rejects.toBeInstanceOf(
          WorkflowNotFoundError,
        );
      } finally {
        await connection.close();
      }
      // ...so nothing was consumed: the same uploads generate with the right format.
      const ok = await api.call('POST', '/documents/document/generate', { json: generateBody(templateUrn, dataUrn) });
      expect(ok.status, JSON.stringify(ok.body)).toBe(201);
    });

    it('a successful generate merges split tags and records the document', async () => {
      const { templateUrn, dataUrn } = await uploadPair(makeDocx([['Hello ', '{na', 'me}', '!']]), { name: 'Ada <Lovelace>' });
      const res = await api.call('POST', '/documents/document/generate', {
        json: generateBody(templateUrn, dataUrn, { document: { name: 'greeting', path: 'root/letters' } }),
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      const doc = res.body.result.data.document;
      const file = await api.download(doc.urn);
      expect(docxParagraphs(file.bytes)).toEqual(['Hello Ada <Lovelace>!']);
      const rec = await stack.service.db.query<{ title: string; path: string; urn: string }>(
        'SELECT title, path, urn FROM documents WHERE document_guid = $1 AND subscription_guid = $2',
        [doc.documentGuid, creds.subscriptionId],
      );
      expect(rec.rows).toEqual([{ title: 'greeting.docx', path: 'root/letters', urn: doc.urn }]);
    });
  });

  it('refuses NUL characters anywhere in the input, naming the field (PostgreSQL text cannot hold them)', async () => {
    const body = generateBody('00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000002', {
      document: { name: 'a\u0000b' },
    });
    const res = await api.call('POST', '/documents/document/generate', { json: body });
    expect(res.status).toBe(400);
    expect(res.body.error.innerErrors[0]).toMatchObject({
      code: 'VALIDATION_ERROR',
      message: 'document.name contains a NUL character (U+0000), which is not allowed',
    });
    const q = await api.call('GET', `/documents/document/list?orderby=${encodeURIComponent('Title\u0000|ASC')}`);
    expect(q.status).toBe(400);
    expect(q.body.error.innerErrors[0].message).toContain('query.orderby contains a NUL character');
  });

  it('answers an unknown route with 404 in the error envelope', async () => {
    const res = await api.call('GET', '/no/such/route');
    expect(res.status).toBe(404);
    expect(res.body.error.innerErrors[0].code).toBe('ROUTE_NOT_FOUND');
  });
});
