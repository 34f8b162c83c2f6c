// Accessible pdfs without LibreOffice: the request's option, the conversion plan, the package checks behind
// the warnings, the template's language, the image tag's alt text and decorative mark, and the XMP
// rewrite of an accessible PDF/A file (test/integration/accessible.test.ts runs the whole path).
import { describe, expect, it } from 'vitest';
import { accessibilityProblems, templateLanguage } from '../../../converter/accessible.ts';
import { ConvertError } from '../../../converter/errors.ts';
import { GotenbergConverter } from '../../../converter/gotenberg.ts';
import { planConversion } from '../../../converter/options.ts';
import { claimPdfaLevelA, levelAXmp, setCatalogLanguage } from '../../../converter/pdf-accessible.ts';
import { pdfaIdentification, pdfPageCount } from '../../../converter/pdf.ts';
import { parseSaveOptions } from '../../../core/save-options.ts';
import { render } from '../../../engine/index.ts';
import { docx, p, partText, PNG_2x1, zip } from '../engine/helpers.ts';

const png = `data:image/png;base64,${PNG_2x1.toString('base64')}`;
const W = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main';

describe('document.options.accessible', () => {
  it('is read for pdf output only, as true or false', () => {
    expect(parseSaveOptions({ accessible: true }, 'pdf', 'document.options')).toEqual({
      options: { pdf: { accessible: true } },
      problems: [],
    });
    expect(
      parseSaveOptions({ accessible: true, pdfSaveOptions: '{"pdfConformanceLevel":"PdfA2B"}' }, 'pdf', 'document.options').options,
    ).toEqual({ pdf: { accessible: true, conformance: 'PdfA2B' } });
    expect(parseSaveOptions({ accessible: false }, 'pdf', 'document.options').options).toEqual({});
    expect(
      parseSaveOptions({ accessible: true, pdfSaveOptions: { pdfConformanceLevel: 'PdfA1B' } }, 'pdf', 'document.options').problems,
    ).toEqual([
      expect.objectContaining({ message: expect.stringContaining('document.options.accessible cannot be combined with PdfA1B') }),
    ]);
    expect(parseSaveOptions({ accessible: true }, 'docx', 'document.options').problems).toEqual([
      expect.objectContaining({ message: 'document.options.accessible applies to pdf output only (fileFormat is docx)' }),
    ]);
    expect(parseSaveOptions({ accessible: 'yes' }, 'pdf', 'targetDocument.options').problems).toEqual([
      expect.objectContaining({ message: 'targetDocument.options.accessible must be true or false (got "yes")' }),
    ]);
  });

  it('plans a tagged PDF/UA-1 export with its title and language; a workbook is refused', () => {
    const plan = planConversion({ from: 'docx', to: 'pdf', pdf: { accessible: true }, title: ' Invoice 7 ', language: 'de-CH' });
    expect(plan.filterData).toEqual({ UseTaggedPDF: true, PDFUACompliance: true, DisplayPDFDocumentTitle: true });
    expect(plan.accessible).toEqual({ title: 'Invoice 7', language: 'de-CH' });
    const pdfa = planConversion({ from: 'pptx', to: 'pdf', pdf: { accessible: true, conformance: 'PdfA2B' } });
    expect(pdfa).toMatchObject({ pdfaPart: 2, filterData: { SelectPdfVersion: 2, UseTaggedPDF: true, PDFUACompliance: true } });
    expect(planConversion({ from: 'docx', to: 'pdf' }).accessible).toBeUndefined();
    expect(() => planConversion({ from: 'docx', to: 'pdf', pdf: { accessible: true, conformance: 'PdfA1B' } })).toThrow(
      /cannot be PDF\/A-1/,
    );
    expect(() => planConversion({ from: 'xlsx', to: 'pdf', pdf: { accessible: true } })).toThrow(ConvertError);
    expect(() => planConversion({ from: 'xlsx', to: 'pdf', pdf: { accessible: true } })).toThrow(/spreadsheets without a structure tree/);
  });
});

describe('image tags: alt text and the decorative mark from the data', () => {
  it('writes alt as the picture description (escaped) and decorative as Office marks it', async () => {
    const template = docx(p('{%logo}') + p('{%band}'));
    const out = await render(template, {
      logo: { data: png, alt: 'Smith & Sons "logo"' },
      band: { data: png, decorative: true },
    });
    const xml = partText(out, 'word/document.xml');
    expect(xml).toMatch(/<wp:docPr id="\d+" name="Picture \d+" descr="Smith &amp; Sons &quot;logo&quot;"\/>/);
    expect(xml).toContain('<adec:decorative xmlns:adec="http://schemas.microsoft.com/office/drawing/2017/decorative" val="1"/>');
    // The band is decorative but has no description: LibreOffice 7.4 would make it a figure without alt text.
    expect(accessibilityProblems(out, 'docx')).toEqual([
      expect.objectContaining({
        code: 'IMAGE_WITHOUT_ALT_TEXT',
        part: 'word/document.xml',
        message: expect.stringContaining('marked decorative'),
      }),
    ]);
  });

  it('a plain value stays as before: no description', async () => {
    const out = await render(docx(p('{%logo}')), { logo: png });
    expect(partText(out, 'word/document.xml')).toMatch(/<wp:docPr id="\d+" name="Picture \d+"\/>/);
    expect(accessibilityProblems(out, 'docx')).toEqual([
      expect.objectContaining({ code: 'IMAGE_WITHOUT_ALT_TEXT', message: expect.stringContaining('has no alternative text') }),
    ]);
  });
});

