// Signatures (spec 4.2): the template delete with the non-template case, envelope create/get (extensions),
// and the dashboard summary (2.10) computed from the caller's envelopes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Credentials } from '../../../api/auth/credentials.ts';
import { client } from '../../support/http.ts';
import { type Stack, startStack } from '../../support/stack.ts';
import { expectError, expectOk, UNKNOWN_ID } from '../records/helpers.ts';

describe('signatures (4.2) and the dashboard summary (2.10)', () => {
  let stack: Stack;
  let creds: Credentials;
  let api: ReturnType<typeof client>;
  let other: ReturnType<typeof client>;

  beforeAll(async () => {
    stack = await startStack();
    creds = await stack.credentials();
    api = client(creds);
    other = client(await stack.credentials('other'));
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const full = (status: string, extra: Record<string, unknown> = {}) => ({
    name: `${status} envelope`,
    status,
    documents: [{ name: 'contract.pdf', fileFormat: 'pdf' }, { name: 'annex.pdf' }],
    signGroups: [{ name: 'Board' }],
    recipients: [
      { name: 'Alice', email: 'alice@example.com', signGroupIndex: 0 },
      { name: 'Bob', email: 'bob@example.com' },
    ],
    fields: [
      { type: 'Signature', page: 1, x: 10, y: 20, documentIndex: 0, recipientIndex: 0 },
      { type: 'Date', documentIndex: 1, recipientIndex: 1 },
    ],
    ...extra,
  });
  const create = async (envelope: Record<string, unknown>, who = api) =>
    expectOk(await who.call('POST', '/signatures/envelope/create', { json: { envelope, externalContext: { ref: 7 } } }), 201).envelope;
  const get = (id: string, who = api) => who.call('GET', `/signatures/envelope/${id}/get`);

  describe('envelope create and get (extensions)', () => {
    it('creates an envelope with documents, sign groups, recipients and fields', async () => {
      const res = await api.call('POST', '/signatures/envelope/create', {
        json: { envelope: full('template'), externalContext: { ref: 7 } },
      });
      const e = expectOk(res, 201).envelope;
      expect(res.body.externalContext).toEqual({ ref: 7 });
      expect(e).toMatchObject({
        name: 'template envelope',
        status: 'Template',
        sendDate: null,
        ownerId: creds.userId,
        subscriptionId: creds.subscriptionId,
      });
      expect(e.documents.map((d: any) => [d.name, d.fileFormat])).toEqual([
        ['contract.pdf', 'pdf'],
        ['annex.pdf', ''],
      ]);
      expect(e.signGroups).toHaveLength(1);
      expect(e.recipients[0]).toMatchObject({
        name: 'Alice',
        email: 'alice@example.com',
        signGroupId: e.signGroups[0].id,
        status: 'Pending',
        action: '',
        actionDate: null,
        userId: null,
      });
      expect(e.fields).toHaveLength(2);
      expect(e.fields.find((f: any) => f.type === 'Signature')).toMatchObject({
        page: 1,
        x: 10,
        y: 20,
        documentId: e.documents[0].id,
        recipientId: e.recipients[0].id,
      });
      expect(expectOk(await get(e.id)).envelope).toEqual(e);
    });

    it('validates name, status and indexes', async () => {
      expectError(
        await api.call('POST', '/signatures/envelope/create', { json: { envelope: { status: 'Draft' } } }),
        400,
        'DATA_NAME_REQUIRED',
      );
      expectError(
        await api.call('POST', '/signatures/envelope/create', { json: { envelope: { name: 'x', status: 'Shredded' } } }),
        400,
        'VALIDATION_ERROR',
        'status',
      );
      expectError(
        await api.call('POST', '/signatures/envelope/create', {
          json: { envelope: { name: 'x', fields: [{ type: 'Text', documentIndex: 3 }] } },
        }),
        400,
        'VALIDATION_ERROR',
        'documentIndex',
      );
    });
  });

  describe('DELETE /signatures/template/{templateId}/delete', () => {
    it('deletes a Template-status envelope with its documents, recipients, sign groups and fields', async () => {
      const t = await create(full('Template'));
      const data = expectOk(await api.call('DELETE', `/signatures/template/${t.id}/delete`));
      expect(data).toEqual({ template: { id: t.id, message: 'Template deleted.' } });
      expectError(await get(t.id), 400, 'ENVELOPE_ID_INVALID');
      for (const table of ['envelope_documents', 'envelope_recipients', 'envelope_sign_groups', 'envelope_fields']) {
        const r = await stack.service.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE envelope_id = $1`, [t.id]);
        expect(r.rows[0]?.n, table).toBe(0);
      }
      // Deleted means gone: a second delete does not find it.
      expectError(await api.call('DELETE', `/signatures/template/${t.id}/delete`), 400, 'ENVELOPE_ID_INVALID', 'Envelope not found.');
    });

    it('a non-template envelope of the caller loses its documents, recipients, sign groups and fields but stays', async () => {
      const e = await create(full('Sent'));
      const data = expectOk(await api.call('DELETE', `/signatures/template/${e.id}/delete`));
      expect(data.template.id).toBe(e.id);
      expect(data.template.message).toContain('not a template');
      const after = expectOk(await get(e.id)).envelope;
      expect(after).toMatchObject({ id: e.id, name: e.name, status: 'Sent', documents: [], recipients: [], signGroups: [], fields: [] });
    });

    it('unknown id gives 400 ENVELOPE_ID_INVALID with message Envelope not found.', async () => {
      const res = await api.call('DELETE', `/signatures/template/${UNKNOWN_ID}/delete`);
      expectError(res, 400, 'ENVELOPE_ID_INVALID', 'Envelope not found.');
      expect(res.body.error.message).toBe('Envelope not found.');
      expectError(await api.call('DELETE', '/signatures/template/not-an-id/delete'), 400, 'ENVELOPE_ID_INVALID', 'Envelope not found.');
    });

    it("another subscription's template reads as absent and survives", async () => {
      const t = await create(full('Template'));
      expectError(await other.call('DELETE', `/signatures/template/${t.id}/delete`), 400, 'ENVELOPE_ID_INVALID', 'Envelope not found.');
      expectError(await get(t.id, other), 400, 'ENVELOPE_ID_INVALID');
      expect(expectOk(await get(t.id)).envelope.documents).toHaveLength(2);
    });

    it('401 without credentials', async () => {
      const res = await fetch(`${creds.baseUrl}/signatures/template/${UNKNOWN_ID}/delete`, { method: 'DELETE' });
      expect(res.status).toBe(401);
      expect(((await res.json()) as any).error.innerErrors[0].code).toBe('UNAUTHORIZED');
    });
  });

  describe('GET /common/summary?type=dashboard', () => {
    it("computes 2.10 from the caller's envelopes", async () => {
      const fresh = await stack.credentials('dash');
      const d = client(fresh);
      const me = { name: 'Me', email: 'someone@example.com', userId: fresh.userId };
      const byEmail = { name: 'Me by e-mail', email: 'DEV@dash.local' };
      const soon = new Date(Date.now() + 2 * 86_400_000).toISOString();
      const inAMonth = new Date(Date.now() + 30 * 86_400_000).toISOString();
      // To do: sent, the caller is a pending recipient (by user id, and by e-mail address).
      const todo1 = await create({ name: 'todo old', status: 'Sent', sendDate: '2024-01-01T00:00:00.000Z', recipients: [me] }, d);
      const todo2 = await create(
        { name: 'todo new', status: 'sent', sendDate: '2024-06-01T00:00:00.000Z', recipients: [byEmail], expirationDate: soon },
        d,
      );
      // Pending: the caller's sent envelope waiting for someone else; one with a recipient action.
      const pending1 = await create(
        {
          name: 'pending viewed',
          status: 'Sent',
          expirationDate: inAMonth,
          recipients: [{ name: 'Zoe', email: 'zoe@example.com', action: 'Viewed', actionDate: '2030-01-01T10:00:00.000Z' }],
        },
        d,
      );
      const pending2 = await create(
        {
          name: 'pending untouched',
          status: 'Sent',
          sendDate: '2025-01-01T00:00:00.000Z',
          recipients: [{ name: 'Yan', email: 'yan@example.com' }],
        },
        d,
      );
      // Completed (own and received), a draft and a template: neither todo nor pending.
      await create({ name: 'done', status: 'Completed', recipients: [{ ...me, status: 'Completed' }] }, d);
      await create({ name: 'draft', status: 'Draft' }, d);
      await create({ name: 'tpl', status: 'Template' }, d);
      // Another subscription's envelopes never count.
      await create({ name: 'foreign', status: 'Sent', recipients: [{ name: 'x', email: 'dev@dash.local' }] });

      const data = expectOk(await d.call('GET', '/common/summary?type=DASHBOARD'));
      expect(Object.keys(data).sort()).toEqual([
        'completed',
        'expiring',
        'inbox',
        'latestPendingEnvelopes',
        'oldestTodoEnvelopes',
        'pending',
        'recentEnvelopes',
        'todo',
      ]);
      expect(data).toMatchObject({ todo: 2, pending: 2, inbox: 3, expiring: 1, completed: 1 });
      expect(data.oldestTodoEnvelopes).toEqual([
        { id: todo1.id, name: 'todo old', sendDate: '2024-01-01T00:00:00.000Z', userName: 'dash developer', tid: fresh.subscriptionId },
        { id: todo2.id, name: 'todo new', sendDate: '2024-06-01T00:00:00.000Z', userName: 'dash developer', tid: fresh.subscriptionId },
      ]);
      expect(data.latestPendingEnvelopes).toEqual([
        { id: pending1.id, name: 'pending viewed', action: 'Viewed', timestamp: '2030-01-01T10:00:00.000Z', person: 'Zoe' },
        { id: pending2.id, name: 'pending untouched', action: 'Sent', timestamp: '2025-01-01T00:00:00.000Z', person: 'dash developer' },
      ]);
      expect(data.recentEnvelopes).toHaveLength(5);
      expect(data.recentEnvelopes[0]).toEqual({ id: expect.any(String), name: 'draft', status: 'Draft' });
      expect(data.recentEnvelopes.map((e: any) => e.name)).not.toContain('tpl');
    });
  });
});
