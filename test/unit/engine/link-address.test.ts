// A link's address is judged as a browser reads it (issue 25 §3): the WHATWG URL parser removes tab, LF and
// CR anywhere and C0 controls and spaces at the ends, so `java\tscript:` is `javascript:`. Both the HTML
// link check ({~~html}, {~html}) and templated hyperlink addresses refuse it, and what they write is what
// was checked.
import { describe, expect, it } from 'vitest';
import { render, TemplateError } from '../../../engine/index.ts';
import { docx, p, unzipText } from './helpers.ts';

const HL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships/hyperlink';
const SPELLINGS = [
  'java\tscript:alert(1)',
  'java\nscript:alert(1)',
  'java\r\nscript:alert(1)',
  '\u0001 javascript:alert(1)',
  'jav\u0000ascript:alert(1)',
  'vb\tscript:msgbox(1)',
  ' \tdata:text/html,<b>x</b>',
];

async function refused(template: Uint8Array, data: unknown): Promise<TemplateError> {
  const err = await render(template, data).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(TemplateError);
  return err as TemplateError;
}

describe('link addresses, as a browser reads them', () => {
  it('refuses a control-character spelling of an unsafe scheme in an HTML link', async () => {
    for (const href of SPELLINGS) {
      const attr = href
        .replace(/&/g, '&amp;')
        .replace(/</g, '&lt;')
        .replace(/"/g, '&quot;')
        .replace(/[\u0000-\u001f]/g, (c) => `&#${c.charCodeAt(0)};`);
      const err = await refused(docx(p('{~~body}')), { body: `<p><a href="${attr}">click</a></p>` });
      expect(err.errors[0]?.id, JSON.stringify(href)).toBe('link_invalid');
    }
  });

  it('refuses them in a templated hyperlink address', async () => {
    const tpl = docx('<w:p><w:hyperlink r:id="rId7" w:history="1"><w:r><w:t>go</w:t></w:r></w:hyperlink></w:p>', {
      'word/_rels/document.xml.rels': `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId7" Type="${HL}" Target="%7Burl%7D" TargetMode="External"/></Relationships>`,
    });
    for (const url of SPELLINGS) expect((await refused(tpl, { url })).errors[0]?.id, JSON.stringify(url)).toBe('link_invalid');
    // A safe address with a stray tab is written as a browser would read it.
    const out = unzipText(await render(tpl, { url: 'https://exa\tmple.test/a\nb' }));
    expect(out.get('word/_rels/document.xml.rels')).toContain('Target="https://example.test/ab"');
  });

  it('writes an HTML link as it was checked', async () => {
    const out = unzipText(await render(docx(p('{~~body}')), { body: '<p><a href=" https://x.test/&#9;p ">x</a></p>' }));
    expect(out.get('word/_rels/document.xml.rels')).toContain('Target="https://x.test/p"');
  });
});
