// The README's promises that code can check: the configuration table is the config schema's, and the
// quick start names the commands package.json defines.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { configMarkdown } from '../../config/env.ts';

const root = path.resolve(import.meta.dirname, '..', '..');
const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string>; bin: Record<string, string> };

describe('README', () => {
  it('carries the configuration table generated from config/env.ts (npx docgen config --markdown)', () => {
    const table = /<!-- config-table:start -->\n([\s\S]*?)\n<!-- config-table:end -->/.exec(readme)?.[1];
    expect(table).toBe(configMarkdown());
  });

  it('quick start uses scripts that exist', () => {
    expect(readme).toContain('npm ci && npm start');
    expect(readme).toContain('npm test');
    expect(pkg.scripts.start).toContain('start');
    expect(pkg.scripts.test).toBeTruthy();
    expect(pkg.bin.docgen).toBeTruthy();
  });
});
