// The DriveB client layer against the local Google server with the real googleapis / google-auth-library
// clients: every request (token, metadata, multipart and resumable uploads, export links) reaches the
// configured host, and the traps of the libraries are handled (media uploads' root, the JWT token URL,
// resumable uploads with 308, rate limits).
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { googleClients } from '../../../connectors/driveB/client.ts';
import { DriveOps, GOOGLE_MIME, OFFICE_MIME } from '../../../connectors/driveB/drive.ts';
import { type GoogleFake, startGoogleFake } from '../../fakes/google/server.ts';
import { makeDocx, para } from '../convert/fixtures.ts';

describe('DriveB client against the local Google server', () => {
  let fake: GoogleFake;
  const keys = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const privateKey = keys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const saved = { HTTP_PROXY: process.env.HTTP_PROXY, HTTPS_PROXY: process.env.HTTPS_PROXY, NO_PROXY: process.env.NO_PROXY };

  beforeAll(async () => {
    fake = await startGoogleFake();
    fake.addOAuthClient({ clientId: 'cid', clientSecret: 'csecret', refreshToken: 'rt-ada', user: 'ada@example.com' });
    fake.addServiceAccount({
      clientEmail: 'sa@proj.iam.gserviceaccount.com',
      publicKeyPem: keys.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
      delegates: ['bob@example.com'],
    });
    fake.addSharedDrive('drive-team', ['sa@proj.iam.gserviceaccount.com']);
    // Anything not for the configured host goes to the fake's proxy side and is recorded as foreign.
    process.env.HTTP_PROXY = fake.url;
    process.env.HTTPS_PROXY = fake.url;
    process.env.NO_PROXY = '127.0.0.1,localhost';
  });
  afterAll(async () => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    await fake?.close();
  });

  const endpoints = () => ({ apiUrl: `${fake.url}/`, tokenUrl: `${fake.url}/token` });

  it('OAuth: folders, a converting multipart upload, a resumable upload, export and exportLinks, all on the configured host', async () => {
    const ops = new DriveOps(
      await googleClients(
        endpoints(),
        { kind: 'oauth', clientId: 'cid', clientSecret: 'csecret', refreshToken: 'rt-ada' },
        { attempts: 4, baseMs: 20, maxMs: 100 },
      ),
    );
    const folder = await ops.folder('Invoices/2026', true);
    expect(await ops.folder('Invoices/2026', false)).toBe(folder);
    const docx = makeDocx(para('Hello {name}'));
    const native = await ops.upload({
      folderId: folder!,
      name: 'letter',
      bytes: docx,
      contentType: OFFICE_MIME.docx,
      targetMime: GOOGLE_MIME.gdoc,
      appProperties: { docgenUrn: 'u1' },
    });
    expect(native.mimeType).toBe(GOOGLE_MIME.gdoc);
    expect((await ops.byWriteId('u1'))?.id).toBe(native.id);
    expect(Buffer.from(await ops.bytesOf(native, OFFICE_MIME.docx)).equals(Buffer.from(docx))).toBe(true);

    // Above 5 MB: resumable, 256 KiB-multiple chunks answered 308 until the last.
    const big = new Uint8Array(6 * 1024 * 1024 + 123).map((_, i) => i % 251);
    const before = fake.requests.length;
    const file = await ops.upload({ folderId: folder!, name: 'big.pdf', bytes: big, contentType: 'application/pdf' });
    const puts = fake.requests.slice(before).filter((r) => r.method === 'PUT');
    expect(puts.length).toBe(7);
    expect(puts.slice(0, -1).every((r) => r.status === 308)).toBe(true);
    expect(Buffer.from(fake.files.get(file.id!)!.content).equals(Buffer.from(big))).toBe(true);

    // Over the export cap: the exportLinks URL serves it.
    fake.exportCapBytes = 100;
    expect(Buffer.from(await ops.bytesOf(await ops.get(native.id!), OFFICE_MIME.docx)).equals(Buffer.from(docx))).toBe(true);
    fake.exportCapBytes = 10 * 1024 * 1024;
    expect(fake.requests.some((r) => r.path.startsWith('/export-links/') && r.status === 200)).toBe(true);

    expect(fake.tokensIssued.filter((t) => t.user === 'ada@example.com').length).toBeGreaterThan(0);
    expect(new Set(fake.requests.map((r) => r.host))).toEqual(new Set([new URL(fake.url).host]));
    expect(fake.foreign).toEqual([]);
  });

  it('the trap is real: without the per-call root the generated client sends media uploads to www.googleapis.com (caught by the fake)', async () => {
    const { drive } = await import('@googleapis/drive');
    const { OAuth2Client } = await import('google-auth-library');
    const auth = new OAuth2Client({ clientId: 'cid', clientSecret: 'csecret', endpoints: { oauth2TokenUrl: `${fake.url}/token` } });
    auth.setCredentials({ refresh_token: 'rt-ada' });
    const raw = drive({ version: 'v3', auth: auth as never, rootUrl: `${fake.url}/` });
    const { Readable } = await import('node:stream');
    await expect(
      raw.files.create(
        { requestBody: { name: 'x.pdf' }, media: { mimeType: 'application/pdf', body: Readable.from([Buffer.from('x')]) } },
        { retry: false },
      ),
    ).rejects.toThrow();
    expect(fake.foreign).toContain('www.googleapis.com:443');
    fake.foreign.length = 0;
  });

  it('rate limits (403 userRateLimitExceeded, 429) are retried; a bad refresh token is an auth error', async () => {
    const ops = new DriveOps(
      await googleClients(
        endpoints(),
        { kind: 'oauth', clientId: 'cid', clientSecret: 'csecret', refreshToken: 'rt-ada' },
        { attempts: 4, baseMs: 20, maxMs: 100 },
      ),
    );
    fake.failNext(1, { status: 403 }, (r) => r.path === '/drive/v3/files' && r.method === 'GET');
    fake.failNext(1, { status: 429 }, (r) => r.path === '/drive/v3/files' && r.method === 'GET');
    expect(await ops.folder('Invoices', false)).toBeTruthy();
    expect(fake.requests.filter((r) => r.status === 403 || r.status === 429).length).toBeGreaterThanOrEqual(2);

    const bad = new DriveOps(
      await googleClients(endpoints(), { kind: 'oauth', clientId: 'cid', clientSecret: 'csecret', refreshToken: 'revoked' }),
    );
    await expect(bad.folder('x', false)).rejects.toMatchObject({ auth: true, reason: 'invalid_grant' });
  });

  it('service account: the JWT token request goes to DRIVEB_TOKEN_URL; alone it has no quota in My Drive, a shared drive works; delegation acts as the user', async () => {
    const sa = { kind: 'serviceAccount' as const, clientEmail: 'sa@proj.iam.gserviceaccount.com', privateKey };
    const alone = new DriveOps(await googleClients(endpoints(), sa, { attempts: 2, baseMs: 10, maxMs: 10 }));
    await expect(
      alone.upload({ folderId: 'root', name: 'a.pdf', bytes: new Uint8Array([1]), contentType: 'application/pdf' }),
    ).rejects.toMatchObject({ reason: 'storageQuotaExceeded' });
    const shared = new DriveOps(await googleClients(endpoints(), sa), 'drive-team');
    const folder = await shared.folder('Out', true);
    const f = await shared.upload({ folderId: folder!, name: 'a.pdf', bytes: new Uint8Array([1, 2]), contentType: 'application/pdf' });
    expect(fake.files.get(f.id!)?.driveId).toBe('drive-team');
    expect((await shared.byName(folder!, 'a.pdf')).map((x) => x.id)).toEqual([f.id]);
    const asBob = new DriveOps(await googleClients(endpoints(), { ...sa, subject: 'bob@example.com' }));
    const mine = await asBob.upload({ folderId: 'root', name: 'b.pdf', bytes: new Uint8Array([3]), contentType: 'application/pdf' });
    expect(fake.files.get(mine.id!)?.owner).toBe('bob@example.com');
    expect(fake.tokensIssued.some((t) => t.grant.includes('jwt-bearer') && t.user === 'bob@example.com')).toBe(true);
    expect(fake.foreign).toEqual([]);
  });
});
