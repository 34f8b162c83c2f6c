// CI's second pass of the integration tests (.ci/run): every stack on PostgreSQL instead of PGlite and on S3
// instead of a directory (DOCGEN_TEST_DATABASE=postgres DOCGEN_TEST_STORAGE=s3). Only the files whose stacks
// those settings change run again: the files that start a stack (test/support/stack.ts `startStack`, the only
// reader of those settings), directly or through another test module. The others (the converter's tests, the
// crash tests and the store's tests that choose PostgreSQL and S3 themselves, the fakes' clients) would run
// exactly what they ran in `npm test`.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import base from '../../vitest.config.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const stack = path.join(root, 'test/support/stack.ts');
const tests = path.join(root, 'test');

/** Relative imports that bring code (not `import type`), resolved to files. */
function importsOf(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  const found: string[] = [];
  for (const m of text.matchAll(/^\s*(?:import|export)\s+(?!type\s)[^'";]*?from\s+'(\.[^']+)'|^\s*import\s+'(\.[^']+)'/gm)) {
    const target = path.resolve(path.dirname(file), m[1] ?? m[2]!);
    if (fs.existsSync(target)) found.push(target);
  }
  return found;
}

const reaches = new Map<string, boolean>();
/** Whether `file`, or a test module it imports, calls startStack (stack.ts only defines it). */
function startsStacks(file: string, seen = new Set<string>()): boolean {
  const known = reaches.get(file);
  if (known !== undefined) return known;
  if (seen.has(file) || file === stack) return false;
  seen.add(file);
  const hit =
    /\bstartStack\(/.test(fs.readFileSync(file, 'utf8')) ||
    importsOf(file).some((f) => f.startsWith(tests + path.sep) && startsStacks(f, seen));
  reaches.set(file, hit);
  return hit;
}

const files = (fs.readdirSync(path.join(root, 'test/integration'), { recursive: true }) as string[])
  .filter((f) => f.endsWith('.test.ts'))
  .map((f) => path.join(root, 'test/integration', f))
  .filter((f) => startsStacks(f))
  .map((f) => path.relative(root, f))
  .sort();

export default defineConfig({
  ...base,
  root,
  test: {
    ...base.test,
    include: files,
  },
});
