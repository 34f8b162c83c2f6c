// crm (Salesforce Files) end to end through the HTTP API on the real stack, against the local Salesforce
// (test/fakes/salesforce) that the real client (@jsforce/jsforce-node) talks to: connect, manage Storage ->
// crm (a new file on a parent record with owner and network; a new version with fileId; multipart above
// the JSON limit), crm -> Storage, token and session faults, and tenants kept apart.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Credentials } from '../../../api/auth/credentials.ts';
import { docxParagraphs, makeDocx } from '../../support/office.ts';
import { client, generateBody } from '../../support/http.ts';
import { type Stack, startStack } from '../../support/stack.ts';
import { type SalesforceFake, sfId, startSalesforceFake } from '../../fakes/salesforce/server.ts';

const ACCOUNT = sfId('001');
const NETWORK = sfId('0DB');
const OWNER = sfId('005');
const SECRET = 'cc-secret-a';

describe('crm: Salesforce Files as a manage target and source', () => {
  let fake: SalesforceFake;
  let stack: Stack;
  let creds: Credentials;
  let api: ReturnType<typeof client>;
  const jwtKeys = generateKeyPairSync('rsa', { modulusLength: 2048 });

  beforeAll(async () => {
    fake = await startSalesforceFake({
      clients: [
        { clientId: 'app-a', clientSecret: SECRET },
        { clientId: 'app-b', clientSecret: 'cc-secret-b' },
        {
          clientId: 'app-jwt',
          publicKeyPem: jwtKeys.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
          usernames: ['integration@org.example'],
        },
      ],
    });
    for (const id of [ACCOUNT, NETWORK, OWNER]) fake.knownIds.add(id);
    // The fake speaks plain HTTP on loopback: CRM_LOGIN_HOSTS names it explicitly (http://host:port).
    // Above 32 KB a file goes as multipart; a test lowers the fake's JSON limit so that JSON would fail.
    stack = await startStack({ crmLoginHosts: [`http://${new URL(fake.url).host}`], crmMultipartBytes: 32 * 1024 });
    creds = await stack.credentials();
    api = client(creds);
    const put = await connect(creds, { loginUrl: fake.url, clientId: 'app-a', clientSecret: SECRET });
    expect(put.status, JSON.stringify(put.body)).toBeLessThan(300);
  });
  afterAll(async () => {
    await stack?.stop();
    await fake?.close();
  });

  const connect = (c: Credentials, connection: Record<string, unknown>) =>
    client(c).call('PUT', '/common/connection/crm', { json: { connection } });
  /** A docx delivered to Storage by a real generate; `filler` adds incompressible text to make it large. */
  async function generated(c: Credentials = creds, filler = 0) {
    const paragraphs: string[] = ['Quote for {name}'];
    if (filler > 0) paragraphs.push(randomBytes(filler).toString('base64'));
    const { templateUrn, dataUrn } = await client(c).uploadPair(makeDocx(paragraphs), { name: 'ACME' });
    const gen = await client(c).call('POST', '/documents/document/generate', { json: generateBody(templateUrn, dataUrn) });
    expect(gen.status, JSON.stringify(gen.body)).toBe(201);
    const urn = gen.body.result.data.document.urn as string;
    return { urn, bytes: await storageBytes(c, urn) };
  }
  async function storageBytes(c: Credentials, urn: string): Promise<Buffer> {
    const res = await fetch(`${c.baseUrl}/documents/storage/${urn}/content`, {
      headers: { authorization: `Bearer ${c.accessToken}`, 'x-api-key': c.apiKey },
    });
    expect(res.status).toBe(200);
    return Buffer.from(await res.arrayBuffer());
  }
  const toCrm = (urn: string, crm: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
    sourceDocument: { urn, fileFormat: 'docx', loadMethod: 'Storage', remove: 'none' },
    targetDocument: { name: 'Quote', fileFormat: 'docx', deliveryMethod: 'crm', path: '', options: { crm }, ...extra },
  });
  const manage = (json: unknown, c: Credentials = creds) => client(c).call('POST', '/documents/document/manage', { json });

  it('connection get never shows the secret', async () => {
    const got = await api.call('GET', '/common/connection/crm/get');
    expect(got.status, JSON.stringify(got.body)).toBe(200);
    expect(JSON.stringify(got.body)).not.toContain(SECRET);
    expect(JSON.stringify(got.body)).toContain('app-a');
  });

  it('a login URL outside CRM_LOGIN_HOSTS is refused, naming connection.loginUrl', async () => {
    const other = await stack.credentials('tenant-ssrf');
    const res = await connect(other, { loginUrl: 'http://169.254.169.254', clientId: 'app-a', clientSecret: SECRET });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(JSON.stringify(res.body.error)).toMatch(/connection\.loginUrl host 169\.254\.169\.254 is not one this service may call/);
    // The flows: a secret, or a username with a private key; each problem names its field.
    const none = await connect(other, { loginUrl: fake.url, clientId: 'app-a' });
    expect(none.status).toBe(400);
    expect(JSON.stringify(none.body.error)).toMatch(
      /connection\.clientSecret is required, or connection\.username with connection\.privateKey/,
    );
    const badKey = await connect(other, { loginUrl: fake.url, clientId: 'app-a', username: 'u@x.example', privateKey: 'not a key' });
    expect(badKey.status).toBe(400);
    expect(JSON.stringify(badKey.body.error)).toMatch(/connection\.privateKey is not a PEM private key/);
    expect((await client(other).call('GET', '/common/connection/crm/get')).status).toBe(404);
  });

  it('Storage -> crm: a new file attached to the parent record, with owner and network; the urn is the ContentVersion id', async () => {
    const doc = await generated();
    const res = await manage(toCrm(doc.urn, { fileParentId: ACCOUNT, networkId: NETWORK, ownerId: OWNER, fileType: 'WORD_X' }));
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.result.statusCode).toBe('201');
    const urn = res.body.result.data.document.urn as string;
    expect(res.body.result.data.document).toMatchObject({ deliveryMethod: 'crm', name: 'Quote.docx', fileFormat: 'docx' });
    const row = fake.versions.get(urn);
    expect(row, `ContentVersion ${urn} in the fake`).toBeDefined();
    expect(row).toMatchObject({
      FirstPublishLocationId: ACCOUNT,
      NetworkId: NETWORK,
      OwnerId: OWNER,
      PathOnClient: 'Quote.docx',
      FileType: 'WORD_X',
      VersionNumber: '1',
      uploadedVia: 'json',
      createdByClient: 'app-a',
    });
    expect(row!.data.equals(doc.bytes)).toBe(true);
    expect(res.body.consumption).toEqual([
      { dimension: 'pages-managed', value: expect.any(Number) },
      { dimension: 'documents-managed', value: 1 },
    ]);
    const rec = await stack.service.db.query<{ urn: string; delivery_method: string }>(
      'SELECT urn, delivery_method FROM documents WHERE document_guid = $1',
      [res.body.result.data.document.documentGuid],
    );
    expect(rec.rows[0]).toEqual({ urn, delivery_method: 'crm' });
  });

  it('fileId adds a new version to the existing file (by ContentDocument id or a ContentVersion id of it), keeping its parent', async () => {
    const doc = await generated();
    const first = await manage(toCrm(doc.urn, { fileParentId: ACCOUNT }));
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    const v1 = fake.versions.get(first.body.result.data.document.urn)!;
    const second = await manage(toCrm(doc.urn, { fileId: v1.ContentDocumentId }));
    expect(second.status, JSON.stringify(second.body)).toBe(201);
    const v2 = fake.versions.get(second.body.result.data.document.urn)!;
    expect(v2).toMatchObject({
      ContentDocumentId: v1.ContentDocumentId,
      VersionNumber: '2',
      IsLatest: true,
      FirstPublishLocationId: ACCOUNT,
    });
    expect(v1.IsLatest).toBe(false);
    const third = await manage(toCrm(doc.urn, { fileId: v2.Id }));
    expect(third.status, JSON.stringify(third.body)).toBe(201);
    expect(fake.versions.get(third.body.result.data.document.urn)).toMatchObject({
      ContentDocumentId: v1.ContentDocumentId,
      VersionNumber: '3',
    });
    expect(fake.documents.get(v1.ContentDocumentId)).toHaveLength(3);
  });

  it('a fileId that names no file: 400 naming targetDocument.options.crm.fileId, nothing written', async () => {
    const doc = await generated();
    const before = fake.versions.size;
    const res = await manage(toCrm(doc.urn, { fileId: sfId('069') }));
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.error.innerErrors[0].code).toBe('VALIDATION_ERROR');
    expect(res.body.error.message).toMatch(/targetDocument\.options\.crm\.fileId/);
    expect(fake.versions.size).toBe(before);
  });

  it('crm options are validated before anything starts, each problem naming its field', async () => {
    const doc = await generated();
    const before = fake.requests.length;
    const res = await manage(toCrm(doc.urn, { fileParentId: 'not an id', ownerId: 42, fileType: 'PDF', colour: 'red' }));
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    const messages = res.body.error.innerErrors.map((e: { message: string }) => e.message).join('\n');
    for (const f of ['fileParentId', 'ownerId', 'fileType', 'colour']) expect(messages).toContain(`targetDocument.options.crm.${f}`);
    expect(fake.requests.length).toBe(before);
  });

  it("Salesforce refusing a parent record: 400 naming fileParentId, Salesforce's errors in externalErrors", async () => {
    const doc = await generated();
    const res = await manage(toCrm(doc.urn, { fileParentId: sfId('001') }));
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.error.statusCode).toBe('400');
    expect(res.body.error.message).toMatch(/targetDocument\.options\.crm\.fileParentId/);
    expect(res.body.error.externalErrors).toEqual([
      { errorCode: 'INVALID_CROSS_REFERENCE_KEY', message: 'invalid cross reference id', fields: ['FirstPublishLocationId'] },
    ]);
  });

  it('a file above CRM_MULTIPART_BYTES goes as multipart (the JSON body would be refused), byte for byte', async () => {
    const big = await generated(creds, 40 * 1024);
    expect(big.bytes.length).toBeGreaterThan(32 * 1024);
    fake.jsonBodyLimit = 40 * 1024; // a JSON insert of this file (base64) would be refused with 413
    try {
      const res = await manage(toCrm(big.urn, { fileParentId: ACCOUNT }));
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      const row = fake.versions.get(res.body.result.data.document.urn)!;
      expect(row.uploadedVia).toBe('multipart');
      expect(row.data.equals(big.bytes)).toBe(true);
      expect(row.FirstPublishLocationId).toBe(ACCOUNT);
      // A small file still goes as JSON.
      const small = await generated();
      const res2 = await manage(toCrm(small.urn, {}));
      expect(res2.status, JSON.stringify(res2.body)).toBe(201);
      expect(fake.versions.get(res2.body.result.data.document.urn)!.uploadedVia).toBe('json');
    } finally {
      fake.jsonBodyLimit = 50 * 1024 * 1024;
    }
  });

  it('crm -> Storage: the ContentVersion is the source (copy), and a move deletes its file in Salesforce', async () => {
    const doc = await generated();
    const up = await manage(toCrm(doc.urn, { fileParentId: ACCOUNT }));
    expect(up.status, JSON.stringify(up.body)).toBe(201);
    const versionId = up.body.result.data.document.urn as string;
    const fromCrm = (remove: string) => ({
      sourceDocument: { urn: versionId, fileFormat: 'docx', loadMethod: 'crm', remove },
      targetDocument: { name: 'from-crm', fileFormat: 'docx', deliveryMethod: 'Storage', path: 'root/crm' },
    });
    const copy = await manage(fromCrm('none'));
    expect(copy.status, JSON.stringify(copy.body)).toBe(201);
    const copied = await storageBytes(creds, copy.body.result.data.document.urn);
    expect(copied.equals(doc.bytes)).toBe(true);
    expect(docxParagraphs(copied)[0]).toBe('Quote for ACME');
    const documentId = fake.versions.get(versionId)!.ContentDocumentId;
    const move = await manage(fromCrm('delete'));
    expect(move.status, JSON.stringify(move.body)).toBe(201);
    expect(fake.documents.has(documentId)).toBe(false);
    expect(fake.versions.has(versionId)).toBe(false);
    expect((await storageBytes(creds, move.body.result.data.document.urn)).equals(doc.bytes)).toBe(true);
    // The copies read from Salesforce were scratch files of their runs: gone once the runs ended.
    expect(await stack.blobs.list('scratch/crm-')).toEqual([]);
    // permanentDelete is refused up front (Salesforce keeps deleted files in its recycle bin).
    const perm = await manage({ ...fromCrm('permanentDelete') });
    expect(perm.status, JSON.stringify(perm.body)).toBe(400);
    expect(perm.body.error.message).toMatch(/sourceDocument\.remove permanentDelete/);
  });

  it('an unknown ContentVersion as source: 400 TEMPLATE_NOT_FOUND', async () => {
    const res = await manage({
      sourceDocument: { urn: sfId('068'), fileFormat: 'docx', loadMethod: 'crm', remove: 'none' },
      targetDocument: { name: 'x', fileFormat: 'docx', deliveryMethod: 'Storage', path: 'root' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.error.innerErrors[0].code).toBe('TEMPLATE_NOT_FOUND');
  });

  it('an expired session is renewed once with a new token; a 503 is retried', async () => {
    const doc = await generated();
    const grants = fake.tokenGrants.filter((g) => g.ok).length;
    fake.expireSessions();
    const res = await manage(toCrm(doc.urn, {}));
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(fake.tokenGrants.filter((g) => g.ok).length).toBe(grants + 1);
    fake.failNext(503, 1);
    const before = fake.requests.filter((r) => r.status === 503).length;
    const again = await manage(toCrm(doc.urn, {}));
    expect(again.status, JSON.stringify(again.body)).toBe(201);
    expect(fake.requests.filter((r) => r.status === 503).length).toBe(before + 1);
  });

  it('an insert whose answer was lost is retried without storing a second version (the write carries its urn in ReasonForChange)', async () => {
    const doc = await generated();
    const before = fake.versions.size;
    const inserts = () => fake.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/sobjects/ContentVersion')).length;
    const sent = inserts();
    // Salesforce stores the version, the answer never arrives: the step fails and Temporal retries it.
    fake.dropAnswerNext((method, path) => method === 'POST' && path.endsWith('/sobjects/ContentVersion'));
    const res = await manage(toCrm(doc.urn, { fileParentId: ACCOUNT }));
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(fake.versions.size).toBe(before + 1);
    expect(inserts() - sent).toBe(1);
    const stored = fake.versions.get(res.body.result.data.document.urn)!;
    expect(stored.data.equals(doc.bytes)).toBe(true);
    expect(stored.ReasonForChange).toMatch(/^docgen write [0-9a-f-]{36}$/);
    // The retry found it by that tag.
    expect(fake.requests.some((r) => r.method === 'GET' && r.path.endsWith('/query'))).toBe(true);
  });

  it('credentials Salesforce refuses: 400 CONNECTION_ERROR, nothing written', async () => {
    const bad = await stack.credentials('tenant-bad-secret');
    expect((await connect(bad, { loginUrl: fake.url, clientId: 'app-a', clientSecret: 'wrong' })).status).toBeLessThan(300);
    const doc = await generated(bad);
    const before = fake.versions.size;
    const res = await manage(toCrm(doc.urn, {}), bad);
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.error.innerErrors[0].code).toBe('CONNECTION_ERROR');
    expect(res.body.error.message).toMatch(/invalid_client/);
    expect(fake.versions.size).toBe(before);
  });

  it("another subscription's connection is never used: without one, 400 CONNECTION_MISSING; with its own, its own app", async () => {
    const none = await stack.credentials('tenant-no-crm');
    const doc = await generated(none);
    const grants = fake.tokenGrants.length;
    const missing = await manage(toCrm(doc.urn, {}), none);
    expect(missing.status, JSON.stringify(missing.body)).toBe(400);
    expect(missing.body.error.innerErrors[0].code).toBe('CONNECTION_MISSING');
    expect(fake.tokenGrants.length).toBe(grants);
    const own = await stack.credentials('tenant-own-crm');
    expect((await connect(own, { loginUrl: fake.url, clientId: 'app-b', clientSecret: 'cc-secret-b' })).status).toBeLessThan(300);
    const doc2 = await generated(own);
    const res = await manage(toCrm(doc2.urn, {}), own);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(fake.versions.get(res.body.result.data.document.urn)!.createdByClient).toBe('app-b');
  });

  it('the JWT bearer flow (username + private key) works the same', async () => {
    const jwt = await stack.credentials('tenant-jwt');
    const put = await connect(jwt, {
      loginUrl: fake.url,
      clientId: 'app-jwt',
      username: 'integration@org.example',
      privateKey: jwtKeys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    });
    expect(put.status, JSON.stringify(put.body)).toBeLessThan(300);
    const got = await client(jwt).call('GET', '/common/connection/crm/get');
    expect(JSON.stringify(got.body)).not.toContain('PRIVATE KEY');
    const doc = await generated(jwt);
    const res = await manage(toCrm(doc.urn, { fileParentId: ACCOUNT }), jwt);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(fake.versions.get(res.body.result.data.document.urn)!.createdByClient).toBe('app-jwt');
    expect(fake.tokenGrants.some((g) => g.ok && g.grant === 'urn:ietf:params:oauth:grant-type:jwt-bearer')).toBe(true);
  });
});
