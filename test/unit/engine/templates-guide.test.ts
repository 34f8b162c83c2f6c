// docs/templates.md, the template authors' guide, never drifts from the engine: every example in it is
// rendered here and its output must be what the guide shows. Two forms (test/support/guide-docs.ts has
// the notation of documents as text):
//   <!-- examples: kind=docx locale=de-DE -->   then a table | Template | Data | Output | (Notes |): one
//                                               paragraph each; several output paragraphs join with <br>
//   <!-- example: kind=xlsx -->                 then ```template (name=...)``` blocks (a named one is a
//                                               related template for {>name}), a ```data``` block and
//                                               an ```output``` block
// After an intended change of the engine, regenerate the outputs (and read the diff):
//   UPDATE_TEMPLATE_GUIDE=1 npx vitest run test/unit/engine/templates-guide.test.ts
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { describeLocation, render, type RenderOptions, TemplateError } from '../../../engine/index.ts';
import { docxFrom, docxText, pptxFrom, pptxText, xlsxFrom, xlsxText } from '../../support/guide-docs.ts';

const GUIDE = path.resolve(import.meta.dirname, '../../../docs/templates.md');
const UPDATE = process.env.UPDATE_TEMPLATE_GUIDE === '1';

type Kind = 'docx' | 'pptx' | 'xlsx';
const BUILD: Record<Kind, (text: string) => Uint8Array> = { docx: docxFrom, pptx: pptxFrom, xlsx: xlsxFrom };
const READ: Record<Kind, (bytes: Uint8Array) => string> = { docx: docxText, pptx: pptxText, xlsx: xlsxText };

interface Example {
  /** Where in the guide, for messages: line number and the template. */
  where: string;
  kind: Kind;
  options: RenderOptions;
  template: string;
  related: Record<string, string>;
  data: unknown;
  output: string;
  /** Form A: one table row, output joined with <br>. */
  inline: boolean;
  /** Writes a new output into the guide's lines. */
  rewrite(lines: string[], output: string): void;
}

function attrs(text: string): { kind: Kind; options: RenderOptions } {
  const a = Object.fromEntries([...text.matchAll(/(\w+)=(\S+)/g)].map((m) => [m[1]!, m[2]!]));
  const options: RenderOptions = {};
  if (a.locale) options.locale = a.locale;
  if (a.timezone) options.timezone = a.timezone;
  if (a.strict) options.strict = a.strict === 'true';
  if (a.paragraphLoop) options.paragraphLoop = a.paragraphLoop === 'true';
  if (a.delimiters) {
    const [start, end] = a.delimiters.split(',');
    options.delimiters = { start: start!, end: end! };
  }
  return { kind: (a.kind ?? 'docx') as Kind, options };
}

/** A table cell's code span, with the pipes Markdown needs escaped inside tables unescaped. */
function code(cell: string, where: string): string {
  const m = /^`(.*)`$/.exec(cell.trim());
  if (!m) throw new Error(`${where}: expected a \`code\` cell, got ${cell}`);
  return m[1]!.replace(/\\\|/g, '|');
}
const cellOf = (text: string) => `\`${text.replace(/\|/g, '\\|')}\``;

