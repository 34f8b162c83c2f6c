import { describe, expect, it } from 'vitest';
import { render, TemplateError } from '../../support/engine.ts';
import { docx, p, paragraphs, PNG_2x1, unzipText, zip } from './helpers.ts';
import { pdfInLibreOffice } from './libreoffice.ts';
import { packageProblems } from './package-check.ts';

const XML = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>';
const P = 'http://schemas.openxmlformats.org/presentationml/2006/main';
const A = 'http://schemas.openxmlformats.org/drawingml/2006/main';
const R = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const PKG = 'http://schemas.openxmlformats.org/package/2006/relationships';
const NS = `xmlns:p="${P}" xmlns:a="${A}" xmlns:r="${R}"`;

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

interface SlideSpec {
  /** Text of the slide's one text box. */
  text: string;
  /** Extra shapes (XML) on the slide. */
  shapes?: string;
  /** Extra relationships of the slide. */
  rels?: string;
  /** Layout index (1-based) the slide uses. */
  layout?: number;
  /** Text of the slide's notes page. */
  notes?: string;
}

/** A presentation with one master, the named layouts, and one text box per slide. */
function deck(
  slides: SlideSpec[],
  layouts: Array<{ name: string; type: string }>,
  extra: Record<string, Uint8Array> = {},
  defaults = '',
): Uint8Array {
  const tree =
    '<p:cSld><p:spTree><p:nvGrpSpPr><p:cNvPr id="1" name=""/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr><p:grpSpPr/></p:spTree></p:cSld>';
  const files: Record<string, string | Uint8Array> = {
    '[Content_Types].xml':
      `${XML}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
      `<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>${defaults}` +
      '<Override PartName="/ppt/presentation.xml" ContentType="application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml"/>' +
      '<Override PartName="/ppt/slideMasters/slideMaster1.xml" ContentType="application/vnd.openxmlformats-officedocument.presentationml.slideMaster+xml"/>' +
      layouts
        .map(
          (_, i) =>
            `<Override PartName="/ppt/slideLayouts/slideLayout${i + 1}.xml" ContentType="application/vnd.openxmlformats-officedocument.presentationml.slideLayout+xml"/>`,
        )
        .join('') +
      slides
        .map(
          (_, i) =>
            `<Override PartName="/ppt/slides/slide${i + 1}.xml" ContentType="application/vnd.openxmlformats-officedocument.presentationml.slide+xml"/>`,
        )
        .join('') +
      slides
        .map((sl, i) =>
          sl.notes === undefined
            ? ''
            : `<Override PartName="/ppt/notesSlides/notesSlide${i + 1}.xml" ContentType="application/vnd.openxmlformats-officedocument.presentationml.notesSlide+xml"/>`,
        )
        .join('') +
      '</Types>',
    '_rels/.rels': `${XML}<Relationships xmlns="${PKG}"><Relationship Id="rId1" Type="${R}/officeDocument" Target="ppt/presentation.xml"/></Relationships>`,
    'ppt/presentation.xml':
      `${XML}<p:presentation ${NS}><p:sldMasterIdLst><p:sldMasterId id="2147483648" r:id="rIdM"/></p:sldMasterIdLst><p:sldIdLst>` +
      slides.map((_, i) => `<p:sldId id="${256 + i}" r:id="rId${i + 1}"/>`).join('') +
      '</p:sldIdLst><p:sldSz cx="9144000" cy="6858000"/><p:notesSz cx="6858000" cy="9144000"/></p:presentation>',
    'ppt/_rels/presentation.xml.rels':
      `${XML}<Relationships xmlns="${PKG}"><Relationship Id="rIdM" Type="${R}/slideMaster" Target="slideMasters/slideMaster1.xml"/>` +
      slides.map((_, i) => `<Relationship Id="rId${i + 1}" Type="${R}/slide" Target="slides/slide${i + 1}.xml"/>`).join('') +
      '</Relationships>',
    'ppt/slideMasters/slideMaster1.xml':
      `${XML}<p:sldMaster ${NS}>${tree}<p:clrMap bg1="lt1" tx1="dk1" bg2="lt2" tx2="dk2" accent1="accent1" accent2="accent2" accent3="accent3" accent4="accent4" accent5="accent5" accent6="accent6" hlink="hlink" folHlink="folHlink"/>` +
      `<p:sldLayoutIdLst>${layouts.map((_, i) => `<p:sldLayoutId id="${2147483649 + i}" r:id="rIdL${i + 1}"/>`).join('')}</p:sldLayoutIdLst></p:sldMaster>`,
    'ppt/slideMasters/_rels/slideMaster1.xml.rels': `${XML}<Relationships xmlns="${PKG}">${layouts.map((_, i) => `<Relationship Id="rIdL${i + 1}" Type="${R}/slideLayout" Target="../slideLayouts/slideLayout${i + 1}.xml"/>`).join('')}</Relationships>`,
    ...extra,
  };
  layouts.forEach((l, i) => {
    files[`ppt/slideLayouts/slideLayout${i + 1}.xml`] =
      `${XML}<p:sldLayout ${NS} type="${l.type}">${tree.replace('<p:cSld>', `<p:cSld name="${l.name}">`)}</p:sldLayout>`;
    files[`ppt/slideLayouts/_rels/slideLayout${i + 1}.xml.rels`] =
      `${XML}<Relationships xmlns="${PKG}"><Relationship Id="rId1" Type="${R}/slideMaster" Target="../slideMasters/slideMaster1.xml"/></Relationships>`;
  });
  slides.forEach((s, i) => {
    files[`ppt/slides/slide${i + 1}.xml`] =
      `${XML}<p:sld ${NS}><p:cSld><p:spTree><p:nvGrpSpPr><p:cNvPr id="1" name=""/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr><p:grpSpPr/>` +
      '<p:sp><p:nvSpPr><p:cNvPr id="2" name="Text"/><p:cNvSpPr txBox="1"/><p:nvPr/></p:nvSpPr>' +
      '<p:spPr><a:xfrm><a:off x="914400" y="914400"/><a:ext cx="7315200" cy="1828800"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom></p:spPr>' +
      `<p:txBody><a:bodyPr/><a:lstStyle/><a:p><a:r><a:rPr lang="en-US" sz="3200"/><a:t>${esc(s.text)}</a:t></a:r></a:p></p:txBody></p:sp>${s.shapes ?? ''}` +
      '</p:spTree></p:cSld></p:sld>';
    const notes =
      s.notes === undefined ? '' : `<Relationship Id="rIdN" Type="${R}/notesSlide" Target="../notesSlides/notesSlide${i + 1}.xml"/>`;
    files[`ppt/slides/_rels/slide${i + 1}.xml.rels`] =
      `${XML}<Relationships xmlns="${PKG}"><Relationship Id="rIdLay" Type="${R}/slideLayout" Target="../slideLayouts/slideLayout${s.layout ?? 1}.xml"/>${notes}${s.rels ?? ''}</Relationships>`;
    if (s.notes !== undefined) {
      files[`ppt/notesSlides/notesSlide${i + 1}.xml`] =
        `${XML}<p:notes ${NS}><p:cSld><p:spTree><p:nvGrpSpPr><p:cNvPr id="1" name=""/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr><p:grpSpPr/></p:spTree></p:cSld></p:notes>`;
      files[`ppt/notesSlides/_rels/notesSlide${i + 1}.xml.rels`] =
        `${XML}<Relationships xmlns="${PKG}"><Relationship Id="rId1" Type="${R}/slide" Target="../slides/slide${i + 1}.xml"/></Relationships>`;
    }
  });
  return zip(files);
}

const picture = (rId: string): string =>
  `<p:pic><p:nvPicPr><p:cNvPr id="5" name="Logo"><a:hlinkClick r:id="rIdLink"/></p:cNvPr><p:cNvPicPr/><p:nvPr/></p:nvPicPr><p:blipFill><a:blip r:embed="${rId}"/><a:stretch><a:fillRect/></a:stretch></p:blipFill>` +
  '<p:spPr><a:xfrm><a:off x="914400" y="3657600"/><a:ext cx="1828800" cy="914400"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom></p:spPr></p:pic>';

/** Slide texts in presentation order, read from the package. */
function slideTexts(bytes: Uint8Array): string[] {
  const files = unzipText(bytes);
  const pres = files.get('ppt/presentation.xml') ?? '';
  const rels = files.get('ppt/_rels/presentation.xml.rels') ?? '';
  return [...pres.matchAll(/<p:sldId\b[^>]*r:id="([^"]+)"/g)].map((m) => {
    const target = new RegExp(`Id="${m[1]}"[^>]*Target="([^"]+)"`).exec(rels)?.[1] ?? '';
    return paragraphs(files.get(`ppt/${target}`) ?? '').join(' | ');
  });
}

