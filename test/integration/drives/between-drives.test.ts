// Manage between the two drives: a docx generated into DriveA is converted into a pdf in DriveB, and that pdf
// is moved back into DriveA (the DriveB file trashed). Both fakes run at once; each connector talks only to
// its own configured host.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pdfPageCount } from '../../../converter/index.ts';
import { type GoogleFake } from '../../fakes/google/server.ts';
import { type GraphFake, startGraphFake } from '../../fakes/graph/server.ts';
import { client, generateBody } from '../../support/http.ts';
import { makeDocx } from '../../support/office.ts';
import { type Stack, startStack } from '../../support/stack.ts';
import { connect as connectDriveA, DRIVE_A } from '../driveA/support.ts';
import { ADA, connect as connectDriveB, expectOnlyConfiguredHost, startFakeGoogle } from '../driveB/setup.ts';

describe('manage between DriveA and DriveB', () => {
  let graph: GraphFake;
  let google: GoogleFake;
  let restoreEnv: () => void;
  let stack: Stack;
  let api: ReturnType<typeof client>;

  beforeAll(async () => {
    graph = await startGraphFake();
    graph.addDrive(DRIVE_A);
    const g = await startFakeGoogle();
    google = g.fake;
    restoreEnv = g.restoreEnv;
    stack = await startStack({ driveAGraphUrl: graph.graphUrl, driveALoginUrl: graph.loginUrl, ...g.settings });
    api = client(await stack.credentials());
    await connectDriveA(api, graph);
    await connectDriveB(api, ADA);
  });
  afterAll(async () => {
    await stack?.stop();
    await graph?.close();
    await google?.close();
    restoreEnv?.();
  });

  const manage = (json: unknown) => api.call('POST', '/documents/document/manage', { json });

  it('DriveA docx -> DriveB pdf (convert), then DriveB pdf -> DriveA (move)', async () => {
    const { templateUrn, dataUrn } = await api.uploadPair(makeDocx(['Hello {name}']), { name: 'both drives' });
    const gen = await api.call('POST', '/documents/document/generate', {
      json: generateBody(templateUrn, dataUrn, { document: { name: 'letter', deliveryMethod: 'DriveA', path: 'Out' } }),
    });
    expect(gen.status, JSON.stringify(gen.body)).toBe(201);
    const inA = gen.body.result.data.document.urn as string;

    const converted = await manage({
      sourceDocument: { urn: inA, fileFormat: 'docx', loadMethod: 'DriveA', remove: 'none' },
      targetDocument: { name: 'letter', fileFormat: 'pdf', deliveryMethod: 'DriveB', path: 'FromA' },
    });
    expect(converted.status, JSON.stringify(converted.body)).toBe(201);
    const inB = google.files.get(converted.body.result.data.document.urn as string);
    expect(inB).toMatchObject({ name: 'letter.pdf', mimeType: 'application/pdf', trashed: false });
    expect(pdfPageCount(new Uint8Array(inB!.content))).toBe(1);
    expect(graph.item(DRIVE_A, inA)?.state).toBe('live');

    const moved = await manage({
      sourceDocument: { urn: inB!.id, fileFormat: 'pdf', loadMethod: 'DriveB', remove: 'delete' },
      targetDocument: { name: 'letter', fileFormat: 'pdf', deliveryMethod: 'DriveA', path: 'Back' },
    });
    expect(moved.status, JSON.stringify(moved.body)).toBe(201);
    const back = graph.item(DRIVE_A, moved.body.result.data.document.urn as string);
    expect(back?.name).toBe('letter.pdf');
    expect(Buffer.from(back!.content!).equals(inB!.content)).toBe(true);
    expect(google.files.get(inB!.id)?.trashed).toBe(true);
    expectOnlyConfiguredHost(google);
  });
});