function parseGuide(lines: string[]): Example[] {
  const examples: Example[] = [];
  for (let i = 0; i < lines.length; i++) {
    const table = /^<!-- examples:?(.*)-->$/.exec(lines[i]!);
    if (table) {
      const { kind, options } = attrs(table[1]!);
      let j = i + 1;
      while (lines[j] === '') j++;
      if (!/^\| Template \| Data \| Output \|/.test(lines[j] ?? ''))
        throw new Error(`line ${j + 1}: an examples table starts with | Template | Data | Output |`);
      for (j += 2; lines[j]?.startsWith('|'); j++) {
        const row = j;
        const cells = lines[j]!.slice(1, -1).split(/(?<!\\)\|/);
        const where = `docs/templates.md:${row + 1}`;
        const output = code(cells[2]!, where);
        examples.push({
          where: `${where} ${cells[0]!.trim()}`,
          kind,
          options,
          template: code(cells[0]!, where).split('<br>').join('\n'),
          related: {},
          data: JSON.parse(code(cells[1]!, where) || '{}'),
          output: output === '(empty)' ? '' : output,
          inline: true,
          rewrite(all, out) {
            const c = all[row]!.slice(1, -1).split(/(?<!\\)\|/);
            c[2] = ` ${out === '' ? '`(empty)`' : cellOf(out)} `;
            all[row] = `|${c.join('|')}|`;
          },
        });
      }
      i = j - 1;
      continue;
    }
    const block = /^<!-- example:?(.*)-->$/.exec(lines[i]!);
    if (!block) continue;
    const { kind, options } = attrs(block[1]!);
    const fences: { info: string; text: string; from: number; to: number }[] = [];
    let j = i + 1;
    while (j < lines.length && !fences.some((f) => f.info === 'output')) {
      const open = /^```(\w+)(.*)$/.exec(lines[j]!);
      if (open) {
        const from = j + 1;
        let to = from;
        while (lines[to] !== '```') to++;
        fences.push({ info: open[1]!, text: lines.slice(from, to).join('\n'), from, to });
        j = to;
      } else if (lines[j]!.startsWith('<!-- example')) break;
      j++;
      if (fences.length > 0 && fences.at(-1)!.info !== 'output' && j - fences.at(-1)!.to > 20) break;
    }
    const templates = fences.filter((f) => f.info === 'template');
    const output = fences.find((f) => f.info === 'output');
    const where = `docs/templates.md:${i + 1}`;
    if (templates.length === 0 || !output) throw new Error(`${where}: an example needs a template block and an output block`);
    const named = (f: (typeof fences)[number]) => /name=(\S+)/.exec(lines[f.from - 1]!)?.[1];
    const main = templates.find((f) => !named(f))!;
    const data = fences.find((f) => f.info === 'data');
    examples.push({
      where,
      kind,
      options,
      template: main.text,
      related: Object.fromEntries(templates.filter((f) => named(f)).map((f) => [named(f)!, f.text])),
      data: data ? JSON.parse(data.text) : {},
      output: output.text,
      inline: false,
      rewrite(all, out) {
        all.splice(output.from, output.to - output.from, ...out.split('\n'));
      },
    });
    i = j - 1;
  }
  return examples;
}

/** What the engine makes of an example, in the guide's notation; template errors as `docgen render` lists them. */
async function rendered(e: Example): Promise<string> {
  try {
    const relatedItems = Object.fromEntries(Object.entries(e.related).map(([name, text]) => [name, BUILD[e.kind](text)]));
    const out = await render(BUILD[e.kind](e.template), e.data, {
      ...e.options,
      ...(Object.keys(relatedItems).length > 0 ? { relatedItems } : {}),
    });
    const text = READ[e.kind](out);
    return e.inline ? text.split('\n').join('<br>') : text;
  } catch (err) {
    if (!(err instanceof TemplateError)) throw err;
    return err.errors.map((x) => `${describeLocation(x.location)}: ${x.message} [${x.id}]`).join(e.inline ? '<br>' : '\n');
  }
}

describe('docs/templates.md', () => {
  const lines = fs.readFileSync(GUIDE, 'utf8').split('\n');
  const examples = parseGuide(lines);

  it('has an example of every tag and filter', () => {
    const all = examples.map((e) => `${e.template}\n${Object.values(e.related).join('\n')}`).join('\n');
    for (const tag of ['{#', '{/', '{^', '{$index', '{%', '{%%', '{~', '{~~', '{@', '{>', '{:', '{=', '{-w:p'])
      expect(all, `tag ${tag}`).toContain(tag);
    for (const filter of [
      'currency',
      'number',
      'percent',
      'date',
      'upper',
      'lower',
      'capitalize',
      'trim',
      'default',
      'sum',
      'count',
      'join',
      'round',
      'abs',
      'first',
      'last',
      'qrcode',
      'code128',
      'ean13',
    ]) {
      expect(all, `filter ${filter}`).toMatch(new RegExp(`\\|\\s*${filter}\\b`));
    }
    for (const kind of ['docx', 'pptx', 'xlsx'] as const)
      expect(
        examples.some((e) => e.kind === kind),
        kind,
      ).toBe(true);
  });

  it('shows for every example what the engine renders', async () => {
    const changed: string[] = [];
    // Bottom up, so a rewritten block does not move the lines of those above it.
    for (const e of [...examples].reverse()) {
      const actual = await rendered(e);
      if (actual === e.output) continue;
      if (UPDATE) {
        e.rewrite(lines, actual);
        changed.push(e.where);
      } else
        expect(
          actual,
          `${e.where}: the guide shows\n${e.output}\nthe engine renders\n${actual}\n(UPDATE_TEMPLATE_GUIDE=1 rewrites the guide)`,
        ).toBe(e.output);
    }
    if (UPDATE && changed.length > 0) {
      fs.writeFileSync(GUIDE, lines.join('\n'));
      console.log(`docs/templates.md: ${changed.length} output(s) rewritten:\n${changed.join('\n')}`);
    }
    expect(examples.length).toBeGreaterThan(40);
  });
});
