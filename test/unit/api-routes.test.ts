// The routes as issue 27 asks: handlers typed from their schemas (no cast of request.body, .params or
// .query: a lint rule, eslint.config.js), and the OpenAPI prose beside the schemas (api/schemas/), not in
// the route files.
import fs from 'node:fs';
import path from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
// Only that rule, without type information: it reads the syntax.
const eslint = new ESLint({
  cwd: root,
  overrideConfig: { languageOptions: { parserOptions: { projectService: false } } },
  ruleFilter: ({ ruleId }) => ruleId === 'no-restricted-syntax',
});

const files = (dir: string): string[] =>
  fs
    .readdirSync(path.join(root, dir), { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? files(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []));

async function casts(file: string, text = fs.readFileSync(path.join(root, file), 'utf8')): Promise<string[]> {
  const [result] = await eslint.lintText(text, { filePath: path.join(root, file) });
  return (result?.messages ?? []).map((m) => `${file}:${m.line}: ${m.message}`);
}

describe('API routes', () => {
  it('read request.body, .params and .query as their schemas type them: no cast in api/', async () => {
    const found = (await Promise.all(files('api').map((f) => casts(f)))).flat();
    expect(found).toEqual([]);
  });

  it('the lint refuses such a cast', async () => {
    const file = 'api/routes/storage.ts';
    const text = `${fs.readFileSync(path.join(root, file), 'utf8')}\nexport const f = (request: { params: unknown }) => (request.params as { urn: string }).urn;\n`;
    expect(await casts(file, text)).toHaveLength(1);
    const logical = `${fs.readFileSync(path.join(root, file), 'utf8')}\nexport const g = (request: { body: unknown }) => (request.body ?? {}) as Record<string, unknown>;\n`;
    expect(await casts(file, logical)).toHaveLength(1);
  });

  it('keep the OpenAPI prose (summaries, descriptions) beside the schemas, not in the route files', () => {
    for (const file of files('api/routes')) {
      const text = fs.readFileSync(path.join(root, file), 'utf8');
      expect(text, file).not.toMatch(/\b(summary|description):\s*['"`[]/);
    }
  });
});
