import { describe, expect, it } from 'vitest';
import { render } from '../../support/engine.ts';
import { row, sheetCells, unzipText, xlsxBook } from './helpers.ts';
import { recalculateInLibreOffice } from './libreoffice.ts';

// Row loops grow a sheet; everything that points at its rows must follow them, as when Excel inserts
// rows: formulas and validations on other sheets (quoted and unquoted names, absolute or not), defined
// names and print areas, conditional formats, chart series. Checked in the XML and by LibreOffice.

const C = 'http://schemas.openxmlformats.org/drawingml/2006/chart';
const A = 'http://schemas.openxmlformats.org/drawingml/2006/main';
const R = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const XDR = 'http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing';

const strings = ['Item', 'Amount', '{#items}{name}', '{amount}', '{/items}', 'Total', '{#nums}{v}', '{/nums}', 'Note'];

const chartXml =
  `<?xml version="1.0" encoding="UTF-8"?><c:chartSpace xmlns:c="${C}" xmlns:a="${A}" xmlns:r="${R}"><c:chart><c:plotArea><c:layout/>` +
  '<c:barChart><c:barDir val="col"/><c:grouping val="clustered"/><c:varyColors val="0"/>' +
  `<c:ser><c:idx val="0"/><c:order val="0"/><c:tx><c:strRef><c:f>'Sales Data'!$E$1</c:f></c:strRef></c:tx>` +
  `<c:cat><c:strRef><c:f>'Sales Data'!$A$2:$A$2</c:f></c:strRef></c:cat><c:val><c:numRef><c:f>'Sales Data'!$E$2:$E$2</c:f></c:numRef></c:val></c:ser>` +
  '<c:axId val="1"/><c:axId val="2"/></c:barChart>' +
  '<c:catAx><c:axId val="1"/><c:scaling><c:orientation val="minMax"/></c:scaling><c:delete val="0"/><c:axPos val="b"/><c:crossAx val="2"/></c:catAx>' +
  '<c:valAx><c:axId val="2"/><c:scaling><c:orientation val="minMax"/></c:scaling><c:delete val="0"/><c:axPos val="l"/><c:crossAx val="1"/></c:valAx>' +
  '</c:plotArea></c:chart></c:chartSpace>';

const drawingXml =
  `<?xml version="1.0" encoding="UTF-8"?><xdr:wsDr xmlns:xdr="${XDR}" xmlns:a="${A}" xmlns:r="${R}" xmlns:c="${C}"><xdr:twoCellAnchor>` +
  '<xdr:from><xdr:col>7</xdr:col><xdr:colOff>0</xdr:colOff><xdr:row>0</xdr:row><xdr:rowOff>0</xdr:rowOff></xdr:from><xdr:to><xdr:col>14</xdr:col><xdr:colOff>0</xdr:colOff><xdr:row>15</xdr:row><xdr:rowOff>0</xdr:rowOff></xdr:to>' +
  '<xdr:graphicFrame macro=""><xdr:nvGraphicFramePr><xdr:cNvPr id="2" name="Chart 1"/><xdr:cNvGraphicFramePr/></xdr:nvGraphicFramePr><xdr:xfrm><a:off x="0" y="0"/><a:ext cx="0" cy="0"/></xdr:xfrm>' +
  `<a:graphic><a:graphicData uri="${C}"><c:chart r:id="rId1"/></a:graphicData></a:graphic></xdr:graphicFrame><xdr:clientData/></xdr:twoCellAnchor></xdr:wsDr>`;

