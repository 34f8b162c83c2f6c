// The OOXML sanitizer against the ways around it that a regular-expression scan allowed (issue 11 §4):
// every relationship part and every part that can carry fields is parsed as XML, whatever its path or
// case, and what an XML parser reads is what gets judged.
import { describe, expect, it } from 'vitest';
import { ConvertError } from '../../../converter/index.ts';
import { entryText, makeEntry, readZip, writeZip } from '../../../converter/zip.ts';
import { fieldRun, makeDocx, makeXlsx, para, pictureRun, png } from '../../integration/convert/fixtures.ts';
import { sanitizeParts } from '../../../converter/sanitize.ts';
import type { OutEntry } from '../../../engine/zip.ts';
import { sanitizeBothWays } from '../../support/package-parts.ts';

const XML = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';
const W = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main';
const PKG_RELS = 'http://schemas.openxmlformats.org/package/2006/relationships';
const REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';

const relsPart = (inner: string) => `${XML}<Relationships xmlns="${PKG_RELS}">${inner}</Relationships>`;
const wordPart = (root: string, inner: string, prefix = 'w') =>
  `${XML}<${prefix}:${root} xmlns:${prefix}="${W}" xmlns:r="${REL}">${inner}</${prefix}:${root}>`;

function part(bytes: Uint8Array, name: string): string {
  const e = readZip(bytes).find((x) => x.name === name);
  if (!e) throw new Error(`no part ${name}`);
  return entryText(e);
}

function refusal(bytes: Uint8Array): string {
  try {
    sanitizeBothWays(bytes, 'docx');
  } catch (e) {
    expect(e).toBeInstanceOf(ConvertError);
    expect((e as ConvertError).code).toBe('BAD_INPUT');
    return (e as ConvertError).message;
  }
  throw new Error('expected the package to be refused');
}

/** A docx whose document relationships are `rels` (raw XML of <Relationship> elements). */
const withRels = (rels: string, body = para('x')) => makeDocx({ body, rels });

