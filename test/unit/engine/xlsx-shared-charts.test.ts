import { describe, expect, it } from 'vitest';
import { render } from '../../support/engine.ts';
import { unzipText, xlsxBook } from './helpers.ts';
import { recalculateInLibreOffice } from './libreoffice.ts';
import { packageProblems } from './package-check.ts';

const R = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const s = (ref: string, i: number): string => `<c r="${ref}" t="s"><v>${i}</v></c>`;
const n = (ref: string, v: number): string => `<c r="${ref}"><v>${v}</v></c>`;

const items = [
  { name: 'a', qty: 2, price: 10 },
  { name: 'b', qty: 3, price: 20 },
  { name: 'c', qty: 5, price: 1 },
];

describe('xlsx: shared formulas, chart caches and delimiter changes', () => {
  it('writes shared formulas out so each copy and each moved row computes its own cells', async () => {
    const tpl = xlsxBook({
      strings: ['Name', '{#items}{name}', '{qty}', '{price}{/items}', 'Total', 'after'],
      sheets: [
        {
          name: 'Data',
          rows:
            `<row r="1">${s('A1', 0)}</row>` +
            // D2 = B2*C2 filled right into E2 (= C2*D2): one shared formula across the looped row.
            `<row r="2">${s('A2', 1)}${s('B2', 2)}${s('C2', 3)}<c r="D2"><f t="shared" ref="D2:E2" si="0">B2*C2</f><v>0</v></c><c r="E2"><f t="shared" si="0"/><v>0</v></c></row>` +
            // Totals filled right below the loop: B3 = SUM(B2:B2), C3 and D3 followers.
            `<row r="3">${s('A3', 4)}<c r="B3"><f t="shared" ref="B3:D3" si="1">SUM(B2:B2)</f><v>0</v></c><c r="C3"><f t="shared" si="1"/><v>0</v></c><c r="D3"><f t="shared" si="1"/><v>0</v></c></row>` +
            `<row r="4">${s('A4', 5)}${n('B4', 7)}</row>`,
        },
        // No tags here: its shared formula over the moving sheet follows it too.
        {
          name: 'Sum',
          rows: `<row r="1"><c r="A1"><f t="shared" ref="A1:A2" si="0">Data!B3</f><v>0</v></c></row><row r="2"><c r="A2"><f t="shared" si="0"/><v>0</v></c></row>`,
        },
      ],
    });
    const out = await render(tpl, { items });
    expect(packageProblems(out)).toEqual([]);
    const sheet = unzipText(out).get('xl/worksheets/sheet1.xml') ?? '';
    expect(sheet).not.toContain('t="shared"');
    const lo = await recalculateInLibreOffice(out);
    const data = lo.sheets.get('Data');
    expect(['D2', 'D3', 'D4'].map((r) => data?.get(r))).toEqual(['20', '60', '5']);
    expect(['E2', 'E3', 'E4'].map((r) => data?.get(r))).toEqual(['200', '1200', '5']);
    expect(['B5', 'C5', 'D5'].map((r) => data?.get(r))).toEqual(['10', '31', '85']);
    expect(['A1', 'A2'].map((r) => lo.sheets.get('Sum')?.get(r))).toEqual(['10', '7']);
  });

  it('rebuilds the cached values of chart series whose rows were repeated', async () => {
    const C = 'http://schemas.openxmlformats.org/drawingml/2006/chart';
    const chart =
      `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><c:chartSpace xmlns:c="${C}" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:r="${R}"><c:chart><c:plotArea><c:layout/>` +
      '<c:barChart><c:barDir val="col"/><c:grouping val="clustered"/><c:varyColors val="0"/><c:ser><c:idx val="0"/><c:order val="0"/>' +
      '<c:cat><c:strRef><c:f>\'Data\'!$A$2:$A$2</c:f><c:strCache><c:ptCount val="1"/><c:pt idx="0"><c:v>{#items}{name}</c:v></c:pt></c:strCache></c:strRef></c:cat>' +
      '<c:val><c:numRef><c:f>\'Data\'!$B$2:$B$2</c:f><c:numCache><c:formatCode>General</c:formatCode><c:ptCount val="1"/><c:pt idx="0"><c:v>0</c:v></c:pt></c:numCache></c:numRef></c:val>' +
      '</c:ser><c:axId val="1"/><c:axId val="2"/></c:barChart><c:catAx><c:axId val="1"/><c:scaling><c:orientation val="minMax"/></c:scaling><c:delete val="0"/><c:axPos val="b"/><c:crossAx val="2"/></c:catAx>' +
      '<c:valAx><c:axId val="2"/><c:scaling><c:orientation val="minMax"/></c:scaling><c:delete val="0"/><c:axPos val="l"/><c:crossAx val="1"/></c:valAx></c:plotArea></c:chart></c:chartSpace>';
    const drawing =
      '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><xdr:wsDr xmlns:xdr="http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main">' +
      '<xdr:twoCellAnchor><xdr:from><xdr:col>4</xdr:col><xdr:colOff>0</xdr:colOff><xdr:row>0</xdr:row><xdr:rowOff>0</xdr:rowOff></xdr:from><xdr:to><xdr:col>10</xdr:col><xdr:colOff>0</xdr:colOff><xdr:row>12</xdr:row><xdr:rowOff>0</xdr:rowOff></xdr:to>' +
      '<xdr:graphicFrame macro=""><xdr:nvGraphicFramePr><xdr:cNvPr id="2" name="Chart"/><xdr:cNvGraphicFramePr/></xdr:nvGraphicFramePr><xdr:xfrm><a:off x="0" y="0"/><a:ext cx="0" cy="0"/></xdr:xfrm>' +
      `<a:graphic><a:graphicData uri="${C}"><c:chart xmlns:c="${C}" xmlns:r="${R}" r:id="rIdC"/></a:graphicData></a:graphic></xdr:graphicFrame><xdr:clientData/></xdr:twoCellAnchor></xdr:wsDr>`;
    const tpl = xlsxBook({
      strings: ['{#items}{name}', '{qty}{/items}'],
      sheets: [
        {
          name: 'Data',
          rows: `<row r="2">${s('A2', 0)}${s('B2', 1)}</row>`,
          tail: '<drawing r:id="rIdD"/>',
          rels: `<Relationship Id="rIdD" Type="${R}/drawing" Target="../drawings/drawing1.xml"/>`,
        },
      ],
      extra: {
        'xl/drawings/drawing1.xml': { xml: drawing, type: 'application/vnd.openxmlformats-officedocument.drawing+xml' },
        'xl/drawings/_rels/drawing1.xml.rels': {
          xml: `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rIdC" Type="${R}/chart" Target="../charts/chart1.xml"/></Relationships>`,
        },
        'xl/charts/chart1.xml': { xml: chart, type: 'application/vnd.openxmlformats-officedocument.drawingml.chart+xml' },
      },
    });
    const out = await render(tpl, { items });
    expect(packageProblems(out)).toEqual([]);
    const c = unzipText(out).get('xl/charts/chart1.xml') ?? '';
    expect(c).toContain(
      '<c:f>\'Data\'!$B$2:$B$4</c:f><c:numCache><c:formatCode>General</c:formatCode><c:ptCount val="3"/><c:pt idx="0"><c:v>2</c:v></c:pt><c:pt idx="1"><c:v>3</c:v></c:pt><c:pt idx="2"><c:v>5</c:v></c:pt></c:numCache>',
    );
    expect(c).toContain(
      '<c:f>\'Data\'!$A$2:$A$4</c:f><c:strCache><c:ptCount val="3"/><c:pt idx="0"><c:v>a</c:v></c:pt><c:pt idx="1"><c:v>b</c:v></c:pt><c:pt idx="2"><c:v>c</c:v></c:pt></c:strCache>',
    );
    const lo = await recalculateInLibreOffice(out);
    const saved = [...lo.parts].find(([k]) => /^xl\/charts\/chart\d*\.xml$/.test(k))?.[1] ?? '';
    expect(saved).toMatch(/\$B\$2:\$B\$4/);
  });

  it('recognises tags written with delimiters switched by {=<% %>=} in a sheet', async () => {
    const tpl = xlsxBook({
      strings: ['{=<% %>=}', 'Report <%title%>', '<%#items%><%name%>', '<%qty%><%/items%>', 'Total'],
      sheets: [
        {
          name: 'Data',
          rows: `<row r="1">${s('A1', 0)}${s('B1', 1)}</row><row r="2">${s('A2', 2)}${s('B2', 3)}</row><row r="3">${s('A3', 4)}<c r="B3"><f>SUM(B2:B2)</f><v>0</v></c></row>`,
        },
      ],
    });
    const out = await render(tpl, { title: 'Q3', items });
    const lo = await recalculateInLibreOffice(out);
    const data = lo.sheets.get('Data');
    expect(data?.has('A1')).toBe(false);
    expect(data?.get('B1')).toBe('Report Q3');
    expect(['A2', 'B2', 'A3', 'B3', 'A4', 'B4'].map((r) => data?.get(r))).toEqual(['a', '2', 'b', '3', 'c', '5']);
    expect([data?.get('A5'), data?.get('B5')]).toEqual(['Total', '10']);
  });
});
