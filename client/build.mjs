// Builds the package (npm pack runs it: prepack): the TypeScript sources compiled to dist/ as JavaScript and
// declarations (client/tsconfig.build.json; relative imports rewritten from .ts to .js), with the same
// rewrite in the declarations, which tsc leaves as written, so that any TypeScript version resolves them.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const here = import.meta.dirname;
const dist = path.join(here, 'dist');
fs.rmSync(dist, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
execFileSync(process.execPath, [tsc, '-p', path.join(here, 'tsconfig.build.json')], { stdio: 'inherit' });
const relativeTs = /((?:from|import)\s*\(?\s*['"]\.{1,2}\/[^'"]+)\.ts(['"])/g;
for (const file of fs.readdirSync(dist).filter((f) => f.endsWith('.d.ts'))) {
  const p = path.join(dist, file);
  fs.writeFileSync(p, fs.readFileSync(p, 'utf8').replace(relativeTs, '$1.js$2'));
}
