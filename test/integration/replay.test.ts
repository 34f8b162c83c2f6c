// Workflow code must replay the histories of runs already in flight. test/fixtures/histories/current.json
// holds histories recorded from the current code, one per path through the workflows (sync and async
// generate, a failure, a remote delivery, reads from drives, native merge, each manage operation and its
// lost-task lookup, a batch's admission and its run); this test replays them with the workflow bundle as it
// is now, so a change that would break a run in flight fails here. How a deliberate change is versioned is
// in ARCHITECTURE.md ("Changing a workflow"): behind `patched()` with a fixture of the old shape kept here
// (PATCHED below) until the patch is removed, or on a new Worker Deployment version. After such a change,
// record the fixtures again (a patch's fixture keeps the paths it changes, recorded by the code before it):
//   DOCGEN_RECORD_HISTORIES=1 npx vitest run test/integration/replay.test.ts
import fs from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { workflowBundle } from '../../worker/index.ts';
import { type GraphFake, startGraphFake } from '../fakes/graph/server.ts';
import { type GoogleFake, MIME } from '../fakes/google/server.ts';
import { client, generateBody } from '../support/http.ts';
import { makeDocx } from '../support/office.ts';
import { type Stack, startStack } from '../support/stack.ts';
import { type Receiver, startReceiver } from './async/receiver.ts';
import { connect as connectDriveA, DRIVE_A } from './driveA/support.ts';
import { ADA, connect as connectDriveB, driveBBody, startFakeGoogle } from './driveB/setup.ts';
import { generateWorkflowId, manageWorkflowId } from '../../api/temporal.ts';
import { batchAdmissionWorkflowId, batchWorkflowId } from '../../core/batch.ts';
import { waitForBatch } from './batch/support.ts';

const histories = path.join(import.meta.dirname, '..', 'fixtures', 'histories');
const fixture = path.join(histories, 'current.json');
/** One fixture per live patch: the histories recorded by the code before it, which runs still in flight
 *  from then replay (the patch's old branch). Removed with the patch's old branch (deprecatePatch). */
const PATCHED: Record<string, string> = {
  // workflows/generate.ts: a template, related item or data file at a remote location read by a transfer
  // of its own before the prepare step (before: inside the local prepare step).
  'remote-reads-as-transfers': path.join(histories, 'before-remote-reads-as-transfers.json'),
  // workflows/batch.ts: a chunk takes a window's share of the pages left (before: one page a chunk). The
  // batch's history as a worker from before it made it, for an input that already allowed chunks to grow
  // (tuning.chunkMaxPages, which that worker did not read): a batch in flight across the upgrade.
  'batch-chunks-grow': path.join(histories, 'before-batch-chunks-grow.json'),
};
const RECORD = process.env.DOCGEN_RECORD_HISTORIES === '1';
type History = temporal.api.history.v1.IHistory;

/** The paths through the workflows a fixture must hold, and how each one ends. */
const EXPECTED: Record<string, 'COMPLETED' | 'FAILED'> = {
  'generate-docx': 'COMPLETED',
  'generate-pdf': 'COMPLETED',
  'generate-template-error': 'FAILED',
  'generate-to-drivea': 'COMPLETED',
  'generate-native-merge': 'COMPLETED',
  'generate-from-drivea': 'COMPLETED',
  'generate-native-merge-data-at-driveb': 'COMPLETED',
  'generate-async-pdf-callback-retried': 'COMPLETED',
  'manage-copy': 'COMPLETED',
  'manage-move': 'COMPLETED',
  'manage-convert-to-drivea': 'COMPLETED',
  'manage-move-missing-source': 'FAILED',
  'batch-admission': 'COMPLETED',
  batch: 'COMPLETED',
};

/** A failure's stack trace names the files of the machine that recorded it; replay does not read it. */
function withoutStacks<T>(v: T): T {
  if (Array.isArray(v)) return v.map(withoutStacks) as T;
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(
    Object.entries(v)
      .filter(([k]) => k !== 'stackTrace')
      .map(([k, x]) => [k, withoutStacks(x)]),
  ) as T;
}

const closedAs = (h: History) =>
  (h.events ?? []).some((e) => e.eventType === temporal.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED)
    ? 'COMPLETED'
    : (h.events ?? []).some((e) => e.eventType === temporal.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED)
      ? 'FAILED'
      : 'OPEN';