describe('what a screen reader would miss', () => {
  const row = (header: boolean) => `<w:tr>${header ? '<w:trPr><w:tblHeader/></w:trPr>' : ''}<w:tc><w:tcPr/>${p('Item')}</w:tc></w:tr>`;
  const table = (header: boolean) => `<w:tbl><w:tblPr/><w:tblGrid><w:gridCol w:w="2000"/></w:tblGrid>${row(header)}</w:tbl>`;

  it('counts Word tables whose first row is not a header row', () => {
    expect(accessibilityProblems(docx(table(true) + p('x')), 'docx')).toEqual([]);
    expect(accessibilityProblems(docx(table(false) + p('x') + table(false) + p('y')), 'docx')).toEqual([
      expect.objectContaining({
        code: 'TABLE_WITHOUT_HEADER_ROW',
        message: expect.stringContaining('2 tables in word/document.xml have no header row'),
      }),
    ]);
  });

  it("reads the template's own language: Word's document defaults, a presentation's default text style", () => {
    const styles = `<w:styles xmlns:w="${W}"><w:docDefaults><w:rPrDefault><w:rPr><w:lang w:val="fr-CH"/></w:rPr></w:rPrDefault></w:docDefaults></w:styles>`;
    expect(templateLanguage(docx(p('x'), { 'word/styles.xml': styles }), 'docx')).toBe('fr-CH');
    expect(templateLanguage(docx(p('x')), 'docx')).toBeUndefined();
    const pres = (lang: string) =>
      zip({
        'ppt/presentation.xml': `<p:presentation xmlns:p="p" xmlns:a="a"><p:defaultTextStyle><a:lvl1pPr><a:defRPr ${lang}/></a:lvl1pPr></p:defaultTextStyle></p:presentation>`,
      });
    expect(templateLanguage(pres('lang="it-IT"'), 'pptx')).toBe('it-IT');
    expect(templateLanguage(pres(''), 'pptx')).toBeUndefined();
  });
});

/** A minimal classic-xref pdf as LibreOffice writes one: catalog with /Lang and /Metadata (an XMP packet). */
function minimalPdf(xmp: string, lang = 'en-US'): Uint8Array {
  const objs = [
    `<</Type/Catalog/Pages 2 0 R/Metadata 4 0 R/Lang(${lang})/MarkInfo<</Marked true>>>>`,
    '<</Type/Pages/Kids[3 0 R]/Count 1>>',
    '<</Type/Page/Parent 2 0 R/MediaBox[0 0 10 10]>>',
    `<</Type/Metadata/Subtype/XML/Length ${Buffer.byteLength(xmp)}>>\nstream\n${xmp}\nendstream`,
  ];
  let out = '%PDF-1.6\n';
  const offsets: number[] = [];
  objs.forEach((o, i) => {
    offsets.push(Buffer.byteLength(out, 'latin1'));
    out += `${i + 1} 0 obj\n${o}\nendobj\n`;
  });
  const xref = Buffer.byteLength(out, 'latin1');
  out += `xref\n0 ${objs.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  out += `trailer\n<</Size ${objs.length + 1}/Root 1 0 R/ID[<00><00>]>>\nstartxref\n${xref}\n%%EOF\n`;
  return new Uint8Array(Buffer.from(out, 'latin1'));
}

const XMP =
  '<?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?><x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">' +
  '<rdf:Description rdf:about="" xmlns:pdfaid="http://www.aiim.org/pdfa/ns/id/"><pdfaid:part>2</pdfaid:part><pdfaid:conformance>B</pdfaid:conformance></rdf:Description>' +
  '<rdf:Description rdf:about="" xmlns:pdfuaid="http://www.aiim.org/pdfua/ns/id/"><pdfuaid:part>1</pdfuaid:part></rdf:Description>' +
  '</rdf:RDF></x:xmpmeta><?xpacket end="w"?>';

describe('an accessible PDF/A file', () => {
  it('is claimed at level A with the pdfuaid extension schema, once, in an incremental update', () => {
    const before = minimalPdf(XMP);
    expect(pdfaIdentification(before)).toEqual({ part: 2, conformance: 'B' });
    const after = claimPdfaLevelA(before);
    expect(Buffer.from(after.subarray(0, before.byteLength)).equals(Buffer.from(before))).toBe(true);
    expect(pdfaIdentification(after)).toEqual({ part: 2, conformance: 'A' });
    expect(pdfPageCount(after)).toBe(1);
    const twice = levelAXmp(levelAXmp(XMP));
    expect(twice.match(/<pdfaSchema:prefix>pdfuaid<\/pdfaSchema:prefix>/g)).toHaveLength(1);
  });

  it('gets the language docgen set in its catalog when the export wrote another; the same language changes nothing', () => {
    const pdf = minimalPdf(XMP, 'en-US');
    const set = setCatalogLanguage(pdf, 'de-CH');
    const text = Buffer.from(set).toString('latin1');
    expect([...text.matchAll(/\/Lang\(([^)]*)\)/g)].at(-1)?.[1]).toBe('de-CH');
    expect(pdfPageCount(set)).toBe(1);
    expect(setCatalogLanguage(pdf, 'en-US')).toBe(pdf);
    // Both updates in a row, as the converter applies them.
    expect(pdfaIdentification(claimPdfaLevelA(set))).toEqual({ part: 2, conformance: 'A' });
  });
});

describe('with Gotenberg', () => {
  it('refuses an accessible pdf before sending anything, naming the embedded pool', async () => {
    // Nothing listens at this address: a request would fail otherwise, not with this refusal.
    const gotenberg = new GotenbergConverter({ url: 'http://127.0.0.1:9' });
    await expect(gotenberg.convert(docx(p('x')), { from: 'docx', to: 'pdf', pdf: { accessible: true } })).rejects.toMatchObject({
      code: 'UNSUPPORTED',
      message: expect.stringContaining('needs the embedded LibreOffice pool'),
    });
  });
});
