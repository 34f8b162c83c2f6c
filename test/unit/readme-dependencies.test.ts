// The "Dependencies" table (docs/dependencies.md) against package.json: what it says is used is a dependency, what it
// says is not used is neither a dependency nor a development dependency.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '..', '..');
const readme = fs.readFileSync(path.join(root, 'docs', 'dependencies.md'), 'utf8');
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

describe('README: Dependencies', () => {
  const table = /<!-{2} dependencies:start -{2}>\n([\s\S]*?)\n<!-{2} dependencies:end -{2}>/.exec(readme)?.[1] ?? '';
  const rows = table
    .split('\n')
    .slice(2)
    .map((row) =>
      row
        .split('|')
        .slice(1, -1)
        .map((c) => c.trim()),
    )
    .map(([names, used, why]) => ({ names: [...names!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!), used: used!, why: why! }));

  it('accounts for each package of the design card, with a reason', () => {
    const named = rows.flatMap((r) => r.names);
    expect(named).toEqual(
      expect.arrayContaining(['carbone', 'exceljs', 'pdf-lib', 'googleapis', '@microsoft/microsoft-graph-client', 'pino']),
    );
    for (const r of rows) {
      expect(['yes', 'no'], r.names.join()).toContain(r.used);
      expect(r.why.length, r.names.join()).toBeGreaterThan(30);
    }
  });

  it('says "used" of dependencies only, and "not used" of packages the project does not depend on', () => {
    for (const r of rows) {
      for (const name of r.names) {
        if (r.used === 'yes') expect(pkg.dependencies[name], `${name} is a dependency`).toBeDefined();
        else
          expect({ dep: pkg.dependencies[name], dev: pkg.devDependencies[name] }, `${name} is not installed by package.json`).toEqual({
            dep: undefined,
            dev: undefined,
          });
      }
    }
  });
});