describe('workflow replay', () => {
  let stack: Stack;
  // The drives' fakes and a callback receiver, for recording only.
  let graph: GraphFake;
  let google: { fake: GoogleFake; restoreEnv(): void; settings: { driveBApiUrl: string; driveBTokenUrl: string } };
  let receiver: Receiver;
  let connection: Connection;
  let api: ReturnType<typeof client>;
  let subscriptionId: string;

  beforeAll(async () => {
    if (RECORD) [graph, google, receiver] = await Promise.all([startGraphFake(), startFakeGoogle(), startReceiver('127.0.0.1')]);
    stack = await startStack(
      RECORD
        ? {
            driveAGraphUrl: graph.graphUrl,
            driveALoginUrl: graph.loginUrl,
            ...google.settings,
            outboundAllow: ['127.0.0.1'],
            callbackRetryScheduleMs: [0, 150, 150],
            callbackTimeoutMs: 2_000,
            // A batch of 7 rows in pages of 2, 2 chunks at once: a chunk of two pages, then two of one.
            batchChunkRows: 2,
            batchWindow: 2,
          }
        : {},
    );
    const creds = await stack.credentials();
    subscriptionId = creds.subscriptionId;
    api = client(creds);
    connection = await Connection.connect({ address: inject('temporalAddress') });
  });
  afterAll(async () => {
    await connection?.close();
    await stack?.stop();
    await graph?.close();
    await google?.fake.close();
    google?.restoreEnv();
    await receiver?.close();
  });

  const history = (workflowId: string) => new Client({ connection }).workflow.getHandle(workflowId).fetchHistory();
  async function upload(kind: 'template' | 'data', name: string, bytes: Uint8Array | string): Promise<string> {
    const res = await api.upload(kind, [{ name, bytes }]);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.result.data.files[0].id as string;
  }
  const pair = async (template = makeDocx(['Hello {name}'])) =>
    [await upload('template', 't.docx', template), await upload('data', 'd.json', JSON.stringify({ name: 'Ada' }))] as const;
  async function generate(body: unknown, status = 201): Promise<History> {
    const res = await api.call('POST', '/documents/document/generate', { json: body });
    expect(res.status, JSON.stringify(res.body)).toBe(status);
    return history(generateWorkflowId(subscriptionId, res.body.operationId));
  }
  async function manage(body: unknown, status = 201): Promise<History> {
    const res = await api.call('POST', '/documents/document/manage', { json: body });
    expect(res.status, JSON.stringify(res.body)).toBe(status);
    return history(manageWorkflowId(subscriptionId, res.body.operationId));
  }
  const delivered = async () => {
    const [t, d] = await pair();
    const res = await api.call('POST', '/documents/document/generate', { json: generateBody(t, d) });
    expect(res.status).toBe(201);
    return res.body.result.data.document.urn as string;
  };
  const source = (urn: string, remove = 'none') => ({ urn, fileFormat: 'docx', loadMethod: 'Storage', remove });
  const target = (over: Record<string, unknown> = {}) => ({
    name: 'copy',
    fileFormat: 'docx',
    deliveryMethod: 'Storage',
    path: 'root',
    ...over,
  });

  /** One run per path through the workflows, by the current code. */
  async function recordRuns(): Promise<Record<string, History>> {
    const runs: Record<string, History> = {};
    runs['generate-docx'] = await generate(generateBody(...(await pair())));
    runs['generate-pdf'] = await generate(generateBody(...(await pair()), { document: { fileFormat: 'pdf' } }));
    runs['generate-template-error'] = await generate(generateBody(...(await pair(makeDocx(['{#never closed'])))), 400);
    graph.addDrive(DRIVE_A);
    await connectDriveA(api, graph);
    runs['generate-to-drivea'] = await generate(
      generateBody(...(await pair()), { document: { deliveryMethod: 'DriveA', path: 'Replay' } }),
    );
    await connectDriveB(api, ADA);
    const gdoc = google.fake.put({
      name: 'Letter',
      mimeType: MIME.document,
      parent: google.fake.rootOf('ada@example.com'),
      owner: 'ada@example.com',
      content: makeDocx(['Dear {name}']),
    });
    const nativeData = await upload('data', 'd.json', JSON.stringify({ name: 'Ada' }));
    runs['generate-native-merge'] = await generate(
      driveBBody({ urn: gdoc.id, fileFormat: 'gdoc' }, { urn: nativeData }, { options: { driveBGenerate: { nativeMergeEnabled: true } } }),
    );
    graph.put(DRIVE_A, 'Replay/letter.docx', Buffer.from(makeDocx(['Dear {name},', '{>footer}'])));
    graph.put(DRIVE_A, 'Replay/footer.docx', Buffer.from(makeDocx(['Regards'])));
    graph.put(DRIVE_A, 'Replay/ada.json', Buffer.from(JSON.stringify({ name: 'Ada' })));
    runs['generate-from-drivea'] = await generate({
      template: {
        urn: 'root:/Replay/letter.docx:',
        loadMethod: 'DriveA',
        fileFormat: 'docx',
        relatedItems: [{ name: 'footer', urn: 'root:/Replay/footer.docx:', loadMethod: 'DriveA', fileFormat: 'docx' }],
      },
      data: { loadMethod: 'DriveA', urn: 'root:/Replay/ada.json:' },
      document: { name: 'read', fileFormat: 'docx', deliveryMethod: 'Storage', path: 'root', timezone: 'UTC', locale: 'en-US' },
    });
    const driveBData = google.fake.put({
      name: 'ada.json',
      mimeType: 'application/json',
      parent: google.fake.rootOf('ada@example.com'),
      owner: 'ada@example.com',
      content: JSON.stringify({ name: 'Ada' }),
    });
    runs['generate-native-merge-data-at-driveb'] = await generate(
      driveBBody(
        { urn: gdoc.id, fileFormat: 'gdoc' },
        { urn: driveBData.id, loadMethod: 'DriveB' },
        { name: 'letter-2', options: { driveBGenerate: { nativeMergeEnabled: true } } },
      ),
    );

    const token = await api.call('POST', '/common/client/token', {
      json: { sub: 'replay', iss: `${receiver.url}/hooks`, dest: 'done', client_id: 'tests' },
    });
    expect(token.status, JSON.stringify(token.body)).toBe(200);
    receiver.script('/hooks/done', [{ status: 503 }]);
    const queued = await api.call('POST', '/documents/document/generate/async', {
      json: generateBody(...(await pair()), { document: { fileFormat: 'pdf' } }),
      headers: { 'x-client-authorization': token.body.result.data.token },
    });
    expect(queued.status, JSON.stringify(queued.body)).toBe(201);
    const handle = new Client({ connection }).workflow.getHandle(`generate-async-${queued.headers.get('x-operation-id')}`);
    expect(await handle.result()).toMatchObject({ generated: true, callback: { delivered: true, attempts: 2 } });
    runs['generate-async-pdf-callback-retried'] = await handle.fetchHistory();

    runs['manage-copy'] = await manage({ sourceDocument: source(await delivered()), targetDocument: target() });
    runs['manage-move'] = await manage({ sourceDocument: source(await delivered(), 'delete'), targetDocument: target({ name: 'moved' }) });
    runs['manage-convert-to-drivea'] = await manage({
      sourceDocument: source(await delivered()),
      targetDocument: target({ fileFormat: 'pdf', deliveryMethod: 'DriveA', path: 'Replay' }),
    });
    runs['manage-move-missing-source'] = await manage(
      { sourceDocument: source('3f1e9a43-1111-4c1f-9f3e-3d2b0c8a9e11', 'delete'), targetDocument: target() },
      400,
    );

    const rows = await upload('data', 'rows.json', JSON.stringify(Array.from({ length: 7 }, (_, i) => ({ name: `row ${i + 1}` }))));
    const batch = await api.call('POST', '/documents/document/generate/batch', {
      json: {
        template: { urn: (await pair())[0], loadMethod: 'Storage', fileFormat: 'docx' },
        data: { urn: rows, loadMethod: 'Storage' },
        document: { name: '{name}', fileFormat: 'docx', deliveryMethod: 'Storage', path: 'root', timezone: 'UTC', locale: 'en-US' },
        combined: { format: 'zip', name: 'rows', path: 'root', deliveryMethod: 'Storage' },
      },
    });
    expect(batch.status, JSON.stringify(batch.body)).toBe(201);
    const batchId = batch.body.result.data.batch.id as string;
    expect(await waitForBatch(api, batchId)).toMatchObject({ status: 'completed', rowsDone: 7 });
    runs['batch-admission'] = await history(batchAdmissionWorkflowId(batchId));
    runs.batch = await history(batchWorkflowId(batchId));
    return runs;
  }

  /** Replays every history of `recorded`: the current fixture holds every path, a patch's those it changes. */
  async function replayAll(recorded: Record<string, object>, label: string, every = true): Promise<void> {
    const paths = Object.keys(recorded).sort();
    const unknown = paths.filter((k) => !(k in EXPECTED));
    if (every) expect(paths, label).toEqual(Object.keys(EXPECTED).sort());
    else expect(unknown, label).toEqual([]);
    const bundle = await workflowBundle();
    for (const [name, raw] of Object.entries(recorded)) {
      const h = temporal.api.history.v1.History.fromObject(raw);
      expect(closedAs(h), `${label} ${name}`).toBe(EXPECTED[name]);
      await expect(Worker.runReplayHistory({ workflowBundle: bundle }, h, `replay-${name}`), `${label} ${name}`).resolves.toBeUndefined();
    }
  }

  it(
    RECORD
      ? 'records the fixture histories from the current code'
      : 'replays the histories recorded from the current code, one per path through the workflows',
    async () => {
      let recorded: Record<string, object>;
      if (RECORD) {
        const runs = await recordRuns();
        recorded = Object.fromEntries(
          Object.entries(runs).map(([name, h]) => [
            name,
            withoutStacks(
              temporal.api.history.v1.History.toObject(temporal.api.history.v1.History.create(h), {
                longs: String,
                enums: String,
                bytes: String,
              }),
            ),
          ]),
        );
        fs.mkdirSync(path.dirname(fixture), { recursive: true });
        fs.writeFileSync(fixture, `${JSON.stringify(recorded, null, 1)}\n`);
      } else {
        recorded = JSON.parse(fs.readFileSync(fixture, 'utf8')) as Record<string, object>;
      }
      await replayAll(recorded, 'current');
    },
  );

  it.runIf(!RECORD)('replays the histories recorded before each live patch (its old branch)', async () => {
    for (const [patch, file] of Object.entries(PATCHED)) {
      await replayAll(JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, object>, `before ${patch}:`, false);
    }
  });

  it('replays a run of the current code', async () => {
    const h = await generate(generateBody(...(await pair())));
    await expect(Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, h, 'replay-current')).resolves.toBeUndefined();
  });
});
