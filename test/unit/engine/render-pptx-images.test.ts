import { describe, expect, it } from 'vitest';
import { render, TemplateError } from '../../support/engine.ts';
import { docText, docx, p, paragraphs, PNG_2x1, pptx, shape, slideTable, unzipText } from './helpers.ts';

const dataUrl = `data:image/png;base64,${PNG_2x1.toString('base64')}`;

describe('images', () => {
  it('inserts a docx image from a data URL, fitted in the requested box with its aspect ratio', async () => {
    const out = await render(docx(p('Logo: {%logo}') + p('{%logo}')), { logo: { data: dataUrl, width: 100, height: 100 } });
    const files = unzipText(out);
    const doc = files.get('word/document.xml') ?? '';
    expect(doc.match(/<w:drawing>/g)?.length).toBe(2);
    // 2:1 image in a 100x100 box -> 100x50 px = 952500 x 476250 EMU
    expect(doc).toContain('<wp:extent cx="952500" cy="476250"/>');
    const rels = files.get('word/_rels/document.xml.rels') ?? '';
    expect(rels.match(/relationships\/image/g)?.length).toBe(1);
    const target = /Target="(media\/[^"]+\.png)"/.exec(rels)?.[1];
    expect(target).toBeDefined();
    expect(files.has(`word/${target}`)).toBe(true);
    expect(files.get('[Content_Types].xml')).toContain('<Default Extension="png" ContentType="image/png"/>');
    expect(docText(out)[0]).toBe('Logo: ');
  });

  it('reports bad image values as template errors', async () => {
    const err = await render(docx(p('{%a}') + p('{%b}')), { a: 'data:image/png;base64,AAAA', b: 'https://example.com/x.png' }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(TemplateError);
    expect((err as TemplateError).errors.map((e) => e.id)).toEqual(['image_invalid', 'image_url_unsupported']);
  });

  it('replaces a pptx shape by the picture, centred in the shape box', async () => {
    const out = await render(pptx([shape(2, '{%logo}') + shape(3, 'Hi {name}')]), { logo: PNG_2x1, name: 'Bo' });
    const slide = unzipText(out).get('ppt/slides/slide1.xml') ?? '';
    expect(slide).toContain('<p:pic>');
    // A 2:1 picture exactly fills the 4000x2000 shape box.
    expect(slide).toMatch(/<p:pic>.*<a:off x="100" y="200"\/><a:ext cx="4000" cy="2000"\/>/);
    expect(slide).not.toContain('{%logo}');
    expect(paragraphs(slide)).toEqual(['Hi Bo']);
    expect(unzipText(out).get('ppt/slides/_rels/slide1.xml.rels')).toContain('Target="../media/');
  });
});

describe('pptx', () => {
  it('renders slide text, table row loops and line breaks', async () => {
    const table = slideTable(3, [['{#rows}{a}', '{b}{/rows}']]);
    const out = await render(pptx([shape(2, '{title}') + table]), {
      title: 'A\nB',
      rows: [
        { a: 1, b: 2 },
        { a: 3, b: 4 },
      ],
    });
    const slide = unzipText(out).get('ppt/slides/slide1.xml') ?? '';
    expect(paragraphs(slide)).toEqual(['A\nB', '1', '2', '3', '4']);
    expect([...slide.matchAll(/a16:rowId[^>]*val="(\d+)"/g)].map((m) => m[1])).toEqual(['7', '8']);
  });

  it('{$index} on a repeated slide is its position in the list', async () => {
    const out = unzipText(await render(pptx([shape(2, '{:people}{$index}. {name}')]), { people: [{ name: 'Ann' }, { name: 'Bob' }] }));
    const texts = [...out.keys()]
      .filter((k) => /^ppt\/slides\/slide\d+\.xml$/.test(k))
      .sort()
      .map((k) => paragraphs(out.get(k) ?? '')[0]);
    expect(texts).toEqual(['0. Ann', '1. Bob']);
  });

  it('a table frame grows with its looped rows', async () => {
    const out = await render(
      pptx([
        slideTable(
          3,
          [
            ['A', 'B'],
            ['{#rows}{a}', '{b}{/rows}'],
          ],
          370840,
        ),
      ]),
      {
        rows: [
          { a: 1, b: 2 },
          { a: 3, b: 4 },
          { a: 5, b: 6 },
        ],
      },
    );
    const slide = unzipText(out).get('ppt/slides/slide1.xml') ?? '';
    expect(/<p:xfrm>[\s\S]*?<a:ext cx="\d+" cy="(\d+)"/.exec(slide)?.[1]).toBe(String(4 * 370840));
  });

  it('repeats a slide per item with {:items} and removes it for an empty list', async () => {
    const tpl = pptx([shape(2, 'Intro {title}'), shape(2, '{:people}{name}'), shape(2, 'End')]);
    const out = await render(tpl, { title: 'T', people: [{ name: 'Ann' }, { name: 'Bob' }, { name: 'Cy' }] });
    const files = unzipText(out);
    const pres = files.get('ppt/presentation.xml') ?? '';
    const ids = [...pres.matchAll(/r:id="([^"]+)"/g)].map((m) => m[1]);
    const rels = files.get('ppt/_rels/presentation.xml.rels') ?? '';
    const order = ids.map((id) => new RegExp(`Id="${id}"[^>]*Target="([^"]+)"`).exec(rels)?.[1]);
    expect(order).toEqual(['slides/slide1.xml', 'slides/slide2.xml', 'slides/slide4.xml', 'slides/slide5.xml', 'slides/slide3.xml']);
    expect(['slide2', 'slide4', 'slide5'].map((s) => paragraphs(files.get(`ppt/slides/${s}.xml`) ?? '')[0])).toEqual(['Ann', 'Bob', 'Cy']);
    expect(files.get('[Content_Types].xml')).toContain('PartName="/ppt/slides/slide5.xml"');
    expect(files.has('ppt/slides/_rels/slide5.xml.rels')).toBe(true);

    const none = unzipText(await render(tpl, { people: [] }));
    expect(none.has('ppt/slides/slide2.xml')).toBe(false);
    expect(none.get('ppt/presentation.xml')?.match(/<p:sldId /g)?.length).toBe(2);
    expect(none.get('[Content_Types].xml')).not.toContain('slide2.xml');
  });
});
