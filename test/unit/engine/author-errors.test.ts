import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { inspect, render, TemplateError } from '../../support/engine.ts';
import { docx, p, row, xlsxBook } from './helpers.ts';

// Problems are reported where the author can find them: sheet and cell in a workbook, and the CLI
// lists every problem, not only the first.

const run = promisify(execFile);
// The CLI runs TypeScript through Node 24's type stripping; `npm ci` puts Node 24 in node_modules.
const NODE = join(process.cwd(), 'node_modules', '.bin', 'node');

function workbook(): Uint8Array {
  return xlsxBook({
    strings: ['ok', '{#items}{name}', '{a +}', '{missing}'],
    sheets: [
      { name: 'Intro', rows: row(1, [['A1', 's:0']]) },
      { name: 'Sales Data', rows: row(1, [['A1', 's:0']]) + row(2, [['B2', 's:1']]) + row(3, [['C3', 's:2']]) + row(7, [['D7', 's:3']]) },
    ],
  });
}

async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await run(NODE, ['cli/docgen.mjs', ...args], { cwd: process.cwd() });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

describe('errors a template author can act on', () => {
  it('spreadsheet problems name the sheet and the cell', async () => {
    const result = inspect(workbook());
    expect(result.errors.map((e) => [e.id, e.location?.sheet, e.location?.cell, e.location?.paragraph])).toEqual([
      ['unclosed_loop', 'Sales Data', 'B2', undefined],
      ['expression_syntax', 'Sales Data', 'C3', undefined],
    ]);
    const fixed = xlsxBook({
      strings: ['{missing}'],
      sheets: [
        { name: 'Intro', rows: row(1, [['A1', 's:0']]) },
        { name: 'Totals', rows: row(4, [['D4', 's:0']]) },
      ],
    });
    const err = await render(fixed, {}, { strict: true }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TemplateError);
    expect((err as TemplateError).errors.map((e) => e.location)).toEqual([
      { part: 'xl/worksheets/sheet1.xml', sheet: 'Intro', cell: 'A1', offset: 0 },
      { part: 'xl/worksheets/sheet2.xml', sheet: 'Totals', cell: 'D4', offset: 0 },
    ]);
  });

  it(
    'docgen render and docgen inspect print every problem with its location',
    async () => {
      const dir = await mkdtemp(join(tmpdir(), 'docgen-engine-cli-'));
      try {
        await writeFile(join(dir, 'book.xlsx'), workbook());
        await writeFile(join(dir, 'letter.docx'), docx(p('Dear {name}') + p('{#a}') + p('{b | nope}') + p('{c +}')));
        await writeFile(join(dir, 'data.json'), '{"name":"Ada"}');

        const r = await cli([
          'render',
          '--template',
          join(dir, 'letter.docx'),
          '--data',
          join(dir, 'data.json'),
          '--out',
          join(dir, 'out.docx'),
        ]);
        expect(r.code).toBe(1);
        expect(r.stderr).toContain('cannot be rendered (3 problems)');
        expect(r.stderr).toContain('word/document.xml, paragraph 2: loop "#a" is never closed [unclosed_loop]');
        expect(r.stderr).toContain('word/document.xml, paragraph 3: unknown filter "nope"');
        expect(r.stderr).toMatch(/word\/document\.xml, paragraph 4: .* \[expression_syntax\]/);

        // Tags left empty for want of data are named, with inspect's locations; --strict refuses them.
        await writeFile(join(dir, 'hello.docx'), docx(p('Hello {customer}, your rep is {rep}.')));
        const w = await cli([
          'render',
          '--template',
          join(dir, 'hello.docx'),
          '--data',
          join(dir, 'data.json'),
          '--out',
          join(dir, 'hello-out.docx'),
        ]);
        expect(w.code).toBe(0);
        expect(w.stderr).toContain('docgen: 2 tags rendered empty, the data has no value');
        expect(w.stderr).toContain(
          '  word/document.xml, paragraph 1: no value for tag "customer"\n  word/document.xml, paragraph 1: no value for tag "rep"',
        );
        const strict = await cli([
          'render',
          '--strict',
          '--template',
          join(dir, 'hello.docx'),
          '--data',
          join(dir, 'data.json'),
          '--out',
          join(dir, 'strict.docx'),
        ]);
        expect(strict.code).toBe(1);
        expect(strict.stderr).toContain('cannot be rendered (2 problems)');
        expect(strict.stderr).toContain('word/document.xml, paragraph 1: no value for tag "rep" [missing_value]');
        expect(existsSync(join(dir, 'strict.docx'))).toBe(false);
        // --out names the kind written: a .pdf would hold a Word document.
        const pdf = await cli([
          'render',
          '--template',
          join(dir, 'hello.docx'),
          '--data',
          join(dir, 'data.json'),
          '--out',
          join(dir, 'hello.pdf'),
        ]);
        expect(pdf.code).toBe(1);
        expect(pdf.stderr).toContain("render writes docx, the template's kind;");
        expect(pdf.stderr).toContain('docgen generate --template');
        expect(existsSync(join(dir, 'hello.pdf'))).toBe(false);

        const i = await cli(['inspect', join(dir, 'book.xlsx')]);
        expect(i.code).toBe(1);
        expect((JSON.parse(i.stdout) as { errors: unknown[] }).errors).toHaveLength(2);
        expect(i.stderr).toContain('has template problems (2 problems)');
        expect(i.stderr).toContain('sheet "Sales Data", cell B2: loop "#items" is never closed [unclosed_loop]');
        expect(i.stderr).toMatch(/sheet "Sales Data", cell C3: .* \[expression_syntax\]/);

        // --schema: the JSON Schema of the data (the problems still on stderr); --sample: data made from it.
        const s = await cli(['inspect', '--schema', join(dir, 'hello.docx')]);
        expect(s.code).toBe(0);
        expect(JSON.parse(s.stdout)).toMatchObject({
          $schema: 'https://json-schema.org/draft/2020-12/schema',
          type: 'object',
          required: ['customer', 'rep'],
        });
        const d = await cli(['inspect', '--sample', join(dir, 'hello.docx')]);
        expect(Object.keys(JSON.parse(d.stdout) as object)).toEqual(['customer', 'rep']);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
      // Eight runs of the CLI, each a Node start that compiles the engine (seconds; tens of seconds on a
      // loaded machine): bounded by what it waits for, not by the default 60 s.
    },
    8 * 45_000,
  );
});
