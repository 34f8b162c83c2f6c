// The SDK as a backend outside this repository gets it (issue 32): `npm pack` of client/, installed from the
// tarball into a fresh project in a temporary directory with its own TypeScript and @types/node, type-checked
// with a strict tsconfig such a project has (nothing of the service's sources, so none of their errors), then
// run against the service: upload, generate, download, a typed error; the unions of the API refuse a wrong
// format or method at compile time; a client without baseUrl says so.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Credentials } from '../../../api/auth/credentials.ts';
import { docxParagraphs, makeDocx } from '../../support/office.ts';
import { type Stack, startStack } from '../../support/stack.ts';

const root = path.resolve(import.meta.dirname, '../../..');
const rootPackage = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> };

/** Runs a command without blocking this process, which serves the API the command may call. */
function run(
  cmd: string,
  args: string[],
  cwd: string,
  env: Record<string, string> = {},
): Promise<{ status: number | null; out: string; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], timeout: 300_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, out: `${stdout}${stderr}`, stdout }));
  });
}

/** What a backend writes with the SDK. The @ts-expect-error lines fail the compilation unless the SDK's
 *  types refuse them: fileFormat, loadMethod and deliveryMethod are the API's unions, not strings. */
const CONSUMER = `import fs from 'node:fs';
import { DocgenClient, ValidationError, verifyCallback, type DeliveryMethod, type FileFormat, type GenerateRequest, type GenerateResponse } from '@docgen/client';

const docgen = new DocgenClient({ baseUrl: process.env.DOCGEN_URL!, apiKey: process.env.DOCGEN_API_KEY!, accessToken: process.env.DOCGEN_TOKEN!, retries: 1 });

const format: FileFormat = 'docx';
const to: DeliveryMethod = 'Storage';
// @ts-expect-error not a format of the API
const wrongFormat: FileFormat = 'docz';
// @ts-expect-error not a location of the API
const wrongMethod: DeliveryMethod = 'Dropbox';
const wrongLoad: GenerateRequest['data'] = {
  urn: 'x',
  // @ts-expect-error not a data load method of the API
  loadMethod: 'S3',
};
void [wrongFormat, wrongMethod, wrongLoad];

const [template] = await docgen.uploads.templates([{ name: 'letter.docx', content: fs.readFileSync(process.env.TEMPLATE_FILE!) }]);
const [data] = await docgen.uploads.data([{ name: 'letter.json', content: JSON.stringify({ name: 'Consumer' }) }]);
if (!template || !data) throw new Error('no upload ids');
const request: GenerateRequest = {
  template: { urn: template.id, loadMethod: 'Storage', fileFormat: 'docx' },
  data: { urn: data.id, loadMethod: 'Storage' },
  document: { name: 'letter', fileFormat: format, deliveryMethod: to, path: 'root', timezone: 'Europe/Paris', locale: 'fr-FR' },
  externalContext: { order: 42 },
};
const res: GenerateResponse = await docgen.generation.generate(request, { idempotencyKey: crypto.randomUUID() });
const file = await docgen.storage.download(res.result.data.document.urn);
fs.writeFileSync(process.env.OUT_FILE!, file.bytes);

let code = '';
try {
  await docgen.generation.generate({ ...request, template: { urn: '00000000-0000-4000-8000-000000000000', loadMethod: 'Storage', fileFormat: 'docx' } });
} catch (err) {
  if (err instanceof ValidationError) code = err.code;
}
let missing = '';
try {
  new DocgenClient({ apiKey: 'k', accessToken: 't' } as unknown as ConstructorParameters<typeof DocgenClient>[0]);
} catch (err) {
  missing = (err as Error).message;
}
console.log(JSON.stringify({
  fileFormat: res.result.data.document.fileFormat,
  consumption: res.consumption,
  externalContext: res.externalContext,
  fileName: file.fileName,
  code,
  missing,
  verify: typeof verifyCallback,
}));
`;

