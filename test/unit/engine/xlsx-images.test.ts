import { describe, expect, it } from 'vitest';
import { render } from '../../support/engine.ts';
import { PNG_2x1, row, unzipText, xlsxBook } from './helpers.ts';
import { recalculateInLibreOffice } from './libreoffice.ts';

// `{%img}` in a spreadsheet cell: a picture anchored at the cell, following looped rows.

function template(): Uint8Array {
  return xlsxBook({
    strings: ['Name', 'Logo', '{#items}{name}', '{%logo}{/items}', 'end'],
    sheets: [
      {
        name: 'Pics',
        rows:
          row(1, [
            ['A1', 's:0'],
            ['B1', 's:1'],
          ]) +
          row(2, [
            ['A2', 's:2'],
            ['B2', 's:3'],
          ]) +
          row(3, [['A3', 's:4']]),
      },
    ],
  });
}

describe('images in xlsx', () => {
  it('anchors each picture at its rendered cell in a new drawing of the sheet', async () => {
    const items = [{ name: 'a', logo: PNG_2x1 }, { name: 'b', logo: { data: PNG_2x1, width: 40, height: 40 } }, { name: 'c' }];
    const files = unzipText(await render(template(), { items }));
    const drawing = files.get('xl/drawings/docgen_sheet1.xml') ?? '';
    const anchors = [...drawing.matchAll(/<xdr:from><xdr:col>(\d+)<\/xdr:col><xdr:colOff>0<\/xdr:colOff><xdr:row>(\d+)<\/xdr:row>/g)].map(
      (m) => `${m[1]}:${m[2]}`,
    );
    expect(anchors).toEqual(['1:1', '1:2']);
    expect(drawing).toContain('<xdr:ext cx="381000" cy="190500"/>');
    expect(files.get('xl/worksheets/sheet1.xml')).toMatch(/<\/sheetData><drawing xmlns:r="[^"]*" r:id="([^"]*)"\/><\/worksheet>/);
    expect(files.get('xl/worksheets/_rels/sheet1.xml.rels')).toContain('Target="../drawings/docgen_sheet1.xml"');
    expect(files.get('xl/drawings/_rels/docgen_sheet1.xml.rels')).toMatch(/Target="\.\.\/media\/docgen_[0-9a-f]+\.png"/);
    expect(files.get('[Content_Types].xml')).toContain(
      '<Override PartName="/xl/drawings/docgen_sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.drawing+xml"/>',
    );
    expect(files.get('[Content_Types].xml')).toContain('Extension="png"');

    // LibreOffice opens the workbook with both pictures at those cells.
    const lo = await recalculateInLibreOffice(await render(template(), { items }));
    const loDrawing = [...lo.parts].find(([name]) => /^xl\/drawings\/drawing\d+\.xml$/.test(name))?.[1] ?? '';
    expect(loDrawing.match(/<xdr:pic>/g)?.length).toBe(2);
    expect(
      [...loDrawing.matchAll(/<xdr:from><xdr:col>(\d+)<\/xdr:col><xdr:colOff>\d+<\/xdr:colOff><xdr:row>(\d+)<\/xdr:row>/g)].map(
        (m) => `${m[1]}:${m[2]}`,
      ),
    ).toEqual(['1:1', '1:2']);
    expect(lo.sheets.get('Pics')?.get('A5')).toBe('end');
  });

  it('adds the pictures to the drawing the sheet already has', async () => {
    const R = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
    const tpl = xlsxBook({
      strings: ['{%logo}'],
      sheets: [
        {
          name: 'S',
          rows: row(3, [['C3', 's:0']]),
          tail: '<drawing r:id="rId1"/>',
          rels: `<Relationship Id="rId1" Type="${R}/drawing" Target="../drawings/drawing1.xml"/>`,
        },
      ],
      extra: {
        'xl/drawings/drawing1.xml': {
          xml: '<?xml version="1.0" encoding="UTF-8"?><xdr:wsDr xmlns:xdr="http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing"><!-- chart --></xdr:wsDr>',
          type: 'application/vnd.openxmlformats-officedocument.drawing+xml',
        },
      },
    });
    const files = unzipText(await render(tpl, { logo: PNG_2x1 }));
    expect([...files.keys()].filter((n) => n.startsWith('xl/drawings/') && n.endsWith('.xml'))).toEqual(['xl/drawings/drawing1.xml']);
    expect(files.get('xl/drawings/drawing1.xml')).toMatch(
      /<!-- chart --><xdr:oneCellAnchor [^>]*><xdr:from><xdr:col>2<\/xdr:col><xdr:colOff>0<\/xdr:colOff><xdr:row>2<\/xdr:row>/,
    );
    expect(files.get('xl/worksheets/sheet1.xml')?.match(/<drawing\b/g)?.length).toBe(1);
    expect(files.get('xl/drawings/_rels/drawing1.xml.rels')).toContain('../media/docgen_');
  });
});
