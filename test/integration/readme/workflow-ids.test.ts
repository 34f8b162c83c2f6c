// The table of workflow ids (docs/operations.md, "Operators: finding a job") against the workflows real requests start:
// generate, async generate and manage, each without and with an Idempotency-Key, found in Temporal by their
// operation id.
import fs from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Credentials } from '../../../api/auth/credentials.ts';
import { makeDocx } from '../../support/office.ts';
import { client, generateBody } from '../../support/http.ts';
import { type Stack, startStack } from '../../support/stack.ts';
import { type Receiver, startReceiver } from '../async/receiver.ts';

const readme = fs.readFileSync(path.resolve(import.meta.dirname, '../../../docs/operations.md'), 'utf8');
/** operation -> [workflow type, id without key, id with key], as the README says. */
const table = new Map(
  (/<!-{2} workflow-ids:start -{2}>\n([\s\S]*?)\n<!-{2} workflow-ids:end -{2}>/.exec(readme)?.[1] ?? '')
    .split('\n')
    .slice(2)
    .map((row) =>
      row
        .split('|')
        .slice(1, -1)
        .map((c) => c.trim().replace(/^`|`$/g, '')),
    )
    .map(([op, ...rest]) => [op!, rest] as const),
);

describe('README: workflow ids', () => {
  let stack: Stack;
  let creds: Credentials;
  let api: ReturnType<typeof client>;
  let receiver: Receiver;
  let temporal: Client;
  let connection: Connection;

  beforeAll(async () => {
    [stack, receiver, connection] = await Promise.all([
      startStack({ outboundAllow: ['127.0.0.1'] }),
      startReceiver('127.0.0.1'),
      Connection.connect({ address: inject('temporalAddress') }),
    ]);
    temporal = new Client({ connection });
    creds = await stack.credentials();
    api = client(creds);
  });
  afterAll(async () => {
    await connection?.close();
    await receiver?.close();
    await stack?.stop();
  });

  /** The one workflow of this operation: its type and id. */
  async function workflowOf(operationId: string): Promise<[string, string]> {
    for (let i = 0; ; i++) {
      for await (const w of temporal.workflow.list({ query: `DocgenOperationId = "${operationId}"` })) return [w.type, w.workflowId];
      if (i > 100) throw new Error(`no workflow for operation ${operationId}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const expected = (operation: string, withKey: boolean, operationId: string, key: string) => {
    const [type, plain, keyed] = table.get(operation) ?? [];
    const id = (withKey ? keyed : plain)
      ?.replace('<operationId>', operationId)
      .replace('<subscriptionId>', creds.subscriptionId)
      .replace('<key>', key);
    return [type, id];
  };

  it('lists every operation, and each request runs the workflow the README names', async () => {
    expect([...table.keys()]).toEqual(['generate', 'async generate', 'manage']);
    // Each upload is consumed by the run that names it: fresh files for every request.
    const body = async () => {
      const t = await api.upload('template', [{ name: 't.docx', bytes: makeDocx(['Hello {name}']) }]);
      const d = await api.upload('data', [{ name: 'd.json', bytes: JSON.stringify({ name: 'World' }) }]);
      return generateBody(t.body.result.data.files[0].id as string, d.body.result.data.files[0].id as string);
    };
    const token = (
      await api.call('POST', '/common/client/token', {
        json: { sub: 'cb', iss: `${receiver.url}/hooks`, dest: '/ids', client_id: 'tests' },
      })
    ).body.result.data.token as string;
    let delivered: string | undefined;
    for (const key of [undefined, 'order-7']) {
      const headers: Record<string, string> = key ? { 'idempotency-key': key } : {};
      const gen = await api.call('POST', '/documents/document/generate', { json: await body(), headers });
      expect(gen.status, JSON.stringify(gen.body)).toBe(201);
      delivered = gen.body.result.data.document.urn as string;
      expect(await workflowOf(gen.headers.get('x-operation-id')!)).toEqual(
        expected('generate', !!key, gen.headers.get('x-operation-id')!, key ?? ''),
      );

      const async = await api.call('POST', '/documents/document/generate/async', {
        json: await body(),
        headers: { ...headers, 'x-client-authorization': token },
      });
      expect(async.status, JSON.stringify(async.body)).toBe(201);
      const asyncOp = async.headers.get('x-operation-id')!;
      expect(await workflowOf(asyncOp)).toEqual(expected('async generate', !!key, asyncOp, key ?? ''));

      const json = {
        sourceDocument: { urn: delivered, fileFormat: 'docx', loadMethod: 'Storage', remove: 'none' },
        targetDocument: { name: `copy${key ?? ''}`, fileFormat: 'docx', deliveryMethod: 'Storage', path: 'root' },
      };
      const manage = await api.call('POST', '/documents/document/manage', { json, headers });
      expect(manage.status, JSON.stringify(manage.body)).toBe(201);
      const manageOp = manage.headers.get('x-operation-id')!;
      expect(await workflowOf(manageOp)).toEqual(expected('manage', !!key, manageOp, key ?? ''));
    }
    await receiver.waitFor('/hooks/ids', 2);
  });
});
