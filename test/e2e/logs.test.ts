// What an operator ships from `docgen api` and `docgen worker`: real processes (PostgreSQL, the run's Temporal
// server) at LOG_LEVEL=debug, every line of their stdout and stderr parsed as one JSON object, the Temporal
// core's logs among them; a customer mistake (a broken template, an upload already used) is one info line
// with its code and ids, not a warning with a stack trace.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { generateWorkflowId } from '../../api/temporal.ts';
import { processEnv } from '../support/async-e2e.ts';
import { docgenCredentials } from '../support/docgen-start.ts';
import { client, generateBody } from '../support/http.ts';
import { makeDocx } from '../support/office.ts';
import { runDocgen, stopProcess } from '../support/service-process.ts';

type Line = Record<string, unknown> & { level: string; msg: string; name: string; time: string };

/** Every line of a process's output as JSON; a line that is not fails the test, naming it. */
function lines(output: string, process: string): Line[] {
  return output
    .split('\n')
    .filter((l) => l !== '')
    .map((l, i) => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(l);
      } catch {
        throw new Error(`${process} line ${i + 1} is not JSON: ${l}`);
      }
      expect(parsed, `${process} line ${i + 1}`).toMatchObject({
        level: expect.any(String),
        time: expect.any(String),
        msg: expect.any(String),
        name: `docgen-${process}`,
      });
      return parsed as Line;
    });
}

describe('logs: one JSON line per event from docgen api and docgen worker', () => {
  let setup: Awaited<ReturnType<typeof processEnv>>;
  let api: ReturnType<typeof runDocgen>;
  let worker: ReturnType<typeof runDocgen>;
  let sdk: ReturnType<typeof client>;
  let subscriptionId: string;
  const operations: Record<string, string> = {};

  beforeAll(async () => {
    setup = await processEnv(inject('temporalAddress'), { LOG_LEVEL: 'debug' });
    worker = runDocgen(['worker'], setup.env, 'docgen worker polling');
    api = runDocgen(['api'], setup.env, 'docgen api listening');
    await Promise.all([worker.started, api.started]);
    const creds = await docgenCredentials(setup.env);
    subscriptionId = creds.subscriptionId;
    sdk = client(creds);

    const upload = async (paragraphs: string[]) => {
      const t = await sdk.upload('template', [{ name: 't.docx', bytes: makeDocx(paragraphs) }]);
      const d = await sdk.upload('data', [{ name: 'd.json', bytes: JSON.stringify({ name: 'Ada', items: [] }) }]);
      return { template: t.body.result.data.files[0].id as string, data: d.body.result.data.files[0].id as string };
    };
    const generate = async (name: string, template: string, data: string) => {
      const res = await sdk.call('POST', '/documents/document/generate', { json: generateBody(template, data) });
      operations[name] = res.headers.get('x-operation-id')!;
      return res;
    };
    const ok = await upload(['Hello {name}']);
    expect((await generate('ok', ok.template, ok.data)).status).toBe(201);
    // The template is consumed by the run that used it: naming it again is an upload that is gone.
    const gone = await upload(['Hello {name}']);
    const again = await generate('gone', ok.template, gone.data);
    expect(again.body.error.innerErrors[0].code).toBe('TEMPLATE_NOT_FOUND');
    const broken = await upload(['{#items}never closed', 'Hello {name']);
    const bad = await generate('broken', broken.template, broken.data);
    expect(bad.body.error.innerErrors[0].code).toBe('TEMPLATE_ERROR');
    // Stopping logs too (and flushes what the core still buffers).
    expect(await stopProcess(api)).toBe(0);
    expect(await stopProcess(worker)).toBe(0);
  }, 240_000);

  afterAll(async () => {
    if (api) await stopProcess(api, 'SIGKILL');
    if (worker) await stopProcess(worker, 'SIGKILL');
    setup?.cleanup();
  });

  it('writes nothing but JSON lines, without colours, from either process', () => {
    for (const [name, p] of [
      ['api', api],
      ['worker', worker],
    ] as const) {
      const all = lines(p.output(), name);
      expect(all.length, name).toBeGreaterThan(5);
      expect(p.output(), name).not.toMatch(/\x1b\[/);
      expect(
        all.some((l) => /^docgen (api listening|worker polling)/.test(l.msg)),
        name,
      ).toBe(true);
    }
  });

  it("forwards the Temporal core's logs, the worker's and the workflows' into the worker's log", () => {
    const all = lines(worker.output(), 'worker');
    const components = new Set(all.map((l) => l.component));
    expect([...components]).toEqual(expect.arrayContaining(['core', 'worker', 'cli', 'converter']));
    const core = all.find((l) => l.component === 'core');
    console.log(`core line:   ${JSON.stringify(core)}`);
    expect(core).toMatchObject({ target: expect.any(String) });
  });

  it("logs the caller's mistakes as info lines with the code and the ids, without a stack trace", () => {
    const all = lines(worker.output(), 'worker');
    const broken = all.filter((l) => l.operationId === operations.broken);
    const mistake = broken.find((l) => l.code === 'TEMPLATE_ERROR');
    console.log(`worker line: ${JSON.stringify(mistake)}`);
    expect(mistake).toMatchObject({
      level: 'info',
      workflowId: generateWorkflowId(subscriptionId, operations.broken!),
      subscriptionId,
      operationId: operations.broken,
      reason: expect.stringContaining('never closed'),
    });
    expect(all.filter((l) => 'taskToken' in l)).toEqual([]);
    for (const l of broken) {
      expect(['warn', 'error', 'fatal'], JSON.stringify(l)).not.toContain(l.level);
      expect(JSON.stringify(l), 'no stack trace').not.toMatch(/\bat .+\(.*:\d+:\d+\)|"stack"/);
    }
    // Nothing above info was logged for any of the three requests.
    const ours = new Set(Object.values(operations));
    expect(all.filter((l) => ours.has(l.operationId as string) && ['warn', 'error', 'fatal'].includes(l.level)).map((l) => l.msg)).toEqual(
      [],
    );
    // The Temporal core's start-up warning about the office worker (activities only, by design) is debug.
    expect(all.filter((l) => l.component === 'core' && l.level === 'warn').map((l) => l.msg)).toEqual([]);
  });

  it('gives each request line its operation, subscription and, for an error answer, the code', () => {
    const all = lines(api.output(), 'api');
    const done = (op: string) => all.find((l) => l.operationId === op && l.msg === 'request completed');
    console.log(`api line:    ${JSON.stringify(done(operations.broken!))}`);
    expect(done(operations.ok!)).toMatchObject({ level: 'info', subscriptionId, res: { statusCode: 201 } });
    expect(done(operations.broken!)).toMatchObject({ level: 'info', subscriptionId, code: 'TEMPLATE_ERROR', res: { statusCode: 400 } });
    expect(done(operations.gone!)).toMatchObject({ subscriptionId, code: 'TEMPLATE_NOT_FOUND', res: { statusCode: 400 } });
    // The key of a request sent with ?apiKey= never reaches the log (logSerializers).
    expect(api.output()).not.toContain(setup.env.DATABASE_URL!);
  });
});
