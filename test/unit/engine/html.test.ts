import { describe, expect, it } from 'vitest';
import { render, TemplateError } from '../../support/engine.ts';
import { docText, docx, p, partText, row, unzipText, xlsx } from './helpers.ts';
import { textInLibreOffice } from './libreoffice.ts';

// `{~~html}` replaces its paragraph with the HTML's paragraphs, lists and tables; `{~html}` puts
// formatted runs inside the paragraph.

const html =
  '<h2>Title &amp; more</h2><p>Hello <b>bold</b> <i>it</i> <u>under</u> <a href="https://x.test/?a=1&amp;b=2">link</a></p>' +
  '<ul><li>one</li><li>two<ol><li>sub</li></ol></li></ul>' +
  '<table><tr><th>H</th><th>I</th></tr><tr><td>1</td><td>2<br>3</td></tr></table><script>alert(1)</script><p>end</p>';

describe('HTML insertion', () => {
  it('{~~html} becomes paragraphs, lists, links and tables in place of its paragraph', async () => {
    const out = await render(docx(p('before') + p('{~~body}') + p('after')), { body: html });
    expect(docText(out)).toEqual([
      'before',
      'Title & more',
      'Hello bold it under link',
      '•\tone',
      '•\ttwo',
      '1.\tsub',
      'H',
      'I',
      '1',
      '2\n3',
      'end',
      'after',
    ]);
    const files = unzipText(out);
    const xml = files.get('word/document.xml') ?? '';
    expect(xml).not.toContain('alert');
    expect(xml).toContain('<w:pStyle w:val="Heading2"/>');
    expect(xml).toMatch(/<w:rPr><w:b\/><w:bCs\/><\/w:rPr><w:t xml:space="preserve">bold<\/w:t>/);
    expect(xml).toContain('<w:tbl><w:tblPr>');
    const id = /<w:hyperlink r:id="([^"]*)"/.exec(xml)?.[1] ?? '';
    expect(files.get('word/_rels/document.xml.rels')).toMatch(
      new RegExp(`Id="${id}"[^>]*Target="https://x.test/\\?a=1&amp;b=2" TargetMode="External"`),
    );
    // LibreOffice opens the document and reads the same text.
    const text = await textInLibreOffice(out);
    for (const line of ['Title & more', 'Hello bold it under link', 'one', 'sub', 'end', 'after']) expect(text).toContain(line);
  });

  it('{~html} puts formatted runs inside the paragraph, keeping the run formatting of the tag', async () => {
    const tpl = docx('<w:p><w:r><w:rPr><w:color w:val="FF0000"/></w:rPr><w:t>Note: {~note}!</w:t></w:r></w:p>');
    const out = await render(tpl, { note: '<b>bold</b> and <em>x</em><br>next <a href="mailto:a@b.test">mail</a>' });
    expect(docText(out)).toEqual(['Note: bold and x\nnext mail!']);
    const xml = partText(out, 'word/document.xml');
    expect(xml).toContain('<w:rPr><w:b/><w:bCs/><w:color w:val="FF0000"/></w:rPr><w:t xml:space="preserve">bold</w:t>');
    expect(xml).toContain('<w:rPr><w:color w:val="FF0000"/></w:rPr><w:t xml:space="preserve">!</w:t>');
    expect(xml.match(/<w:p>/g)?.length).toBe(1);
  });

  it('refuses unsafe link schemes and HTML tags outside Word documents', async () => {
    const err = await render(docx(p('{~~b}')), { b: '<a href="javascript:alert(1)">x</a>' }).catch((e: unknown) => e);
    expect((err as TemplateError).errors[0]?.id).toBe('link_invalid');
    const sheet = await render(xlsx({ strings: ['{~h}'], rows: row(1, [['A1', 's:0']]) }), { h: '<b>x</b>' }).catch((e: unknown) => e);
    expect(sheet).toBeInstanceOf(TemplateError);
    expect((sheet as TemplateError).errors[0]?.id).toBe('html_unsupported');
  });
});
