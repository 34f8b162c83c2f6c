import { describe, expect, it } from 'vitest';
import { render } from '../../support/engine.ts';
import { docText, docx, p, partText, PNG_2x1 } from './helpers.ts';

// `{%%img}` (docxtemplater's centred image): the image on a centred paragraph of its own.

describe('centred images', () => {
  it('{%%logo} replaces its paragraph with a centred one holding the image', async () => {
    const tagged = '<w:p><w:pPr><w:spacing w:after="0"/><w:jc w:val="left"/></w:pPr><w:r><w:t>{%%logo}</w:t></w:r></w:p>';
    const out = await render(docx(p('before') + tagged + p('after {%small}')), {
      logo: { data: PNG_2x1, width: 100, height: 50 },
      small: PNG_2x1,
    });
    const xml = partText(out, 'word/document.xml');
    expect(xml).toMatch(
      /<w:p><w:pPr><w:spacing w:after="0"\/><w:jc w:val="center"\/><\/w:pPr><w:r><w:drawing>[\s\S]*?<wp:extent cx="952500" cy="476250"\/>[\s\S]*?<\/w:drawing><\/w:r><\/w:p>/,
    );
    expect(xml.match(/<w:drawing>/g)?.length).toBe(2);
    expect(docText(out)).toEqual(['before', '', 'after ']);
    // Without a value the paragraph stays (empty), so the layout does not jump.
    expect(docText(await render(docx(p('a') + tagged + p('b')), {}))).toEqual(['a', '', 'b']);
  });
});
