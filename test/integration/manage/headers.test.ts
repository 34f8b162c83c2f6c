// Manage's optional headers (spec 5.2): X-Service-Authorization (a user without an account at the identity
// provider, vouched for by a token the service made) is validated row by row like the client token (5.3)
// and, when valid, is the acting user of the document record, the metering and the workflow summary;
// X-Email is recorded as the initiator.
import { Client, Connection } from '@temporalio/client';
import * as jose from 'jose';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Credentials } from '../../../api/auth/credentials.ts';
import { sealClientJws } from '../../../security/client-token.ts';
import { sealServiceJws, signServiceJws } from '../../../security/service-token.ts';
import { localSigningKey } from '../../../security/tokens.ts';
import { makeDocx } from '../../support/office.ts';
import { client, generateBody } from '../../support/http.ts';
import { type Stack, startStack } from '../../support/stack.ts';
import { manageWorkflowId } from '../../../api/temporal.ts';

const GUEST = '7d3c2b1a-0000-4000-8000-00000000abcd';

describe('manage: X-Service-Authorization and X-Email', () => {
  let stack: Stack;
  let creds: Credentials;
  let api: ReturnType<typeof client>;
  let temporal: Client;
  let connection: Connection;

  beforeAll(async () => {
    stack = await startStack();
    creds = await stack.credentials();
    api = client(creds);
    connection = await Connection.connect({ address: inject('temporalAddress') });
    temporal = new Client({ connection });
  });
  afterAll(async () => {
    await connection?.close();
    await stack?.stop();
  });

  async function generated() {
    const { templateUrn, dataUrn } = await api.uploadPair(makeDocx(['Hello {name}']), { name: 'World' });
    const gen = await api.call('POST', '/documents/document/generate', { json: generateBody(templateUrn, dataUrn) });
    expect(gen.status, JSON.stringify(gen.body)).toBe(201);
    return gen.body.result.data.document as { urn: string };
  }
  const copyBody = (urn: string) => ({
    sourceDocument: { urn, fileFormat: 'docx', loadMethod: 'Storage', remove: 'none' },
    targetDocument: { name: 'copy', fileFormat: 'docx', deliveryMethod: 'Storage', path: 'root' },
  });
  const manage = (json: unknown, headers: Record<string, string>) => api.call('POST', '/documents/document/manage', { json, headers });
  async function serviceToken(
    claims: Record<string, unknown> = { sub: GUEST, email: 'guest@partner.example', full_name: 'Guest User' },
    as = creds,
  ) {
    const res = await client(as).call('POST', '/common/service/token', { json: claims });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.result.data.token as string;
  }
  async function documentRow(guid: string) {
    const r = await stack.service.db.query<{ owner_guid: string; last_modified_user_guid: string; initiator_email: string }>(
      'SELECT owner_guid, last_modified_user_guid, initiator_email FROM documents WHERE document_guid = $1',
      [guid],
    );
    return r.rows[0]!;
  }
  async function meteredUser(operationId: string) {
    const r = await stack.service.db.query<{ user_id: string }>('SELECT DISTINCT user_id FROM consumption WHERE operation_id = $1', [
      operationId,
    ]);
    return r.rows.map((x) => x.user_id);
  }
  async function summary(operationId: string) {
    const handle = temporal.workflow.getHandle(manageWorkflowId(creds.subscriptionId, operationId));
    const d = await handle.describe();
    return (await d.staticDetails()) ?? '';
  }
  async function expectRefused(value: string, status: number, code: string, message: RegExp) {
    const doc = await generated();
    const res = await manage(copyBody(doc.urn), { 'x-service-authorization': value });
    expect(res.status, JSON.stringify(res.body)).toBe(status);
    expect(res.body.error.statusCode).toBe(String(status));
    expect(res.body.error.innerErrors[0].code).toBe(code);
    expect(res.body.error.message).toMatch(message);
    // Refused before anything started: no record for this operation.
    const operationId = res.headers.get('x-operation-id') ?? res.body.operationId;
    expect(operationId).toBeTruthy();
    const made = await stack.service.db.query('SELECT 1 FROM documents WHERE operation_id = $1', [operationId]);
    return made.rows.length;
  }

  it('a valid service token makes its user the acting user: document owner, metering and workflow summary; X-Email is the initiator', async () => {
    const doc = await generated();
    const token = await serviceToken();
    const res = await manage(copyBody(doc.urn), { 'x-service-authorization': token, 'x-email': 'starter@client.example' });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const guid = res.body.result.data.document.documentGuid as string;
    const row = await documentRow(guid);
    expect(row.owner_guid).toBe(GUEST);
    expect(row.last_modified_user_guid).toBe(GUEST);
    expect(row.initiator_email).toBe('starter@client.example');
    expect(await meteredUser(res.body.operationId)).toEqual([GUEST]);
    const details = await summary(res.body.operationId);
    expect(details).toContain(`**user** ${GUEST} (X-Service-Authorization: guest@partner.example)`);
    expect(details).toContain('**initiator** starter@client.example (X-Email)');
    // The record's API shows the initiator too.
    const got = await api.call('GET', `/documents/document/${guid}/get`);
    expect(got.status, JSON.stringify(got.body)).toBe(200);
    expect(got.body.result.data.document.initiatorEmail).toBe('starter@client.example');
    expect(got.body.result.data.document.ownerGuid).toBe(GUEST);
  });

  it('without the headers the bearer token user acts and no initiator is recorded', async () => {
    const doc = await generated();
    const res = await manage(copyBody(doc.urn), {});
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const row = await documentRow(res.body.result.data.document.documentGuid);
    expect(row.owner_guid).toBe(creds.userId);
    expect(row.initiator_email).toBe('');
    expect(await summary(res.body.operationId)).not.toContain('X-Service-Authorization');
  });

  it('X-Email that is not an e-mail address: 400 naming the header', async () => {
    const doc = await generated();
    const res = await manage(copyBody(doc.urn), { 'x-email': 'not an address' });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.error.innerErrors[0].code).toBe('VALIDATION_ERROR');
    expect(res.body.error.message).toMatch(/X-Email/);
  });

  describe('X-Service-Authorization, row by row (the table of 5.3)', () => {
    it('wrong key, tampering, bad base64, a client token: 400 X_SERVICE_AUTH_ERROR "Invalid format"', async () => {
      const good = await serviceToken();
      const parts = good.split('.');
      const flip = (s: string) => `${s.slice(0, 5)}${s[5] === 'A' ? 'B' : 'A'}${s.slice(6)}`;
      const tampered = [parts[0], parts[1], parts[2], flip(parts[3] ?? ''), parts[4]].join('.');
      const badBase64 = [parts[0], parts[1], parts[2], `${(parts[3] ?? '').slice(0, 10)}!!${(parts[3] ?? '').slice(12)}`, parts[4]].join(
        '.',
      );
      const header = jose.decodeProtectedHeader(good);
      const wrongKey = await new jose.CompactEncrypt(new TextEncoder().encode('x.y.z'))
        .setProtectedHeader({ alg: 'dir', enc: 'A256GCM', kid: header.kid as string, cty: 'JWT' })
        .encrypt(crypto.getRandomValues(new Uint8Array(32)));
      // A client token is sealed under the client token's key: never a service token.
      const key = await localSigningKey(stack.service.db);
      const clientToken = await sealClientJws(
        key,
        await signServiceJws(key, { sid: creds.subscriptionId, sub: GUEST, email: 'a@b.example', exp: Math.floor(Date.now() / 1000) + 60 }),
      );
      for (const value of [tampered, badBase64, wrongKey, 'not-a-token', clientToken]) {
        expect(await expectRefused(value, 400, 'X_SERVICE_AUTH_ERROR', /^Invalid format$/)).toBe(0);
      }
    });

    it('unsigned, wrongly signed, expired, or of another subscription: 401', async () => {
      await serviceToken(); // GUEST is a user of the subscription: the rows below fail for their own reason
      const key = await localSigningKey(stack.service.db);
      const now = Math.floor(Date.now() / 1000);
      const claims = { sid: creds.subscriptionId, sub: GUEST, email: 'guest@partner.example' };
      const unsigned = await sealServiceJws(key, new jose.UnsecuredJWT(claims).setIssuedAt().setExpirationTime('1h').encode());
      const { privateKey } = await jose.generateKeyPair('ES256');
      const forged = await sealServiceJws(
        key,
        await new jose.SignJWT(claims)
          .setProtectedHeader({ alg: 'ES256', kid: key.kid, typ: 'docgen-service+jwt' })
          .setExpirationTime('1h')
          .sign(privateKey),
      );
      const expired = await sealServiceJws(key, await signServiceJws(key, { ...claims, exp: now - 5 }));
      for (const value of [unsigned, forged]) {
        expect(await expectRefused(value, 401, 'UNAUTHORIZED', /^the service authorization token is not signed by this service$/)).toBe(0);
      }
      // Expired says so, and when (issue 32).
      const at = new Date((now - 5) * 1000).toISOString();
      expect(
        await expectRefused(
          expired,
          401,
          'UNAUTHORIZED',
          new RegExp(
            `^the service authorization token expired at ${at.replace(/\./g, '\\.')}: make a new one with POST /common/service/token$`,
          ),
        ),
      ).toBe(0);
      const theirs = await serviceToken(
        { sub: '5e1f0c2a-0000-4000-8000-0000000000bb', email: 'guest@b.example' },
        await stack.credentials('tenant-b'),
      );
      expect(await expectRefused(theirs, 401, 'UNAUTHORIZED', /another subscription/)).toBe(0);
      // The same construction with a future expiry is accepted, so the rows above fail for the stated reason.
      const fine = await sealServiceJws(key, await signServiceJws(key, { ...claims, exp: now + 60 }));
      const doc = await generated();
      expect((await manage(copyBody(doc.urn), { 'x-service-authorization': fine })).status).toBe(201);
    });

    it('a required claim missing: 400 X_SERVICE_AUTH_ERROR naming it', async () => {
      const key = await localSigningKey(stack.service.db);
      const value = await sealServiceJws(
        key,
        await signServiceJws(key, { sid: creds.subscriptionId, sub: GUEST, exp: Math.floor(Date.now() / 1000) + 60 }),
      );
      expect(await expectRefused(value, 400, 'X_SERVICE_AUTH_ERROR', /lacks required claims: email/)).toBe(0);
    });

    it('POST /common/service/token refuses a sub that is not a UUID', async () => {
      const res = await api.call('POST', '/common/service/token', { json: { sub: 'guest', email: 'guest@partner.example' } });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.error.message).toMatch(/sub/);
    });
  });

  describe('service-token users are users of the subscription (issue 25)', () => {
    const mint = (claims: Record<string, unknown>, as = creds) => client(as).call('POST', '/common/service/token', { json: claims });
    const userRow = async (id: string) =>
      (
        await stack.service.db.query<{ subscription_id: string; email: string; name: string }>(
          'SELECT subscription_id, email, name FROM users WHERE id = $1',
          [id],
        )
      ).rows;

    it("refuses the nil UUID and another subscription's user id: 400 naming sub, nothing registered", async () => {
      const other = await stack.credentials('tenant-owner');
      for (const sub of ['00000000-0000-0000-0000-000000000000', other.userId, other.userId.toUpperCase()]) {
        const res = await mint({ sub, email: 'x@attacker.example' });
        expect(res.status, JSON.stringify(res.body)).toBe(400);
        expect(res.body.error.innerErrors[0].code).toBe('VALIDATION_ERROR');
        expect(res.body.error.message).toMatch(/^sub /);
      }
      // The other tenant's user is still theirs alone.
      expect(await userRow(other.userId)).toEqual([expect.objectContaining({ subscription_id: other.subscriptionId })]);
    });

    it('refuses an email that is not an e-mail address, as X-Email is refused: 400 naming email', async () => {
      for (const email of ['not an address', 'a@b', '<a@b.example>', `${'a'.repeat(320)}@b.example`]) {
        const res = await mint({ sub: '3c0d9a51-0000-4000-8000-0000000000e1', email });
        expect(res.status, JSON.stringify(res.body)).toBe(400);
        expect(res.body.error.message).toMatch(/^email must be an e-mail address/);
      }
      expect(await userRow('3c0d9a51-0000-4000-8000-0000000000e1')).toEqual([]);
    });

    it("a new id becomes the subscription's user when its first token is made; the same id for another subscription is refused", async () => {
      const id = '9b2e4f10-0000-4000-8000-00000000c0de';
      const res = await mint({ sub: id.toUpperCase(), email: 'new.guest@partner.example', full_name: 'New Guest' });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(await userRow(id)).toEqual([{ subscription_id: creds.subscriptionId, email: 'new.guest@partner.example', name: 'New Guest' }]);
      expect((await mint({ sub: id, email: 'again@partner.example' })).status).toBe(200);
      const b = await mint({ sub: id, email: 'x@b.example' }, await stack.credentials('tenant-squatter'));
      expect(b.status, JSON.stringify(b.body)).toBe(400);
    });

    it('a token naming a user the subscription does not know acts for nobody: 401, nothing recorded', async () => {
      // Signed by the service (as tokens were before this rule), for another tenant's user.
      const other = await stack.credentials('tenant-victim');
      const key = await localSigningKey(stack.service.db);
      const value = await sealServiceJws(
        key,
        await signServiceJws(key, {
          sid: creds.subscriptionId,
          sub: other.userId,
          email: 'v@victim.example',
          exp: Math.floor(Date.now() / 1000) + 60,
        }),
      );
      expect(await expectRefused(value, 401, 'UNAUTHORIZED', /names a user unknown to this subscription/)).toBe(0);
    });
  });
});
