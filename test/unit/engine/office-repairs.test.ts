import { describe, expect, it } from 'vitest';
import { render } from '../../support/engine.ts';
import { docx, p, partText, pptx, shape, slideTable, tableStart } from './helpers.ts';
import { endCellsWithParagraphs } from '../../../engine/docx.ts';

// Files Office flags as corrupt: a table cell whose last block is not a paragraph (Word), a text body
// without a paragraph (PowerPoint). Loops that render nothing and empty `{@raw}` values must not leave
// either behind, whatever whitespace or content control sits around them.

/** Word's rule (ISO/IEC 29500 17.4.66): a cell ends with a paragraph, or with a content control ending with one. */
function cellsEndWithParagraphs(xml: string): boolean[] {
  return [...xml.matchAll(/<w:tc>([\s\S]*?)<\/w:tc>/g)].map((m) =>
    /(<\/w:p>|<w:p\/>)(<\/w:sdtContent><\/w:sdt>)*$/.test((m[1] ?? '').replace(/>\s+</g, '><').trim()),
  );
}

const cell = (content: string): string => `${tableStart(1)}<w:tr><w:tc><w:tcPr/>${content}</w:tc></w:tr></w:tbl>`;

describe('Word: every table cell ends with a paragraph', () => {
  it('after an empty {@raw} with whitespace around it', async () => {
    const xml = partText(await render(docx(cell(`\n  ${p('{@raw}')}\n`)), { raw: '' }), 'word/document.xml');
    expect(cellsEndWithParagraphs(xml)).toEqual([true]);
  });

  it('after a loop that emptied a content control', async () => {
    const sdt = `<w:sdt><w:sdtPr><w:alias w:val="Lines"/></w:sdtPr><w:sdtContent>${p('{#lines}')}${p('{.}')}${p('{/lines}')}</w:sdtContent></w:sdt>`;
    for (const lines of [[], ['a', 'b']]) {
      const xml = partText(await render(docx(cell(sdt)), { lines }), 'word/document.xml');
      expect(cellsEndWithParagraphs(xml)).toEqual([true]);
      expect(xml).toContain('<w:sdtContent>');
    }
  });

  it('keeps cells that already end with a paragraph as they are', async () => {
    const body = cell(p('{name}'));
    const xml = partText(await render(docx(body), { name: 'x' }), 'word/document.xml');
    expect(xml.match(/<w:p\b/g)).toHaveLength(1);
  });
});

describe('PowerPoint: every text body keeps a paragraph', () => {
  it('in a text box whose paragraphs a loop removed', async () => {
    const slide = partText(await render(pptx([shape(2, '{#none}', '{.}', '{/none}')]), { none: [] }), 'ppt/slides/slide1.xml');
    const body = /<p:txBody>([\s\S]*?)<\/p:txBody>/.exec(slide)?.[1] ?? '';
    expect(body).toMatch(/<a:p[\s/>]/);
  });

  it('in a table cell whose paragraphs a loop removed', async () => {
    const slide = partText(await render(pptx([slideTable(3, [['{#none}\n{.}\n{/none}', 'kept']])]), { none: [] }), 'ppt/slides/slide1.xml');
    const bodies = [...slide.matchAll(/<a:txBody>([\s\S]*?)<\/a:txBody>/g)].map((m) => m[1] ?? '');
    expect(bodies).toHaveLength(2);
    for (const b of bodies) expect(b).toMatch(/<a:p[\s/>]/);
  });
});

/** The repair as first written (a regex over every tag of the part): the oracle for the faster one. */
function endCellsOracle(xml: string): string {
  const stack: Array<{ name: string; ok: boolean }> = [];
  const inserts: number[] = [];
  for (const m of xml.matchAll(/<(\/?)([\w:.-]+)\b[^>]*?(\/?)>/g)) {
    const [, closing, name = '', self] = m;
    const top = stack[stack.length - 1];
    if (self === '/') {
      if (top !== undefined) top.ok = name === 'w:p';
    } else if (closing !== '/') {
      stack.push({ name, ok: false });
    } else {
      const frame = stack.pop();
      if (frame === undefined) continue;
      if (name === 'w:tc' && !frame.ok) inserts.push(m.index);
      const parent = stack[stack.length - 1];
      if (parent !== undefined) parent.ok = name === 'w:p' || (['w:sdt', 'w:sdtContent', 'w:customXml'].includes(name) && frame.ok);
    }
  }
  let out = '';
  let pos = 0;
  for (const at of inserts) {
    out += `${xml.slice(pos, at)}<w:p/>`;
    pos = at;
  }
  return out + xml.slice(pos);
}

describe('Word cell repair reads each cell end as the element-by-element reading does', () => {
  const pieces = [
    '<w:p>',
    '</w:p>',
    '<w:p/>',
    '<w:p w:rsidR="1"/>',
    '<w:pPr/>',
    '<w:pPr>',
    '</w:pPr>',
    '</w:p >',
    '<w:tc>',
    '</w:tc>',
    '<w:tcPr/>',
    '<w:tbl>',
    '</w:tbl>',
    '<w:tr>',
    '</w:tr>',
    '<w:sdt>',
    '</w:sdt>',
    '<w:sdtContent>',
    '</w:sdtContent>',
    '<w:customXml w:element="x">',
    '</w:customXml>',
    '<w:r><w:t>a</w:t></w:r>',
    ' \n ',
    'text',
    '<!-- c -->',
    '<!-- <w:p> -->',
    '<?pi x?>',
    '<w:bookmarkStart w:id="0"/>',
    '<a- />',
    '<w:p-/>',
    '</w:p/>',
  ];

  it('on cells ending with paragraphs, tables, content controls, comments and odd names', () => {
    const fixed = [
      '<w:tbl><w:tr><w:tc><w:p/></w:tc><w:tc><w:tcPr/></w:tc><w:tc>\n</w:tc></w:tr></w:tbl>',
      '<w:tc><w:sdt><w:sdtContent><w:p></w:p></w:sdtContent></w:sdt></w:tc>',
      '<w:tc><w:sdt><w:sdtContent><w:tbl></w:tbl></w:sdtContent></w:sdt></w:tc>',
      '<w:tc><w:p></w:p><w:tbl><w:tr><w:tc><w:p/></w:tc></w:tr></w:tbl></w:tc>',
      '<w:tc><w:p></w:p><!-- x --></w:tc>',
      '<w:tc><w:p w:rsidR="00"/>  </w:tc>',
      '<w:tc><w:pPr/></w:tc>',
      '<w:tc><w:p><w:pPr></w:pPr></w:tc>',
      '<w:tc><w:p-/></w:tc>',
      '<w:tc><w:p.x/></w:tc>',
      '<w:tc><w:p></w:p ></w:tc>',
    ];
    for (const xml of fixed) expect(endCellsWithParagraphs(xml), xml).toBe(endCellsOracle(xml));
    expect(endCellsWithParagraphs(fixed[0] ?? '')).toBe(
      '<w:tbl><w:tr><w:tc><w:p/></w:tc><w:tc><w:tcPr/><w:p/></w:tc><w:tc>\n<w:p/></w:tc></w:tr></w:tbl>',
    );
  });

  it('on random sequences of cell, paragraph, table and content-control markup', () => {
    let seed = 7;
    const next = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    for (let k = 0; k < 20000; k++) {
      let xml = '';
      const len = 1 + next(24);
      for (let j = 0; j < len; j++) xml += pieces[next(pieces.length)];
      expect(endCellsWithParagraphs(xml), xml).toBe(endCellsOracle(xml));
    }
  });
});
