import { describe, expect, it } from 'vitest';
import { render } from '../../support/engine.ts';
import { docx, p, partText, pptx, shape, slideTable, tableStart } from './helpers.ts';

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
