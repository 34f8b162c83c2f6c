// Names SharePoint refuses, through the HTTP API: the API answers 400 VALIDATION_ERROR naming the field
// before anything is queued (no request reaches Graph, the uploads the generate names are not consumed),
// for generate's document.name and document.path and for manage's targetDocument.name. Before, the
// request was queued, the file went up under its temporary name, the rename was refused, the caller got a
// 400 and the temporary file stayed in the user's folder.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GraphFake, startGraphFake } from '../../fakes/graph/server.ts';
import { client, generateBody } from '../../support/http.ts';
import { makeDocx } from '../../support/office.ts';
import { type Stack, startStack } from '../../support/stack.ts';
import { connect, DRIVE_A } from './support.ts';

describe('DriveA names through the API', () => {
  let fake: GraphFake;
  let stack: Stack;
  let api: ReturnType<typeof client>;

  beforeAll(async () => {
    fake = await startGraphFake();
    fake.addDrive(DRIVE_A);
    stack = await startStack({ driveAGraphUrl: fake.graphUrl, driveALoginUrl: fake.loginUrl });
    api = client(await stack.credentials());
    await connect(api, fake);
  });
  afterAll(async () => {
    await stack?.stop();
    await fake?.close();
  });

  const files = () => fake.files(DRIVE_A).filter((f) => !f.path.endsWith('/'));
  const generate = (json: unknown) => api.call('POST', '/documents/document/generate', { json });

  it('generate: a refused name or folder is a 400 before queueing; nothing reaches the drive, nothing is consumed', async () => {
    const { templateUrn, dataUrn } = await api.uploadPair(makeDocx(['Hello {name}']), { name: 'Ada' });
    const body = (document: Record<string, unknown>) => generateBody(templateUrn, dataUrn, { document: { deliveryMethod: 'DriveA', path: 'Invoices', ...document } });
    const graphRequests = fake.log.length;
    for (const [document, field, reason] of [
      [{ name: 'Invoice 12:30' }, 'document.name', /"Invoice 12:30.docx" is not allowed in DriveA: OneDrive and SharePoint refuse the characters/],
      [{ name: 'CON' }, 'document.name', /CON.docx is a name OneDrive and SharePoint reserve/],
      [{ name: '~$draft' }, 'document.name', /start with ~\$/],
      [{ name: ' leading' }, 'document.name', /start or end with a space/],
      [{ name: 'a_vti_b' }, 'document.name', /_vti_/],
      [{ path: 'Invoices/2026: Q1' }, 'document.path', /the folder name "2026: Q1" is not allowed/],
      [{ path: 'forms' }, 'document.path', /forms at the root of a library/],
    ] as const) {
      const res = await generate(body(document));
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      const inner = res.body.error.innerErrors as { code: string; message: string }[];
      expect(inner.map((e) => e.code)).toEqual(['VALIDATION_ERROR']);
      expect(inner[0]!.message.startsWith(`${field} `), inner[0]!.message).toBe(true);
      expect(inner[0]!.message).toMatch(reason);
    }
    // Refused before queueing: Graph heard nothing, the drive holds nothing.
    expect(fake.log.slice(graphRequests)).toEqual([]);
    expect(files()).toEqual([]);
    // The uploads were not consumed: the same urns generate once the name is fine.
    const ok = await generate(body({ name: 'Invoice 12.30' }));
    expect(ok.status, JSON.stringify(ok.body)).toBe(201);
    expect(files().map((f) => f.path)).toEqual(['Invoices/Invoice 12.30.docx']);
  });

  it('manage: a refused targetDocument.name is a 400 before queueing; the drive is unchanged', async () => {
    const { templateUrn, dataUrn } = await api.uploadPair(makeDocx(['Hello {name}']), { name: 'Ada' });
    const gen = await generate(generateBody(templateUrn, dataUrn, { document: { name: 'orig', deliveryMethod: 'DriveA', path: 'Src' } }));
    expect(gen.status, JSON.stringify(gen.body)).toBe(201);
    const before = files().map((f) => f.path);
    const graphRequests = fake.log.length;
    const res = await api.call('POST', '/documents/document/manage', {
      json: {
        sourceDocument: { urn: gen.body.result.data.document.urn, fileFormat: 'docx', loadMethod: 'DriveA', remove: 'none' },
        targetDocument: { name: 'copy:1', fileFormat: 'docx', deliveryMethod: 'DriveA', path: 'Copies' },
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.error.statusCode).toBe('400');
    expect(res.body.error.innerErrors.map((e: { code: string }) => e.code)).toEqual(['VALIDATION_ERROR']);
    expect(res.body.error.innerErrors[0].message).toMatch(/^targetDocument\.name "copy:1": the file name "copy:1.docx" is not allowed in DriveA/);
    expect(fake.log.slice(graphRequests)).toEqual([]);
    expect(files().map((f) => f.path)).toEqual(before);
  });
});
