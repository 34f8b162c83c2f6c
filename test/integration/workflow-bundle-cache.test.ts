// The workflow bundle kept between processes (worker/bundle-cache.ts): used again only while every file it was
// made from is unchanged, made again when one changes, and never kept when its files cannot be named. Real
// webpack bundles (the SDK's bundleWorkflowCode), real processes.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { bundleWorkflowCode } from '@temporalio/worker';
import { afterAll, describe, expect, it } from 'vitest';
import { bundledFiles, readCachedBundle, writeCachedBundle } from '../../worker/bundle-cache.ts';

const root = path.resolve(import.meta.dirname, '../..');
const dirs: string[] = [];
const tempDir = (where = os.tmpdir()) => {
  const d = fs.mkdtempSync(path.join(where, 'docgen-bundle-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});
const quiet = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };

describe('the workflow bundle cache', () => {
  it('gives the kept bundle back while its files are unchanged, and not once one of them changes', async () => {
    // A workflows entry inside the project (webpack resolves @temporalio/workflow from its node_modules), with
    // a module of its own.
    const project = tempDir(path.join(root, 'test'));
    const entry = path.join(project, 'index.ts');
    const helper = path.join(project, 'helper.ts');
    fs.writeFileSync(helper, "export const greeting = 'hello';\n");
    fs.writeFileSync(
      entry,
      "import { greeting } from './helper.ts';\nexport async function hello(): Promise<string> {\n  return greeting;\n}\n",
    );
    const { code } = await bundleWorkflowCode({ workflowsPath: entry, logger: quiet });
    expect(code).toContain("'hello'");

    const files = bundledFiles(code, process.cwd());
    expect(files).toEqual(expect.arrayContaining([entry, helper]));
    expect(files!.filter((f) => f.includes('node_modules'))).toEqual([]);

    const cache = tempDir();
    expect(readCachedBundle(cache, entry)).toBeUndefined();
    expect(writeCachedBundle(cache, entry, code, process.cwd())).toBe(true);
    expect(readCachedBundle(cache, entry)).toBe(code);

    // A file it was made from changes: not used; back to what it was: used again (by content, not time).
    fs.writeFileSync(helper, "export const greeting = 'bonjour';\n");
    expect(readCachedBundle(cache, entry)).toBeUndefined();
    fs.writeFileSync(helper, "export const greeting = 'hello';\n");
    expect(readCachedBundle(cache, entry)).toBe(code);

    // The kept code altered on disk (or half of a concurrent write): not used.
    const kept = fs.readdirSync(cache).find((f) => f.endsWith('.js'))!;
    fs.appendFileSync(path.join(cache, kept), '\n// changed\n');
    expect(readCachedBundle(cache, entry)).toBeUndefined();

    // A bundle whose module ids do not name files here is not kept.
    expect(
      bundledFiles(code.replace('./helper.ts', './gone.ts').replaceAll(path.relative(process.cwd(), helper), 'gone.ts'), process.cwd()),
    ).toBeUndefined();
    expect(writeCachedBundle(tempDir(), entry, 'no module ids here', process.cwd())).toBe(false);
  });

  it("a worker process bundles docgen's workflows once; the next process reads them from the cache", async () => {
    const cache = tempDir();
    // A script of its own (the bundler's process takes this one's node flags: no `-e`).
    const script = path.join(tempDir(), 'bundle.mjs');
    fs.writeFileSync(
      script,
      [
        "import { createHash } from 'node:crypto';",
        `import { configureWorkflowBundleCache, workflowBundle } from ${JSON.stringify(pathToFileURL(path.join(root, 'worker', 'index.ts')).href)};`,
        'configureWorkflowBundleCache(process.env.CACHE);',
        'const { code } = await workflowBundle();',
        "process.stdout.write(createHash('sha256').update(code).digest('hex'));",
      ].join('\n'),
    );
    const run = async () =>
      (await promisify(execFile)(process.execPath, ['--import', 'tsx', script], { cwd: root, env: { ...process.env, CACHE: cache } }))
        .stdout;

    const first = await run();
    const manifest = fs.readdirSync(cache).find((f) => f.endsWith('.json'))!;
    const written = fs.statSync(path.join(cache, manifest)).mtimeMs;
    const { files } = JSON.parse(fs.readFileSync(path.join(cache, manifest), 'utf8')) as { files: string[] };
    expect(files).toEqual(expect.arrayContaining([path.join(root, 'workflows', 'index.ts'), path.join(root, 'core', 'run.ts')]));

    // The second process gets the same code without writing the cache again (a miss rewrites it).
    const second = await run();
    expect(second).toBe(first);
    expect(fs.statSync(path.join(cache, manifest)).mtimeMs).toBe(written);
    const code = fs.readFileSync(path.join(cache, manifest.replace(/\.json$/, '.js')), 'utf8');
    expect(createHash('sha256').update(code).digest('hex')).toBe(first);
  });
});
