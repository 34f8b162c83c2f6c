// A worker killed in the middle of a resumable upload to DriveB: real `docgen api` and `docgen worker`
// processes on PostgreSQL, the local Google server holding an answer so the kill lands while the upload is
// open. Drive creates the file when its last byte arrives: the hardest moment is after that, before the
// worker hears of it. So the answer to the last chunk is held, the worker killed, and another worker
// replays the delivery: it finds the file carrying the write's urn (appProperties) instead of uploading a
// second one. The folder ends up with exactly one file, the service with one document record.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { processEnv } from '../../support/async-e2e.ts';
import { docgenCredentials } from '../../support/docgen-start.ts';
import { client } from '../../support/http.ts';
import { runDocgen, stopProcess } from '../../support/service-process.ts';
import { docParagraphs } from '../../fakes/google/office-model.ts';
import { type GoogleFake, MIME } from '../../fakes/google/server.ts';
import { makeDocx, para } from '../convert/fixtures.ts';
import { randomBytes } from 'node:crypto';
import { ADA, connect, driveBBody, expectOnlyConfiguredHost, startFakeGoogle } from './setup.ts';

describe('DriveB: a worker killed mid-upload', () => {
  let fake: GoogleFake;
  let restoreEnv: () => void;
  let setup: Awaited<ReturnType<typeof processEnv>>;
  const procs: ReturnType<typeof runDocgen>[] = [];

  beforeAll(async () => {
    const g = await startFakeGoogle();
    fake = g.fake;
    restoreEnv = g.restoreEnv;
    // The children inherit the proxy variables: a request for any other host would be recorded as foreign.
    setup = await processEnv(inject('temporalAddress'), {
      DRIVEB_API_URL: g.settings.driveBApiUrl,
      DRIVEB_TOKEN_URL: g.settings.driveBTokenUrl,
    });
  });
  afterAll(async () => {
    for (const p of procs) await stopProcess(p, 'SIGKILL');
    await fake?.close();
    restoreEnv?.();
    setup?.cleanup();
  });

  it('completes on another worker with exactly one file in the folder and one document', async () => {
    const { env } = setup;
    const first = runDocgen(['worker'], env, 'docgen worker polling');
    const api = runDocgen(['api'], env, 'docgen api listening');
    procs.push(first, api);
    await Promise.all([first.started, api.started]);
    const sdk = client(await docgenCredentials(env, 'driveb-crash'));
    await connect(sdk, ADA);

    // A Google Doc whose export is ~6 MB (an incompressible part): the upload is resumable, 1 MiB chunks.
    const big = makeDocx({ body: para('Big {name}'), extra: { 'word/media/pad.bin': randomBytes(6 * 1024 * 1024) } });
    const template = fake.put({
      name: 'Big',
      mimeType: MIME.document,
      parent: fake.rootOf('ada@example.com'),
      owner: 'ada@example.com',
      content: big,
    });
    const d = await sdk.upload('data', [{ name: 'd.json', bytes: JSON.stringify({ name: 'Ada' }) }]);
    expect(d.status).toBe(201);

    const hold = fake.holdUpload('final');
    const generated = sdk.call('POST', '/documents/document/generate', {
      json: driveBBody({ urn: template.id, fileFormat: 'gdoc' }, { urn: d.body.result.data.files[0].id }, { name: 'big', path: 'Crash' }),
    });
    // Every chunk is stored and the file exists; the answer to the last chunk is held: the worker is inside the upload.
    await hold.held;
    expect(await stopProcess(first, 'SIGKILL')).toBe(null);
    hold.release();

    const second = runDocgen(['worker'], env, 'docgen worker polling');
    procs.push(second);
    await second.started;
    const res = await generated;
    expect(res.status, JSON.stringify(res.body)).toBe(201);

    const folder = [...fake.files.values()].find((f) => f.name === 'Crash' && f.mimeType === MIME.folder)!;
    const files = fake.childrenOf(folder.id);
    expect(files.map((f) => f.name)).toEqual(['big']);
    expect(files[0]!.id).toBe(res.body.result.data.document.urn);
    expect(docParagraphs(files[0]!.content)).toEqual(['Big Ada']);
    // One upload session: the replayed delivery found the file instead of uploading it again.
    expect(
      fake.requests.filter((r) => r.method === 'POST' && r.path === '/upload/drive/v3/files' && r.query.uploadType === 'resumable'),
    ).toHaveLength(1);
    expect(fake.requests.some((r) => r.method === 'GET' && r.path === '/drive/v3/files' && (r.query.q ?? '').includes('docgenUrn'))).toBe(
      true,
    );
    const docs = await sdk.call('GET', '/documents/document/list');
    expect(docs.body.result.data.rowCount).toBe(1);
    expectOnlyConfiguredHost(fake);
  }, 150_000);
});