describe('sanitizeOoxml: relationships', () => {
  it('strips an external relationship when an attribute holding ">" comes before TargetMode', () => {
    const docx = withRels(
      `<Relationship Id="rIdX" Type="${REL}/image" Descr="a > b" Target="file:///etc/passwd" TargetMode="External"/>`,
      pictureRun('rIdX', 'link', 1),
    );
    const r = sanitizeBothWays(docx, 'docx');
    expect(r.removed).toEqual(['word/_rels/document.xml.rels#rIdX: external image → file:///etc/passwd']);
    expect(part(r.bytes, 'word/_rels/document.xml.rels')).not.toContain('rIdX');
  });

  it('strips TargetMode="External " (trailing space), any case and surrounding white space', () => {
    for (const mode of ['External ', ' external', 'EXTERNAL', '\tExternal\n', 'External&#32;']) {
      const docx = withRels(`<Relationship Id="rIdX" Type="${REL}/image" Target="images/x.png" TargetMode="${mode}"/>`);
      const r = sanitizeBothWays(docx, 'docx');
      expect(r.removed, JSON.stringify(mode)).toEqual(['word/_rels/document.xml.rels#rIdX: external image → images/x.png']);
    }
  });

  it('reads attributes as XML does: a quoted value is not an attribute, entities are decoded', () => {
    // The single-quoted value contains text that looks like TargetMode="Internal"; the real one says External.
    const decoy = `<Relationship Id="rIdA" Type="${REL}/image" Descr='TargetMode="Internal"' Target="x.png" TargetMode="External"/>`;
    // The target spelled with character references.
    const encoded = `<Relationship Id="rIdB" Type="${REL}/image" Target="&#x66;ile:///etc/passwd"/>`;
    // An internal relationship cannot point at another machine or a drive.
    const unc = `<Relationship Id="rIdC" Type="${REL}/oleObject" Target="\\\\server\\share\\x.xls"/>`;
    const drive = `<Relationship Id="rIdD" Type="${REL}/image" Target="C:/secret.png" TargetMode="Internal"/>`;
    const r = sanitizeBothWays(withRels(decoy + encoded + unc + drive), 'docx');
    expect(r.removed.map((x) => x.split(':')[0])).toEqual([
      'word/_rels/document.xml.rels#rIdA',
      'word/_rels/document.xml.rels#rIdB',
      'word/_rels/document.xml.rels#rIdC',
      'word/_rels/document.xml.rels#rIdD',
    ]);
    expect(part(r.bytes, 'word/_rels/document.xml.rels')).not.toMatch(/rIdA|rIdB|rIdC|rIdD/);
  });

  it('judges relationship parts of any path and case, written with a prefix', () => {
    const prefixed = `${XML}<p:Relationships xmlns:p="${PKG_RELS}"><p:Relationship Id="rIdP" Type="${REL}/image" Target="http://169.254.169.254/x.png" TargetMode="External"></p:Relationship></p:Relationships>`;
    const docx = makeDocx({
      body: para('x'),
      extra: {
        'word/sub/_rels/header1.xml.rels': relsPart(
          `<Relationship Id="rIdH" Type="${REL}/image" Target="file:///etc/hostname" TargetMode="External"/>`,
        ),
        'word/_rels/footer1.XML.RELS': prefixed,
      },
    });
    const r = sanitizeBothWays(docx, 'docx');
    expect(r.removed).toEqual([
      'word/sub/_rels/header1.xml.rels#rIdH: external image → file:///etc/hostname',
      'word/_rels/footer1.XML.RELS#rIdP: external image → http://169.254.169.254/x.png',
    ]);
    expect(part(r.bytes, 'word/_rels/footer1.XML.RELS')).toBe(`${XML}<p:Relationships xmlns:p="${PKG_RELS}"></p:Relationships>`);
  });

  it('keeps http(s) hyperlinks used as links, strips one an image uses (r:link) or a non-hyperlink type', () => {
    const rels =
      `<Relationship Id="rIdLink" Type="${REL}/hyperlink" Target="https://example.org/" TargetMode="External"/>` +
      `<Relationship Id="rIdSneaky" Type="${REL}/hyperlink" Target="http://10.0.0.1/x.png" TargetMode="External"/>` +
      `<Relationship Id="rIdFake" Type="http://evil.example/hyperlink" Target="https://example.org/" TargetMode="External"/>`;
    const body = `<w:p><w:hyperlink r:id="rIdLink"><w:r><w:t>a link</w:t></w:r></w:hyperlink></w:p>` + pictureRun('rIdSneaky', 'link', 1);
    const r = sanitizeBothWays(withRels(rels, body), 'docx');
    expect(r.removed).toEqual([
      'word/_rels/document.xml.rels#rIdSneaky: external hyperlink → http://10.0.0.1/x.png',
      'word/_rels/document.xml.rels#rIdFake: external hyperlink → https://example.org/',
    ]);
    expect(part(r.bytes, 'word/_rels/document.xml.rels')).toContain('rIdLink');
  });

  it('judges a template’s own part again when its relationships change between merges (the verdicts kept per entry)', () => {
    // A template's document (the same entry in every merge) uses rIdSneaky as an image link; a merge's
    // rendered relationships first have no such id, then make it an external hyperlink, which must then go.
    const body = pictureRun('rIdSneaky', 'link', 1);
    const template = readZip(withRels('', body));
    const merge = (rels: string): OutEntry[] =>
      template.map((entry) =>
        entry.name === 'word/_rels/document.xml.rels'
          ? { name: entry.name, data: Buffer.from(`${XML}<Relationships xmlns="${PKG_RELS}">${rels}</Relationships>`) }
          : { name: entry.name, entry },
      );
    expect(sanitizeParts(merge(''), 'docx').removed).toEqual([]);
    const sneaky = `<Relationship Id="rIdSneaky" Type="${REL}/hyperlink" Target="http://10.0.0.1/x.png" TargetMode="External"/>`;
    for (let i = 0; i < 2; i++)
      expect(sanitizeParts(merge(sneaky), 'docx').removed).toEqual([
        'word/_rels/document.xml.rels#rIdSneaky: external hyperlink → http://10.0.0.1/x.png',
      ]);
    // And back: the verdict without the hyperlink is given again.
    expect(sanitizeParts(merge(''), 'docx').removed).toEqual([]);
  });

  it('refuses a template’s refused part in every merge, not only the first', () => {
    const template = readZip(withRels('', `<w:p><w:r><w:t>&undefined;</w:t></w:r></w:p>`));
    const parts: OutEntry[] = template.map((entry) => ({ name: entry.name, entry }));
    for (let i = 0; i < 3; i++) expect(() => sanitizeParts(parts, 'docx')).toThrow(/undefined entity reference/);
  });

  it('refuses a relationship with two TargetMode spellings rather than guessing which one counts', () => {
    expect(
      refusal(withRels(`<Relationship Id="rIdX" Type="${REL}/image" Target="x.png" TargetMode="Internal" targetmode="External"/>`)),
    ).toMatch(/2 TargetMode attributes/);
    expect(
      refusal(withRels(`<Relationship Id="rIdX" Type="${REL}/image" Target="x.png" TargetMode="Internal" TargetMode="External"/>`)),
    ).toMatch(/appears twice/);
  });
});

