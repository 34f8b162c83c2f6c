import { describe, expect, it } from 'vitest';
import { render } from '../../support/engine.ts';
import { row, sheetCells, unzipText, xlsxBook } from './helpers.ts';
import { recalculateInLibreOffice } from './libreoffice.ts';

// A pivot table over looped rows is not template content: its cells are its cache's items (the template's
// own tags until the cache is refreshed). Its source range follows the loop and the cache refreshes on load.
// A chart written with the chart namespace as the default (openpyxl's way) follows the loop like a `c:` one.

const SML = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
const R = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const PKG = 'http://schemas.openxmlformats.org/package/2006/relationships';
const CHART = 'http://schemas.openxmlformats.org/drawingml/2006/chart';
const A = 'http://schemas.openxmlformats.org/drawingml/2006/main';
const XDR = 'http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing';

const strings = ['Region', 'Amount', '{#rows}{region}', '{amount}{/rows}', 'Row Labels', 'Sum of Amount', 'Grand Total'];

const cacheXml =
  `<?xml version="1.0" encoding="UTF-8"?><pivotCacheDefinition xmlns="${SML}" xmlns:r="${R}" refreshOnLoad="0" recordCount="1">` +
  '<cacheSource type="worksheet"><worksheetSource ref="A1:B2" sheet="Data"/></cacheSource><cacheFields count="2">' +
  '<cacheField name="Region" numFmtId="0"><sharedItems count="1"><s v="{#rows}{region}"/></sharedItems></cacheField>' +
  '<cacheField name="Amount" numFmtId="0"><sharedItems count="1"><s v="{amount}{/rows}"/></sharedItems></cacheField></cacheFields></pivotCacheDefinition>';

const pivotXml =
  `<?xml version="1.0" encoding="UTF-8"?><pivotTableDefinition xmlns="${SML}" name="Pivot1" cacheId="7" dataCaption="Values" updatedVersion="6" createdVersion="6" outline="1" outlineData="1">` +
  '<location ref="A3:B5" firstHeaderRow="1" firstDataRow="1" firstDataCol="1"/><pivotFields count="2">' +
  '<pivotField axis="axisRow" showAll="0"><items count="2"><item x="0"/><item t="default"/></items></pivotField><pivotField dataField="1" showAll="0"/></pivotFields>' +
  '<rowFields count="1"><field x="0"/></rowFields><rowItems count="2"><i><x/></i><i t="grand"><x/></i></rowItems><colItems count="1"><i/></colItems>' +
  '<dataFields count="1"><dataField name="Sum of Amount" fld="1" baseField="0" baseItem="0"/></dataFields></pivotTableDefinition>';

// openpyxl's chart: the chart namespace is the default one, so its elements have no prefix.
const chartXml =
  `<?xml version="1.0" encoding="UTF-8"?><chartSpace xmlns="${CHART}"><roundedCorners val="0"/><chart><autoTitleDeleted val="0"/><plotArea>` +
  '<barChart><barDir val="col"/><grouping val="clustered"/><ser><idx val="0"/><order val="0"/>' +
  `<tx><strRef><f>'Data'!B1</f></strRef></tx><cat><strRef><f>'Data'!$A$2:$A$2</f></strRef></cat><val><numRef><f>'Data'!$B$2:$B$2</f><numCache><formatCode>General</formatCode><ptCount val="1"/></numCache></numRef></val></ser>` +
  '<gapWidth val="150"/><axId val="10"/><axId val="100"/></barChart>' +
  '<catAx><axId val="10"/><scaling><orientation val="minMax"/></scaling><delete val="0"/><axPos val="l"/><crossAx val="100"/></catAx>' +
  '<valAx><axId val="100"/><scaling><orientation val="minMax"/></scaling><delete val="0"/><axPos val="l"/><crossAx val="10"/></valAx>' +
  '</plotArea><plotVisOnly val="1"/><dispBlanksAs val="gap"/></chart></chartSpace>';

const drawingXml =
  `<?xml version="1.0" encoding="UTF-8"?><xdr:wsDr xmlns:xdr="${XDR}" xmlns:a="${A}" xmlns:r="${R}" xmlns:c="${CHART}"><xdr:oneCellAnchor>` +
  '<xdr:from><xdr:col>4</xdr:col><xdr:colOff>0</xdr:colOff><xdr:row>0</xdr:row><xdr:rowOff>0</xdr:rowOff></xdr:from><xdr:ext cx="4000000" cy="2000000"/>' +
  '<xdr:graphicFrame macro=""><xdr:nvGraphicFramePr><xdr:cNvPr id="2" name="Chart 1"/><xdr:cNvGraphicFramePr/></xdr:nvGraphicFramePr><xdr:xfrm><a:off x="0" y="0"/><a:ext cx="0" cy="0"/></xdr:xfrm>' +
  `<a:graphic><a:graphicData uri="${CHART}"><c:chart r:id="rId1"/></a:graphicData></a:graphic></xdr:graphicFrame><xdr:clientData/></xdr:oneCellAnchor></xdr:wsDr>`;

