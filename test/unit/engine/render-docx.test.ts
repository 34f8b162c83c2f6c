import { describe, expect, it } from 'vitest';
import { render, TemplateError } from '../../support/engine.ts';
import { docText, docx, p, partText, table } from './helpers.ts';

describe('render docx', () => {
  it('replaces fields with dotted paths and escapes XML', async () => {
    const out = await render(docx(p('Customer: {customer.name}') + p('{items[1].name}')), {
      customer: { name: 'ACME & <Co>' },
      items: [{ name: 'a' }, { name: 'b' }],
    });
    expect(docText(out)).toEqual(['Customer: ACME & <Co>', 'b']);
    expect(partText(out, 'word/document.xml')).toContain('ACME &amp; &lt;Co&gt;');
  });

  it('finds tags split across runs', async () => {
    const out = await render(docx(p('Hello {first', '_na', 'me}!')), { first_name: 'Ada' });
    expect(docText(out)).toEqual(['Hello Ada!']);
  });

  it('renders missing values as empty text', async () => {
    const out = await render(docx(p('[{nothing.here}]')), {});
    expect(docText(out)).toEqual(['[]']);
  });

  it('reports missing values in strict mode', async () => {
    const err = await render(docx(p('{a}') + p('{b}')), { a: 1 }, { strict: true }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TemplateError);
    expect((err as TemplateError).errors).toEqual([
      { id: 'missing_value', message: 'no value for tag "b"', location: { part: 'word/document.xml', paragraph: 2, offset: 3 } },
    ]);
  });

  it('repeats paragraphs with a paragraph loop and looks names up in outer scopes', async () => {
    const out = await render(docx(p('{#users}') + p('{name} of {company}') + p('{/users}')), {
      company: 'X',
      users: [{ name: 'a' }, { name: 'b', company: 'Y' }],
    });
    expect(docText(out)).toEqual(['a of X', 'b of Y']);
  });

  it('keeps the tag paragraphs with paragraphLoop false', async () => {
    const out = await render(docx(p('{#users}') + p('{.}') + p('{/users}')), { users: ['a', 'b'] }, { paragraphLoop: false });
    expect(docText(out)).toEqual(['', 'a', '', 'b', '']);
  });

  it('repeats table rows and drops a table whose rows all disappear', async () => {
    const body =
      table([
        ['Name', 'Qty'],
        ['{#items}{name}', '{qty}{/items}'],
      ]) + table([['{#none}x', 'y{/none}']]);
    const out = await render(docx(body), {
      items: [
        { name: 'a', qty: 1 },
        { name: 'b', qty: 2 },
      ],
    });
    const xml = partText(out, 'word/document.xml');
    expect(docText(out)).toEqual(['Name', 'Qty', 'a', '1', 'b', '2']);
    expect(xml.match(/<w:tbl>/g)?.length).toBe(1);
  });

  it('renders inverted sections and conditions', async () => {
    const body = p('{^items}none{/items}') + p('{#total > 1000}big{/}{#total <= 1000}small{/}');
    expect(docText(await render(docx(body), { items: [], total: 2000 }))).toEqual(['none', 'big']);
    expect(docText(await render(docx(body), { items: [1], total: 5 }))).toEqual(['', 'small']);
  });

  it('turns newlines into line breaks unless linebreaks is false', async () => {
    expect(docText(await render(docx(p('{t}')), { t: 'a\nb' }))).toEqual(['a\nb']);
    const xml = partText(await render(docx(p('{t}')), { t: 'a\nb' }, { linebreaks: false }), 'word/document.xml');
    expect(xml).not.toContain('<w:br/>');
  });

  it('supports custom delimiters', async () => {
    const out = await render(docx(p('Hi [[name]] {not a tag')), { name: 'Bo' }, { delimiters: { start: '[[', end: ']]' } });
    expect(docText(out)).toEqual(['Hi Bo {not a tag']);
  });

  it('inserts validated raw XML in place of the paragraph', async () => {
    const raw = '<w:p><w:r><w:t>RAW</w:t></w:r></w:p>';
    expect(docText(await render(docx(p('{@x}')), { x: raw }))).toEqual(['RAW']);
    const err = await render(docx(p('{@x}')), { x: '<w:p><w:r>' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TemplateError);
    expect((err as TemplateError).errors[0]?.id).toBe('raw_xml_invalid');
  });

  it('collects every template error of a render into one TemplateError', async () => {
    const err = await render(docx(p('{#a}') + p('{b | nope}') + p('{c +}')), {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TemplateError);
    const ids = (err as TemplateError).errors.map((e) => e.id).sort();
    expect(ids).toEqual(['expression_syntax', 'unclosed_loop', 'unknown_filter']);
    for (const e of (err as TemplateError).errors) expect(e.location?.part).toBe('word/document.xml');
  });
});
