// `docgen api` and `docgen worker` as separate processes sharing PostgreSQL, storage and a Temporal server.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freePort } from '../../cli/temporal-dev.ts';
import { docgenCredentials } from '../support/docgen-start.ts';
import { docxParagraphs, makeDocx } from '../support/office.ts';
import { client, generateBody } from '../support/http.ts';
import { repoRoot, runDocgen as run, stopProcess as stop } from '../support/service-process.ts';
import { createPgDatabase } from '../support/stack.ts';

const execFileP = promisify(execFile);
const bin = path.join(repoRoot, 'cli', 'docgen.mjs');

describe('scale-out: separate api and worker processes on PostgreSQL', () => {
  let env: NodeJS.ProcessEnv;
  let apiProc: ReturnType<typeof run>;
  let workerProc: ReturnType<typeof run>;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-scale-'));
    env = {
      ...process.env,
      DATABASE_URL: await createPgDatabase(),
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_TASK_QUEUE: `scale-${randomUUID()}`,
      PORT: String(await freePort()),
      DOCGEN_DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
    };
    workerProc = run(['worker'], env, 'docgen worker polling');
    apiProc = run(['api'], env, 'docgen api listening');
    await Promise.all([workerProc.started, apiProc.started]);
  });
  afterAll(async () => {
    if (apiProc) await stop(apiProc);
    if (workerProc) await stop(workerProc);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('generates through the two processes', async () => {
    const creds = await docgenCredentials(env);
    const api = client(creds);
    const t = await api.upload('template', [{ name: 't.docx', bytes: makeDocx(['Invoice {number} for {customer}']) }]);
    const d = await api.upload('data', [{ name: 'd.json', bytes: JSON.stringify({ number: 7, customer: 'Zed' }) }]);
    const gen = await api.call('POST', '/documents/document/generate', {
      json: generateBody(t.body.result.data.files[0].id, d.body.result.data.files[0].id),
    });
    expect(gen.status, JSON.stringify(gen.body)).toBe(201);
    const file = await api.download(gen.body.result.data.document.urn);
    expect(docxParagraphs(file.bytes)).toEqual(['Invoice 7 for Zed']);
  });

  it('the worker shuts down gracefully on SIGTERM', async () => {
    expect(await stop(workerProc)).toBe(0);
  });

  it('refuses to run one half alone on the single-process embedded database', async () => {
    const { DATABASE_URL: _omit, ...noDb } = env;
    const res = await execFileP(process.execPath, [bin, 'api'], { env: noDb, cwd: repoRoot }).catch(
      (e: { code: number; stderr: string }) => e,
    );
    expect((res as { code: number }).code).toBe(1);
    expect((res as { stderr: string }).stderr).toContain('set DATABASE_URL');
  });
});
