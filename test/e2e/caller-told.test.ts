// What the caller is told is what happened (issue 28 §1), with real processes and real faults.
//
// 1. `docgen start` (embedded defaults, GENERATE_TIMEOUT_MS 3 s) whose Temporal dev server is paused
//    (SIGSTOP) for 12 s while synchronous generates and moves are in flight, then continued: every first
//    answer is a 201 or a 504 that says the operation may still complete (never "nothing was delivered"),
//    and a retry with the key it names (the request's own, or its operationId) returns the document: as many
//    201s as documents recorded, files written and documents metered; every move's source is gone.
// 2. `docgen api` SIGKILLed while a keyed generate runs, then started again: the retry with the same key
//    (to the new API process) returns the document the run delivered, recorded once.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { expectOneDocument, processEnv, startGraphqlEndpoint } from '../support/async-e2e.ts';
import { docgenCredentials } from '../support/docgen-start.ts';
import { freezeScenario } from '../support/freeze.ts';
import { client } from '../support/http.ts';
import { makeDocx } from '../support/office.ts';
import { runDocgen, type StartedService, startDocgen, stopProcess } from '../support/service-process.ts';

describe('a paused Temporal server', () => {
  let svc: StartedService | undefined;
  let paused: number | undefined;
  afterAll(async () => {
    if (paused) process.kill(paused, 'SIGCONT');
    await svc?.stop();
    if (svc) fs.rmSync(svc.dataDir, { recursive: true, force: true });
  });

  it('every 504 says the work may still complete, and its key returns the document; 201s = documents = metering', async () => {
    svc = await startDocgen({ GENERATE_TIMEOUT_MS: '3000', CONVERTER_POOL_SIZE: '1' });
    const { pid } = JSON.parse(fs.readFileSync(path.join(svc.dataDir, 'temporal', 'dev-server.json'), 'utf8')) as { pid: number };
    const out = await freezeScenario(
      await svc.credentials(),
      svc.dataDir,
      { generates: 16, keyless: 4, moves: 8, sendOverMs: 2_000, freezeAfterMs: 800, freezeMs: 12_000 },
      (stop) => {
        process.kill(pid, stop ? 'SIGSTOP' : 'SIGCONT');
        paused = stop ? pid : undefined;
      },
    );
    const summary = JSON.stringify(out);
    // The first answers: done, or "may still complete"; never a claim that nothing was delivered.
    for (const kind of ['generate', 'move'] as const) {
      expect(
        Object.keys(out[kind].first).every((s) => s === '201' || s === '504'),
        summary,
      ).toBe(true);
      expect(out[kind].saidNothingDelivered, summary).toBe(0);
    }
    // The paused server caught some callers: their 504s were retried with the key they named.
    expect((out.generate.first['504'] ?? 0) + (out.move.first['504'] ?? 0), summary).toBeGreaterThan(0);
    expect(out.generate.final, summary).toEqual({ 201: 16 });
    expect(out.move.final, summary).toEqual({ 201: 8 });
    // What happened is what the callers were told, once.
    expect(out, summary).toMatchObject({
      generatedRecords: 16,
      movedRecords: 8,
      documentFiles: 24,
      metered: { documentsGenerated: 16, documentsManaged: 8 },
      sourcesGone: 8,
      scratchLeft: 0,
    });
  }, 300_000);
});

describe('an API restarted mid-request', () => {
  let setup: Awaited<ReturnType<typeof processEnv>>;
  let graphql: Awaited<ReturnType<typeof startGraphqlEndpoint>>;
  const procs: ReturnType<typeof runDocgen>[] = [];
  afterAll(async () => {
    graphql?.release();
    for (const p of procs) await stopProcess(p, 'SIGKILL');
    await graphql?.close();
    setup?.cleanup();
  });

  it('the retry with the same key, to the restarted API, returns the document the run delivered', async () => {
    graphql = await startGraphqlEndpoint({ hold: true });
    setup = await processEnv(inject('temporalAddress'));
    const { env } = setup;
    const worker = runDocgen(['worker'], env, 'docgen worker polling');
    let api = runDocgen(['api'], env, 'docgen api listening');
    procs.push(worker, api);
    await Promise.all([worker.started, api.started]);
    const sdk = client(await docgenCredentials(env, 'restart'));
    const t = await sdk.upload('template', [{ name: 't.docx', bytes: makeDocx(['Hello {customer.name}']) }]);
    const body = {
      template: { urn: t.body.result.data.files[0].id, loadMethod: 'Storage', fileFormat: 'docx' },
      data: { loadMethod: 'GraphQL', urn: graphql.url, query: 'query { customer { name } }' },
      document: { name: 'survivor', fileFormat: 'docx', deliveryMethod: 'Storage', path: 'root', timezone: 'UTC', locale: 'en-US' },
    };
    const headers = { 'idempotency-key': 'restart-1' };
    const first = sdk.call('POST', '/documents/document/generate', { json: body, headers });
    first.catch(() => undefined); // rejects when the API dies, before it is awaited
    // The run waits inside its load-data step: the API goes down under the waiting caller.
    await graphql.firstHit;
    expect(await stopProcess(api, 'SIGKILL')).toBe(null);
    await expect(first).rejects.toThrow();
    graphql.release();
    api = runDocgen(['api'], env, 'docgen api listening');
    procs.push(api);
    await api.started;

    const again = await sdk.call('POST', '/documents/document/generate', { json: body, headers });
    expect(again.status, JSON.stringify(again.body)).toBe(201);
    expect(again.body.result.data.document).toMatchObject({ name: 'survivor.docx', fileFormat: 'docx' });
    // One run: the data was loaded once, and one document exists.
    expect(graphql.hits()).toBe(1);
    await expectOneDocument(sdk, again.body);
  }, 120_000);
});
