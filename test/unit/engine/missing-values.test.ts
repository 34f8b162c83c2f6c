import { describe, expect, it } from 'vitest';
import { inspect, renderWithWarnings, TemplateError } from '../../../engine/index.ts';
import { keepOutput } from '../../support/office-outputs.ts';
import { docx, p, row, xlsx } from './helpers.ts';

// "Hello ACME, your rep is ." must not go out without a word: every tag that rendered empty because the
// data has no value for it is reported, once per tag, located as `docgen inspect` locates tags; strict
// mode fails with all of them.

describe('tags that render empty for want of data', () => {
  it('are reported once each, with the locations inspect gives', async () => {
    const tpl = docx(p('Hello {customer}, your rep is {rep.name}.') + p('{#items}{sku}: {price}{/items}') + p('{note}'));
    const { output, warnings } = await renderWithWarnings(tpl, {
      customer: 'ACME',
      items: [{ sku: 'a' }, { sku: 'b' }, { sku: 'c', price: 3 }],
      note: null,
    });
    keepOutput(output, 'missing-values', tpl);
    const tags = inspect(tpl).tags;
    const at = (source: string) => tags.find((t) => t.source === source)?.location;
    expect(warnings).toEqual([
      { id: 'missing_value', message: 'no value for tag "rep.name"', location: at('rep.name'), tag: 'rep.name' },
      { id: 'missing_value', message: 'no value for tag "price"', location: at('price'), tag: 'price' },
    ]);
    expect(at('rep.name')).toMatchObject({ part: 'word/document.xml', paragraph: 1 });
  });

  it('in a workbook, by sheet and cell', async () => {
    const tpl = xlsx({
      strings: ['{total}', '{#rows}{name}', '{qty}{/rows}'],
      rows:
        row(1, [['A1', 's:0']]) +
        row(2, [
          ['A2', 's:1'],
          ['B2', 's:2'],
        ]),
    });
    const { warnings } = await renderWithWarnings(tpl, { rows: [{ name: 'x' }, { name: 'y' }] });
    expect(warnings.map((w) => [w.message, w.location?.sheet, w.location?.cell])).toEqual([
      ['no value for tag "total"', 'Data Sheet', 'A1'],
      ['no value for tag "qty"', 'Data Sheet', 'B2'],
    ]);
  });

  it('strict mode fails with every one of them', async () => {
    const tpl = docx(p('Hello {customer}, your rep is {rep.name}.') + p('{#items}{sku}: {price}{/items}'));
    const err = await renderWithWarnings(tpl, { items: [{ sku: 'a' }, { sku: 'b' }] }, { strict: true }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(TemplateError);
    expect((err as TemplateError).errors.map((e) => e.message)).toEqual([
      'no value for tag "customer"',
      'no value for tag "rep.name"',
      'no value for tag "price"',
    ]);
  });
});
