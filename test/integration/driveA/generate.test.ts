// Generate with DriveA end to end: through the HTTP API, the real worker, Temporal and the converter, to
// the fake Microsoft Graph (test/fakes/graph) over HTTPS. Connect, deliver docx and pdf with sharing
// (links in the 201 body and in the document record), a 10 MB output through an upload session,
// template and data read from DriveA in every urn form, the clash policy, throttling, Graph's 401/403/404
// as 400s, and one subscription's connection never serving another.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Credentials } from '../../../api/auth/credentials.ts';
import { CHUNK_UNIT, type GraphFake, startGraphFake } from '../../fakes/graph/server.ts';
import { client, generateBody } from '../../support/http.ts';
import { docxParagraphs, makeDocx } from '../../support/office.ts';
import { type Stack, startStack } from '../../support/stack.ts';
import { workflowFailures } from '../../support/workflow-failure.ts';
import { bigTemplate, connect, DRIVE_A, DRIVE_B } from './support.ts';

describe('generate with DriveA', () => {
  let fake: GraphFake;
  let stack: Stack;
  let creds: Credentials;
  let api: ReturnType<typeof client>;

  beforeAll(async () => {
    fake = await startGraphFake();
    fake.addDrive(DRIVE_A);
    fake.addDrive(DRIVE_B);
    stack = await startStack({ driveAGraphUrl: fake.graphUrl, driveALoginUrl: fake.loginUrl });
    creds = await stack.credentials();
    api = client(creds);
    await connect(api, fake);
  });
  afterAll(async () => {
    await stack?.stop();
    await fake?.close();
  });

  const live = (drive: string, prefix: string) =>
    fake.files(drive).filter((f) => f.path.startsWith(prefix) && !f.path.endsWith('/') && f.state === 'live');
  const generate = (json: unknown, a = api) => a.call('POST', '/documents/document/generate', { json });
  async function toDriveA(document: Record<string, unknown>, template = makeDocx(['Hello {name}'])) {
    const { templateUrn, dataUrn } = await api.uploadPair(template, { name: 'Ada' });
    return generate(generateBody(templateUrn, dataUrn, { document: { deliveryMethod: 'DriveA', path: 'Letters/2026', ...document } }));
  }
  function expectError(res: { status: number; body: any }, code: string, message?: RegExp) {
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.error.innerErrors[0].code).toBe(code);
    if (message) expect(res.body.error.innerErrors.map((e: any) => e.message).join('\n')).toMatch(message);
  }

  it('connects: settings without the secret, exactly one drive field', async () => {
    const got = await api.call('GET', '/common/connection/driveA/get');
    expect(got.status, JSON.stringify(got.body)).toBe(200);
    expect(JSON.stringify(got.body)).not.toContain(fake.clientSecret);
    expect(JSON.stringify(got.body)).toContain(DRIVE_A);
    const two = await api.call('PUT', '/common/connection/driveA', {
      json: { connection: { tenantId: 't', clientId: 'c', clientSecret: 's', driveId: 'd', siteId: 's' } },
    });
    expectError(two, 'VALIDATION_ERROR', /exactly one of connection.driveId, connection.siteId, connection.userId/);
    const none = await api.call('PUT', '/common/connection/driveA', {
      json: { connection: { tenantId: 't', clientId: 'c', driveId: 'd' } },
    });
    expectError(none, 'VALIDATION_ERROR', /connection\.clientSecret/);
  });

  it('delivers a docx into folders it makes, shares it, and records every link and e-mail', async () => {
    fake.refuseRecipient('nobody@example.com');
    const res = await toDriveA({
      name: 'letter',
      options: { driveA: { viewAnonymous: true, viewUsers: ['ada@example.com', 'nobody@example.com'], editUsers: ['bob@example.com'] } },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const doc = res.body.result.data.document;
    expect(doc).toMatchObject({ deliveryMethod: 'DriveA', name: 'letter.docx', fileFormat: 'docx' });
    expect(doc.uri).toMatch(/^https:\/\/contoso\.example\//);
    expect(doc.viewAnonymousLink).toMatch(/^https:\/\/contoso\.example\/.*view-anonymous/);
    const item = fake.item(DRIVE_A, doc.urn);
    expect(item?.name).toBe('letter.docx');
    expect(docxParagraphs(item!.content!)).toEqual(['Hello Ada']);
    expect(live(DRIVE_A, 'Letters/').map((f) => f.path)).toEqual(['Letters/2026/letter.docx']);
    // Sign-in required, no e-mail from Microsoft unless asked.
    expect(fake.invites.slice(-2)).toEqual([
      { recipients: ['ada@example.com', 'nobody@example.com'], roles: ['read'], requireSignIn: true, sendInvitation: false },
      { recipients: ['bob@example.com'], roles: ['write'], requireSignIn: true, sendInvitation: false },
    ]);

    const record = await api.call('GET', `/documents/document/${doc.documentGuid}/get`);
    expect(record.status, JSON.stringify(record.body)).toBe(200);
    expect(record.body.result.data.document).toMatchObject({
      urn: doc.urn,
      deliveryMethod: 'DriveA',
      path: 'Letters/2026',
      viewAnonymousLink: doc.viewAnonymousLink,
      viewUserLink: doc.uri,
      editUserLink: doc.uri,
      editAnonymousLink: '',
      succeededViewUserEmailList: 'ada@example.com',
      failedViewUserEmailList: 'nobody@example.com',
      succeededEditUserEmailList: 'bob@example.com',
      failedEditUserEmailList: '',
    });
    // The write journal is only needed until the document is recorded.
    expect((await stack.service.db.query('SELECT urn FROM location_writes')).rows).toEqual([]);
  });

  it('delivers a pdf; a tenant that refuses anonymous links leaves that link empty, not a failure', async () => {
    fake.refuseAnonymousLinks();
    try {
      const res = await toDriveA({
        name: 'invoice',
        fileFormat: 'pdf',
        path: '',
        options: { driveA: { editAnonymous: true, sendInvitation: true, viewUsers: ['eve@example.com'] } },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      const doc = res.body.result.data.document;
      expect(doc.editAnonymousLink ?? '').toBe('');
      expect(fake.item(DRIVE_A, doc.urn)?.content?.subarray(0, 5).toString()).toBe('%PDF-');
      expect(live(DRIVE_A, 'invoice').map((f) => f.path)).toEqual(['invoice.pdf']);
      expect(fake.invites.at(-1)?.sendInvitation).toBe(true);
    } finally {
      fake.refuseAnonymousLinks(false);
    }
  });

  it('a name clash renames by default; replace keeps one file; fail is a 400 that leaves nothing', async () => {
    const first = await toDriveA({ name: 'clash', path: 'Clash' });
    const second = await toDriveA({ name: 'clash', path: 'Clash' });
    expect(second.body.result.data.document.name).toBe('clash 1.docx');
    const replaced = await toDriveA({ name: 'clash', path: 'Clash', options: { driveA: { conflictBehavior: 'replace' } } });
    expect(replaced.status, JSON.stringify(replaced.body)).toBe(201);
    expect(replaced.body.result.data.document.urn).toBe(first.body.result.data.document.urn);
    const failed = await toDriveA({ name: 'clash', path: 'Clash', options: { driveA: { conflictBehavior: 'fail' } } });
    expectError(failed, 'VALIDATION_ERROR', /already exists/);
    expectError(
      await toDriveA({ name: 'clash', options: { driveA: { conflictBehavior: 'explode' } } }),
      'VALIDATION_ERROR',
      /document\.options\.driveA\.conflictBehavior/,
    );
    expect(
      live(DRIVE_A, 'Clash/')
        .map((f) => f.path)
        .sort(),
    ).toEqual(['Clash/clash 1.docx', 'Clash/clash.docx']);
  });

  it('reads template and data from DriveA by id, driveId!itemId and path; a 10 MB output goes up in a session', async () => {
    const smallId = fake.put(DRIVE_A, 'Templates/small.docx', Buffer.from(makeDocx(['Dear {name}'])));
    fake.put(DRIVE_A, 'Templates/big.docx', Buffer.from(bigTemplate()));
    fake.put(DRIVE_A, 'Data/ada.json', Buffer.from(JSON.stringify({ name: 'Ada' })));
    const body = (urn: string, name: string) => ({
      template: { urn, loadMethod: 'DriveA', fileFormat: 'docx' },
      data: { loadMethod: 'DriveA', urn: 'root:/Data/ada.json:' },
      document: { name, fileFormat: 'docx', deliveryMethod: 'DriveA', path: 'Read', timezone: 'UTC', locale: 'en-US' },
    });
    for (const [i, urn] of [smallId, `${DRIVE_A}!${smallId}`, 'root:/Templates/small.docx:', 'root:/Templates/small.docx'].entries()) {
      const res = await generate(body(urn, `small-${i}`));
      expect(res.status, `${urn}: ${JSON.stringify(res.body)}`).toBe(201);
      expect(docxParagraphs(fake.item(DRIVE_A, res.body.result.data.document.urn)!.content!)).toEqual(['Dear Ada']);
    }

    // Spec 4.8 rule 1: a DriveA template is an office file.
    fake.put(DRIVE_A, 'Templates/not-a-template.pdf', Buffer.from('%PDF-1.7'));
    expectError(
      await generate(body('root:/Templates/not-a-template.pdf:', 'pdf')),
      'INVALID_TEMPLATE_FORMAT',
      /only \.docx, \.xlsx and \.pptx/,
    );
    const asXlsx = body('root:/Templates/small.docx:', 'xlsx');
    expectError(
      await generate({
        ...asXlsx,
        template: { ...asXlsx.template, fileFormat: 'xlsx' },
        document: { ...asXlsx.document, fileFormat: 'xlsx' },
      }),
      'INVALID_TEMPLATE_FORMAT',
      /template\.fileFormat is xlsx/,
    );
    // What was downloaded went into each run's scratch and left with it.
    expect(await stack.blobs.list('scratch/')).toEqual([]);

    const before = fake.log.length;
    const res = await generate(body('root:/Templates/big.docx:', 'big'));
    // Seen twice in full local runs (never alone, never in CI): a 500 from inside the workflow. Say what.
    if (res.status === 500) expect.fail(`${JSON.stringify(res.body)}\n${await workflowFailures(res.body.error.innerErrors[0].eventId)}`);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const out = fake.item(DRIVE_A, res.body.result.data.document.urn)!;
    expect(out.content!.length).toBeGreaterThan(10 * 1024 * 1024);
    expect(docxParagraphs(out.content!)).toEqual(['Big report for Ada']);
    const requests = fake.log.slice(before);
    expect(requests.filter((e) => e.path.endsWith('/createUploadSession'))).toHaveLength(1);
    expect(requests.filter((e) => e.method === 'PUT' && e.path.includes('/content'))).toHaveLength(0);
    const fragments = requests.filter((e) => e.method === 'PUT' && e.path.startsWith('/up/'));
    expect(fragments.length).toBe(Math.ceil(out.content!.length / (15 * CHUNK_UNIT)));
    expect(fragments.map((e) => e.status)).toEqual([...fragments.slice(1).map(() => 202), 201]);
    expect(fragments.every((e) => !e.authorization && e.host.startsWith('127.0.0.1'))).toBe(true);
  });

  it('throttling: 429 with Retry-After is waited out and retried; 503 too', async () => {
    fake.inject({ status: 429, retryAfter: 1, times: 2, method: 'PUT', path: '/content' });
    fake.inject({ status: 503, retryAfter: 0, times: 1, method: 'POST', path: '/children' });
    const puts = fake.count('PUT', '/content');
    const res = await toDriveA({ name: 'throttled', path: 'Throttled/Deep' });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(fake.count('PUT', '/content') - puts).toBe(3);
    expect(live(DRIVE_A, 'Throttled/').map((f) => f.path)).toEqual(['Throttled/Deep/throttled.docx']);
  });

  it('an expired token is refreshed once; 404 and refused credentials are 400s with their code', async () => {
    const tokens = fake.count('POST', '/oauth2/v2.0/token');
    fake.expireTokens();
    expect((await toDriveA({ name: 'refreshed' })).status).toBe(201);
    expect(fake.count('POST', '/oauth2/v2.0/token')).toBe(tokens + 1);

    const first = await api.uploadPair();
    const missing = await generate(
      generateBody('ignored', first.dataUrn, { template: { urn: 'root:/Templates/none.docx:', loadMethod: 'DriveA' } }),
    );
    expectError(missing, 'TEMPLATE_NOT_FOUND', /template\.urn root:\/Templates\/none\.docx: does not resolve in DriveA/);
    const second = await api.uploadPair();
    const noData = await generate({
      ...generateBody(second.templateUrn, second.dataUrn),
      data: { loadMethod: 'DriveA', urn: 'NOSUCHITEM' },
    });
    expectError(noData, 'DATA_NOT_FOUND');

    const other = client(await stack.credentials('drivea-wrong-secret'));
    await connect(other, fake, { clientSecret: 'not-the-secret' });
    const { templateUrn, dataUrn: d2 } = await other.uploadPair();
    const refused = await generate(generateBody(templateUrn, d2, { document: { deliveryMethod: 'DriveA', path: '' } }), other);
    expectError(refused, 'CONNECTION_ERROR', /invalid_client/);
  });

  it("another subscription's connection is never used; without one the answer is CONNECTION_MISSING", async () => {
    fake.addClient('client-b', 'secret-b', [DRIVE_B]);
    const b = client(await stack.credentials('drivea-b'));
    await connect(b, fake, { clientId: 'client-b', clientSecret: 'secret-b', driveId: DRIVE_B });
    const { templateUrn, dataUrn } = await b.uploadPair();
    const before = fake.log.length;
    const res = await generate(generateBody(templateUrn, dataUrn, { document: { deliveryMethod: 'DriveA', path: 'B', name: 'mine' } }), b);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(live(DRIVE_B, 'B/').map((f) => f.path)).toEqual(['B/mine.docx']);
    expect(live(DRIVE_A, 'B/')).toEqual([]);
    const api = fake.log.slice(before).filter((e) => e.path.startsWith('/v1.0/'));
    expect(api.length).toBeGreaterThan(0);
    expect(new Set(api.map((e) => e.clientId))).toEqual(new Set(['client-b']));
    // B cannot reach A's files, whichever form it names them by.
    const aItem = live(DRIVE_A, 'Letters/')[0]!.id;
    expectError(await generate(generateBody('x', dataUrn, { template: { urn: aItem, loadMethod: 'DriveA' } }), b), 'TEMPLATE_NOT_FOUND');
    expectError(
      await generate(generateBody('x', dataUrn, { template: { urn: `${DRIVE_A}!${aItem}`, loadMethod: 'DriveA' } }), b),
      'CONNECTION_ERROR',
    );

    const c = client(await stack.credentials('drivea-none'));
    const pair = await c.uploadPair();
    const none = await generate(generateBody(pair.templateUrn, pair.dataUrn, { document: { deliveryMethod: 'DriveA', path: '' } }), c);
    expectError(none, 'CONNECTION_MISSING', /PUT \/v1\/common\/connection\/driveA/);
  });
});
