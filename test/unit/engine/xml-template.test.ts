// XML templates (engine/xml-template.ts): a plain XML text with the Office templates' tags, for e-invoices the
// JSON model does not cover. The same tag language (fields, loops, conditions, inverted sections, filters,
// delimiter switches), a loop repeating exactly its text, values escaped for where they are, missing values
// reported as in Office templates, errors located by line and column, and a well-formed result or an error.
import { describe, expect, it } from 'vitest';
import { describeLocation, renderXmlTemplate, TemplateError } from '../../../engine/index.ts';
import { wellFormedProblem } from '../../../engine/xml-template.ts';

const render = (t: string, data: unknown, options = {}) => renderXmlTemplate(t, data, options);
const errorsOf = (t: string, data: unknown, options = {}) => {
  try {
    render(t, data, options);
  } catch (e) {
    if (e instanceof TemplateError) return e.errors;
    throw e;
  }
  throw new Error('rendered without an error');
};

describe('XML templates', () => {
  it('render fields, loops over lists ({$index}), conditions, inverted sections and filters', () => {
    const t = [
      '<?xml version="1.0" encoding="UTF-8"?>',
      '<inv:Invoice xmlns:inv="urn:test">',
      '  <inv:ID>{number}</inv:ID>{#lines}',
      '  <inv:Line pos="{$index + 1}"><inv:Name>{name | upper}</inv:Name><inv:Net>{qty * price | round:2}</inv:Net></inv:Line>{/lines}',
      '  {#total > 100}<inv:Big/>{/}{^notes}<inv:NoNotes/>{/notes}',
      '  <inv:Issued>{issued | date:"yyyy-MM-dd"}</inv:Issued>',
      '</inv:Invoice>',
    ].join('\n');
    const { output, warnings } = render(t, {
      number: 'F-1',
      lines: [
        { name: 'pen', qty: 3, price: 1.25 },
        { name: 'ink', qty: 1, price: 100 },
      ],
      total: 103.75,
      notes: [],
      issued: '2026-03-01',
    });
    expect(output).toBe(
      [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<inv:Invoice xmlns:inv="urn:test">',
        '  <inv:ID>F-1</inv:ID>',
        '  <inv:Line pos="1"><inv:Name>PEN</inv:Name><inv:Net>3.75</inv:Net></inv:Line>',
        '  <inv:Line pos="2"><inv:Name>INK</inv:Name><inv:Net>100</inv:Net></inv:Line>',
        '  <inv:Big/><inv:NoNotes/>',
        '  <inv:Issued>2026-03-01</inv:Issued>',
        '</inv:Invoice>',
      ].join('\n'),
    );
    expect(warnings).toEqual([]);
  });

  it('repeat exactly the text between the loop tags, nested loops with outer scopes', () => {
    const t = '<r>{#groups}<g n="{name}">{#items}<i g="{name}" v="{v}"/>{/items}</g>{/groups}</r>';
    const { output } = render(t, {
      groups: [
        { name: 'a', items: [{ v: 1 }, { v: 2 }] },
        { name: 'b', items: [] },
      ],
    });
    expect(output).toBe('<r><g n="a"><i g="a" v="1"/><i g="a" v="2"/></g><g n="b"></g></r>');
  });

  it('escape values for text, either attribute quote and CDATA', () => {
    const v = `a & b <c> "d" 'e' ]]> f\tg\nh\u0001`;
    const { output } = render(`<r a="{v}" b='{v}'>{v}<![CDATA[{v}]]></r>`, { v });
    expect(output).toBe(
      `<r a="a &amp; b &lt;c&gt; &quot;d&quot; &apos;e&apos; ]]&gt; f&#9;g&#10;h" b='a &amp; b &lt;c&gt; &quot;d&quot; &apos;e&apos; ]]&gt; f&#9;g&#10;h'>` +
        `a &amp; b &lt;c&gt; &quot;d&quot; 'e' ]]&gt; f\tg\nh<![CDATA[a & b <c> "d" 'e' ]]]]><![CDATA[> f\tg\nh]]></r>`,
    );
    expect(wellFormedProblem(output)).toBeNull();
  });

  it('leave tags in comments and processing instructions as written', () => {
    const t = '<?xml version="1.0"?><?app {x}?><r><!-- {#loop} {nothing} --><a>{x}</a></r>';
    expect(render(t, { x: 1 }).output).toBe('<?xml version="1.0"?><?app {x}?><r><!-- {#loop} {nothing} --><a>1</a></r>');
  });

  it('insert {@xml} values as XML, checked well-formed', () => {
    expect(render('<r>{@ext}</r>', { ext: '<x:E xmlns:x="urn:e">1</x:E>' }).output).toBe('<r><x:E xmlns:x="urn:e">1</x:E></r>');
    expect(errorsOf('<r>{@ext}</r>', { ext: '<a><b></a>' })[0]).toMatchObject({ id: 'raw_xml_invalid' });
  });

  it('take the delimiters option and delimiter switches', () => {
    expect(render('<r>[[a]]</r>', { a: 1 }, { delimiters: { start: '[[', end: ']]' } }).output).toBe('<r>1</r>');
    expect(render('<r>{=<% %>=}<%a%>{a}</r>', { a: 2 }).output).toBe('<r>2{a}</r>');
  });

  it('render missing values empty and list each tag once, located by line and column', () => {
    const t = '<r>\n  {#items}<i>{sku}</i>{/items}\n  <n>{note}</n>\n</r>';
    const { output, warnings } = render(t, { items: [{ sku: 'a' }, {}, {}] }, { name: 'invoice.xml' });
    expect(output).toBe('<r>\n  <i>a</i><i></i><i></i>\n  <n></n>\n</r>');
    expect(warnings).toEqual([
      {
        id: 'missing_value',
        message: 'no value for tag "sku"',
        tag: 'sku',
        location: { part: 'invoice.xml', offset: 17, line: 2, column: 14 },
      },
      {
        id: 'missing_value',
        message: 'no value for tag "note"',
        tag: 'note',
        location: { part: 'invoice.xml', offset: 40, line: 3, column: 6 },
      },
    ]);
    expect(describeLocation(warnings[0]!.location)).toBe('invoice.xml, line 2, column 14');
  });

  it('fail on missing values under strict', () => {
    expect(errorsOf('<r>\n<a>{x}</a><b c="{y}"/></r>', {}, { strict: true })).toEqual([
      { id: 'missing_value', message: 'no value for tag "x"', location: { part: 'template.xml', offset: 7, line: 2, column: 4 } },
      { id: 'missing_value', message: 'no value for tag "y"', location: { part: 'template.xml', offset: 20, line: 2, column: 17 } },
    ]);
  });

  it('report template errors at once, each with its line and column', () => {
    const t = ['<r>', '  <a {x}="1"/>', '  <b>{v | nosuch}</b>', '  {#open}<c/>', '  {%img}', '  <d>{unclosed</d>', '</r>'].join('\n');
    expect(errorsOf(t, {}).map((e) => [e.id, e.location?.line, e.location?.column])).toEqual([
      ['unclosed_tag', 6, 6],
      ['tag_position', 2, 6],
      ['xml_template_tag', 5, 3],
      ['unclosed_loop', 4, 3],
      ['unknown_filter', 3, 6],
    ]);
    expect(errorsOf('<r>{#a}{/b}</r>', {})[0]).toMatchObject({ id: 'loop_mismatch', location: { line: 1, column: 8 } });
  });

  it('refuse a result that is not well-formed, naming where in the output', () => {
    // The loop opens an element it does not close: each item leaves one open.
    const errors = errorsOf('<r>\n{#x}<b>{/x}</b>\n</r>', { x: [1, 2] }, { name: 'invoice.xml' });
    expect(errors).toEqual([
      {
        id: 'xml_malformed',
        message: 'the rendered XML is not well-formed at line 3, column 1 of the output: </r> closes <b>',
        location: { part: 'invoice.xml (rendered)', offset: 15, line: 3, column: 1 },
      },
    ]);
    expect(errorsOf('<a/><b/>', {})[0]!.message).toContain('a second root element <b>');
    expect(errorsOf('<a>{#x}</a><a>{/x}', { x: false })[0]!.message).toContain('<a> is never closed');
    expect(errorsOf('<a/></b>', {})[0]!.message).toContain('</b> closes no element');
    expect(errorsOf('<a>&nbsp;</a>', {})[0]!.message).toContain("an '&' that is not an entity reference");
    expect(errorsOf('<a b="1" b="2"/>', {})[0]!.message).toContain('attribute b twice');
    expect(errorsOf('<!DOCTYPE a [<!ENTITY x "y">]><a/>', {})[0]).toMatchObject({ id: 'doctype_forbidden' });
    expect(errorsOf(' <?xml version="1.0"?><a/>', {})[0]!.message).toContain('must come first');
  });

  it('keep a 1,000-line invoice to a few milliseconds (measured in bench/einvoice.ts; here: it renders)', () => {
    const t = `<r>{#lines}\n<l id="{id}"><n>{name}</n><q>{qty}</q><p>{price}</p></l>{/lines}\n</r>`;
    const lines = Array.from({ length: 1000 }, (_, i) => ({ id: i + 1, name: `item ${i}`, qty: '1', price: '9.90' }));
    const { output } = render(t, { lines });
    expect(output.split('\n')).toHaveLength(1002);
  });
});
