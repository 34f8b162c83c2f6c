import { describe, expect, it } from 'vitest';
import { render } from '../../support/engine.ts';
import { docText, docx, p, partText, pptx, shape, table, tableStart, unzipText, zip } from './helpers.ts';

// Documents docxtemplater renders, and what its authors expect of them.

const sect = (marker: string): string =>
  `<w:sectPr><w:footerReference w:type="default" r:id="${marker}"/><w:pgMar w:top="${marker.length}" w:right="720" w:bottom="720" w:left="720" w:header="360" w:footer="360" w:gutter="0"/></w:sectPr>`;
const tagParagraph = (pPr: string, text: string): string => `<w:p><w:pPr>${pPr}</w:pPr><w:r><w:t>${text}</w:t></w:r></w:p>`;

describe('docxtemplater compatibility', () => {
  it('{$index} is the 0-based position in the innermost list', async () => {
    const body = p('{#users}{$index}. {name}:{#tags} {$index}={.}{/tags}{/users}');
    const out = await render(docx(body), {
      users: [
        { name: 'a', tags: ['x', 'y'] },
        { name: 'b', tags: ['z'] },
      ],
    });
    expect(docText(out)).toEqual(['0. a: 0=x 1=y1. b: 0=z']);
    const rows = await render(docx(table([['{#items}{$index}', '{name}{/items}']])), { items: [{ name: 'p' }, { name: 'q' }] });
    expect(docText(rows)).toEqual(['0', 'p', '1', 'q']);
  });

  it('a date without a time never shifts with the time zone', async () => {
    const body =
      p('{d | date:"yyyy-MM-dd EEE"}') + p('{d | date:"short"}') + p('{t | date:"yyyy-MM-dd HH:mm"}') + p('{z | date:"yyyy-MM-dd HH:mm"}');
    const data = { d: '2026-01-15', t: '2026-01-15T08:30', z: '2026-01-15T03:00:00Z' };
    for (const timezone of ['America/Los_Angeles', 'Pacific/Kiritimati', 'UTC']) {
      const text = docText(await render(docx(body), data, { timezone }));
      expect(text.slice(0, 3)).toEqual(['2026-01-15 Thu', '1/15/26', '2026-01-15 08:30']);
    }
    // A moment in time (with its zone) is still shown in the document's time zone.
    expect(docText(await render(docx(body), data, { timezone: 'America/New_York' }))[3]).toBe('2026-01-14 22:00');
  });

  it('repeats a row whose opening tag sits in a cell wrapped in a content control', async () => {
    const sdtCell = `<w:sdt><w:sdtPr><w:alias w:val="Name"/></w:sdtPr><w:sdtContent><w:tc><w:tcPr/>${p('{#items}{name}')}</w:tc></w:sdtContent></w:sdt>`;
    const body = `${tableStart(2)}<w:tr>${sdtCell}<w:tc><w:tcPr/>${p('{qty}{/items}')}</w:tc></w:tr></w:tbl>`;
    const out = await render(docx(body), {
      items: [
        { name: 'a', qty: 1 },
        { name: 'b', qty: 2 },
      ],
    });
    expect(docText(out)).toEqual(['a', '1', 'b', '2']);
    const xml = partText(out, 'word/document.xml');
    expect(xml.match(/<w:tr>/g)?.length).toBe(2);
    expect(xml.match(/<w:sdt>/g)?.length).toBe(2);
  });

  it('keeps the section breaks carried by the paragraphs of a paragraph loop', async () => {
    const body = p('Intro') + tagParagraph(sect('rIdA'), '{#items}') + p('{name}') + tagParagraph(sect('rIdBB'), '{/items}') + p('Outro');
    for (const items of [[{ name: 'a' }, { name: 'b' }], []]) {
      const xml = partText(await render(docx(body), { items }), 'word/document.xml');
      // Each section break exactly once, in order: the first ends the intro's section, the second the loop's.
      expect(xml.match(/<w:sectPr>[\s\S]*?<\/w:sectPr>/g)).toEqual([sect('rIdA'), sect('rIdBB')]);
      expect(xml.indexOf(sect('rIdA'))).toBeLessThan(xml.indexOf(sect('rIdBB')));
      const names = items.map((i) => `<w:t xml:space="preserve">${i.name}</w:t>`);
      for (const n of names) {
        expect(xml.indexOf(n)).toBeGreaterThan(xml.indexOf(sect('rIdA')));
        expect(xml.indexOf(n)).toBeLessThan(xml.indexOf(sect('rIdBB')));
      }
      expect(docText(await render(docx(body), { items }))).toEqual(['Intro', '', ...items.map((i) => i.name), '', 'Outro']);
    }
  });

  it('a tag spanning paragraphs merges them into one paragraph with one set of properties', async () => {
    const para = (t: string): string => `<w:p><w:pPr><w:jc w:val="left"/></w:pPr><w:r><w:t xml:space="preserve">${t}</w:t></w:r></w:p>`;
    const xml = partText(await render(docx(para('Hi {first') + para('_name} there')), { first_name: 'Ed' }), 'word/document.xml');
    expect(docText(await render(docx(para('Hi {first') + para('_name} there')), { first_name: 'Ed' }))).toEqual(['Hi Ed there']);
    expect(xml.match(/<w:pPr>/g)).toHaveLength(1);
  });

  it('switches to delimiters that contain the current end delimiter', async () => {
    // docxtemplater's es6/tests/e2e/fixtures.js: "should be possible to change the delimiters with complex example"
    const complex = await render(docx(p('Hi {={{[ ]}}=}{{[user]}}{{[={{ ]=]}} and {{user2]')), { user: 'John', user2: 'Jane' });
    expect(docText(complex)).toEqual(['Hi John and Jane']);
    const mustache = await render(docx(p('{={{ }}=}Hello {{name}}, {single} {{={ }=}}{back}')), { name: 'Bo', back: 'again' });
    expect(docText(mustache)).toEqual(['Hello Bo, {single} again']);
  });

  it('a key present but null in a loop item falls back to the enclosing scope', async () => {
    const body = p('{#items}{name}: {currency} {note}|{/items}');
    const out = await render(docx(body), {
      currency: 'EUR',
      note: 'top',
      items: [{ name: 'a', currency: null }, { name: 'b', currency: 'USD', note: null }, { name: 'c' }],
    });
    expect(docText(out)).toEqual(['a: EUR top|b: USD top|c: EUR top|']);
    // Present as null everywhere: empty, as before.
    expect(docText(await render(docx(p('[{x}]')), { x: null }))).toEqual(['[]']);
  });

  it('accepts identical start and end delimiters', async () => {
    const body = p('Hi %na', 'me%, {x}') + p('%#items%[%.%]%/items%');
    const out = await render(docx(body), { name: 'Bo', items: [1, 2] }, { delimiters: { start: '%', end: '%' } });
    expect(docText(out)).toEqual(['Hi Bo, {x}', '[1][2]']);
  });

  it('switches delimiters inside the template with {=<% %>=}', async () => {
    const body = p('{=<% %>=}') + p('Hi <% name %> {not a tag}') + p('<%=[[ ]]=%>', 'x[[', 'name]]') + p('{=', ' {{ }} ', '=}');
    const out = await render(docx(body), { name: 'Bo' });
    // After the second switch only [[ ]] delimit tags: the last paragraph is plain text.
    expect(docText(out)).toEqual(['', 'Hi Bo {not a tag}', 'xBo', '{= {{ }} =}']);
  });

  it('every table cell ends with a paragraph, also after a nested table and an empty loop', async () => {
    const inner = table([['nested']]);
    const body = `${tableStart(1)}<w:tr><w:tc><w:tcPr/>${inner}${p('{#none}')}${p('gone')}${p('{/none}')}</w:tc></w:tr></w:tbl>`;
    const xml = partText(await render(docx(body), { none: [] }), 'word/document.xml');
    expect(xml).not.toContain('gone');
    expect(xml).toMatch(/<\/w:tbl><w:p\/><\/w:tc>/);
    for (const cell of xml.split('</w:tc>').slice(0, -1)) expect(cell).toMatch(/(<\/w:p>|<w:p\/>)$/);
  });

  it('fills tags in SmartArt data and drawing parts (docx and pptx)', async () => {
    const dgm = (root: string, t: string): string =>
      `<?xml version="1.0" encoding="UTF-8"?><${root} xmlns:dgm="http://schemas.openxmlformats.org/drawingml/2006/diagram" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main">` +
      `<dgm:ptLst><dgm:pt modelId="1"><dgm:t><a:bodyPr/><a:p><a:r><a:rPr lang="en-US"/><a:t>${t}</a:t></a:r></a:p></dgm:t></dgm:pt></dgm:ptLst></${root}>`;
    const drawing = (t: string): string =>
      `<?xml version="1.0" encoding="UTF-8"?><dsp:drawing xmlns:dsp="http://schemas.microsoft.com/office/drawing/2008/diagram" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main">` +
      '<dsp:spTree><dsp:nvGrpSpPr><dsp:cNvPr id="0" name=""/><dsp:cNvGrpSpPr/></dsp:nvGrpSpPr><dsp:grpSpPr/><dsp:sp modelId="1"><dsp:nvSpPr><dsp:cNvPr id="0" name=""/><dsp:cNvSpPr/></dsp:nvSpPr><dsp:spPr/>' +
      `<dsp:txBody><a:bodyPr/><a:p><a:r><a:rPr lang="en-US"/><a:t>${t}</a:t></a:r></a:p></dsp:txBody></dsp:sp></dsp:spTree></dsp:drawing>`;
    const parts = {
      'word/diagrams/data1.xml': dgm('dgm:dataModel', 'Step {step}'),
      'word/diagrams/drawing1.xml': drawing('{step | upper}'),
    };
    const out = unzipText(await render(docx(p('{title}'), parts), { title: 'T', step: 'plan' }));
    expect(out.get('word/diagrams/data1.xml')).toContain('<a:t>Step plan</a:t>');
    expect(out.get('word/diagrams/drawing1.xml')).toContain('<a:t>PLAN</a:t>');
    const deck = unzipText(
      await render(addParts(pptx([shape(2, '{title}')]), { 'ppt/diagrams/data1.xml': dgm('dgm:dataModel', '{#steps}{.} {/steps}') }), {
        title: 'T',
        steps: ['a', 'b'],
      }),
    );
    expect(deck.get('ppt/diagrams/data1.xml')).toContain('<a:t>a b </a:t>');
  });
});

function addParts(pkg: Uint8Array, parts: Record<string, string>): Uint8Array {
  const files: Record<string, string> = {};
  for (const [k, v] of unzipText(pkg)) files[k] = v;
  return zip({ ...files, ...parts });
}
