// DriveB end to end through the HTTP API: the real service (API + worker in-process, Temporal, S3 storage
// so presigned URLs exist) against the local Google server, with the real googleapis clients. Every case
// goes through PUT /common/connection/driveB and POST /documents/document/generate or manage.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeFile, GoogleFake } from '../../fakes/google/server.ts';
import { MIME } from '../../fakes/google/server.ts';
import { docParagraphs, slidesText, spreadsheetText } from '../../fakes/google/office-model.ts';
import { docxParagraphs } from '../../support/office.ts';
import { type Stack, startStack } from '../../support/stack.ts';
import { makeDocx, makePptx, makeXlsx, para, png, poppler } from '../convert/fixtures.ts';
import { ADA, type Api, apiOf, connect, driveBBody, EVE, expectOnlyConfiguredHost, startFakeGoogle } from './setup.ts';

const ADA_USER = 'ada@example.com';

describe('DriveB through the HTTP API', () => {
  let fake: GoogleFake;
  let restoreEnv: () => void;
  let stack: Stack;
  let api: Api;
  let root: string;

  beforeAll(async () => {
    const g = await startFakeGoogle();
    fake = g.fake;
    restoreEnv = g.restoreEnv;
    stack = await startStack(g.settings, { storage: 's3' });
    api = apiOf(await stack.credentials());
    root = fake.rootOf(ADA_USER);
  });
  afterAll(async () => {
    await stack?.stop();
    await fake?.close();
    restoreEnv?.();
  });

  /** A native file in Ada's Drive whose model is the given Office package. */
  const native = (name: string, mimeType: string, content: Uint8Array, parent = root) =>
    fake.put({ name, mimeType, parent, owner: ADA_USER, content });
  const folderPath = (f: FakeFile): string => {
    const names: string[] = [];
    for (let p = fake.files.get(f.parents[0]!); p && p.id !== root; p = fake.files.get(p.parents[0]!)) names.unshift(p.name);
    return names.join('/');
  };
  const generate = (body: unknown) => api.call('POST', '/documents/document/generate', { json: body });
  async function uploadData(data: unknown): Promise<string> {
    const d = await api.upload('data', [{ name: 'd.json', bytes: JSON.stringify(data) }]);
    expect(d.status, JSON.stringify(d.body)).toBe(201);
    return d.body.result.data.files[0].id as string;
  }

  it('connect: a generate before connecting is CONNECTION_MISSING; a bad body names the field; secrets are never returned', async () => {
    const doc = native('before', MIME.document, makeDocx(para('x')));
    const early = await generate(driveBBody({ urn: doc.id, fileFormat: 'gdoc' }, { urn: await uploadData({}) }, {}));
    expect(early.status, JSON.stringify(early.body)).toBe(400);
    expect(JSON.stringify(early.body.error)).toMatch(/CONNECTION_MISSING/);
    const bad = await api.call('PUT', '/common/connection/driveB', {
      json: { connection: { clientId: 'client-a', clientSecret: 'secret-a' } },
    });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toMatch(/connection\.refreshToken/);
    await connect(api, ADA);
    const got = await api.call('GET', '/common/connection/driveB/get');
    expect(got.status).toBe(200);
    expect(JSON.stringify(got.body)).toContain('client-a');
    expect(JSON.stringify(got.body)).not.toMatch(/secret-a|refresh-ada/);
  });

  it('gdoc -> gdoc with sharing: exported, merged by the engine, uploaded converting to a Google Doc in the folder; permissions without notification; links and per-user results', async () => {
    const template = native(
      'Letter template',
      MIME.document,
      makeDocx(para('Dear {name},') + para('{#items}') + para('- {sku}') + para('{/items}')),
    );
    const dataUrn = await uploadData({ name: 'Ada', items: [{ sku: 'A1' }, { sku: 'B2' }] });
    const sharing = { viewAnonymous: true, viewUsers: ['bob@example.com', 'zed@nogoogle.test'], editUsers: ['carol@example.com'] };
    const res = await generate(
      driveBBody({ urn: template.id, fileFormat: 'gdoc' }, { urn: dataUrn }, { path: 'Out/Letters', options: { driveB: sharing } }),
    );
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const doc = res.body.result.data.document;
    const file = fake.files.get(doc.urn)!;
    expect(file.mimeType).toBe(MIME.document);
    expect(file.name).toBe('letter');
    expect(folderPath(file)).toBe('Out/Letters');
    expect(docParagraphs(file.content)).toEqual(['Dear Ada,', '- A1', '- B2']);
    // The template in Drive is untouched.
    expect(docParagraphs(fake.files.get(template.id)!.content)[0]).toBe('Dear {name},');
    // Sharing: anyone reader, users without a notification e-mail; the address without a Google account fails alone.
    const perms = file.permissions.map((p) => `${p.type}:${p.role}:${p.emailAddress ?? ''}:${p.sendNotificationEmail}`).sort();
    expect(perms).toEqual(['anyone:reader::false', 'user:reader:bob@example.com:false', 'user:writer:carol@example.com:false']);
    expect(doc.uri).toBe(`https://docs.google.com/document/d/${file.id}/edit?usp=drivesdk`);
    expect(doc.viewAnonymousLink).toBe(doc.uri);
    expect(doc.viewUserLink).toBe(doc.uri);
    expect(doc.editUserLink).toBe(doc.uri);
    const record = await api.call('GET', `/documents/document/${res.body.result.data.document.documentGuid}/get`);
    expect(record.status, JSON.stringify(record.body)).toBe(200);
    const r = record.body.result.data.document;
    expect(r.succeededViewUserEmailList).toBe('bob@example.com');
    expect(r.failedViewUserEmailList).toBe('zed@nogoogle.test');
    expect(r.succeededEditUserEmailList).toBe('carol@example.com');
    // The same name again: Drive allows duplicates, docgen renames.
    const again = await generate(
      driveBBody({ urn: template.id, fileFormat: 'gdoc' }, { urn: await uploadData({ name: 'Bob', items: [] }) }, { path: 'Out/Letters' }),
    );
    expect(again.status, JSON.stringify(again.body)).toBe(201);
    expect(again.body.result.data.document.name).toBe('letter (1)');
    expect(
      fake
        .childrenOf(file.parents[0]!)
        .map((f) => f.name)
        .sort(),
    ).toEqual(['letter', 'letter (1)']);
  });

  it('gsheet -> pdf: the exported xlsx is merged and converted by our converter, the pdf delivered to DriveB', async () => {
    const sheet = native(
      'Report',
      MIME.spreadsheet,
      makeXlsx([
        {
          name: 'Sheet1',
          rows: [
            ['Customer', '{name}'],
            ['Total', '{total}'],
          ],
        },
      ]),
    );
    const res = await generate(
      driveBBody(
        { urn: sheet.id, fileFormat: 'gsheet' },
        { urn: await uploadData({ name: 'Ada Lovelace', total: 42 }) },
        { name: 'report', fileFormat: 'pdf', path: 'Reports' },
      ),
    );
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const file = fake.files.get(res.body.result.data.document.urn)!;
    expect(file.name).toBe('report.pdf');
    expect(file.mimeType).toBe('application/pdf');
    expect(file.content.subarray(0, 5).toString()).toBe('%PDF-');
    expect(poppler('pdftotext', file.content)).toMatch(/Ada Lovelace/);
    expect(res.body.consumption.find((c: { dimension: string }) => c.dimension === 'pages-generated').value).toBe(1);
  });

  it('gslide with native merge and an image: the template is copied and merged in place, the image reaches Google by a presigned URL', async () => {
    const deck = native('Deck', MIME.presentation, makePptx(['Hello {name}', '{%logo}', 'Bye {name}']));
    const logo = png([10, 120, 200]);
    const before = fake.requests.length;
    const res = await generate(
      driveBBody(
        { urn: deck.id, fileFormat: 'gslide' },
        { urn: await uploadData({ name: 'Ada', logo: `data:image/png;base64,${Buffer.from(logo).toString('base64')}` }) },
        {
          name: 'deck',
          path: 'Decks',
          options: { driveBGenerate: { nativeMergeEnabled: true, nativeImageMergeEnabled: true } },
        },
      ),
    );
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const file = fake.files.get(res.body.result.data.document.urn)!;
    expect(file.mimeType).toBe(MIME.presentation);
    expect(folderPath(file)).toBe('Decks');
    expect(slidesText(file.content)).toEqual(['Hello Ada', 'Bye Ada']);
    expect(file.images).toHaveLength(1);
    expect(file.images[0]!.pageObjectId).toBe('slide2');
    expect(file.images[0]!.sha256).toBe((await import('node:crypto')).createHash('sha256').update(logo).digest('hex'));
    expect(file.images[0]!.sourceUrl).toMatch(/X-Amz-Signature=/);
    // In place: a copy and batch updates, no export and no upload.
    const calls = fake.requests.slice(before).map((r) => `${r.method} ${r.path}`);
    expect(calls).toContain(`POST /drive/v3/files/${deck.id}/copy`);
    expect(calls).toContain(`POST /v1/presentations/${file.id}:batchUpdate`);
    expect(calls.filter((c) => c.includes('/export') || c.startsWith('POST /upload/'))).toEqual([]);
    expect(slidesText(fake.files.get(deck.id)!.content)).toEqual(['Hello {name}', '{%logo}', 'Bye {name}']);
    // The image was a scratch object: gone once Google fetched it.
    expect(await stack.blobs.list('scratch/driveB-images-')).toEqual([]);
  });

  it('native merge refuses a loop before anything is written, naming the tag and suggesting the default route', async () => {
    const doc = native('Loop template', MIME.document, makeDocx(para('Hi {name}') + para('{#items}{sku}{/items}')));
    const before = fake.requests.length;
    const res = await generate(
      driveBBody(
        { urn: doc.id, fileFormat: 'gdoc' },
        { urn: await uploadData({ name: 'Ada', items: [] }) },
        { path: 'Refused', options: { driveBGenerate: { nativeMergeEnabled: true } } },
      ),
    );
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.error.innerErrors[0].code).toBe('NOT_SUPPORTED');
    expect(res.body.error.innerErrors[0].message).toMatch(
      /\{#items\} \(a loop or condition cannot be merged natively\).*without nativeMergeEnabled/,
    );
    const writes = fake.requests.slice(before).filter((r) => r.method !== 'GET' && r.path !== '/token');
    expect(writes.map((r) => `${r.method} ${r.path}`)).toEqual([]);
    // And pdf with native merge is refused by the API itself.
    const pdf = await generate(
      driveBBody(
        { urn: doc.id, fileFormat: 'gdoc' },
        { urn: await uploadData({}) },
        { fileFormat: 'pdf', options: { driveBGenerate: { nativeMergeEnabled: true } } },
      ),
    );
    expect(pdf.status).toBe(400);
    expect(pdf.body.error.innerErrors.map((e: { message: string }) => e.message).join()).toMatch(
      /document\.options\.driveBGenerate\.nativeMergeEnabled produces the template's own format \(gdoc\), not pdf/,
    );
  });

  it('a docx uploaded to Storage, generated to pdf in DriveB', async () => {
    const { templateUrn, dataUrn } = await api.uploadPair(makeDocx(para('Invoice for {name}')), { name: 'Ada' });
    const res = await generate({
      template: { urn: templateUrn, loadMethod: 'Storage', fileFormat: 'docx' },
      data: { loadMethod: 'Storage', urn: dataUrn },
      document: { name: 'invoice', fileFormat: 'pdf', deliveryMethod: 'DriveB', path: 'Invoices/2026', timezone: 'UTC', locale: 'en-US' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const file = fake.files.get(res.body.result.data.document.urn)!;
    expect(folderPath(file)).toBe('Invoices/2026');
    expect(file.name).toBe('invoice.pdf');
    expect(poppler('pdftotext', file.content)).toMatch(/Invoice for Ada/);
  });

  it('data from a Google Sheet: the first row names the fields, the rows become `rows`', async () => {
    const sheet = native(
      'Customers',
      MIME.spreadsheet,
      makeXlsx([
        {
          name: 'People',
          rows: [
            ['Name', 'Amount'],
            ['Ada', 12.5],
            ['', ''],
            ['Bob', 3],
          ],
        },
        { name: 'Other', rows: [['x']] },
      ]),
    );
    const { templateUrn } = await api.uploadPair(makeDocx(para('{#rows}') + para('{Name}: {Amount * 2}') + para('{/rows}')), {});
    const res = await generate({
      template: { urn: templateUrn, loadMethod: 'Storage', fileFormat: 'docx' },
      data: { loadMethod: 'DriveB', urn: sheet.id },
      document: { name: 'from-sheet', fileFormat: 'docx', deliveryMethod: 'Storage', path: 'root', timezone: 'UTC', locale: 'en-US' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const out = await api.download(res.body.result.data.document.urn);
    expect(docxParagraphs(out.bytes)).toEqual(['Ada: 25', 'Bob: 6']);
  });

  it('manage between DriveB and Storage, and inside DriveB (copy, move by parents, delete = trash, permanentDelete)', async () => {
    const manage = (body: unknown) => api.call('POST', '/documents/document/manage', { json: body });
    // A pdf in DriveB, copied to Storage.
    const pdfBytes = Buffer.from(
      '%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj 2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj 3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 10 10]>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n',
    );
    const inDrive = fake.put({ name: 'scan.pdf', mimeType: 'application/pdf', parent: root, owner: ADA_USER, content: pdfBytes });
    const toStorage = await manage({
      sourceDocument: { urn: inDrive.id, fileFormat: 'pdf', loadMethod: 'DriveB' },
      targetDocument: { name: 'scan', fileFormat: 'pdf', deliveryMethod: 'Storage', path: 'root' },
    });
    expect(toStorage.status, JSON.stringify(toStorage.body)).toBe(201);
    expect(Buffer.from((await api.download(toStorage.body.result.data.document.urn)).bytes).equals(pdfBytes)).toBe(true);
    // A Storage docx converted to pdf into DriveB.
    const kept = await api.uploadPair(makeDocx(para('Kept {name}')), { name: 'Ada' });
    const gen = await generate({
      template: { urn: kept.templateUrn, loadMethod: 'Storage', fileFormat: 'docx' },
      data: { loadMethod: 'Storage', urn: kept.dataUrn },
      document: { name: 'kept', fileFormat: 'docx', deliveryMethod: 'Storage', path: 'root', timezone: 'UTC', locale: 'en-US' },
    });
    expect(gen.status, JSON.stringify(gen.body)).toBe(201);
    const converted = await manage({
      sourceDocument: { urn: gen.body.result.data.document.urn, fileFormat: 'docx', loadMethod: 'Storage' },
      targetDocument: { name: 'kept', fileFormat: 'pdf', deliveryMethod: 'DriveB', path: 'Converted' },
    });
    expect(converted.status, JSON.stringify(converted.body)).toBe(201);
    const pdf = fake.files.get(converted.body.result.data.document.urn)!;
    expect(folderPath(pdf)).toBe('Converted');
    expect(poppler('pdftotext', pdf.content)).toMatch(/Kept Ada/);
    // A Google Doc converted to pdf into Storage (exported, then our converter).
    const gdoc = native('Memo', MIME.document, makeDocx(para('Memo text')));
    const gdocPdf = await manage({
      sourceDocument: { urn: gdoc.id, fileFormat: 'gdoc', loadMethod: 'DriveB' },
      targetDocument: { name: 'memo', fileFormat: 'pdf', deliveryMethod: 'Storage', path: 'root' },
    });
    expect(gdocPdf.status, JSON.stringify(gdocPdf.body)).toBe(201);
    expect(poppler('pdftotext', (await api.download(gdocPdf.body.result.data.document.urn)).bytes)).toMatch(/Memo text/);
    // Inside DriveB: a copy is files.copy (the Google Doc itself), a move changes its parents, keeping its id.
    const before = fake.requests.length;
    const copied = await manage({
      sourceDocument: { urn: gdoc.id, fileFormat: 'gdoc', loadMethod: 'DriveB' },
      targetDocument: {
        name: 'Memo copy',
        fileFormat: 'gdoc',
        deliveryMethod: 'DriveB',
        path: 'Copies',
        options: { driveB: { viewAnonymous: true } },
      },
    });
    expect(copied.status, JSON.stringify(copied.body)).toBe(201);
    const copy = fake.files.get(copied.body.result.data.document.urn)!;
    expect(copy.mimeType).toBe(MIME.document);
    // The copy is shared as targetDocument.options.driveB asks, and the answer carries its link.
    expect(copy.permissions.map((p) => `${p.type}:${p.role}`)).toContain('anyone:reader');
    expect(copied.body.result.data.document.viewAnonymousLink).toBeTruthy();
    expect(folderPath(copy)).toBe('Copies');
    expect(fake.requests.slice(before).some((r) => r.method === 'POST' && r.path === `/drive/v3/files/${gdoc.id}/copy`)).toBe(true);
    const moved = await manage({
      sourceDocument: { urn: gdoc.id, fileFormat: 'gdoc', loadMethod: 'DriveB', remove: 'delete' },
      targetDocument: { name: 'Memo', fileFormat: 'gdoc', deliveryMethod: 'DriveB', path: 'Archive/2026' },
    });
    expect(moved.status, JSON.stringify(moved.body)).toBe(201);
    expect(moved.body.result.data.document.urn).toBe(gdoc.id);
    expect(folderPath(fake.files.get(gdoc.id)!)).toBe('Archive/2026');
    expect(fake.files.get(gdoc.id)!.trashed).toBe(false);
    expect(fake.requests.slice(before).some((r) => r.method === 'PATCH' && r.query.addParents && r.query.removeParents === root)).toBe(
      true,
    );
    // Delete = trash (recoverable); permanentDelete = gone.
    const trashed = await manage({ sourceDocument: { urn: copy.id, fileFormat: 'gdoc', loadMethod: 'DriveB', remove: 'delete' } });
    expect(trashed.status, JSON.stringify(trashed.body)).toBe(201);
    expect(fake.files.get(copy.id)!.trashed).toBe(true);
    const gone = await manage({ sourceDocument: { urn: inDrive.id, fileFormat: 'pdf', loadMethod: 'DriveB', remove: 'permanentDelete' } });
    expect(gone.status, JSON.stringify(gone.body)).toBe(201);
    expect(fake.files.has(inDrive.id)).toBe(false);
  });

  it('rate limits (403 userRateLimitExceeded, 429) on the upload and the look-ups are retried with back-off', async () => {
    const template = native('Rate', MIME.document, makeDocx(para('Hi {name}')));
    fake.failNext(1, { status: 403 }, (r) => r.path === '/upload/drive/v3/files');
    fake.failNext(2, { status: 429 }, (r) => r.path === '/drive/v3/files' && r.method === 'GET');
    const before = fake.requests.length;
    const res = await generate(
      driveBBody({ urn: template.id, fileFormat: 'gdoc' }, { urn: await uploadData({ name: 'Ada' }) }, { name: 'rated', path: 'Rated' }),
    );
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const statuses = fake.requests.slice(before).map((r) => r.status);
    expect(statuses.filter((s) => s === 403)).toHaveLength(1);
    expect(statuses.filter((s) => s === 429)).toHaveLength(2);
    expect(fake.childrenOf(fake.files.get(res.body.result.data.document.urn)!.parents[0]!).map((f) => f.name)).toEqual(['rated']);
  });

  it('a native output above 5 MB goes up resumably in 256 KiB-multiple chunks (308 until the last)', async () => {
    const pad = randomBytes(6 * 1024 * 1024);
    const big = makeDocx({ body: para('Big {name}'), extra: { 'word/media/pad.bin': pad } });
    const template = native('Big', MIME.document, big);
    const before = fake.requests.length;
    const res = await generate(
      driveBBody({ urn: template.id, fileFormat: 'gdoc' }, { urn: await uploadData({ name: 'Ada' }) }, { name: 'big', path: 'Big' }),
    );
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const puts = fake.requests.slice(before).filter((r) => r.method === 'PUT' && r.path === '/upload/drive/v3/files');
    expect(puts.length).toBeGreaterThan(5);
    expect(puts.slice(0, -1).every((r) => r.status === 308)).toBe(true);
    expect(puts.at(-1)!.status).toBe(200);
    const file = fake.files.get(res.body.result.data.document.urn)!;
    expect(file.mimeType).toBe(MIME.document);
    expect(docParagraphs(file.content)).toEqual(['Big Ada']);
  });

  it("another subscription uses its own connection only: Ada's files are not found with Eve's, and no connection is CONNECTION_MISSING", async () => {
    const other = apiOf(await stack.credentials('other-subscription'));
    const template = native('Private', MIME.document, makeDocx(para('Secret {name}')));
    const d = await other.upload('data', [{ name: 'd.json', bytes: '{}' }]);
    const body = driveBBody({ urn: template.id, fileFormat: 'gdoc' }, { urn: d.body.result.data.files[0].id }, {});
    const missing = await other.call('POST', '/documents/document/generate', { json: body });
    expect(missing.status).toBe(400);
    expect(JSON.stringify(missing.body.error)).toMatch(/CONNECTION_MISSING/);
    await connect(other, EVE);
    const before = fake.requests.length;
    const refused = await other.call('POST', '/documents/document/generate', { json: body });
    expect(refused.status, JSON.stringify(refused.body)).toBe(400);
    expect(refused.body.error.innerErrors[0].code).toBe('TEMPLATE_NOT_FOUND');
    const users = new Set(
      fake.requests
        .slice(before)
        .filter((r) => r.user)
        .map((r) => r.user),
    );
    expect([...users]).toEqual(['eve@example.com']);
    // Eve's sheet is hers: the same question from Ada's subscription reads as absent.
    const eveSheet = fake.put({
      name: 'Eve data',
      mimeType: MIME.spreadsheet,
      parent: fake.rootOf('eve@example.com'),
      owner: 'eve@example.com',
      content: makeXlsx([{ name: 'S', rows: [['a'], ['1']] }]),
    });
    const { templateUrn } = await api.uploadPair(makeDocx(para('x')), {});
    const fromAda = await generate({
      template: { urn: templateUrn, loadMethod: 'Storage', fileFormat: 'docx' },
      data: { loadMethod: 'DriveB', urn: eveSheet.id },
      document: { name: 'x', fileFormat: 'docx', deliveryMethod: 'Storage', path: 'root', timezone: 'UTC', locale: 'en-US' },
    });
    expect(fromAda.status).toBe(400);
    expect(fromAda.body.error.innerErrors[0].code).toBe('DATA_NOT_FOUND');
    expect(spreadsheetText(eveSheet.content)).toEqual(['a', '1']);
  });

  it('same name in the folder: conflictBehavior fail refuses and leaves nothing; replace writes into the same file (id, link and sharing kept)', async () => {
    const template = native('Clash', MIME.document, makeDocx(para('v {n}')));
    const body = (n: number, conflictBehavior?: string, sharing: Record<string, unknown> = {}) =>
      driveBBody(
        { urn: template.id, fileFormat: 'gdoc' },
        { urn: '' },
        { name: 'clash', path: 'Clash', options: { driveB: { ...sharing, ...(conflictBehavior ? { conflictBehavior } : {}) } } },
      );
    const first = await generate({
      ...body(1, undefined, { viewUsers: ['bob@example.com'] }),
      data: { loadMethod: 'Storage', urn: await uploadData({ n: 1 }) },
    });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    const id = first.body.result.data.document.urn as string;
    const folder = fake.files.get(id)!.parents[0]!;
    const failed = await generate({ ...body(2, 'fail'), data: { loadMethod: 'Storage', urn: await uploadData({ n: 2 }) } });
    expect(failed.status).toBe(400);
    expect(failed.body.error.innerErrors[0].message).toMatch(/clash already exists in Clash/);
    // Refused after the upload: the file under its temporary name is gone.
    expect(fake.childrenOf(folder).map((f) => f.name)).toEqual(['clash']);
    const replaced = await generate({ ...body(3, 'replace'), data: { loadMethod: 'Storage', urn: await uploadData({ n: 3 }) } });
    expect(replaced.status, JSON.stringify(replaced.body)).toBe(201);
    expect(replaced.body.result.data.document.urn).toBe(id);
    expect(replaced.body.result.data.document.uri).toBe(first.body.result.data.document.uri);
    expect(fake.childrenOf(folder).map((f) => [f.name, docParagraphs(f.content)[0]])).toEqual([['clash', 'v 3']]);
    const file = fake.files.get(id)!;
    expect(file.trashed).toBe(false);
    expect(file.permissions.map((p) => `${p.type}:${p.role}:${p.emailAddress}`)).toEqual(['user:reader:bob@example.com']);
  });

  it('a Google Sheet merged natively with findReplace', async () => {
    const sheet = native(
      'Quote',
      MIME.spreadsheet,
      makeXlsx([
        {
          name: 'Q',
          rows: [
            ['Customer', '{customer.name}'],
            ['City', '{customer.city}'],
          ],
        },
      ]),
    );
    const res = await generate(
      driveBBody(
        { urn: sheet.id, fileFormat: 'gsheet' },
        { urn: await uploadData({ customer: { name: 'Ada', city: 'London' } }) },
        { name: 'quote', options: { driveBGenerate: { nativeMergeEnabled: true } } },
      ),
    );
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const file = fake.files.get(res.body.result.data.document.urn)!;
    expect(file.mimeType).toBe(MIME.spreadsheet);
    expect(spreadsheetText(file.content)).toEqual(['Customer', 'Ada', 'City', 'London']);
    expect(fake.requests.some((r) => r.path === `/v4/spreadsheets/${file.id}:batchUpdate` && r.status === 200)).toBe(true);
  });

  it('a service account on a shared drive; a revoked refresh token is CONNECTION_ERROR', async () => {
    const { generateKeyPairSync } = await import('node:crypto');
    const keys = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const clientEmail = 'docgen@proj.iam.gserviceaccount.com';
    fake.addServiceAccount({ clientEmail, publicKeyPem: keys.publicKey.export({ type: 'spki', format: 'pem' }).toString() });
    fake.addSharedDrive('team-drive', [clientEmail]);
    const sa = apiOf(await stack.credentials('service-account-subscription'));
    const key = {
      type: 'service_account',
      client_email: clientEmail,
      private_key: keys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    };
    const noQuota = await sa.call('PUT', '/common/connection/driveB', { json: { connection: { serviceAccountKey: key } } });
    expect(noQuota.status).toBe(400);
    expect(JSON.stringify(noQuota.body)).toMatch(/connection\.subject or connection\.sharedDriveId is required/);
    await connect(sa, { serviceAccountKey: JSON.stringify(key), sharedDriveId: 'team-drive' });
    const { templateUrn, dataUrn } = await sa.uploadPair(makeDocx(para('Team {name}')), { name: 'Ada' });
    const res = await sa.call('POST', '/documents/document/generate', {
      json: {
        template: { urn: templateUrn, loadMethod: 'Storage', fileFormat: 'docx' },
        data: { loadMethod: 'Storage', urn: dataUrn },
        document: { name: 'team', fileFormat: 'pdf', deliveryMethod: 'DriveB', path: 'Shared/Out', timezone: 'UTC', locale: 'en-US' },
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const file = fake.files.get(res.body.result.data.document.urn)!;
    expect(file.driveId).toBe('team-drive');
    expect(file.owner).toBe(clientEmail);
    expect(fake.tokensIssued.some((t) => t.user === clientEmail && t.grant.includes('jwt-bearer'))).toBe(true);

    const revoked = apiOf(await stack.credentials('revoked-subscription'));
    await connect(revoked, { ...ADA, refreshToken: 'revoked-token' });
    const doc = native('Any', MIME.document, makeDocx(para('x')));
    const d = await revoked.upload('data', [{ name: 'd.json', bytes: '{}' }]);
    const refused = await revoked.call('POST', '/documents/document/generate', {
      json: driveBBody({ urn: doc.id, fileFormat: 'gdoc' }, { urn: d.body.result.data.files[0].id }, {}),
    });
    expect(refused.status, JSON.stringify(refused.body)).toBe(400);
    expect(refused.body.error.innerErrors[0].code).toBe('CONNECTION_ERROR');
    expect(refused.body.error.innerErrors[0].message).toMatch(/invalid_grant.*PUT \/v1\/common\/connection\/driveB/);
  });

  it('every request went to the configured host: none left for Google (caught by the proxy side of the fake)', () => {
    expect(fake.requests.length).toBeGreaterThan(50);
    expectOnlyConfiguredHost(fake);
  });
});
