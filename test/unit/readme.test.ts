// The README's promises that code can check: the configuration table is the config schema's, and the
// quick start names the commands package.json defines.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { configMarkdown } from '../../config/env.ts';

const root = path.resolve(import.meta.dirname, '..', '..');
const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
const configuration = fs.readFileSync(path.join(root, 'docs', 'configuration.md'), 'utf8');
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
  scripts: Record<string, string>;
  bin: Record<string, string>;
};

describe('README', () => {
  it('docs/configuration.md carries the configuration table generated from config/env.ts (npx docgen config --markdown)', () => {
    const table = /<!-- config-table:start -->\n([\s\S]*?)\n<!-- config-table:end -->/.exec(configuration)?.[1];
    expect(table).toBe(configMarkdown());
  });

  it('quick start uses scripts that exist', () => {
    expect(readme).toContain('npm ci && npm start');
    expect(readme).toContain('npm test');
    expect(pkg.scripts.start).toContain('start');
    expect(pkg.scripts.test).toBeTruthy();
    expect(pkg.bin.docgen).toBeTruthy();
  });

  it('stays a page a newcomer reads in minutes, and every local link of it, ARCHITECTURE.md and the docs resolves', () => {
    expect(readme.split('\n').length).toBeLessThanOrEqual(260);
    const pages = (dir: string) =>
      fs
        .readdirSync(path.join(root, dir))
        .filter((f) => f.endsWith('.md'))
        .map((f) => `${dir}/${f}`);
    for (const page of ['README.md', 'ARCHITECTURE.md', ...pages('docs'), ...pages('docs/decisions')]) {
      // Links only: not what code spans and blocks show.
      const text = fs
        .readFileSync(path.join(root, page), 'utf8')
        .replace(/```[\s\S]*?```/g, '')
        .replace(/`[^`\n]*`/g, '');
      for (const m of text.matchAll(/\]\(([^)\s#]+)(#[^)\s]*)?\)/g)) {
        const target = m[1]!;
        if (/^(https?|mailto):/.test(target)) continue;
        expect(fs.existsSync(path.resolve(root, path.dirname(page), target)), `${page} links to ${target}`).toBe(true);
      }
    }
  });
});