function template(): Uint8Array {
  return xlsxBook({
    strings,
    sheets: [
      {
        name: 'Sales Data',
        rows:
          row(1, [
            ['A1', 's:0'],
            ['E1', 's:1'],
            ['G1', 's:8'],
          ]) +
          row(2, [
            ['A2', 's:2'],
            ['E2', 's:3'],
            ['F2', 's:4'],
          ]) +
          row(3, [
            ['A3', 's:5'],
            ['E3', 'f:SUM(E2:E2)'],
          ]),
        tail:
          '<conditionalFormatting sqref="E2:E2"><cfRule type="cellIs" dxfId="0" priority="1" operator="greaterThan"><formula>25</formula></cfRule></conditionalFormatting>' +
          '<dataValidations count="1"><dataValidation type="decimal" operator="greaterThanOrEqual" allowBlank="1" sqref="E2"><formula1>0</formula1></dataValidation></dataValidations>' +
          '<drawing r:id="rId1"/>',
        rels: `<Relationship Id="rId1" Type="${R}/drawing" Target="../drawings/drawing1.xml"/>`,
      },
      {
        name: 'Summary',
        rows:
          row(1, [['A1', "f:'Sales Data'!E3"]]) +
          row(2, [['A2', "f:SUM('Sales Data'!E2:E2)"]]) +
          row(3, [['A3', "f:COUNT('Sales Data'!$E$2:$E$2)"]]) +
          row(4, [['A4', "f:COUNTA('Sales Data'!F2:F2)"]]) +
          row(5, [['A5', "f:COUNTA('sales data'!A2:A2)"]]) +
          row(6, [['A6', 'f:SUM(Raw!A1:A1)+Raw!$A$2']]) +
          row(7, [['A7', 'f:total']]) +
          row(8, [['A8', 'f:"Sales Data!E3"&amp;E3']]),
        tail:
          `<conditionalFormatting sqref="A1"><cfRule type="expression" dxfId="0" priority="1"><formula>'Sales Data'!$E$3&gt;100</formula></cfRule></conditionalFormatting>` +
          '<dataValidations count="1"><dataValidation type="list" allowBlank="1" sqref="B1"><formula1>Raw!$A$1:$A$1</formula1></dataValidation></dataValidations>',
      },
      {
        name: 'Raw',
        rows:
          row(1, [
            ['A1', 's:6'],
            ['B1', 's:7'],
          ]) + row(2, [['A2', 'f:SUM(A1:A1)']]),
      },
    ],
    definedNames: `<definedName name="total">'Sales Data'!$E$3</definedName><definedName name="_xlnm.Print_Area" localSheetId="0">'Sales Data'!$A$1:$F$3</definedName>`,
    extra: {
      'xl/drawings/drawing1.xml': { xml: drawingXml, type: 'application/vnd.openxmlformats-officedocument.drawing+xml' },
      'xl/drawings/_rels/drawing1.xml.rels': {
        xml: `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${R}/chart" Target="../charts/chart1.xml"/></Relationships>`,
      },
      'xl/charts/chart1.xml': { xml: chartXml, type: 'application/vnd.openxmlformats-officedocument.drawingml.chart+xml' },
    },
  });
}

const data = {
  items: [10, 20, 30, 40, 50].map((amount, i) => ({ name: `item ${i + 1}`, amount })),
  nums: [{ v: 1 }, { v: 2 }, { v: 4 }],
};

