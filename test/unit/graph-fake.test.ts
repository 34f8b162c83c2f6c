// The fake Microsoft Graph (test/fakes/graph) keeps the rules DriveA's tests rely on: a wrong secret is
// refused, the 320 KiB rule and the 416 on a resent range hold, an upload URL refuses a token, createLink
// answers 201 then 200, invite answers 207 when some recipients fail.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHUNK_UNIT, type GraphFake, startGraphFake } from '../fakes/graph/server.ts';

describe('the fake Microsoft Graph', () => {
  let fake: GraphFake;
  let token: string;
  const D = 'b!drive-1';
  const api = (path: string, init: RequestInit = {}) =>
    fetch(`${fake.graphUrl}/drives/${encodeURIComponent(D)}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${token}`, ...(init.headers as object) },
    });

  beforeAll(async () => {
    fake = await startGraphFake();
    fake.addDrive(D);
    const form = (secret: string) =>
      new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: fake.clientId,
        client_secret: secret,
        scope: 'https://graph.microsoft.com/.default',
      });
    const bad = await fetch(`${fake.loginUrl}/${fake.tenantId}/oauth2/v2.0/token`, { method: 'POST', body: form('wrong') });
    expect(bad.status).toBe(401);
    expect(((await bad.json()) as { error: string }).error).toBe('invalid_client');
    const ok = await fetch(`${fake.loginUrl}/${fake.tenantId}/oauth2/v2.0/token`, { method: 'POST', body: form(fake.clientSecret) });
    token = ((await ok.json()) as { access_token: string }).access_token;
  });
  afterAll(() => fake?.close());

  it('puts by path (folders made), renames on a clash, downloads through a 302', async () => {
    const first = await api('/root:/A/b.docx:/content', { method: 'PUT', body: 'one' });
    expect(first.status).toBe(201);
    const again = await api('/root:/A/b.docx:/content?@microsoft.graph.conflictBehavior=rename', { method: 'PUT', body: 'two' });
    expect(((await again.json()) as { name: string }).name).toBe('b 1.docx');
    const failed = await api('/root:/A/b.docx:/content?@microsoft.graph.conflictBehavior=fail', { method: 'PUT', body: 'x' });
    expect(failed.status).toBe(409);
    const content = await api('/root:/A/b.docx:/content', { redirect: 'manual' });
    expect(content.status).toBe(302);
    const download = await fetch(content.headers.get('location')!);
    expect(await download.text()).toBe('one');
    expect(
      fake
        .files(D)
        .map((f) => f.path)
        .sort(),
    ).toEqual(['A/', 'A/b 1.docx', 'A/b.docx']);
  });

  it('upload sessions: 320 KiB multiples, 416 on a resent range, no Authorization on the upload URL', async () => {
    const bytes = Buffer.alloc(CHUNK_UNIT * 2 + 10, 7);
    const session = (await (await api('/root:/A/big.pdf:/createUploadSession', { method: 'POST', body: '{}' })).json()) as {
      uploadUrl: string;
    };
    expect(new URL(session.uploadUrl).hostname).toBe('127.0.0.1');
    const put = (from: number, to: number, auth = false) =>
      fetch(session.uploadUrl, {
        method: 'PUT',
        body: bytes.subarray(from, to),
        headers: { 'content-range': `bytes ${from}-${to - 1}/${bytes.length}`, ...(auth ? { authorization: `Bearer ${token}` } : {}) },
      });
    expect((await put(0, CHUNK_UNIT, true)).status).toBe(401);
    expect((await put(0, 1000)).status).toBe(400);
    expect((await put(0, CHUNK_UNIT)).status).toBe(202);
    expect((await put(0, CHUNK_UNIT)).status).toBe(416);
    const status = (await (await fetch(session.uploadUrl)).json()) as { nextExpectedRanges: string[] };
    expect(status.nextExpectedRanges).toEqual([`${CHUNK_UNIT}-`]);
    expect((await put(CHUNK_UNIT, bytes.length)).status).toBe(201);
    expect(fake.files(D).find((f) => f.path === 'A/big.pdf')?.size).toBe(bytes.length);
  });

  it('createLink 201 then 200, refused by tenant policy; invite 207 with per-recipient errors', async () => {
    const link = (scope: string) => api('/root:/A/b.docx:/createLink', { method: 'POST', body: JSON.stringify({ type: 'view', scope }) });
    expect((await link('anonymous')).status).toBe(201);
    expect((await link('anonymous')).status).toBe(200);
    fake.refuseAnonymousLinks();
    expect((await link('anonymous')).status).toBe(403);
    fake.refuseAnonymousLinks(false);
    fake.refuseRecipient('bad@example.com');
    const invite = await api('/root:/A/b.docx:/invite', {
      method: 'POST',
      body: JSON.stringify({
        recipients: [{ email: 'ok@example.com' }, { email: 'bad@example.com' }],
        roles: ['read'],
        requireSignIn: true,
        sendInvitation: false,
      }),
    });
    expect(invite.status).toBe(207);
    const value = ((await invite.json()) as { value: { error?: { code: string } }[] }).value;
    expect(value.map((v) => v.error?.code ?? 'ok')).toEqual(['ok', 'notAllowed']);
  });

  it('injects 429 with Retry-After (enforced) and an expired token once', async () => {
    fake.inject({ status: 429, retryAfter: 2 });
    const throttled = await api('/root');
    expect(throttled.status).toBe(429);
    expect(throttled.headers.get('retry-after')).toBe('2');
    // As Graph does, a request that does not wait for the Retry-After is throttled again.
    expect((await api('/root')).status).toBe(429);
    expect(fake.earlyRetries()).toBe(1);
    fake.clearFaults();
    fake.expireTokens();
    const expired = await api('/root');
    expect(expired.status).toBe(401);
    expect(((await expired.json()) as { error: { code: string } }).error.code).toBe('InvalidAuthenticationToken');
  });
});
