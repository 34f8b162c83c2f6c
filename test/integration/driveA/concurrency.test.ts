// Concurrent generates into one new DriveA folder, through the HTTP API, made to collide: the fake Graph
// holds every delivery's look-up of the folder until all have asked, and every rename until all are sent.
// Graph keeps names unique (folder creation with conflictBehavior fail, renames with rename), so DriveA
// needs no lock of docgen's: one folder each level, N files, N distinct names. Prints its figures.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GraphFake, startGraphFake } from '../../fakes/graph/server.ts';
import { client, generateBody } from '../../support/http.ts';
import { docxParagraphs, makeDocx } from '../../support/office.ts';
import { type Stack, startStack } from '../../support/stack.ts';
import { connect, DRIVE_A } from './support.ts';

describe('DriveA: concurrent deliveries into one new folder', () => {
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

  it('N generates named alike into RaceA/2026: one folder each level, N files with N names', async () => {
    const N = 4;
    const pairs = await Promise.all(Array.from({ length: N }, (_, i) => api.uploadPair(makeDocx(['Number {n}']), { n: i })));
    // All look the folder up (missing) before any is answered, and all rename before any rename is answered.
    const lookups = fake.barrier(N, (method, path) => method === 'GET' && decodeURIComponent(path).endsWith('/root:/RaceA/2026:'));
    const renames = fake.barrier(N, (method) => method === 'PATCH');
    const results = await Promise.all(
      pairs.map(({ templateUrn, dataUrn }) =>
        api.call('POST', '/documents/document/generate', { json: generateBody(templateUrn, dataUrn, { document: { name: 'same', deliveryMethod: 'DriveA', path: 'RaceA/2026' } }) }),
      ),
    );
    await Promise.all([lookups.arrived, renames.arrived]);
    for (const r of results) expect(r.status, JSON.stringify(r.body)).toBe(201);
    const all = fake.files(DRIVE_A).filter((f) => f.state === 'live' && f.path.startsWith('RaceA'));
    const folders = all.filter((f) => f.path.endsWith('/')).map((f) => f.path);
    const files = all.filter((f) => !f.path.endsWith('/'));
    const names = files.map((f) => f.path.slice('RaceA/2026/'.length)).sort();
    console.log(`figures, ${N} concurrent generates into the new DriveA folder RaceA/2026: folders ${JSON.stringify(folders.sort())}, files ${files.length}, names ${JSON.stringify(names)}`);
    expect(folders.sort()).toEqual(['RaceA/', 'RaceA/2026/']);
    expect(names).toEqual(['same 1.docx', 'same 2.docx', 'same 3.docx', 'same.docx']);
    expect(files.map((f) => docxParagraphs(f.content!)[0]).sort()).toEqual(['Number 0', 'Number 1', 'Number 2', 'Number 3']);
  });
});