describe('xlsx references after row loops', () => {
  it('moves and widens references from other sheets, names, validations, formats and charts (XML)', async () => {
    const out = await render(template(), data);
    const files = unzipText(out);
    expect(sheetCells(out, 'xl/worksheets/sheet2.xml')).toEqual([
      "A1=='Sales Data'!E7",
      "A2==SUM('Sales Data'!E2:E6)",
      "A3==COUNT('Sales Data'!$E$2:$E$6)",
      "A4==COUNTA('Sales Data'!F2:F6)",
      "A5==COUNTA('sales data'!A2:A6)",
      'A6==SUM(Raw!A1:A3)+Raw!$A$4',
      'A7==total',
      'A8=="Sales Data!E3"&amp;E3',
    ]);
    const summary = files.get('xl/worksheets/sheet2.xml') ?? '';
    expect(summary).toContain("<formula>'Sales Data'!$E$7&gt;100</formula>");
    expect(summary).toContain('<formula1>Raw!$A$1:$A$3</formula1>');
    const wb = files.get('xl/workbook.xml') ?? '';
    expect(wb).toContain(`<definedName name="total">'Sales Data'!$E$7</definedName>`);
    expect(wb).toContain(`<definedName name="_xlnm.Print_Area" localSheetId="0">'Sales Data'!$A$1:$F$7</definedName>`);
    const chart = files.get('xl/charts/chart1.xml') ?? '';
    expect(chart).toContain(`<c:f>'Sales Data'!$A$2:$A$6</c:f>`);
    expect(chart).toContain(`<c:f>'Sales Data'!$E$2:$E$6</c:f>`);
    expect(chart).toContain(`<c:f>'Sales Data'!$E$1</c:f>`);
    const sales = files.get('xl/worksheets/sheet1.xml') ?? '';
    // One grown range, not one range per copied row.
    expect(sales).toContain('<conditionalFormatting sqref="E2:E6">');
    expect(sales).toContain('sqref="E2:E6"><formula1>0</formula1>');
    // The cell that held only `{/items}` is an empty cell, not an empty text cell.
    expect(sheetCells(out)).toContain('F2=');
    expect(sales).not.toMatch(/<c r="F\d"[^>]*t="inlineStr"/);
  });

  it('LibreOffice computes the grown totals and counts, and sees the grown chart and formats', async () => {
    const lo = await recalculateInLibreOffice(await render(template(), data));
    const summary = lo.sheets.get('Summary');
    expect(summary?.get('A1')).toBe('150');
    expect(summary?.get('A2')).toBe('150');
    expect(summary?.get('A3')).toBe('5');
    expect(summary?.get('A4')).toBe('0');
    expect(summary?.get('A5')).toBe('5');
    expect(summary?.get('A6')).toBe('14');
    expect(summary?.get('A7')).toBe('150');
    expect(lo.sheets.get('Sales Data')?.get('E7')).toBe('150');
    expect(lo.sheets.get('Raw')?.get('A4')).toBe('7');
    const chart = ([...lo.parts].find(([name]) => /^xl\/charts\/chart\d+\.xml$/.test(name))?.[1] ?? '').replace(/&apos;/g, "'");
    // LibreOffice re-reads the series from the cells: five points, the last one 50.
    const values = /<c:val><c:numRef><c:f>'Sales Data'!\$E\$2:\$E\$6<\/c:f><c:numCache>([\s\S]*?)<\/c:numCache>/.exec(chart)?.[1] ?? '';
    expect(values).toContain('<c:ptCount val="5"/>');
    expect(values).toContain('<c:pt idx="4"><c:v>50</c:v></c:pt>');
    const sales =
      [...lo.parts].find(([name, xml]) => name.startsWith('xl/worksheets/sheet') && xml.includes('item 1'))?.[1] ??
      lo.parts.get('xl/worksheets/sheet1.xml') ??
      '';
    expect(sales).toMatch(/<conditionalFormatting sqref="E2:E6"/);
  });

  it('keeps one conditional-formatting range over ten thousand looped rows', async () => {
    const items = Array.from({ length: 10_000 }, (_, i) => ({ name: `n${i}`, amount: i }));
    const files = unzipText(await render(template(), { items, nums: [] }));
    const sales = files.get('xl/worksheets/sheet1.xml') ?? '';
    expect(sales).toContain('<conditionalFormatting sqref="E2:E10001">');
    expect(files.get('xl/worksheets/sheet2.xml')).toContain("<f>COUNT('Sales Data'!$E$2:$E$10001)</f>");
  });

  it('an empty loop removes its rows like Excel deleting them: no reference silently points elsewhere', async () => {
    const out = await render(template(), { items: [], nums: [{ v: 5 }] });
    const files = unzipText(out);
    // The total row moves up; a range left with no rows is #REF! (it was a circular reference).
    expect(sheetCells(out)).toEqual(['A1=Item', 'E1=Amount', 'G1=Note', 'A2=Total', 'E2==SUM(#REF!)']);
    expect(sheetCells(out, 'xl/worksheets/sheet2.xml').slice(0, 4)).toEqual([
      "A1=='Sales Data'!E2",
      "A2==SUM('Sales Data'!#REF!)",
      "A3==COUNT('Sales Data'!#REF!)",
      "A4==COUNTA('Sales Data'!#REF!)",
    ]);
    const sales = files.get('xl/worksheets/sheet1.xml') ?? '';
    expect(sales).not.toContain('conditionalFormatting');
    expect(sales).not.toContain('dataValidation');
    expect(files.get('xl/workbook.xml')).toContain(
      `<definedName name="_xlnm.Print_Area" localSheetId="0">'Sales Data'!$A$1:$F$2</definedName>`,
    );
    const lo = await recalculateInLibreOffice(out);
    expect(lo.sheets.get('Summary')?.get('A6')).toBe('10');
  });
});
