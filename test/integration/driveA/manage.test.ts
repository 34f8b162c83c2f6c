// Manage with DriveA end to end (HTTP API, worker, Temporal, converter, the fake Microsoft Graph): copy
// and move inside DriveA use Graph's own copy (202 + monitor) and move (PATCH); Storage <-> DriveA both
// ways go through the bytes; Delete sends to the recycle bin or deletes for good; convert uses our
// converter wherever the file lives.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Credentials } from '../../../api/auth/credentials.ts';
import { pdfPageCount } from '../../../converter/index.ts';
import { type GraphFake, startGraphFake } from '../../fakes/graph/server.ts';
import { client, generateBody } from '../../support/http.ts';
import { docxParagraphs, makeDocx } from '../../support/office.ts';
import { type Stack, startStack } from '../../support/stack.ts';
import { connect, DRIVE_A } from './support.ts';

describe('manage with DriveA', () => {
  let fake: GraphFake;
  let stack: Stack;
  let creds: Credentials;
  let api: ReturnType<typeof client>;

  beforeAll(async () => {
    fake = await startGraphFake();
    fake.addDrive(DRIVE_A);
    stack = await startStack({ driveAGraphUrl: fake.graphUrl, driveALoginUrl: fake.loginUrl });
    creds = await stack.credentials();
    api = client(creds);
    await connect(api, fake);
  });
  afterAll(async () => {
    await stack?.stop();
    await fake?.close();
  });

  const manage = (json: unknown) => api.call('POST', '/documents/document/manage', { json });
  const live = (prefix: string) =>
    fake.files(DRIVE_A).filter((f) => f.path.startsWith(prefix) && !f.path.endsWith('/') && f.state === 'live');
  async function generated(deliveryMethod: 'Storage' | 'DriveA', name: string) {
    const { templateUrn, dataUrn } = await api.uploadPair(makeDocx(['Hello {name}']), { name: name });
    const res = await api.call('POST', '/documents/document/generate', {
      json: generateBody(templateUrn, dataUrn, {
        document: { name, deliveryMethod, path: deliveryMethod === 'Storage' ? 'root' : 'Source' },
      }),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.result.data.document as { urn: string; documentGuid: string };
  }
  async function records(where: string, args: unknown[]) {
    const r = await stack.service.db.query<{ urn: string; delivery_method: string; is_deleted: boolean; title: string }>(
      `SELECT urn, delivery_method, is_deleted, title FROM documents WHERE subscription_guid = $1 AND ${where}`,
      [creds.subscriptionId, ...args],
    );
    return r.rows;
  }
  const driveA = (urn: string, remove = 'none', fileFormat = 'docx') => ({ urn, fileFormat, loadMethod: 'DriveA', remove });
  const toDriveA = (name: string, path: string, fileFormat = 'docx') => ({ name, fileFormat, deliveryMethod: 'DriveA', path });

  it('copy inside DriveA: Graph copies (202, monitor polled), a new file and record; the source stays', async () => {
    const doc = await generated('DriveA', 'orig');
    const copies = fake.count('POST', '/copy');
    const [reads, puts, sessions] = [
      fake.count('GET', `/items/${doc.urn}/content`),
      fake.count('PUT', '/content'),
      fake.count('POST', 'createUploadSession'),
    ];
    const res = await manage({
      sourceDocument: driveA(doc.urn),
      targetDocument: { ...toDriveA('orig-copy', 'Copies'), options: { driveA: { viewAnonymous: true } } },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    // Manage meters pages-managed (spec 4.8) from the file: the source is read once to count them; the
    // copy itself is Graph's, nothing is uploaded.
    expect(fake.count('GET', `/items/${doc.urn}/content`) - reads).toBe(1);
    expect([fake.count('PUT', '/content'), fake.count('POST', 'createUploadSession')]).toEqual([puts, sessions]);
    const out = res.body.result.data.document;
    expect(out).toMatchObject({ deliveryMethod: 'DriveA', name: 'orig-copy.docx', fileFormat: 'docx' });
    expect(fake.count('POST', '/copy') - copies).toBe(1);
    expect(fake.log.filter((e) => e.path.startsWith('/monitor/')).map((e) => e.status)).toEqual(expect.arrayContaining([202, 200]));
    expect(docxParagraphs(fake.item(DRIVE_A, out.urn)!.content!)).toEqual(['Hello orig']);
    expect(live('Copies/').map((f) => f.path)).toEqual(['Copies/orig-copy.docx']);
    expect(fake.item(DRIVE_A, doc.urn)?.state).toBe('live');
    // The copy is shared as asked (targetDocument.options.driveA), and its record says so.
    const record = await api.call('GET', `/documents/document/${out.documentGuid}/get`);
    expect(record.body.result.data.document.viewAnonymousLink).toMatch(/^https:\/\/contoso\.example\/.*view-anonymous/);
    expect(fake.item(DRIVE_A, out.urn)?.permissions.map((p) => p.link?.scope)).toEqual(['anonymous']);
    expect((await stack.service.db.query('SELECT urn FROM location_writes')).rows).toEqual([]);
    expect(res.body.consumption).toEqual([
      { dimension: 'pages-managed', value: 1 },
      { dimension: 'documents-managed', value: 1 },
    ]);
  });

  it('move inside DriveA: one PATCH, the same item in its new folder, nothing uploaded or deleted', async () => {
    const doc = await generated('DriveA', 'mover');
    const [puts, deletes] = [fake.count('PUT', '/content'), fake.count('DELETE', '/items/')];
    const res = await manage({ sourceDocument: driveA(doc.urn, 'delete'), targetDocument: toDriveA('moved', 'Moved') });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.result.data.document.urn).toBe(doc.urn);
    expect(fake.count('PUT', '/content')).toBe(puts);
    expect(fake.count('DELETE', '/items/')).toBe(deletes);
    expect(live('Moved/').map((f) => f.path)).toEqual(['Moved/moved.docx']);
    expect(live('Source/mover')).toEqual([]);
    expect(await records('urn = $2', [doc.urn])).toEqual([expect.objectContaining({ title: 'moved.docx', is_deleted: false })]);
  });

  it('a move inside DriveA onto a taken name with conflictBehavior fail is a 400 that leaves both files as they were', async () => {
    const taken = await generated('DriveA', 'taken');
    const doc = await generated('DriveA', 'keepme');
    const res = await manage({
      sourceDocument: driveA(doc.urn, 'delete'),
      targetDocument: { ...toDriveA('taken', 'Source'), options: { driveA: { conflictBehavior: 'fail' } } },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    // The user's own file is not docgen's temporary upload: refusing the name must not delete it.
    expect(fake.item(DRIVE_A, doc.urn)?.state).toBe('live');
    expect(fake.item(DRIVE_A, doc.urn)?.name).toBe('keepme.docx');
    expect(fake.item(DRIVE_A, taken.urn)?.state).toBe('live');
    expect(await records('urn = $2', [doc.urn])).toEqual([expect.objectContaining({ title: 'keepme.docx', is_deleted: false })]);
  });

  it('Storage -> DriveA (copy) and DriveA -> Storage (move, permanentDelete)', async () => {
    const stored = await generated('Storage', 'fromstorage');
    const up = await manage({
      sourceDocument: { urn: stored.urn, fileFormat: 'docx', loadMethod: 'Storage', remove: 'none' },
      targetDocument: toDriveA('up', 'FromStorage'),
    });
    expect(up.status, JSON.stringify(up.body)).toBe(201);
    expect(docxParagraphs(fake.item(DRIVE_A, up.body.result.data.document.urn)!.content!)).toEqual(['Hello fromstorage']);

    const doc = await generated('DriveA', 'tostorage');
    const down = await manage({
      sourceDocument: driveA(doc.urn, 'permanentDelete'),
      targetDocument: { name: 'down', fileFormat: 'docx', deliveryMethod: 'Storage', path: 'root/in' },
    });
    expect(down.status, JSON.stringify(down.body)).toBe(201);
    expect(docxParagraphs((await api.download(down.body.result.data.document.urn)).bytes)).toEqual(['Hello tostorage']);
    expect(fake.item(DRIVE_A, doc.urn)).toBeUndefined();
  });

  it('Delete: remove delete sends to the recycle bin, permanentDelete deletes; the record is soft-deleted', async () => {
    const a = await generated('DriveA', 'recycled');
    const res = await manage({ sourceDocument: driveA(a.urn, 'delete') });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.result.data.document).toMatchObject({ deliveryMethod: 'DriveA', urn: a.urn, name: 'recycled.docx' });
    expect(fake.item(DRIVE_A, a.urn)?.state).toBe('recycled');
    expect(await records('urn = $2', [a.urn])).toEqual([expect.objectContaining({ is_deleted: true })]);
    const b = await generated('DriveA', 'gone');
    expect((await manage({ sourceDocument: driveA(b.urn, 'permanentDelete') })).status).toBe(201);
    expect(fake.item(DRIVE_A, b.urn)).toBeUndefined();
    // A file that is not there: the caller's mistake, nothing recorded.
    const missing = await manage({ sourceDocument: driveA(b.urn, 'delete') });
    expect(missing.status).toBe(400);
    expect(missing.body.error.innerErrors[0].code).toBe('TEMPLATE_NOT_FOUND');
    // What Graph answered reaches the caller (spec 2.1's externalErrors).
    expect(missing.body.error.externalErrors).toEqual([expect.objectContaining({ status: 404, code: 'itemNotFound' })]);
  });

  it('convert DriveA docx -> DriveA pdf with our converter, and DriveA -> Storage pdf', async () => {
    const doc = await generated('DriveA', 'convertme');
    const res = await manage({ sourceDocument: driveA(doc.urn), targetDocument: toDriveA('converted', 'Pdf', 'pdf') });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const pdf = fake.item(DRIVE_A, res.body.result.data.document.urn)!.content!;
    expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
    expect(pdfPageCount(pdf)).toBe(1);
    const local = await manage({
      sourceDocument: driveA(doc.urn),
      targetDocument: { name: 'local', fileFormat: 'pdf', deliveryMethod: 'Storage', path: 'root' },
    });
    expect(local.status, JSON.stringify(local.body)).toBe(201);
    expect(Buffer.from((await api.download(local.body.result.data.document.urn)).bytes.subarray(0, 5)).toString()).toBe('%PDF-');
    expect(live('Source/').filter((f) => f.path.includes('.docgen-'))).toEqual([]);
    // The downloaded sources left with their runs' scratch.
    expect(await stack.blobs.list('scratch/')).toEqual([]);
  });
});
