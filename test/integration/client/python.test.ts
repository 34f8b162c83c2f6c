// A Python client generated with openapi-python-client from the running service's /v1/openapi.json, used
// as an integrator would (test/integration/client/python/walkthrough.py): a synchronous pdf generate and
// its download, an async generate whose callback this test receives, a batch followed to its end, and a
// typed error envelope. The generator must also emit readable names: a model per named response envelope,
// one FileFormat enum, no anonymous `*_response_20x` model of an envelope.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Credentials } from '../../../api/auth/credentials.ts';
import { makeDocx } from '../../support/office.ts';
import { ensureOpenapiPythonClient } from '../../support/python-client.ts';
import { type Stack, startStack } from '../../support/stack.ts';
import { type Receiver, startReceiver } from '../async/receiver.ts';

/** Runs a command without blocking this process, which serves the API the command calls. */
function run(
  cmd: string,
  args: string[],
  cwd: string,
  env: Record<string, string>,
): Promise<{ status: number | null; stdout: string; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], timeout: 300_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, out: `${stdout}${stderr}` }));
  });
}

describe('a Python client generated from /v1/openapi.json', () => {
  let stack: Stack;
  let creds: Credentials;
  let receiver: Receiver;
  let work: string;
  let pythonPath: string;

  beforeAll(async () => {
    [stack, receiver] = await Promise.all([startStack({ outboundAllow: ['127.0.0.1'] }), startReceiver('127.0.0.1')]);
    creds = await stack.credentials();
    pythonPath = ensureOpenapiPythonClient();
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-python-client-'));
  });
  afterAll(async () => {
    await receiver?.close();
    await stack?.stop();
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  it('is generated from the served document, with a named model per envelope and one FileFormat', async () => {
    const res = await fetch(`${creds.baseUrl}/openapi.json`);
    expect(res.status).toBe(200);
    fs.writeFileSync(path.join(work, 'openapi.json'), await res.text());
    const env = { PYTHONPATH: pythonPath, PATH: `${path.join(pythonPath, 'bin')}:${process.env.PATH}` };
    const gen = await run(
      'python3',
      ['-m', 'openapi_python_client', 'generate', '--path', 'openapi.json', '--meta', 'none', '--output-path', 'docgen_client'],
      work,
      env,
    );
    expect(gen.status, gen.out).toBe(0);
    expect(gen.out).not.toMatch(/Unable to parse|Cannot parse|could not be/i);
    const models = fs.readdirSync(path.join(work, 'docgen_client', 'models'));
    for (const m of [
      'generate_result.py',
      'start_batch_response.py',
      'get_batch_response.py',
      'file_format.py',
      'template_format.py',
      'inner_error_code.py',
      'batch_summary_result.py',
    ])
      expect(models, m).toContain(m);
    // Envelopes are named after their operation, never an anonymous `*_response_20x`.
    const anonymous = models.filter((m) => /_response_20\d/.test(m));
    expect(anonymous).toEqual([]);
    expect(models.filter((m) => /file_format/.test(m))).toEqual(['file_format.py']);
  });

  it('runs sync, async (callback received) and batch, and reads a typed error', async () => {
    const templateFile = path.join(work, 'letter.docx');
    fs.writeFileSync(templateFile, makeDocx(['Bonjour {name}']));
    const ran = await run('python3', [path.join(import.meta.dirname, 'python', 'walkthrough.py')], work, {
      PYTHONPATH: `${work}:${pythonPath}`,
      DOCGEN_URL: creds.baseUrl,
      DOCGEN_API_KEY: creds.apiKey,
      DOCGEN_TOKEN: creds.accessToken,
      TEMPLATE_FILE: templateFile,
      CALLBACK_URL: `${receiver.url}/hooks`,
    });
    expect(ran.status, ran.out).toBe(0);
    const steps = Object.fromEntries(
      ran.stdout
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, any>)
        .map((s) => [s.step, s]),
    );
    expect(steps.sync).toMatchObject({ fileFormat: 'pdf', name: 'letter.pdf', pdfHeader: '%PDF-', externalContext: { client: 'python' } });
    expect(steps.async).toMatchObject({ status: 201 });
    expect(steps.batch).toMatchObject({ status: 'completed', rowsTotal: 3, rowsDone: 3, rowsFailed: 0 });
    expect(steps.batch.combined).toEqual(expect.any(String));
    expect(steps.error).toEqual({ step: 'error', statusCode: 400, code: 'TEMPLATE_NOT_FOUND', type: 'InnerErrorCode' });

    // The async generate's result reached the callback named by the token, with the request's operation id.
    const [delivery] = await receiver.waitFor('/hooks/result', 1, 60_000);
    const body = JSON.parse(delivery!.body) as Record<string, any>;
    expect(body.operationId).toBe(steps.async.operationId);
    expect(body.result.data.document).toMatchObject({ fileFormat: 'docx', name: 'async letter.docx' });
    expect(body.externalContext).toEqual({ client: 'python' });
  });
});
