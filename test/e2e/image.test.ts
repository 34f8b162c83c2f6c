// The images, without a Docker engine: the Dockerfile is read, each target's /app tree is laid out in a
// temporary directory with exactly what the target copies (the build context filtered by .dockerignore, and
// the deps stage's `npm ci --omit=dev` + prune, run here from npm's cache), and the targets' commands run
// from there against the test stack (Temporal dev server, PostgreSQL, S3): each answers its own HEALTHCHECK,
// the API's /v1/ready is 200, and a docx -> pdf generate through the two succeeds.
// The image's Node is this test's Node 24 (process.execPath), run with no environment but the image's ENV
// and the deployment's settings, and no node_modules above the tree to fall back on.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Credentials } from '../../api/auth/credentials.ts';
import { freePort } from '../../cli/temporal-dev.ts';
import { lastOf, type Materialised, materialise, parseDockerfile, stageEnv, words } from '../support/dockerfile.ts';
import { repoRoot } from '../support/docgen-start.ts';
import { client } from '../support/http.ts';
import { makeDocx } from '../support/office.ts';
import { s3Env, s3Settings } from '../support/s3.ts';
import { createPgDatabase } from '../support/stack.ts';

const run = promisify(execFile);
const dockerfile = fs.readFileSync(path.join(repoRoot, 'Dockerfile'), 'utf8');
const stages = parseDockerfile(dockerfile);
const TARGETS = ['api', 'worker'];

/** RUN commands that set up the system the image runs on, not its /app tree: not run here (CI installs the
 *  same LibreOffice with .ci/install-converter.sh), and `npm cache clean`, which would empty this machine's
 *  cache. Any other command must be npm or node work on the tree, which runs here. */
const SYSTEM_STEPS = [
  /^mkdir -p \/var\/lib\/docgen$/,
  /^chown node:node \/var\/lib\/docgen$/,
  /^bash \/tmp\/install-converter\.sh$/,
  /^rm -rf \/var\/lib\/apt\/lists\/\* \/tmp\/install-converter\.sh$/,
  /^npm cache clean --force$/,
];

function classifyRun(command: string): { run: string } | 'skip' {
  if (SYSTEM_STEPS.some((re) => re.test(command))) return 'skip';
  // npm's cache is warm after the repository's own `npm ci`: prefer it to the registry.
  if (/^npm ci\b/.test(command)) return { run: `${command} --prefer-offline` };
  if (/^(npm|node) /.test(command)) return { run: command };
  throw new Error(`RUN ${command}: not classified; say in test/e2e/image.test.ts whether it sets up the system or the tree`);
}

/** Apparent size of a tree in MB. */
function sizeMb(dir: string): number {
  let n = 0;
  const walk = (p: string) => {
    const st = fs.lstatSync(p);
    if (st.isDirectory()) for (const e of fs.readdirSync(p)) walk(path.join(p, e));
    else n += st.size;
  };
  walk(dir);
  return Math.round(n / 1e6);
}

interface Running {
  target: string;
  env: NodeJS.ProcessEnv;
  child: ChildProcess;
  output: () => string;
}