/** A second text shape holding `text` (an image tag replaces the whole shape). */
const shapeWith = (text: string): string =>
  '<p:sp><p:nvSpPr><p:cNvPr id="3" name="Pic"/><p:cNvSpPr/><p:nvPr/></p:nvSpPr><p:spPr><a:xfrm><a:off x="914400" y="3657600"/><a:ext cx="1828800" cy="914400"/></a:xfrm></p:spPr>' +
  `<p:txBody><a:bodyPr/><a:p><a:r><a:t>${esc(text)}</a:t></a:r></a:p></p:txBody></p:sp>`;

const hostLayouts = [
  { name: 'Title Slide', type: 'title' },
  { name: 'Blank', type: 'blank' },
];

describe('{>name} in a presentation: slides from another deck', () => {
  it('replaces the slide with the rendered slides of the related deck, with their pictures, links and layouts', async () => {
    const part = deck(
      [
        {
          text: 'Intro for {client}',
          notes: 'notes stay behind',
          shapes: picture('rIdImg'),
          rels: `<Relationship Id="rIdImg" Type="${R}/image" Target="../media/image1.png"/><Relationship Id="rIdLink" Type="${R}/hyperlink" Target="https://example.test/" TargetMode="External"/>`,
          layout: 2,
        },
        { text: '{:items}Item {name} of {client}', layout: 1 },
      ],
      [
        { name: 'Cover', type: 'title' },
        { name: 'Blank', type: 'blank' },
      ],
      { 'ppt/media/image1.png': PNG_2x1 },
      '<Default Extension="png" ContentType="image/png"/>',
    );
    const host = deck(
      [{ text: 'Report {client}' }, { text: '{>part}', notes: 'speaker notes of the include slide' }, { text: 'The end' }],
      hostLayouts,
    );
    const out = await render(host, { client: 'ACME', items: [{ name: 'a' }, { name: 'b' }] }, { relatedItems: { part } });

    expect(slideTexts(out)).toEqual(['Report ACME', 'Intro for ACME', 'Item a of ACME', 'Item b of ACME', 'The end']);
    expect(packageProblems(out)).toEqual([]);
    const files = unzipText(out);
    // The include slide itself is gone; the included slides use the host's layouts, matched by name
    // ("Blank") and otherwise by type ("Cover" is a title layout like the host's "Title Slide").
    const slideRels = [...files.entries()].filter(([n]) => /^ppt\/slides\/_rels\//.test(n)).map(([, x]) => x);
    expect(slideRels.filter((x) => x.includes('slideLayout2.xml'))).toHaveLength(1);
    expect(slideRels.filter((x) => x.includes('slideLayout1.xml'))).toHaveLength(4);
    const introRels = slideRels.find((x) => x.includes('image')) ?? '';
    const media = /Target="\.\.\/(media\/[^"]+)"/.exec(introRels)?.[1] ?? '';
    expect(Buffer.from(files.get(`ppt/${media}`) ?? '', 'utf8').length).toBeGreaterThan(0);
    expect(introRels).toContain('Target="https://example.test/" TargetMode="External"');
    expect(files.get('[Content_Types].xml')).toContain('Extension="png"');
    // The include slide's notes page went with it; the included slides' notes are left behind.
    expect([...files.keys()].filter((k) => k.includes('notesSlide'))).toEqual([]);

    const pdf = await pdfInLibreOffice(out, 'pptx');
    expect(pdf.pages).toBe(5);
    const text = pdf.text.replace(/\s+/g, ' ');
    expect(text.indexOf('Report ACME')).toBeLessThan(text.indexOf('Intro for ACME'));
    expect(text.indexOf('Intro for ACME')).toBeLessThan(text.indexOf('Item a of ACME'));
    expect(text.indexOf('Item b of ACME')).toBeLessThan(text.indexOf('The end'));
  });

  it('includes per item on a repeated slide, and includes nothing for an empty list', async () => {
    const logo = `data:image/png;base64,${Buffer.from(PNG_2x1).toString('base64')}`;
    const part = deck([{ text: 'Chapter {title}', shapes: shapeWith('{%logo}') }], hostLayouts);
    const host = deck([{ text: '{:chapters}{>part}' }, { text: 'Last' }], hostLayouts);
    const out = await render(
      host,
      {
        chapters: [
          { title: 'One', logo },
          { title: 'Two', logo },
        ],
      },
      { relatedItems: { part } },
    );
    expect(slideTexts(out)).toEqual(['Chapter One', 'Chapter Two', 'Last']);
    expect(packageProblems(out)).toEqual([]);
    // Each included slide holds the picture its image tag rendered.
    const files = unzipText(out);
    const pictures = [...files].filter(([k]) => /^ppt\/slides\/slide\d+\.xml$/.test(k) && files.get(k)?.includes('<p:pic>'));
    expect(pictures).toHaveLength(2);
    const none = await render(host, { chapters: [] }, { relatedItems: { part } });
    expect(slideTexts(none)).toEqual(['Last']);
    expect(packageProblems(none)).toEqual([]);
  });

  it('reports a missing deck, a deck of another kind, cycles and tags off the slides', async () => {
    const host = deck([{ text: '{>part}' }], hostLayouts);
    const ids = async (related: Record<string, Uint8Array>, tpl = host): Promise<string[]> => {
      const err = await render(tpl, {}, { relatedItems: related }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TemplateError);
      return (err as TemplateError).errors.map((e) => e.id);
    };
    expect(await ids({})).toEqual(['include_missing']);
    expect(await ids({ part: docx(p('Hi')) })).toEqual(['include_format']);
    expect(await ids({ part: host })).toEqual(['include_cycle']);
  });
});
