// Common operations (spec 4.1): limits, self-service summary, contacts, folders; their errors (section 7)
// and tenant isolation. The dashboard summary is tested with the envelopes in signatures.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Credentials } from '../../../api/auth/credentials.ts';
import { client } from '../../support/http.ts';
import { type Stack, startStack } from '../../support/stack.ts';
import { expectError, expectOk, UNKNOWN_ID } from '../records/helpers.ts';

const DIMENSIONS = ['pages-generated', 'documents-generated', 'pages-managed', 'documents-managed'];

describe('common operations (4.1)', () => {
  let stack: Stack;
  let creds: Credentials;
  let api: ReturnType<typeof client>;
  let other: ReturnType<typeof client>;
  let otherCreds: Credentials;

  beforeAll(async () => {
    stack = await startStack();
    creds = await stack.credentials();
    api = client(creds);
    otherCreds = await stack.credentials('other');
    other = client(otherCreds);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const unauthenticated = async (method: string, route: string, body?: unknown) => {
    const res = await fetch(`${creds.baseUrl}${route}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    expect(res.status).toBe(401);
    const json = (await res.json()) as any;
    expect(json.error.statusCode).toBe(401);
    expect(json.error.innerErrors[0].code).toBe('UNAUTHORIZED');
  };

  it('documents every route in the OpenAPI document, extensions marked', async () => {
    const doc = (await (await fetch(`${creds.baseUrl}/openapi.json`)).json()) as any;
    const op = (path: string, method: string) => doc.paths[path]?.[method];
    for (const [path, method] of [
      ['/v1/common/limits/get', 'get'],
      ['/v1/common/summary', 'get'],
      ['/v1/common/user/contact/list', 'get'],
      ['/v1/common/user/contact/{userContactId}/get', 'get'],
      ['/v1/common/folder/list', 'get'],
      ['/v1/common/folder/{folderId}/get', 'get'],
      ['/v1/common/folder/{folderId}/update', 'put'],
      ['/v1/signatures/template/{templateId}/delete', 'delete'],
    ] as const) {
      expect(op(path, method)?.summary, path).toBeTruthy();
      expect(op(path, method).summary).not.toContain('(extension)');
    }
    for (const path of ['/v1/common/user/contact/create', '/v1/common/folder/create', '/v1/signatures/envelope/create']) {
      expect(op(path, 'post')?.summary, path).toContain('(extension)');
    }
  });

  describe('GET /common/limits/get', () => {
    const settingsOf = async (query = '') => expectOk(await api.call('GET', `/common/limits/get${query}`)).settings as any[];

    it('lists the four dimensions of the seeded plan shaped as 2.9', async () => {
      const settings = await settingsOf();
      expect(settings.map((s) => s.name)).toEqual(DIMENSIONS);
      const pages = settings[0];
      expect(pages).toMatchObject({
        name: 'pages-generated',
        displayName: 'Pages generated',
        allocatedResources: '1,000 per month',
        groups: 'Generation,Pages',
        pricePerUnit: 0.01,
      });
      expect(Object.keys(pages).sort()).toEqual([
        'allocatedResources',
        'displayName',
        'groups',
        'name',
        'pricePerUnit',
        'subscriptionLimits',
        'userLimits',
      ]);
      expect(pages.subscriptionLimits.monthly).toHaveLength(1);
      expect(pages.subscriptionLimits.yearly).toHaveLength(1);
      expect(pages.userLimits.monthly).toHaveLength(1);
      const entry = pages.subscriptionLimits.monthly[0];
      expect(entry).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        key: 'pages-generated.subscription.monthly',
        value: '1000',
        defaultValue: '1000',
        meta: {
          application: 'MD',
          scope: { name: 'Subscription', priority: 2 },
          category: { name: 'Generation', description: expect.any(String), sortOrder: 1 },
          subCategory: { name: 'Pages', description: expect.any(String) },
          group: { key: 'subscription-monthly', name: 'Subscription monthly' },
        },
      });
      expect(pages.subscriptionLimits.yearly[0].value).toBe('12000');
      expect(pages.userLimits.yearly[0]).toMatchObject({ value: '3000', meta: { scope: { name: 'User', priority: 1 } } });
    });

    it('omits pricePerUnit when null and shows Unlimited for unlimited dimensions', async () => {
      const settings = await settingsOf();
      const docs = settings.find((s) => s.name === 'documents-generated');
      expect(docs).not.toHaveProperty('pricePerUnit');
      expect(docs.allocatedResources).toBe('500 per month');
      const managed = settings.find((s) => s.name === 'pages-managed');
      expect(managed.allocatedResources).toBe('Unlimited');
      expect(managed.subscriptionLimits.monthly[0].value).toBe('-1');
      expect(typeof managed.pricePerUnit).toBe('number');
    });

    it('reads values from the database: a subscription override changes value and allocatedResources, not defaultValue', async () => {
      const settings = await settingsOf();
      const docsManaged = settings.find((s) => s.name === 'documents-managed');
      const limitId = docsManaged.subscriptionLimits.monthly[0].id;
      await stack.service.db.query('INSERT INTO subscription_limit_overrides (subscription_id, limit_id, value) VALUES ($1, $2, 2500)', [
        otherCreds.subscriptionId,
        limitId,
      ]);
      const theirs = (expectOk(await other.call('GET', '/common/limits/get')).settings as any[]).find(
        (s) => s.name === 'documents-managed',
      );
      expect(theirs.allocatedResources).toBe('2,500 per month');
      expect(theirs.subscriptionLimits.monthly[0]).toMatchObject({ value: '2500', defaultValue: '2000' });
      // The caller's own subscription is untouched.
      const mine = (await settingsOf()).find((s) => s.name === 'documents-managed');
      expect(mine.subscriptionLimits.monthly[0]).toMatchObject({ value: '2000', defaultValue: '2000' });
    });

    it('scope filters limit entries, case-insensitively', async () => {
      const user = await settingsOf('?scope=user');
      expect(user.map((s) => s.name)).toEqual(DIMENSIONS);
      for (const s of user) {
        expect(s.subscriptionLimits).toEqual({ monthly: [], yearly: [] });
        expect(s.userLimits.monthly).toHaveLength(1);
      }
      const sub = await settingsOf('?scope=SUBSCRIPTION');
      expect(sub[0].subscriptionLimits.monthly).toHaveLength(1);
      expect(sub[0].userLimits.monthly).toHaveLength(0);
      const global = await settingsOf('?scope=Global');
      expect(global[0].subscriptionLimits.monthly).toHaveLength(0);
      expect(global[0].allocatedResources).toBe('1,000 per month');
      expect((await settingsOf('?scope=account'))[0].userLimits.yearly).toHaveLength(0);
    });

    it('application filters limit entries, case-insensitively', async () => {
      expect((await settingsOf('?application=md'))[0].subscriptionLimits.monthly).toHaveLength(1);
      expect((await settingsOf('?application=MhCw'))[0].subscriptionLimits.monthly).toHaveLength(0);
      for (const app of ['MDS', 'MCLM', 'MH']) expectOk(await api.call('GET', `/common/limits/get?application=${app}`));
    });

    it('INVALID_SCOPE_VALUE for an unknown scope', async () => {
      expectError(await api.call('GET', '/common/limits/get?scope=Planet'), 400, 'INVALID_SCOPE_VALUE', 'Planet');
    });

    it('INVALID_APPLICATION_VALUE for an unknown application', async () => {
      expectError(await api.call('GET', '/common/limits/get?application=XYZ'), 400, 'INVALID_APPLICATION_VALUE', 'XYZ');
    });

    it("subscriptionId: the caller's own is accepted, another one gives 403 AUTHORIZATION_ERROR, a non-uuid 400 VALIDATION_ERROR", async () => {
      expect(expectOk(await api.call('GET', `/common/limits/get?subscriptionId=${creds.subscriptionId}`)).settings).toHaveLength(4);
      expectError(await api.call('GET', `/common/limits/get?subscriptionId=${otherCreds.subscriptionId}`), 403, 'AUTHORIZATION_ERROR');
      expectError(await api.call('GET', `/common/limits/get?subscriptionId=${UNKNOWN_ID}`), 403, 'AUTHORIZATION_ERROR');
      expectError(await api.call('GET', '/common/limits/get?subscriptionId=nope'), 400, 'VALIDATION_ERROR', 'subscriptionId');
    });

    it('401 without credentials', async () => {
      await unauthenticated('GET', '/common/limits/get');
    });
  });

  describe('GET /common/summary', () => {
    it('self-service: this month and year of consumption per dimension against the limits', async () => {
      const now = new Date();
      const lastMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 15));
      const rows: [string, string, number, Date][] = [
        [creds.userId, 'pages-generated', 7, now],
        [creds.userId, 'documents-generated', 1, now],
        [UNKNOWN_ID, 'pages-generated', 5, now],
        [creds.userId, 'pages-generated', 100, new Date(Date.UTC(now.getUTCFullYear() - 1, 5, 1))],
      ];
      // Last month counts for the year only when it is in the same year.
      if (lastMonth.getUTCFullYear() === now.getUTCFullYear()) rows.push([creds.userId, 'pages-generated', 20, lastMonth]);
      for (const [i, [user, dimension, value, at]] of rows.entries()) {
        await stack.service.db.query(
          'INSERT INTO consumption (subscription_id, user_id, operation_id, dimension, value, created_date) VALUES ($1, $2, $3, $4, $5, $6)',
          [creds.subscriptionId, user, `op-${i}`, dimension, value, at],
        );
      }
      await stack.service.db.query(
        "INSERT INTO consumption (subscription_id, user_id, operation_id, dimension, value) VALUES ($1, $2, 'other-op', 'pages-generated', 999)",
        [otherCreds.subscriptionId, otherCreds.userId],
      );
      const data = expectOk(await api.call('GET', '/common/summary?type=Self-Service'));
      expect(Date.parse(data.month.start)).toBeLessThanOrEqual(Date.now());
      expect(Date.parse(data.month.end)).toBeGreaterThan(Date.now());
      expect(data.year.start).toBe(`${now.getUTCFullYear()}-01-01T00:00:00.000Z`);
      expect(data.dimensions.map((d: any) => d.name)).toEqual(DIMENSIONS);
      const pages = data.dimensions[0];
      const extra = lastMonth.getUTCFullYear() === now.getUTCFullYear() ? 20 : 0;
      expect(pages.monthly).toEqual({ used: 12, userUsed: 7, limit: 1000, remaining: 988, userLimit: 250, userRemaining: 243 });
      expect(pages.yearly).toEqual({
        used: 12 + extra,
        userUsed: 7 + extra,
        limit: 12000,
        remaining: 12000 - 12 - extra,
        userLimit: 3000,
        userRemaining: 3000 - 7 - extra,
      });
      expect(data.dimensions[1].monthly).toMatchObject({ used: 1, limit: 500, remaining: 499 });
      expect(data.dimensions[2].monthly).toEqual({
        used: 0,
        userUsed: 0,
        limit: null,
        remaining: null,
        userLimit: null,
        userRemaining: null,
      });
      // The other subscription sees only its own consumption.
      const theirs = expectOk(await other.call('GET', '/common/summary?type=self-service'));
      expect(theirs.dimensions[0].monthly.used).toBe(999);
    });

    it('INVALID_SUMMARY_TYPE when type is missing or unknown', async () => {
      expectError(await api.call('GET', '/common/summary'), 400, 'INVALID_SUMMARY_TYPE');
      expectError(await api.call('GET', '/common/summary?type=weekly'), 400, 'INVALID_SUMMARY_TYPE', 'weekly');
    });

    it('401 without credentials', async () => {
      await unauthenticated('GET', '/common/summary?type=dashboard');
    });
  });

  describe('user contacts', () => {
    const create = async (c: Record<string, unknown>, who = api) =>
      expectOk(await who.call('POST', '/common/user/contact/create', { json: { userContact: c } }), 201).userContact;

    it('create (extension) returns the contact of 2.7 with 201', async () => {
      const c = await create({ name: 'Ada Lovelace', email: 'ada@example.com', sharedWithAccount: true });
      expect(c).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        name: 'Ada Lovelace',
        email: 'ada@example.com',
        sharedWithAccount: true,
        subscriptionUserGuid: creds.userId,
      });
    });

    it('create validates name and email', async () => {
      expectError(
        await api.call('POST', '/common/user/contact/create', { json: { userContact: { email: 'x@example.com' } } }),
        400,
        'DATA_NAME_REQUIRED',
      );
      expectError(
        await api.call('POST', '/common/user/contact/create', { json: { userContact: { name: 'x', email: 'nobody' } } }),
        400,
        'VALIDATION_ERROR',
        'email',
      );
    });

    it('list returns the whole list in one response under result.data.userContacts', async () => {
      const names = ['Zed', 'Bob', 'Carol'];
      for (const name of names) await create({ name, email: `${name.toLowerCase()}@example.com` });
      const data = expectOk(await api.call('GET', '/common/user/contact/list?top=1'));
      expect(Object.keys(data)).toEqual(['userContacts']);
      const listed = (data.userContacts as any[]).map((c) => c.name);
      for (const name of names) expect(listed).toContain(name);
      expect(listed).toEqual([...listed].sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase())));
      expect(data.userContacts[0]).toHaveProperty('sharedWithAccount');
    });

    it('get returns one contact under result.data.userContact', async () => {
      const c = await create({ name: 'Grace', email: 'grace@example.com' });
      expect(expectOk(await api.call('GET', `/common/user/contact/${c.id}/get`)).userContact).toEqual(c);
    });

    it('get: a non-uuid userContactId gives 400 VALIDATION_ERROR naming it', async () => {
      expectError(await api.call('GET', '/common/user/contact/not-a-uuid/get'), 400, 'VALIDATION_ERROR', 'userContactId');
    });

    it('get: an unknown id gives 404 NOT_FOUND_BY_ID', async () => {
      expectError(await api.call('GET', `/common/user/contact/${UNKNOWN_ID}/get`), 404, 'NOT_FOUND_BY_ID');
    });

    it("another subscription's contacts read as absent", async () => {
      const c = await create({ name: 'Private', email: 'p@example.com', sharedWithAccount: true });
      expectError(await other.call('GET', `/common/user/contact/${c.id}/get`), 404, 'NOT_FOUND_BY_ID');
      const theirs = expectOk(await other.call('GET', '/common/user/contact/list')).userContacts as any[];
      expect(theirs.map((x) => x.id)).not.toContain(c.id);
    });

    it('401 without credentials', async () => {
      await unauthenticated('GET', '/common/user/contact/list');
      await unauthenticated('GET', `/common/user/contact/${UNKNOWN_ID}/get`);
    });
  });

  describe('folders', () => {
    const create = async (name: string, who = api) => {
      const res = await who.call('POST', '/common/folder/create', { json: { folder: { name } } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body.result).toBeUndefined();
      return res.body.folder;
    };

    it('create (extension) answers 201 {folder: {id, name}} without the success envelope', async () => {
      const f = await create('Contracts');
      expect(f).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), name: 'Contracts' });
      expectError(await api.call('POST', '/common/folder/create', { json: { folder: {} } }), 400, 'DATA_NAME_REQUIRED');
    });

    it('list answers {folder: [...]} with top, skip, sort and order', async () => {
      const fresh = (await stack.credentials('folders')) as Credentials;
      const f = client(fresh);
      for (const name of ['beta', 'Alpha', 'gamma', 'Delta']) await create(name, f);
      const list = async (q: string) => {
        const res = await f.call('GET', `/common/folder/list${q}`);
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        expect(Object.keys(res.body)).toEqual(['folder']);
        return (res.body.folder as any[]).map((x) => x.name);
      };
      expect(await list('')).toEqual(['Alpha', 'beta', 'Delta', 'gamma']);
      expect(await list('?sort=name&order=desc')).toEqual(['gamma', 'Delta', 'beta', 'Alpha']);
      expect(await list('?sort=Name&order=ASC&top=2&skip=1')).toEqual(['beta', 'Delta']);
      expect(await list('?sort=CreatedDate&order=ASC')).toEqual(['beta', 'Alpha', 'gamma', 'Delta']);
      const first = (await f.call('GET', '/common/folder/list?top=1')).body.folder[0];
      expect(Object.keys(first).sort()).toEqual(['id', 'name']);
    });

    it('list: unknown sort column or order, or a bad top, give 400 VALIDATION_ERROR', async () => {
      expectError(await api.call('GET', '/common/folder/list?sort=Secret'), 400, 'VALIDATION_ERROR', 'sort');
      expectError(await api.call('GET', '/common/folder/list?order=sideways'), 400, 'VALIDATION_ERROR', 'order');
      expectError(await api.call('GET', '/common/folder/list?top=0'), 400, 'VALIDATION_ERROR', 'top');
    });

    it('get answers {folder: {id, name}}', async () => {
      const f = await create('Invoices');
      const res = await api.call('GET', `/common/folder/${f.id}/get`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ folder: f });
    });

    it('update renames and answers {folder: {id, message}}', async () => {
      const f = await create('Old name');
      const res = await api.call('PUT', `/common/folder/${f.id}/update`, { json: { folder: { name: 'New name', id: UNKNOWN_ID } } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toEqual({ folder: { id: f.id, message: 'Folder updated.' } });
      expect((await api.call('GET', `/common/folder/${f.id}/get`)).body.folder.name).toBe('New name');
      expectError(await api.call('PUT', `/common/folder/${f.id}/update`, { json: { folder: { name: ' ' } } }), 400, 'DATA_NAME_REQUIRED');
    });

    it('unknown folder: 400 ENVELOPE_ID_INVALID (Envelope not found.) on get and update', async () => {
      expectError(await api.call('GET', `/common/folder/${UNKNOWN_ID}/get`), 400, 'ENVELOPE_ID_INVALID', 'Envelope not found.');
      expectError(
        await api.call('PUT', `/common/folder/${UNKNOWN_ID}/update`, { json: { folder: { name: 'x' } } }),
        400,
        'ENVELOPE_ID_INVALID',
        'Envelope not found.',
      );
    });

    it('a non-uuid folderId gives 400 VALIDATION_ERROR', async () => {
      expectError(await api.call('GET', '/common/folder/nope/get'), 400, 'VALIDATION_ERROR', 'folderId');
    });

    it("another subscription's folders read as absent and cannot be renamed", async () => {
      const f = await create('Mine');
      expectError(await other.call('GET', `/common/folder/${f.id}/get`), 400, 'ENVELOPE_ID_INVALID');
      expectError(
        await other.call('PUT', `/common/folder/${f.id}/update`, { json: { folder: { name: 'stolen' } } }),
        400,
        'ENVELOPE_ID_INVALID',
      );
      expect(((await other.call('GET', '/common/folder/list')).body.folder as any[]).map((x) => x.id)).not.toContain(f.id);
      expect((await api.call('GET', `/common/folder/${f.id}/get`)).body.folder.name).toBe('Mine');
    });

    it('401 without credentials', async () => {
      await unauthenticated('GET', '/common/folder/list');
      await unauthenticated('PUT', `/common/folder/${UNKNOWN_ID}/update`, { folder: { name: 'x' } });
    });
  });
});
