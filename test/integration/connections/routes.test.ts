// Connections (PUT/GET/list/DELETE /common/connection/{kind}): one per subscription and kind, secrets
// sealed at rest and never returned, another subscription never sees them, and a request that needs a
// connected location is refused before queueing while the subscription has no connection.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Credentials } from '../../../api/auth/credentials.ts';
import { client } from '../../support/http.ts';
import { type Stack, startStack } from '../../support/stack.ts';

const SECRET = 'very-secret-client-secret-7c1f';
const driveA = {
  tenantId: 'contoso.onmicrosoft.com',
  clientId: '11111111-2222-3333-4444-555555555555',
  clientSecret: SECRET,
  driveId: 'b!drive1',
};

describe('connections', () => {
  let stack: Stack;
  let creds: Credentials;
  let api: ReturnType<typeof client>;
  let other: ReturnType<typeof client>;

  beforeAll(async () => {
    stack = await startStack();
    creds = await stack.credentials();
    api = client(creds);
    other = client(await stack.credentials('other-subscription'));
  });
  afterAll(async () => stack?.stop());

  it('PUT creates (201) then replaces (200, same id); GET and list show settings and secret names, never the secret', async () => {
    const created = await api.call('PUT', '/common/connection/driveA', { json: { connection: driveA } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const c = created.body.result.data.connection;
    expect(c).toMatchObject({
      kind: 'driveA',
      settings: { tenantId: driveA.tenantId, clientId: driveA.clientId, driveId: 'b!drive1' },
      secrets: ['clientSecret'],
    });
    expect(JSON.stringify(created.body)).not.toContain(SECRET);

    const replaced = await api.call('PUT', '/common/connection/driveA', {
      json: { connection: { ...driveA, driveId: undefined, siteId: 'contoso.sharepoint.com,1,2' } },
    });
    expect(replaced.status).toBe(200);
    expect(replaced.body.result.data.connection.id).toBe(c.id);
    expect(replaced.body.result.data.connection.settings).toEqual({
      tenantId: driveA.tenantId,
      clientId: driveA.clientId,
      siteId: 'contoso.sharepoint.com,1,2',
    });

    const got = await api.call('GET', '/common/connection/driveA/get');
    expect(got.status).toBe(200);
    expect(got.body.result.data.connection.id).toBe(c.id);
    const list = await api.call('GET', '/common/connection/list');
    expect(list.body.result.data.connections.map((x: any) => x.kind)).toEqual(['driveA']);
    for (const body of [got.body, list.body]) expect(JSON.stringify(body)).not.toContain(SECRET);

    // At rest: sealed, not readable in the table.
    const rows = await stack.service.db.query<{ settings: unknown; sealed_secrets: string }>(
      'SELECT settings, sealed_secrets FROM connections',
    );
    expect(rows.rows).toHaveLength(1);
    expect(JSON.stringify(rows.rows)).not.toContain(SECRET);
    expect(rows.rows[0]!.sealed_secrets).toMatch(/^sealed:/);
  });

  it('another subscription sees none of it and cannot delete it', async () => {
    expect((await other.call('GET', '/common/connection/list')).body.result.data.connections).toEqual([]);
    const got = await other.call('GET', '/common/connection/driveA/get');
    expect(got.status).toBe(404);
    expect(got.body.error.innerErrors[0].code).toBe('NOT_FOUND_BY_ID');
    expect((await other.call('DELETE', '/common/connection/driveA/delete')).status).toBe(404);
    expect((await api.call('GET', '/common/connection/driveA/get')).status).toBe(200);
  });

  it('bad bodies answer 400 naming the field; unknown kinds are refused', async () => {
    const missing = await api.call('PUT', '/common/connection/driveA', { json: { connection: { ...driveA, clientSecret: '' } } });
    expect(missing.status).toBe(400);
    expect(missing.body.error.innerErrors.map((e: any) => e.message).join('\n')).toContain('connection.clientSecret is required');
    const two = await api.call('PUT', '/common/connection/driveA', { json: { connection: { ...driveA, userId: 'ada@contoso.com' } } });
    expect(two.status).toBe(400);
    expect(two.body.error.innerErrors[0].message).toMatch(/exactly one of connection\.driveId, connection\.siteId, connection\.userId/);
    const badId = await api.call('PUT', '/common/connection/driveA', {
      json: { connection: { ...driveA, driveId: '../../me/drive?x=1' } },
    });
    expect(badId.status).toBe(400);
    expect(badId.body.error.innerErrors[0].message).toContain('connection.driveId is not a valid id');
    const unknown = await api.call('GET', '/common/connection/dropbox/get');
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.innerErrors[0].message).toMatch(/kind: "dropbox" is not one of driveA, driveB, crm/);
    expect((await api.call('PUT', '/common/connection/dropbox', { json: { connection: {} } })).status).toBe(404);
    const noBody = await api.call('PUT', '/common/connection/driveA', { json: {} });
    expect(noBody.status).toBe(400);
    // The stored connection is unchanged by the refused requests.
    expect((await api.call('GET', '/common/connection/driveA/get')).body.result.data.connection.settings.siteId).toBe(
      'contoso.sharepoint.com,1,2',
    );
  });

  it('DELETE removes it; GET and a second DELETE answer 404', async () => {
    const del = await api.call('DELETE', '/common/connection/driveA/delete');
    expect(del.status).toBe(200);
    expect(del.body.result.data).toEqual({ kind: 'driveA', deleted: true });
    expect((await api.call('GET', '/common/connection/driveA/get')).status).toBe(404);
    expect((await api.call('DELETE', '/common/connection/driveA/delete')).status).toBe(404);
    expect((await stack.service.db.query('SELECT 1 FROM connections')).rows).toHaveLength(0);
  });
});
