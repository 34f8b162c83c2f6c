// DriveA names and folders through the HTTP API.
// - Names SharePoint refuses: the API answers 400 VALIDATION_ERROR naming the field before anything is
//   queued (no request reaches Graph, the uploads the generate names are not consumed), for generate's
//   document.name and document.path and for manage's targetDocument.name. Before, the request was queued,
//   the file went up under its temporary name, the rename was refused, the caller got a 400 and the
//   temporary file stayed in the user's folder.
// - Concurrent generates into one new folder, made to collide: the fake Graph holds every delivery's
//   look-up of the folder until all have asked, and every rename until all are sent. Graph keeps names
//   unique (folder creation with conflictBehavior fail, renames with rename), so DriveA needs no lock of
//   docgen's: one folder each level, N files, N distinct names. Prints its figures.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GraphFake, startGraphFake } from '../../fakes/graph/server.ts';
import { client, generateBody } from '../../support/http.ts';
import { docxParagraphs, makeDocx } from '../../support/office.ts';
import { type Stack, startStack } from '../../support/stack.ts';
import { connect, DRIVE_A } from './support.ts';

describe('DriveA names and folders through the API', () => {
  let fake: GraphFake;
  let stack: Stack;
  let api: ReturnType<typeof client>;

  beforeAll(async () => {
    fake = await startGraphFake();
    fake.addDrive(DRIVE_A);
    stack = await startStack({ driveAGraphUrl: fake.graphUrl, driveALoginUrl: fake.loginUrl, converterMode: 'none' });
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
    const body = (document: Record<string, unknown>) =>
      generateBody(templateUrn, dataUrn, { document: { deliveryMethod: 'DriveA', path: 'Invoices', ...document } });
    const graphRequests = fake.log.length;
    for (const [document, field, reason] of [
      [
        { name: 'Invoice 12:30' },
        'document.name',
        /"Invoice 12:30.docx" is not allowed in DriveA: OneDrive and SharePoint refuse the characters/,
      ],
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
    expect(res.body.error.innerErrors[0].message).toMatch(
      /^targetDocument\.name "copy:1": the file name "copy:1.docx" is not allowed in DriveA/,
    );
    expect(fake.log.slice(graphRequests)).toEqual([]);
    expect(files().map((f) => f.path)).toEqual(before);
  });

  it('N generates named alike into RaceA/2026: one folder each level, N files with N names', async () => {
    const N = 4;
    const pairs = await Promise.all(Array.from({ length: N }, (_, i) => api.uploadPair(makeDocx(['Number {n}']), { n: i })));
    // All look the folder up (missing) before any is answered, and all rename before any rename is answered.
    const lookups = fake.barrier(N, (method, path) => method === 'GET' && decodeURIComponent(path).endsWith('/root:/RaceA/2026:'));
    const renames = fake.barrier(N, (method) => method === 'PATCH');
    const results = await Promise.all(
      pairs.map(({ templateUrn, dataUrn }) =>
        api.call('POST', '/documents/document/generate', {
          json: generateBody(templateUrn, dataUrn, { document: { name: 'same', deliveryMethod: 'DriveA', path: 'RaceA/2026' } }),
        }),
      ),
    );
    await Promise.all([lookups.arrived, renames.arrived]);
    for (const r of results) expect(r.status, JSON.stringify(r.body)).toBe(201);
    const all = fake.files(DRIVE_A).filter((f) => f.state === 'live' && f.path.startsWith('RaceA'));
    const folders = all.filter((f) => f.path.endsWith('/')).map((f) => f.path);
    const files = all.filter((f) => !f.path.endsWith('/'));
    const names = files.map((f) => f.path.slice('RaceA/2026/'.length)).sort();
    console.log(
      `figures, ${N} concurrent generates into the new DriveA folder RaceA/2026: folders ${JSON.stringify(folders.sort())}, files ${files.length}, names ${JSON.stringify(names)}`,
    );
    expect(folders.sort()).toEqual(['RaceA/', 'RaceA/2026/']);
    expect(names).toEqual(['same 1.docx', 'same 2.docx', 'same 3.docx', 'same.docx']);
    expect(files.map((f) => docxParagraphs(f.content!)[0]).sort()).toEqual(['Number 0', 'Number 1', 'Number 2', 'Number 3']);
  });
});