describe('the images (Dockerfile targets api and worker), laid out and run without Docker', () => {
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-image-'));
  let trees: Map<string, Materialised>;
  const running = new Map<string, Running>();
  let env: Record<string, string>;

  beforeAll(async () => {
    const t0 = Date.now();
    trees = materialise(dockerfile, TARGETS, {
      context: repoRoot,
      workDir: path.join(workDir, 'stages'),
      classifyRun,
      // npm and node of the build are this Node 24, as in the image's base.
      runEnv: { ...process.env, PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}` },
    });
    console.log(`image: trees laid out in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    // The deployment's settings (as docker-compose.yml sets them), pointed at the test stack.
    env = {
      DATABASE_URL: await createPgDatabase(),
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_TASK_QUEUE: `image-${randomUUID()}`,
      ...s3Env(await s3Settings()),
      LOG_LEVEL: 'info',
    };
  }, 600_000);

  afterAll(async () => {
    for (const r of running.values()) {
      if (r.child.exitCode === null && r.child.signalCode === null) {
        const exited = new Promise((res) => r.child.once('exit', res));
        r.child.kill('SIGTERM');
        const timer = setTimeout(() => r.child.kill('SIGKILL'), 60_000);
        await exited;
        clearTimeout(timer);
      }
    }
    fs.rmSync(workDir, { recursive: true, force: true });
  }, 120_000);

  it('copies every folder the service loads, and only system set-up is left out', () => {
    for (const target of TARGETS) {
      const tree = trees.get(target)!;
      const folders = [...new Set(tree.contextFiles.map((f) => f.split('/')[0]))].sort();
      console.log(
        `image ${target}: ${tree.contextFiles.length} files from the context (${folders.join(', ')}), node_modules ${sizeMb(path.join(tree.dir, 'node_modules'))} MB`,
      );
      console.log(`image ${target}: not run here: ${tree.skipped.join(' | ')}`);
      expect(fs.existsSync(path.join(tree.dir, 'cli', 'docgen.mjs'))).toBe(true);
      // Nothing a test, benchmark or the repository's tooling needs rides along.
      expect(folders.filter((f) => ['test', 'bench', '.git', '.docgen', 'node_modules', 'docs'].includes(f!))).toEqual([]);
    }
  });

  /** Starts a target's CMD from its tree with the image's ENV and the deployment's settings. */
  async function start(target: string): Promise<Running> {
    const tree = trees.get(target)!;
    const [cmd, ...args] = words(lastOf(stages, target, 'CMD') ?? '');
    expect(cmd).toBe('node');
    const targetEnv: NodeJS.ProcessEnv = {
      PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
      HOME: path.join(workDir, `home-${target}`),
      ...stageEnv(stages, target),
      ...env,
      // Loopback only on this machine; the image listens on 0.0.0.0.
      HOST: '127.0.0.1',
      METRICS_HOST: '127.0.0.1',
      PORT: String(await freePort()),
      METRICS_PORT: String(await freePort()),
      DOCGEN_DATA_DIR: path.join(workDir, `data-${target}`),
    };
    fs.mkdirSync(targetEnv.HOME!, { recursive: true });
    const child = spawn(process.execPath, args, { cwd: tree.dir, env: targetEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
    const r = { target, env: targetEnv, child, output: () => out };
    running.set(target, r);
    return r;
  }

  /** Runs the target's HEALTHCHECK command until it passes (as Docker would, every second here). */
  async function healthy(r: Running): Promise<number> {
    const check = lastOf(stages, r.target, 'HEALTHCHECK') ?? '';
    const [cmd, ...args] = words(check.slice(check.indexOf('CMD ') + 4));
    expect(cmd).toBe('node');
    const t0 = Date.now();
    for (;;) {
      const ok = await run(process.execPath, args, { env: r.env, cwd: trees.get(r.target)!.dir, timeout: 15_000 }).then(
        () => true,
        () => false,
      );
      if (ok) return (Date.now() - t0) / 1000;
      if (r.child.exitCode !== null || r.child.signalCode !== null)
        throw new Error(`docgen ${r.target} exited (${r.child.exitCode ?? r.child.signalCode}):\n${r.output()}`);
      if (Date.now() - t0 > 240_000) throw new Error(`docgen ${r.target} was not healthy in time:\n${r.output()}`);
      await new Promise((res) => setTimeout(res, 1_000));
    }
  }

  it('starts docgen worker and docgen api from the trees; each passes its HEALTHCHECK', { timeout: 600_000 }, async () => {
    const worker = await start('worker');
    const api = await start('api');
    const [workerS, apiS] = await Promise.all([healthy(worker), healthy(api)]);
    console.log(`image: worker healthy after ${workerS.toFixed(1)} s, api (/v1/ready 200) after ${apiS.toFixed(1)} s`);
    const ready = await fetch(`http://127.0.0.1:${api.env.PORT}/v1/ready`);
    expect(ready.status).toBe(200);
  });

  it('generates a docx template to pdf through the two', { timeout: 240_000 }, async () => {
    const api = running.get('api')!;
    // Development credentials as the README's compose section makes them: `docgen credentials` in the api image.
    const { stdout } = await run(process.execPath, ['cli/docgen.mjs', 'credentials', '--json'], {
      cwd: trees.get('api')!.dir,
      env: api.env,
    });
    const creds = JSON.parse(stdout) as Credentials;
    const sdk = client({ ...creds, baseUrl: `http://127.0.0.1:${api.env.PORT}/v1` });
    const t = await sdk.upload('template', [{ name: 'letter.docx', bytes: makeDocx(['Dear {name},', 'your order {order} has shipped.']) }]);
    const d = await sdk.upload('data', [{ name: 'letter.json', bytes: JSON.stringify({ name: 'Ada', order: 'A-17' }) }]);
    const gen = await sdk.call('POST', '/documents/document/generate', {
      json: {
        template: { urn: t.body.result.data.files[0].id, loadMethod: 'Storage', fileFormat: 'docx' },
        data: { urn: d.body.result.data.files[0].id, loadMethod: 'Storage' },
        document: { name: 'letter', fileFormat: 'pdf', deliveryMethod: 'Storage', path: 'root', timezone: 'UTC', locale: 'en-GB' },
      },
    });
    expect(gen.status, `${JSON.stringify(gen.body)}\n${running.get('worker')!.output()}`).toBe(201);
    const file = await sdk.download(gen.body.result.data.document.urn);
    expect(Buffer.from(file.bytes.subarray(0, 5)).toString('latin1')).toBe('%PDF-');
    console.log(
      `image: generate docx -> pdf ${gen.status}, ${file.bytes.byteLength} bytes, pages-generated ${JSON.stringify(gen.body.consumption)}`,
    );
  });
});
