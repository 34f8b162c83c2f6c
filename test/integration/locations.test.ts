// Where files come from and go to (connectors/registry.ts): a request that asks a location for something it
// cannot do (a capability it lacks, or a connection the subscription has not made) is refused by the API before any workflow starts, so a
// 400 means nothing was queued and nothing consumed: the uploads it named still resolve afterwards.
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Credentials } from '../../api/auth/credentials.ts';
import { client, generateBody } from '../support/http.ts';
import { type Stack, startStack } from '../support/stack.ts';

describe('locations: unavailable methods are refused before queueing', () => {
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

  const uploadPair = () => api.uploadPair();

  /** Workflows that this operation started. */
  async function workflowsOf(operationId: string): Promise<number> {
    return (await temporal.workflow.count(`DocgenOperationId = "${operationId}"`)).count;
  }

  // DriveA exists but needs the subscription's connection (none here): CONNECTION_MISSING, naming the field.
  const missing = (field: string) =>
    new RegExp(
      `${field.replace(/[.[\]]/g, '\\$&')} DriveA: the subscription has no driveA connection: connect it with PUT /v1/common/connection/driveA`,
    );
  const cases: [string, (t: string, d: string) => Record<string, unknown>, string, RegExp][] = [
    [
      'document.deliveryMethod DriveA',
      (t, d) => generateBody(t, d, { document: { deliveryMethod: 'DriveA', path: '' } }),
      'CONNECTION_MISSING',
      missing('document.deliveryMethod'),
    ],
    [
      'data.loadMethod DriveA',
      (t, d) => ({ ...generateBody(t, d), data: { loadMethod: 'DriveA', urn: d } }),
      'CONNECTION_MISSING',
      missing('data.loadMethod'),
    ],
    [
      'template.loadMethod DriveA',
      (t, d) => generateBody(t, d, { template: { loadMethod: 'DriveA' } }),
      'CONNECTION_MISSING',
      missing('template.loadMethod'),
    ],
    [
      'template.relatedItems[0].loadMethod DriveA',
      (t, d) =>
        generateBody(t, d, { template: { relatedItems: [{ name: 'footer', urn: 'x', fileFormat: 'docx', loadMethod: 'DriveA' }] } }),
      'CONNECTION_MISSING',
      missing('template.relatedItems[0].loadMethod'),
    ],
  ];

  for (const [name, body, code, message] of cases) {
    it(`generate with ${name}: 400 ${code} naming the field, no workflow, the uploads still usable`, async () => {
      const { templateUrn, dataUrn } = await uploadPair();
      const refused = await api.call('POST', '/documents/document/generate', { json: body(templateUrn, dataUrn) });
      expect(refused.status, JSON.stringify(refused.body)).toBe(400);
      expect(refused.body.error.innerErrors[0].code).toBe(code);
      expect(refused.body.error.innerErrors.map((e: any) => e.message).join('\n')).toMatch(message);
      expect(refused.body.consumption).toBeUndefined();
      expect(await workflowsOf(refused.body.operationId)).toBe(0);
      // Nothing consumed: the same uploads generate to Storage afterwards.
      const ok = await api.call('POST', '/documents/document/generate', { json: generateBody(templateUrn, dataUrn) });
      expect(ok.status, JSON.stringify(ok.body)).toBe(201);
      expect(ok.body.result.data.document.deliveryMethod).toBe('Storage');
    });
  }

  // DriveB is implemented: without a connection it is CONNECTION_MISSING, before queueing, naming the field.
  const unconnected: [string, (t: string, d: string) => Record<string, unknown>, RegExp][] = [
    [
      'document.deliveryMethod DriveB (pdf)',
      (t, d) => generateBody(t, d, { document: { deliveryMethod: 'DriveB', path: '', fileFormat: 'pdf' } }),
      /document\.deliveryMethod DriveB: the subscription has no driveB connection/,
    ],
    [
      'data.loadMethod DriveB',
      (t, d) => ({ ...generateBody(t, d), data: { loadMethod: 'DriveB', urn: 'sheet-id' } }),
      /data\.loadMethod DriveB: the subscription has no driveB connection/,
    ],
    [
      'template.loadMethod DriveB (gdoc)',
      (t, d) =>
        generateBody(t, d, {
          template: { loadMethod: 'DriveB', fileFormat: 'gdoc', urn: 'doc-id' },
          document: { deliveryMethod: 'DriveB', path: '', fileFormat: 'gdoc' },
        }),
      /template\.loadMethod DriveB: the subscription has no driveB connection.*PUT \/v1\/common\/connection\/driveB/,
    ],
  ];
  for (const [name, body, message] of unconnected) {
    it(`generate with ${name} and no connection: 400 CONNECTION_MISSING naming the field, no workflow, the uploads still usable`, async () => {
      const { templateUrn, dataUrn } = await uploadPair();
      const refused = await api.call('POST', '/documents/document/generate', { json: body(templateUrn, dataUrn) });
      expect(refused.status, JSON.stringify(refused.body)).toBe(400);
      expect(refused.body.error.innerErrors[0].code).toBe('CONNECTION_MISSING');
      expect(refused.body.error.innerErrors.map((e: any) => e.message).join('\n')).toMatch(message);
      expect(await workflowsOf(refused.body.operationId)).toBe(0);
      const ok = await api.call('POST', '/documents/document/generate', { json: generateBody(templateUrn, dataUrn) });
      expect(ok.status, JSON.stringify(ok.body)).toBe(201);
    });
  }

  it("sharing options of the delivery drive are a need of their own; another drive's are ignored", async () => {
    const { templateUrn, dataUrn } = await uploadPair();
    // Storage delivery: driveA sharing options are not read (spec 4.8), so they do not refuse the request.
    const ok = await api.call('POST', '/documents/document/generate', {
      json: generateBody(templateUrn, dataUrn, { document: { options: { driveA: { viewAnonymous: true } } } }),
    });
    expect(ok.status, JSON.stringify(ok.body)).toBe(201);
  });

  it('manage to an unconnected location: 400 CONNECTION_MISSING before queueing, the source untouched', async () => {
    const { templateUrn, dataUrn } = await uploadPair();
    const generated = await api.call('POST', '/documents/document/generate', { json: generateBody(templateUrn, dataUrn) });
    expect(generated.status).toBe(201);
    const urn = generated.body.result.data.document.urn as string;
    const source = { urn, fileFormat: 'docx', loadMethod: 'Storage', remove: 'delete' };
    const toDriveA = await api.call('POST', '/documents/document/manage', {
      json: { sourceDocument: source, targetDocument: { name: 'moved', fileFormat: 'docx', deliveryMethod: 'DriveA', path: '' } },
    });
    expect(toDriveA.status).toBe(400);
    expect(toDriveA.body.error.statusCode).toBe('400');
    expect(toDriveA.body.error.innerErrors[0].code).toBe('CONNECTION_MISSING');
    expect(toDriveA.body.error.innerErrors[0].message).toMatch(missing('targetDocument.deliveryMethod'));
    const toCrm = await api.call('POST', '/documents/document/manage', {
      json: {
        sourceDocument: { ...source, remove: 'none' },
        targetDocument: { name: 'copy', fileFormat: 'docx', deliveryMethod: 'crm', path: '' },
      },
    });
    // crm is available, but this subscription has not connected it (test/integration/crm covers a connected one).
    expect(toCrm.status).toBe(400);
    expect(toCrm.body.error.innerErrors[0].code).toBe('CONNECTION_MISSING');
    expect(toCrm.body.error.innerErrors[0].message).toMatch(/targetDocument\.deliveryMethod crm: the subscription has no crm connection/);
    expect(await workflowsOf(toDriveA.body.operationId)).toBe(0);
    expect(await workflowsOf(toCrm.body.operationId)).toBe(0);
    // The move did not happen: the document still downloads.
    expect((await api.download(urn)).status).toBe(200);
  });
});