function template(): Uint8Array {
  return xlsxBook({
    strings,
    sheets: [
      {
        name: 'Data',
        rows:
          row(1, [
            ['A1', 's:0'],
            ['B1', 's:1'],
          ]) +
          row(2, [
            ['A2', 's:2'],
            ['B2', 's:3'],
          ]),
        tail: '<drawing r:id="rId1"/>',
        rels: `<Relationship Id="rId1" Type="${R}/drawing" Target="../drawings/drawing1.xml"/>`,
      },
      {
        name: 'Pivot',
        rows:
          row(3, [
            ['A3', 's:4'],
            ['B3', 's:5'],
          ]) +
          row(4, [
            ['A4', 's:2'],
            ['B4', 'n:0'],
          ]) +
          row(5, [
            ['A5', 's:6'],
            ['B5', 'n:0'],
          ]),
        rels: `<Relationship Id="rId1" Type="${R}/pivotTable" Target="../pivotTables/pivotTable1.xml"/>`,
      },
    ],
    workbook: {
      tail: '<pivotCaches><pivotCache cacheId="7" r:id="rIdPC"/></pivotCaches>',
      rels: `<Relationship Id="rIdPC" Type="${R}/pivotCacheDefinition" Target="pivotCache/pivotCacheDefinition1.xml"/>`,
    },
    extra: {
      'xl/pivotCache/pivotCacheDefinition1.xml': {
        xml: cacheXml,
        type: 'application/vnd.openxmlformats-officedocument.spreadsheetml.pivotCacheDefinition+xml',
      },
      'xl/pivotTables/pivotTable1.xml': {
        xml: pivotXml,
        type: 'application/vnd.openxmlformats-officedocument.spreadsheetml.pivotTable+xml',
      },
      'xl/pivotTables/_rels/pivotTable1.xml.rels': {
        xml: `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="${PKG}"><Relationship Id="rId1" Type="${R}/pivotCacheDefinition" Target="../pivotCache/pivotCacheDefinition1.xml"/></Relationships>`,
      },
      'xl/drawings/drawing1.xml': { xml: drawingXml, type: 'application/vnd.openxmlformats-officedocument.drawing+xml' },
      'xl/drawings/_rels/drawing1.xml.rels': {
        xml: `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="${PKG}"><Relationship Id="rId1" Type="${R}/chart" Target="../charts/chart1.xml"/></Relationships>`,
      },
      'xl/charts/chart1.xml': { xml: chartXml, type: 'application/vnd.openxmlformats-officedocument.drawingml.chart+xml' },
    },
  });
}

const data = {
  rows: [
    { region: 'North', amount: 10 },
    { region: 'South', amount: 20 },
    { region: 'North', amount: 5 },
  ],
};

describe('pivot tables and charts over looped rows', () => {
  it('leaves the pivot table alone, moves its source and refreshes its cache on load', async () => {
    const out = await render(template(), data);
    const files = unzipText(out);
    expect(sheetCells(out)).toEqual(['A1=Region', 'B1=Amount', 'A2=North', 'B2=num:10', 'A3=South', 'B3=num:20', 'A4=North', 'B4=num:5']);
    const cache = files.get('xl/pivotCache/pivotCacheDefinition1.xml') ?? '';
    expect(cache).toContain('<worksheetSource ref="A1:B4" sheet="Data"/>');
    expect(cache).toMatch(/<pivotCacheDefinition\b[^>]*\srefreshOnLoad="1"/);
    // The pivot's sheet is not template content: untouched.
    expect(files.get('xl/worksheets/sheet2.xml')).toBe(unzipText(template()).get('xl/worksheets/sheet2.xml'));
  });

  it('moves the series of a chart whose namespace has no prefix, and rebuilds its cache', async () => {
    const chart = unzipText(await render(template(), data)).get('xl/charts/chart1.xml') ?? '';
    expect(chart).toContain(`<cat><strRef><f>'Data'!$A$2:$A$4</f>`);
    expect(chart).toContain(
      `<val><numRef><f>'Data'!$B$2:$B$4</f><numCache><formatCode>General</formatCode><ptCount val="3"/><pt idx="0"><v>10</v></pt><pt idx="1"><v>20</v></pt><pt idx="2"><v>5</v></pt></numCache>`,
    );
    expect(chart).toContain(`<tx><strRef><f>'Data'!B1</f>`);
  });

  it('LibreOffice rebuilds the pivot table from the grown source', async () => {
    const lo = await recalculateInLibreOffice(await render(template(), data));
    const pivot = lo.sheets.get('Pivot');
    const values = [...(pivot?.values() ?? [])];
    expect(values).toEqual(expect.arrayContaining(['North', 'South', '15', '20', '35']));
    expect(values.join('|')).not.toContain('{');
  });
});