describe('sanitizeOoxml: fields in any part', () => {
  const include = fieldRun('INCLUDETEXT "/etc/passwd"', 'cached');

  it('blanks fields in word/sub/header1.xml and word/document.XML', () => {
    const docx = writeZip(
      readZip(makeDocx({ body: para('x'), extra: { 'word/sub/header1.xml': wordPart('hdr', include) } })).map((e) =>
        e.name === 'word/document.xml' ? makeEntry('word/document.XML', entryText(e).replace('<w:body>', `<w:body>${include}`)) : e,
      ),
    );
    const r = sanitizeBothWays(docx, 'docx');
    expect(r.removed).toEqual([
      'word/document.XML: field INCLUDETEXT "/etc/passwd"',
      'word/sub/header1.xml: field INCLUDETEXT "/etc/passwd"',
    ]);
    for (const name of ['word/document.XML', 'word/sub/header1.xml']) {
      expect(part(r.bytes, name)).not.toContain('INCLUDETEXT');
      expect(part(r.bytes, name)).toContain('cached');
    }
  });

  it('judges a part by its content, not its name (a header stored as .dat)', () => {
    const r = sanitizeBothWays(makeDocx({ body: para('x'), extra: { 'word/header9.dat': wordPart('hdr', include) } }), 'docx');
    expect(r.removed).toEqual(['word/header9.dat: field INCLUDETEXT "/etc/passwd"']);
  });

  it('reads the instruction as XML does: any prefix, CDATA, comments, entities, delInstrText, fldSimple', () => {
    const begin = '<x:r><x:fldChar x:fldCharType="begin"/></x:r>';
    const end = '<x:r><x:fldChar x:fldCharType="end"/></x:r>';
    const cases = [
      `<x:p>${begin}<x:r><x:instrText><![CDATA[ INCLUDEPICTURE "http://127.0.0.1/x.png" ]]></x:instrText></x:r>${end}</x:p>`,
      `<x:p>${begin}<x:r><x:instrText> INCLU<!-- split -->DETEXT "c:\\\\a.docx"</x:instrText></x:r>${end}</x:p>`,
      `<x:p>${begin}<x:r><x:instrText> &#x49;NCLUDETEXT "c:\\\\a.docx"</x:instrText></x:r>${end}</x:p>`,
      `<x:p>${begin}<x:r><x:delInstrText> LINK Excel.Sheet.8 "c:\\\\a.xls"</x:delInstrText></x:r>${end}</x:p>`,
      `<x:p><x:fldSimple x:instr=" DDEAUTO c:\\\\windows\\\\system32\\\\cmd.exe &quot;/k calc&quot; "/></x:p>`,
      `<x:p><x:fldSimple x:fldLock="0" x:instr="  DATABASE \\d &quot;c:\\\\db.mdb&quot;"><x:r><x:t>old</x:t></x:r></x:fldSimple></x:p>`,
      `<x:p>${begin}<x:r><x:instrText xml:space="preserve"> </x:instrText></x:r>${begin}<x:r><x:instrText>QUOTE "INCLUDETEXT"</x:instrText></x:r>${end}<x:r><x:instrText> "c:\\\\a.docx"</x:instrText></x:r>${end}</x:p>`,
    ];
    for (const body of cases) {
      const docx = makeDocx({ body: para('x'), extra: { 'word/footer1.xml': wordPart('ftr', body, 'x') } });
      const r = sanitizeBothWays(docx, 'docx');
      expect(r.removed, body).toHaveLength(1);
      expect(part(r.bytes, 'word/footer1.xml'), body).not.toMatch(/INCLU|DETEXT|LINK|DDE|DATABASE/);
    }
  });

  it('leaves harmless fields and nested fields in a cached result alone', () => {
    const body =
      fieldRun('PAGE', '1') +
      '<w:p><w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText> IF 1 = 1 </w:instrText></w:r><w:r><w:fldChar w:fldCharType="separate"/></w:r>' +
      '<w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText> NUMPAGES </w:instrText></w:r><w:r><w:fldChar w:fldCharType="end"/></w:r><w:r><w:fldChar w:fldCharType="end"/></w:r></w:p>';
    const docx = makeDocx(body);
    expect(sanitizeBothWays(docx, 'docx')).toEqual({ bytes: docx, removed: [], embedsFonts: false });
  });

  it('drops absolute href/src attributes (VML imagedata) and altChunk elements in any part', () => {
    const vml = `<w:p><w:r><w:pict><v:shape xmlns:v="urn:schemas-microsoft-com:vml" xmlns:o="urn:schemas-microsoft-com:office:office"><v:imagedata src="file:///etc/passwd" o:href="\\\\host\\share\\a.png" o:title="kept"/></v:shape></w:pict></w:r></w:p>`;
    const r = sanitizeBothWays(
      makeDocx({
        body: para('x'),
        extra: { 'word/header2.xml': wordPart('hdr', vml + '<w:altChunk r:id="rIdAlt"><w:altChunkPr/></w:altChunk>') },
      }),
      'docx',
    );
    expect(r.removed).toEqual([
      'word/header2.xml: <v:imagedata> src → file:///etc/passwd',
      'word/header2.xml: <v:imagedata> o:href → \\\\host\\share\\a.png',
    ]);
    const out = part(r.bytes, 'word/header2.xml');
    expect(out).toContain('<v:imagedata o:title="kept"/>');
    expect(out).not.toMatch(/altChunk|passwd|share/);
    // An SVG picture: its external image goes, its embedded raster (data:) one and its fragment links stay.
    const pngUri = `data:image/png;base64,${Buffer.from(png()).toString('base64')}`;
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"><image href="http://169.254.169.254/latest"/><image xlink:href="${pngUri}"/><use href="#a"/></svg>`;
    const s = sanitizeBothWays(makeDocx({ body: para('x'), extra: { 'word/media/image1.svg': svg } }), 'docx');
    expect(s.removed).toEqual(['word/media/image1.svg: <image> href → http://169.254.169.254/latest']);
    expect(part(s.bytes, 'word/media/image1.svg')).toContain(`<image xlink:href="${pngUri}"/><use href="#a"/>`);
  });
});

