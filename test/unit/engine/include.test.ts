import { describe, expect, it } from 'vitest';
import { render, TemplateError } from '../../support/engine.ts';
import { docText, docx, p, PNG_2x1, unzipText } from './helpers.ts';

const W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"';
const styles = (defs: string): string => `<?xml version="1.0"?><w:styles ${W}>${defs}</w:styles>`;
const numbering = (n: number): string =>
  `<?xml version="1.0"?><w:numbering ${W}><w:abstractNum w:abstractNumId="${n}"><w:lvl w:ilvl="0"><w:numFmt w:val="decimal"/></w:lvl></w:abstractNum><w:num w:numId="${n}"><w:abstractNumId w:val="${n}"/></w:num></w:numbering>`;

/** A picture as Word writes it inline (wp:inline), showing the image of relationship `rId`. */
const inlinePicture = (rId: string): string =>
  '<wp:inline distT="0" distB="0" distL="0" distR="0" xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing"><wp:extent cx="19050" cy="9525"/><wp:docPr id="1" name="p"/>' +
  '<a:graphic xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/picture"><pic:pic xmlns:pic="http://schemas.openxmlformats.org/drawingml/2006/picture">' +
  `<pic:nvPicPr><pic:cNvPr id="0" name="p"/><pic:cNvPicPr/></pic:nvPicPr><pic:blipFill><a:blip r:embed="${rId}"/><a:stretch><a:fillRect/></a:stretch></pic:blipFill>` +
  '<pic:spPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="19050" cy="9525"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom></pic:spPr></pic:pic></a:graphicData></a:graphic></wp:inline>';

describe('include {>name}', () => {
  it('inserts the rendered body of a related template with its styles, numbering and images', async () => {
    const included = docx(
      '<w:p><w:pPr><w:pStyle w:val="Fancy"/><w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr></w:pPr><w:r><w:t>Item {name}</w:t></w:r></w:p>' +
        `<w:p><w:r><w:drawing>${inlinePicture('rId7')}</w:drawing></w:r></w:p>`,
      {
        'word/styles.xml': styles(
          '<w:style w:styleId="Fancy"><w:basedOn w:val="Base"/></w:style><w:style w:styleId="Base"/><w:style w:styleId="Normal"/>',
        ),
        'word/numbering.xml': numbering(1),
        'word/_rels/document.xml.rels':
          '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId7" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/image" Target="media/pic.png"/></Relationships>',
        'word/media/pic.png': PNG_2x1,
      },
    );
    const host = docx(p('Start') + p('{#items}') + p('{>part}') + p('{/items}') + p('End'), {
      'word/styles.xml': styles('<w:style w:styleId="Normal"/>'),
      'word/numbering.xml': numbering(1),
    });
    const out = await render(host, { items: [{ name: 'a' }, { name: 'b' }] }, { relatedItems: { part: included } });
    expect(docText(out)).toEqual(['Start', 'Item a', '', 'Item b', '', 'End']);
    const files = unzipText(out);
    const doc = files.get('word/document.xml') ?? '';
    // The included body's own section properties (here `<w:sectPr/>`) stay behind: only the host's, last.
    expect(doc.match(/<w:sectPr\b/g)).toHaveLength(1);
    expect(doc).toMatch(/<w:sectPr\/><\/w:body>/);
    expect(files.get('word/styles.xml')).toContain('<w:style w:styleId="Fancy">');
    expect(files.get('word/styles.xml')).toContain('<w:style w:styleId="Base"/>');
    expect(files.get('word/styles.xml')?.match(/styleId="Normal"/g)?.length).toBe(1);
    // Included lists get their own num ids (2 and 3), not the host's list 1.
    expect([...doc.matchAll(/<w:numId w:val="(\d+)"/g)].map((m) => m[1])).toEqual(['2', '3']);
    expect(files.get('word/numbering.xml')).toContain('<w:num w:numId="3"><w:abstractNumId w:val="3"/></w:num>');
    const embed = /r:embed="([^"]+)"/.exec(doc)?.[1] ?? '';
    const rels = files.get('word/_rels/document.xml.rels') ?? '';
    const target = new RegExp(`Id="${embed}"[^>]*Target="([^"]+)"`).exec(rels)?.[1] ?? '';
    expect(files.has(`word/${target}`)).toBe(true);
    expect([...doc.matchAll(/<wp:docPr id="(\d+)"/g)].map((m) => m[1])).toHaveLength(2);
    expect(new Set([...doc.matchAll(/<wp:docPr id="(\d+)"/g)].map((m) => m[1])).size).toBe(2);
  });

  it('reports a missing related template and include cycles', async () => {
    const err = await render(docx(p('{>nope}')), {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TemplateError);
    expect((err as TemplateError).errors.map((e) => e.id)).toEqual(['include_missing']);
    const self = docx(p('{>self}'));
    const err2 = await render(self, {}, { relatedItems: { self } }).catch((e: unknown) => e);
    expect((err2 as TemplateError).errors.map((e) => e.id)).toEqual(['include_cycle']);
  });
});
