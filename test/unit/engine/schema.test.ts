import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { inferSchema, inspect } from '../../../engine/index.ts';
import { keepOutput } from '../../support/office-outputs.ts';
import { docx, p, pptx, row, shape, table, xlsx } from './helpers.ts';
import { props, roundTrip, validator } from './schema-helpers.ts';

// The data a template expects, inferred as a JSON Schema from its tags, and sample data made from it:
// judged by a real JSON Schema validator (ajv, draft 2020-12, strict) and by rendering the template with
// the sample, which must leave no tag without a value (no missing_value warning).

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
// The same checks on templates we did not write (docxtemplater's fixtures): test/shared/schema-corpus.test.ts.

describe('inferSchema on the examples', () => {
  for (const [tpl, data] of [
    ['invoice.docx', 'invoice.json'],
    ['monthly-report.xlsx', 'monthly-report.json'],
    ['products.pptx', 'products.json'],
  ] as const) {
    it(`${tpl}: the example's data and the sample both fit, and the sample fills every tag`, async () => {
      const template = readFileSync(path.join(root, 'examples', tpl));
      const r = await roundTrip(template);
      keepOutput(r.output, `schema-${tpl}`, template);
      expect(r.invalid).toEqual([]);
      expect(r.warnings).toEqual([]);
      expect(validator(r.schema)(JSON.parse(readFileSync(path.join(root, 'examples', data), 'utf8')))).toEqual([]);
    });
  }

  it('invoice.docx: types from filters, loops, images and locations in descriptions', () => {
    const schema = inferSchema(inspect(readFileSync(path.join(root, 'examples', 'invoice.docx'))));
    const top = props(schema);
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(top.vatRate?.type).toBe('number'); // {vatRate | percent}
    expect(top.items?.type).toBe('array');
    const item = props(top.items?.items);
    expect(item.unitPrice?.type).toBe('number'); // {unitPrice | currency:currency}
    expect(item.net?.type).toBe('number'); // {items | sum:"net"}
    // {unitPrice | currency:currency} in the loop reads the document's currency, also used outside the loop.
    expect(Object.keys(item)).not.toContain('currency');
    expect(top.currency).toMatchObject({ type: 'string', pattern: '^[A-Z]{3}$' });
    expect(item.description?.description).toMatch(/\{description\} \(word\/document\.xml, paragraph \d+\)/);
    expect(top.logo?.anyOf).toBeDefined(); // {%logo}
    expect(top.notes).toMatchObject({ type: 'array', items: { type: ['string', 'number'] } }); // {#notes}{.}{/notes}
    expect(top.customer).toMatchObject({ type: 'object', required: ['name', 'street', 'postcode', 'city', 'country'] });
    expect(schema.required).toContain('customer');
  });
});

describe('inferSchema, tag by tag', () => {
  it('conditions and inverted sections are booleans, comparisons type their operands', async () => {
    const tpl = docx(
      p('{#isPaid}Paid{/isPaid}{^isPaid}Due{/isPaid}') +
        p('{#vip}Thanks!{/vip}') +
        p('{#total > 1000}Big order of {total | number:2}{/}') +
        p('{#status == "open"}Open{/}') +
        p('{note | default:"none"} {nick ?? name}'),
    );
    const r = await roundTrip(tpl);
    expect(r.invalid).toEqual([]);
    expect(r.warnings).toEqual([]);
    const top = props(r.schema);
    expect(top.isPaid?.type).toBe('boolean');
    expect(top.vip?.type).toBe('boolean'); // a section with no data inside is a condition
    expect(top.total?.type).toBe('number');
    expect(top.status).toMatchObject({ examples: ['open'] });
    expect(r.sample).toMatchObject({ isPaid: true, vip: true, status: 'open' });
    expect(r.schema.required).not.toContain('note'); // a fallback is given
    expect(r.schema.required).not.toContain('nick');
    expect(r.schema.required).toContain('name');
  });

  it('a name used outside a loop first stays there; $index is the engine’s', async () => {
    const tpl = docx(p('{currency}') + table([['{#lines}{$index}', '{label}', '{amount | currency:currency}{/lines}']]));
    const r = await roundTrip(tpl);
    expect(r.warnings).toEqual([]);
    const top = props(r.schema);
    expect(Object.keys(top)).toEqual(['currency', 'lines']);
    expect(Object.keys(props(top.lines?.items))).toEqual(['label', 'amount']);
    expect(top.currency).toMatchObject({ type: 'string', pattern: '^[A-Z]{3}$' });
  });

  it('barcodes, html, dotted and indexed paths', async () => {
    const tpl = docx(p('{%order.url | qrcode}') + p('{%gtin | ean13}') + p('{~~bio}') + p('{rows[0].name} {a.b.c | upper}'));
    const r = await roundTrip(tpl);
    expect(r.invalid).toEqual([]);
    expect(r.warnings).toEqual([]);
    const top = props(r.schema);
    expect(props(top.order).url?.type).toBe('string');
    expect(top.gtin).toMatchObject({ type: 'string', pattern: '^[0-9]{12,13}$' });
    expect(top.bio).toMatchObject({ type: 'string', contentMediaType: 'text/html' });
    expect(top.rows?.type).toBe('array');
    expect(props(props(top.a).b).c?.type).toBe('string');
  });

  it('workbook cells and pptx slide loops', async () => {
    const book = xlsx({
      strings: ['{title}', '{#rows}{name}', '{qty}{/rows}'],
      rows:
        row(1, [['A1', 's:0']]) +
        row(2, [
          ['A2', 's:1'],
          ['B2', 's:2'],
        ]),
    });
    const rb = await roundTrip(book);
    expect(rb.warnings).toEqual([]);
    expect(props(props(rb.schema).rows?.items).qty?.description).toMatch(/sheet "Data Sheet", cell B2/);
    const deck = pptx([shape(2, '{:slides}', '{heading}', '{#points}{.}{/points}'), shape(2, '{footer}')]);
    const rd = await roundTrip(deck);
    expect(rd.invalid).toEqual([]);
    expect(rd.warnings).toEqual([]);
    const top = props(rd.schema);
    expect(Object.keys(top)).toEqual(['slides', 'footer']); // the slide scope ends with its slide
    expect(Object.keys(props(top.slides?.items))).toEqual(['heading', 'points']);
    expect(top.slides?.description).toMatch(/^A list \(the slide is repeated for each item\), used by \{:slides\}/);
  });
});
