// A worker SIGKILLed in the middle of a DriveA upload: `docgen api` and `docgen worker` run as real
// processes (PostgreSQL, the run's Temporal server), the fake Microsoft Graph runs here and outlives the
// worker. It holds the second fragment of the upload session, the worker is killed, another worker takes
// the workflow over, finds the journaled session, resumes it at nextExpectedRanges (sending the lost
// fragment only), and the synchronous caller gets its 201: exactly one file in the drive and one
// document record.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type GraphFake, startGraphFake } from '../../fakes/graph/server.ts';
import { processEnv } from '../../support/async-e2e.ts';
import { docgenCredentials } from '../../support/docgen-start.ts';
import { client } from '../../support/http.ts';
import { docxParagraphs } from '../../support/office.ts';
import { runDocgen, stopProcess } from '../../support/service-process.ts';
import { bigTemplate, connect, DRIVE_A } from './support.ts';

describe('a worker killed during a DriveA upload', () => {
  let fake: GraphFake;
  let setup: Awaited<ReturnType<typeof processEnv>>;
  const procs: ReturnType<typeof runDocgen>[] = [];
  let release: (() => void) | undefined;

  beforeAll(async () => {
    fake = await startGraphFake();
    fake.addDrive(DRIVE_A);
    setup = await processEnv(inject('temporalAddress'), { DRIVEA_GRAPH_URL: fake.graphUrl, DRIVEA_LOGIN_URL: fake.loginUrl });
  });
  afterAll(async () => {
    release?.();
    for (const p of procs) await stopProcess(p, 'SIGKILL');
    await fake?.close();
    setup?.cleanup();
  });

  it('ends with exactly one file and one document record', async () => {
    const { env } = setup;
    const first = runDocgen(['worker'], env, 'docgen worker polling');
    const api = runDocgen(['api'], env, 'docgen api listening');
    procs.push(first, api);
    await Promise.all([first.started, api.started]);
    const sdk = client(await docgenCredentials(env, 'drivea-crash'));
    await connect(sdk, fake);

    // ~6 MB of output: an upload session of two fragments (4.8 MiB + the rest). Hold the second.
    fake.put(DRIVE_A, 'Templates/big.docx', Buffer.from(bigTemplate(6 * 1024 * 1024)));
    let fragments = 0;
    // The held fragment dies with the worker: dropped unanswered, never applied.
    const held = fake.hold((method, path) => method === 'PUT' && path.startsWith('/up/') && ++fragments === 2, { drop: true });
    release = held.release;
    const { dataUrn } = await sdk.uploadPair();
    const answer = sdk.call('POST', '/documents/document/generate', {
      json: {
        template: { urn: 'root:/Templates/big.docx:', loadMethod: 'DriveA', fileFormat: 'docx' },
        data: { loadMethod: 'Storage', urn: dataUrn },
        document: { name: 'survivor', fileFormat: 'docx', deliveryMethod: 'DriveA', path: 'Crash', timezone: 'UTC', locale: 'en-US' },
      },
    });

    await held.arrived;
    expect(await stopProcess(first, 'SIGKILL')).toBe(null);
    held.release();
    const second = runDocgen(['worker'], env, 'docgen worker polling');
    procs.push(second);
    await second.started;

    const res = await answer;
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const doc = res.body.result.data.document;

    // One file, under its final name, whole; no temporary file left.
    const files = fake.files(DRIVE_A).filter((f) => f.path.startsWith('Crash/') && !f.path.endsWith('/') && f.state === 'live');
    expect(files.map((f) => f.path)).toEqual(['Crash/survivor.docx']);
    expect(files[0]!.id).toBe(doc.urn);
    expect(docxParagraphs(files[0]!.content!)).toEqual(['Big report for World']);
    // One session, resumed: the first fragment went up once, the held one was sent again by the new worker.
    expect(fake.count('POST', '/createUploadSession')).toBe(1);
    const puts = fake.log.filter((e) => e.method === 'PUT' && e.path.startsWith('/up/'));
    expect(puts.map((p) => p.status)).toEqual([202, 0, 201]);

    const list = await sdk.call('GET', '/documents/document/list');
    expect(list.body.result.data.rowCount).toBe(1);
    console.log(
      `[drivea-crash] upload fragments sent: ${puts.length} (statuses ${puts.map((p) => p.status).join(',')}), sessions: 1, files written: ${files.length}`,
    );
  }, 180_000);
});