describe('sanitizeOoxml: refused packages', () => {
  it('refuses parts an XML parser would read differently: UTF-16, other encodings, undefined entities, bad nesting, DOCTYPE anywhere', () => {
    const utf16 = new Uint8Array([0xff, 0xfe, ...Buffer.from(wordPart('hdr', fieldRun('INCLUDETEXT "x"', '')), 'utf16le')]);
    const cases: [Record<string, string | Uint8Array>, RegExp][] = [
      [{ 'word/header1.xml': utf16 }, /UTF-16/],
      [{ 'word/header1.xml': `<?xml version="1.0" encoding="UTF-7"?><w:hdr xmlns:w="${W}"/>` }, /encoding UTF-7 is refused/],
      [{ 'word/header1.xml': wordPart('hdr', '<w:p><w:r><w:t>&xxe;</w:t></w:r></w:p>') }, /undefined entity|not well-formed/],
      [{ 'word/header1.xml': wordPart('hdr', '<w:p><w:r></w:p></w:r>') }, /not well-formed/],
      [{ 'word/sub/header1.XML': `<!DOCTYPE x [<!ENTITY a SYSTEM "file:///etc/passwd">]><x>&a;</x>` }, /DOCTYPE/],
      [
        { 'word/_rels/document.xml.rels': relsPart(`<Relationship Id="a" Type="t" Target="x.png"TargetMode="External"/>`) },
        /separated by white space/,
      ],
    ];
    for (const [extra, message] of cases) expect(refusal(makeDocx({ body: para('x'), extra }))).toMatch(message);
  });

  it('refuses spreadsheet DDE/OLE links and blanks DDE formulas, keeping their cached value', () => {
    const xlsx = makeXlsx([{ name: 'S', rows: [['a']] }]);
    const dde = writeZip([
      ...readZip(xlsx),
      makeEntry(
        'xl/externalLinks/externalLink1.xml',
        `${XML}<externalLink xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><ddeLink ddeService="cmd" ddeTopic="/c calc"/></externalLink>`,
      ),
    ]);
    expect(() => sanitizeBothWays(dde, 'xlsx')).toThrow(/DDE links are refused/);
    const withFormula = writeZip(
      readZip(xlsx).map((e) =>
        e.name === 'xl/worksheets/sheet1.xml'
          ? makeEntry(e.name, entryText(e).replace(/<c r="A1"[^]*?<\/c>/, `<c r="A1"><f>cmd|' /C calc'!A0 &amp; "a|b"</f><v>0</v></c>`))
          : e,
      ),
    );
    const r = sanitizeBothWays(withFormula, 'xlsx');
    expect(r.removed).toHaveLength(1);
    const sheet = part(r.bytes, 'xl/worksheets/sheet1.xml');
    expect(sheet).toContain('<c r="A1"><f></f><v>0</v></c>');
    // A "|" inside a string literal is no DDE reference.
    const literal = writeZip(
      readZip(xlsx).map((e) =>
        e.name === 'xl/worksheets/sheet1.xml'
          ? makeEntry(e.name, entryText(e).replace(/<c r="A1"[^]*?<\/c>/, `<c r="A1"><f>"a|b"</f><v>0</v></c>`))
          : e,
      ),
    );
    expect(sanitizeBothWays(literal, 'xlsx').removed).toEqual([]);
  });
});
