import { describe, expect, it } from 'vitest';
import { render, TemplateError } from '../../support/engine.ts';
import { docText, docx, p, pptx, unzipText, zip } from './helpers.ts';

// A hyperlink whose address is a tag: Word stores the address `{url}` in the relationships as
// `%7Burl%7D`; every rendered link gets its own relationship with the evaluated address.

const HL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships/hyperlink';
const rels = (targets: Record<string, string>): string =>
  `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">${Object.entries(
    targets,
  )
    .map(([id, t]) => `<Relationship Id="${id}" Type="${HL}" Target="${t}" TargetMode="External"/>`)
    .join('')}</Relationships>`;
const link = (id: string, text: string): string =>
  `<w:p><w:hyperlink r:id="${id}" w:history="1"><w:r><w:t>${text}</w:t></w:r></w:hyperlink></w:p>`;

function targetsOf(relsXml: string): Map<string, string> {
  return new Map(
    [...relsXml.matchAll(/<Relationship\b[^>]*Id="([^"]*)"[^>]*Target="([^"]*)"/g)].map((m) => [
      m[1] ?? '',
      (m[2] ?? '').replace(/&amp;/g, '&'),
    ]),
  );
}

describe('hyperlinks whose address is a tag', () => {
  it('leaves alone an address that is not whole field tags (an editor auto-linked "mailto:{@raw")', async () => {
    const body = link('rId7', 'mailto:') + p('{@raw}') + link('rId8', '{@raw}');
    const tpl = docx(body, { 'word/_rels/document.xml.rels': rels({ rId7: 'mailto:%7B@raw', rId8: '%7B@raw%7D' }) });
    const out = unzipText(await render(tpl, { raw: '<w:p><w:r><w:t>RAW</w:t></w:r></w:p>' }));
    const targets = targetsOf(out.get('word/_rels/document.xml.rels') ?? '');
    expect(targets.get('rId7')).toBe('mailto:%7B@raw');
    expect(targets.get('rId8')).toBe('%7B@raw%7D');
    expect(docText(await render(tpl, { raw: '<w:p><w:r><w:t>RAW</w:t></w:r></w:p>' }))).toEqual(['mailto:', 'RAW', 'RAW']);
  });

  it('gives every link in a loop its own evaluated address', async () => {
    const body = p('{#sites}') + link('rId7', '{name}') + p('{/sites}') + link('rId8', 'search') + link('rId9', 'fixed');
    const tpl = docx(body, {
      'word/_rels/document.xml.rels': rels({ rId7: '%7Burl%7D', rId8: 'https://x.test/find?q=%7Bterm%7D', rId9: 'https://example.org/' }),
    });
    const out = unzipText(
      await render(tpl, {
        sites: [
          { name: 'A', url: 'https://a.test/?x=1&y=2' },
          { name: 'B', url: 'mailto:b@b.test' },
        ],
        term: 'a&b c',
      }),
    );
    const doc = out.get('word/document.xml') ?? '';
    const targets = targetsOf(out.get('word/_rels/document.xml.rels') ?? '');
    const ids = [...doc.matchAll(/<w:hyperlink r:id="([^"]*)"/g)].map((m) => m[1] ?? '');
    expect(ids.map((id) => targets.get(id))).toEqual([
      'https://a.test/?x=1&y=2',
      'mailto:b@b.test',
      'https://x.test/find?q=a%26b%20c',
      'https://example.org/',
    ]);
    expect(ids[3]).toBe('rId9');
    expect(out.get('word/_rels/document.xml.rels')).toContain('TargetMode="External"');
  });

  it('drops the link (keeps the text) for an empty address and refuses unsafe schemes', async () => {
    const tpl = docx(link('rId7', 'home'), { 'word/_rels/document.xml.rels': rels({ rId7: '%7Burl%7D' }) });
    const out = await render(tpl, {});
    expect(docText(out)).toEqual(['home']);
    expect(unzipText(out).get('word/document.xml')).toContain('<w:hyperlink w:history="1">');
    const err = await render(tpl, { url: 'javascript:alert(1)' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TemplateError);
    expect((err as TemplateError).errors[0]?.id).toBe('link_invalid');
  });

  it('works on PowerPoint slides (a:hlinkClick)', async () => {
    const sp =
      '<p:sp><p:nvSpPr><p:cNvPr id="2" name="S"/><p:cNvSpPr/><p:nvPr/></p:nvSpPr><p:spPr/><p:txBody><a:bodyPr/><a:p><a:r><a:rPr lang="en-US"><a:hlinkClick r:id="rId3"/></a:rPr><a:t>site</a:t></a:r></a:p></p:txBody></p:sp>';
    const files: Record<string, string> = {};
    for (const [k, v] of unzipText(pptx([sp]))) files[k] = v;
    files['ppt/slides/_rels/slide1.xml.rels'] = rels({ rId3: '%7Bhome%7D' });
    const out = unzipText(await render(zip(files), { home: 'https://docgen.test/' }));
    const id = /<a:hlinkClick r:id="([^"]*)"/.exec(out.get('ppt/slides/slide1.xml') ?? '')?.[1] ?? '';
    expect(targetsOf(out.get('ppt/slides/_rels/slide1.xml.rels') ?? '').get(id)).toBe('https://docgen.test/');
  });
});