/** A backend's own tsconfig: strict and then some, declaration files checked too. */
const TSCONFIG = {
  compilerOptions: {
    target: 'es2022',
    lib: ['es2022'],
    module: 'nodenext',
    moduleResolution: 'nodenext',
    types: ['node'],
    strict: true,
    exactOptionalPropertyTypes: true,
    noUncheckedIndexedAccess: true,
    noImplicitReturns: true,
    skipLibCheck: false,
    rootDir: 'src',
    outDir: 'dist',
  },
  include: ['src'],
};

describe('the SDK as a package (client/package.json)', () => {
  let stack: Stack;
  let creds: Credentials;
  let work: string;
  let consumer: string;

  beforeAll(async () => {
    stack = await startStack();
    creds = await stack.credentials();
    // Outside the repository: nothing of it can be found by walking up from there.
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-sdk-consumer-'));
    consumer = path.join(work, 'backend');
    fs.mkdirSync(path.join(consumer, 'src'), { recursive: true });
  }, 240_000);
  afterAll(async () => {
    await stack?.stop();
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  it('packs, installs from the tarball into a fresh project, type-checks strictly and runs against the service', async () => {
    const packed = await run('npm', ['pack', '--json', '--pack-destination', work], path.join(root, 'client'));
    expect(packed.status, packed.out).toBe(0);
    const [info] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as {
      filename: string;
      name: string;
      files: { path: string }[];
    }[];
    expect(info!.name).toBe('@docgen/client');
    const files = info!.files.map((f) => f.path).sort();
    expect(files).toContain('dist/index.js');
    expect(files).toContain('dist/index.d.ts');
    expect(files).toContain('README.md');
    // Only the built package: no TypeScript sources of the SDK, nothing of the service.
    expect(files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))).toEqual([]);

    fs.writeFileSync(
      path.join(consumer, 'package.json'),
      JSON.stringify({
        name: 'backend',
        private: true,
        type: 'module',
        dependencies: { '@docgen/client': `file:${path.join(work, info!.filename)}` },
        devDependencies: { typescript: rootPackage.devDependencies.typescript, '@types/node': rootPackage.devDependencies['@types/node'] },
      }),
    );
    const installed = await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts'], consumer);
    expect(installed.status, installed.out).toBe(0);
    fs.writeFileSync(path.join(consumer, 'tsconfig.json'), JSON.stringify(TSCONFIG, null, 2));
    fs.writeFileSync(path.join(consumer, 'src', 'main.ts'), CONSUMER);
    const tsc = await run(process.execPath, [path.join(consumer, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', consumer], consumer);
    expect(tsc.out).toBe('');
    expect(tsc.status).toBe(0);

    fs.writeFileSync(path.join(work, 'letter.docx'), makeDocx(['Bonjour {name}']));
    const out = path.join(work, 'letter-out.docx');
    const ran = await run(process.execPath, [path.join(consumer, 'dist', 'main.js')], consumer, {
      DOCGEN_URL: creds.baseUrl,
      DOCGEN_API_KEY: creds.apiKey,
      DOCGEN_TOKEN: creds.accessToken,
      TEMPLATE_FILE: path.join(work, 'letter.docx'),
      OUT_FILE: out,
    });
    expect(ran.status, ran.out).toBe(0);
    const result = JSON.parse(ran.stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
    expect(result).toMatchObject({
      fileFormat: 'docx',
      externalContext: { order: 42 },
      fileName: 'letter.docx',
      code: 'TEMPLATE_NOT_FOUND',
      verify: 'function',
    });
    expect(result.consumption).toEqual([
      { dimension: 'pages-generated', value: 1 },
      { dimension: 'documents-generated', value: 1 },
    ]);
    expect(String(result.missing)).toMatch(/^DocgenClient: baseUrl is required/);
    expect(docxParagraphs(fs.readFileSync(out))).toEqual(['Bonjour Consumer']);
  }, 600_000);
});
