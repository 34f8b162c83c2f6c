import { describe, expect, it } from 'vitest';
import { render, TemplateError } from '../../support/engine.ts';
import { docx, p, PNG_2x1, unzipText, zip } from './helpers.ts';
import { recalculateInLibreOffice } from './libreoffice.ts';
import { packageProblems } from './package-check.ts';

const XML = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>';
const SML = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
const R = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const PKG = 'http://schemas.openxmlformats.org/package/2006/relationships';
const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

interface Sheet {
  name: string;
  state?: string;
  /** XML before sheetData (sheet views). */
  head?: string;
  rows: string;
  tail?: string;
  rels?: string;
}

/** A workbook with shared strings, the given stylesheet, sheets and defined names. */
function book(spec: {
  strings: string[];
  sheets: Sheet[];
  styles: string;
  definedNames?: string;
  extra?: Record<string, Uint8Array | string>;
  types?: string;
  views?: string;
}): Uint8Array {
  const files: Record<string, string | Uint8Array> = {
    '[Content_Types].xml':
      `${XML}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
      '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>' +
      '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>' +
      '<Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/>' +
      '<Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/>' +
      spec.sheets
        .map(
          (_, i) =>
            `<Override PartName="/xl/worksheets/sheet${i + 1}.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>`,
        )
        .join('') +
      `${spec.types ?? ''}</Types>`,
    '_rels/.rels': `${XML}<Relationships xmlns="${PKG}"><Relationship Id="rId1" Type="${R}/officeDocument" Target="xl/workbook.xml"/></Relationships>`,
    'xl/workbook.xml':
      `${XML}<workbook xmlns="${SML}" xmlns:r="${R}">${spec.views ?? ''}<sheets>` +
      spec.sheets
        .map(
          (s, i) =>
            `<sheet name="${esc(s.name)}" sheetId="${i + 1}"${s.state === undefined ? '' : ` state="${s.state}"`} r:id="rIdS${i + 1}"/>`,
        )
        .join('') +
      `</sheets>${spec.definedNames === undefined ? '' : `<definedNames>${spec.definedNames}</definedNames>`}<calcPr calcId="191029"/></workbook>`,
    'xl/_rels/workbook.xml.rels':
      `${XML}<Relationships xmlns="${PKG}">` +
      spec.sheets.map((_, i) => `<Relationship Id="rIdS${i + 1}" Type="${R}/worksheet" Target="worksheets/sheet${i + 1}.xml"/>`).join('') +
      `<Relationship Id="rIdSS" Type="${R}/sharedStrings" Target="sharedStrings.xml"/><Relationship Id="rIdST" Type="${R}/styles" Target="styles.xml"/></Relationships>`,
    'xl/sharedStrings.xml': `${XML}<sst xmlns="${SML}" count="${spec.strings.length}" uniqueCount="${spec.strings.length}">${spec.strings.map((s) => `<si><t xml:space="preserve">${esc(s)}</t></si>`).join('')}</sst>`,
    'xl/styles.xml': `${XML}<styleSheet xmlns="${SML}">${spec.styles}</styleSheet>`,
    ...spec.extra,
  };
  spec.sheets.forEach((s, i) => {
    files[`xl/worksheets/sheet${i + 1}.xml`] =
      `${XML}<worksheet xmlns="${SML}" xmlns:r="${R}">${s.head ?? ''}<sheetData>${s.rows}</sheetData>${s.tail ?? ''}</worksheet>`;
    if (s.rels !== undefined)
      files[`xl/worksheets/_rels/sheet${i + 1}.xml.rels`] = `${XML}<Relationships xmlns="${PKG}">${s.rels}</Relationships>`;
  });
  return zip(files);
}

const PLAIN_STYLES =
  '<fonts count="1"><font><sz val="11"/><name val="Calibri"/></font></fonts><fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills>' +
  '<borders count="1"><border/></borders><cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs><cellXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/></cellXfs>';

// The included workbook's own formats: a bold font and a currency format on style 1.
const MONEY_STYLES =
  '<numFmts count="1"><numFmt numFmtId="164" formatCode="&quot;$&quot;#,##0.00"/></numFmts>' +
  '<fonts count="2"><font><sz val="11"/><name val="Calibri"/></font><font><b/><sz val="11"/><name val="Calibri"/></font></fonts>' +
  '<fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills><borders count="1"><border/></borders>' +
  '<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>' +
  '<cellXfs count="2"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/><xf numFmtId="164" fontId="1" fillId="0" borderId="0" xfId="0" applyNumberFormat="1" applyFont="1"/></cellXfs>';

const s = (ref: string, i: number, style = ''): string => `<c r="${ref}"${style} t="s"><v>${i}</v></c>`;
const f = (ref: string, formula: string, style = ''): string => `<c r="${ref}"${style}><f>${esc(formula)}</f><v>0</v></c>`;
const n = (ref: string, v: number): string => `<c r="${ref}"><v>${v}</v></c>`;

const C = 'http://schemas.openxmlformats.org/drawingml/2006/chart';
const CHART =
  `${XML}<c:chartSpace xmlns:c="${C}" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:r="${R}"><c:chart><c:plotArea><c:layout/>` +
  '<c:barChart><c:barDir val="col"/><c:grouping val="clustered"/><c:varyColors val="0"/><c:ser><c:idx val="0"/><c:order val="0"/>' +
  '<c:val><c:numRef><c:f>Sales!$B$2:$B$2</c:f><c:numCache><c:formatCode>General</c:formatCode><c:ptCount val="1"/></c:numCache></c:numRef></c:val>' +
  '</c:ser><c:axId val="1"/><c:axId val="2"/></c:barChart><c:catAx><c:axId val="1"/><c:scaling><c:orientation val="minMax"/></c:scaling><c:delete val="0"/><c:axPos val="b"/><c:crossAx val="2"/></c:catAx>' +
  '<c:valAx><c:axId val="2"/><c:scaling><c:orientation val="minMax"/></c:scaling><c:delete val="0"/><c:axPos val="l"/><c:crossAx val="1"/></c:valAx></c:plotArea></c:chart></c:chartSpace>';
const CHART_DRAWING =
  `${XML}<xdr:wsDr xmlns:xdr="http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main">` +
  '<xdr:twoCellAnchor><xdr:from><xdr:col>4</xdr:col><xdr:colOff>0</xdr:colOff><xdr:row>0</xdr:row><xdr:rowOff>0</xdr:rowOff></xdr:from><xdr:to><xdr:col>10</xdr:col><xdr:colOff>0</xdr:colOff><xdr:row>12</xdr:row><xdr:rowOff>0</xdr:rowOff></xdr:to>' +
  '<xdr:graphicFrame macro=""><xdr:nvGraphicFramePr><xdr:cNvPr id="2" name="Chart"/><xdr:cNvGraphicFramePr/></xdr:nvGraphicFramePr><xdr:xfrm><a:off x="0" y="0"/><a:ext cx="0" cy="0"/></xdr:xfrm>' +
  `<a:graphic><a:graphicData uri="${C}"><c:chart xmlns:c="${C}" xmlns:r="${R}" r:id="rIdC"/></a:graphicData></a:graphic></xdr:graphicFrame><xdr:clientData/></xdr:twoCellAnchor></xdr:wsDr>`;

/** Included workbook: "Sales" with a row loop, a total and a chart, "Notes" holding a rate (name clash with the host). */
function detail(): Uint8Array {
  return book({
    strings: ['Name', 'Amount', '{#rows}{name}', '{amount}{/rows}', 'Total', 'Rate', 'Net'],
    styles: MONEY_STYLES,
    definedNames: '<definedName name="Rate">Notes!$B$1</definedName>',
    sheets: [
      {
        name: 'Sales',
        head: '<sheetViews><sheetView tabSelected="1" workbookViewId="0"/></sheetViews>',
        rows:
          `<row r="1">${s('A1', 0)}${s('B1', 1)}</row>` +
          `<row r="2">${s('A2', 2)}${s('B2', 3, ' s="1"')}</row>` +
          `<row r="3">${s('A3', 4)}${f('B3', 'SUM(B2:B2)', ' s="1"')}</row>` +
          `<row r="4">${s('A4', 6)}${f('B4', 'B3*Rate')}${f('C4', 'Notes!B1*100')}</row>`,
        tail: '<drawing r:id="rIdD"/>',
        rels: `<Relationship Id="rIdD" Type="${R}/drawing" Target="../drawings/drawing1.xml"/>`,
      },
      { name: 'Notes', state: 'hidden', rows: `<row r="1">${s('A1', 5)}${n('B1', 0.5)}</row>` },
    ],
    extra: {
      'xl/drawings/drawing1.xml': CHART_DRAWING,
      'xl/drawings/_rels/drawing1.xml.rels': `${XML}<Relationships xmlns="${PKG}"><Relationship Id="rIdC" Type="${R}/chart" Target="../charts/chart1.xml"/></Relationships>`,
      'xl/charts/chart1.xml': CHART,
    },
    types:
      '<Override PartName="/xl/drawings/drawing1.xml" ContentType="application/vnd.openxmlformats-officedocument.drawing+xml"/>' +
      '<Override PartName="/xl/charts/chart1.xml" ContentType="application/vnd.openxmlformats-officedocument.drawingml.chart+xml"/>',
  });
}

function host(): Uint8Array {
  return book({
    strings: ['Report {title}', '{>detail}', 'Grand total', 'notes of the host'],
    styles: PLAIN_STYLES,
    definedNames: '<definedName name="_xlnm.Print_Area" localSheetId="1">Notes!$A$1:$A$2</definedName>',
    views: '<bookViews><workbookView activeTab="1"/></bookViews>',
    sheets: [
      {
        name: 'Summary',
        rows: `<row r="1">${s('A1', 0)}</row><row r="2">${s('A2', 1)}</row><row r="3">${s('A3', 2)}${f('B3', "'Sales'!B3")}</row>`,
      },
      {
        name: 'Notes',
        head: '<sheetViews><sheetView tabSelected="1" workbookViewId="0"/></sheetViews>',
        rows: `<row r="1">${s('A1', 3)}</row>`,
      },
    ],
  });
}

describe('{>name} in a workbook: sheets from another workbook', () => {
  it('inserts the rendered sheets after the tag sheet, with their strings, styles and names, and LibreOffice computes them', async () => {
    const data = {
      title: 'Q3',
      rows: [
        { name: 'a', amount: 10 },
        { name: 'b', amount: 20 },
        { name: 'c', amount: 12.5 },
      ],
    };
    const out = await render(host(), data, { relatedItems: { detail: detail() } });
    expect(packageProblems(out)).toEqual([]);
    const files = unzipText(out);
    const wb = files.get('xl/workbook.xml') ?? '';
    expect([...wb.matchAll(/<sheet name="([^"]+)"/g)].map((m) => m[1])).toEqual(['Summary', 'Sales', 'Notes (2)', 'Notes']);
    // The host's print area stays on its own "Notes" sheet, now the fourth; the included name follows the renamed sheet.
    expect(wb).toContain('<definedName name="_xlnm.Print_Area" localSheetId="3">Notes!$A$1:$A$2</definedName>');
    expect(wb).toContain(`<definedName name="Rate">'Notes (2)'!$B$1</definedName>`);
    expect(wb).toMatch(/<sheet name="Notes \(2\)" sheetId="\d+" state="hidden" r:id="[^"]+"\/>/);
    // The host's "Notes" stays the one open sheet: its tab index follows, the included sheet is not selected too.
    expect(wb).toContain('<workbookView activeTab="3"/>');
    expect([...files].filter(([k, x]) => k.startsWith('xl/worksheets/sheet') && x.includes('tabSelected')).map(([k]) => k)).toEqual([
      'xl/worksheets/sheet2.xml',
    ]);

    // The carried chart plots the grown rows, its cache rebuilt from them.
    const chart = [...files].find(([k]) => /^xl\/charts\/[^/]+\.xml$/.test(k))?.[1] ?? '';
    expect(chart).toContain(
      '<c:f>Sales!$B$2:$B$4</c:f><c:numCache><c:formatCode>General</c:formatCode><c:ptCount val="3"/><c:pt idx="0"><c:v>10</c:v></c:pt>',
    );

    const lo = await recalculateInLibreOffice(out);
    const sales = lo.sheets.get('Sales');
    expect(sales?.get('A1')).toBe('Name');
    expect([sales?.get('A2'), sales?.get('B2'), sales?.get('A4'), sales?.get('B4')]).toEqual(['a', '10', 'c', '12.5']);
    expect(sales?.get('B5')).toBe('42.5');
    expect(sales?.get('B6')).toBe('21.25');
    expect(sales?.get('C6')).toBe('50');
    expect(lo.sheets.get('Summary')?.get('A1')).toBe('Report Q3');
    expect(lo.sheets.get('Summary')?.has('A2')).toBe(false);
    expect(lo.sheets.get('Summary')?.get('B3')).toBe('42.5');
    expect(lo.sheets.get('Notes')?.get('A1')).toBe('notes of the host');

    // The amount cells keep the included workbook's bold currency format, appended to the host's styles.
    const salesXml =
      files.get(
        /Target="([^"]+)"/
          .exec(/<Relationship\b[^>]*Id="rIdInc1"[^>]*>/.exec(files.get('xl/_rels/workbook.xml.rels') ?? '')?.[0] ?? '')?.[1]
          ?.replace(/^/, 'xl/') ?? '',
      ) ?? '';
    const styleIdx = Number(/<c r="B3" s="(\d+)"/.exec(salesXml)?.[1]);
    const styles = files.get('xl/styles.xml') ?? '';
    const xfs = [...(/<cellXfs[^>]*>([\s\S]*?)<\/cellXfs>/.exec(styles)?.[1] ?? '').matchAll(/<xf\b[^>]*>/g)].map((m) => m[0]);
    const xf = xfs[styleIdx] ?? '';
    const fmt = /numFmtId="(\d+)"/.exec(xf)?.[1] ?? '';
    expect(styles).toContain(`<numFmt numFmtId="${fmt}" formatCode="&quot;$&quot;#,##0.00"/>`);
    const fonts = [...(/<fonts[^>]*>([\s\S]*?)<\/fonts>/.exec(styles)?.[1] ?? '').matchAll(/<font>[\s\S]*?<\/font>/g)].map((m) => m[0]);
    expect(fonts[Number(/fontId="(\d+)"/.exec(xf)?.[1])]).toContain('<b/>');
    const savedStyles = lo.parts.get('xl/styles.xml') ?? '';
    // LibreOffice read the format (it saves it in its own spelling).
    expect(savedStyles).toMatch(/formatCode="[^"]*\$[^"]*#,##0\.00"/);
  });

  it('carries the pictures of an included sheet and includes once per loop item', async () => {
    const XDR = 'http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing';
    const A = 'http://schemas.openxmlformats.org/drawingml/2006/main';
    const drawing =
      `${XML}<xdr:wsDr xmlns:xdr="${XDR}" xmlns:a="${A}" xmlns:r="${R}"><xdr:oneCellAnchor><xdr:from><xdr:col>2</xdr:col><xdr:colOff>0</xdr:colOff><xdr:row>0</xdr:row><xdr:rowOff>0</xdr:rowOff></xdr:from><xdr:ext cx="190500" cy="95250"/>` +
      '<xdr:pic><xdr:nvPicPr><xdr:cNvPr id="2" name="Logo"/><xdr:cNvPicPr/></xdr:nvPicPr><xdr:blipFill><a:blip r:embed="rIdPic"/><a:stretch><a:fillRect/></a:stretch></xdr:blipFill>' +
      '<xdr:spPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="190500" cy="95250"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom></xdr:spPr></xdr:pic><xdr:clientData/></xdr:oneCellAnchor></xdr:wsDr>';
    const card = book({
      strings: ['Customer {name}', '{%photo}'],
      styles: PLAIN_STYLES,
      sheets: [
        {
          name: 'Card',
          rows: `<row r="1">${s('A1', 0)}</row><row r="3">${s('A3', 1)}</row>`,
          tail: '<drawing r:id="rIdD"/>',
          rels: `<Relationship Id="rIdD" Type="${R}/drawing" Target="../drawings/drawing1.xml"/>`,
        },
      ],
      extra: {
        'xl/drawings/drawing1.xml': drawing,
        'xl/drawings/_rels/drawing1.xml.rels': `${XML}<Relationships xmlns="${PKG}"><Relationship Id="rIdPic" Type="${R}/image" Target="../media/image1.png"/></Relationships>`,
        'xl/media/image1.png': PNG_2x1,
      },
      types:
        '<Default Extension="png" ContentType="image/png"/><Override PartName="/xl/drawings/drawing1.xml" ContentType="application/vnd.openxmlformats-officedocument.drawing+xml"/>',
    });
    const tpl = book({
      strings: ['{#customers}', '{>card}{/customers}'],
      styles: PLAIN_STYLES,
      sheets: [{ name: 'Index', rows: `<row r="1">${s('A1', 0)}${s('B1', 1)}</row>` }],
    });
    const photo = `data:image/png;base64,${Buffer.from(PNG_2x1).toString('base64')}`;
    const out = await render(
      tpl,
      {
        customers: [
          { name: 'Ann', photo },
          { name: 'Bob', photo },
        ],
      },
      { relatedItems: { card } },
    );
    expect(packageProblems(out)).toEqual([]);
    const files = unzipText(out);
    expect([...(files.get('xl/workbook.xml') ?? '').matchAll(/<sheet name="([^"]+)"/g)].map((m) => m[1])).toEqual([
      'Index',
      'Card',
      'Card (2)',
    ]);
    // Each sheet has its own copy of the drawing, holding the logo and the rendered photo; the
    // picture files are stored once.
    const drawings = [...files].filter(([k]) => /^xl\/drawings\/[^/]+\.xml$/.test(k));
    expect(drawings).toHaveLength(2);
    for (const [, xml] of drawings) expect(xml.match(/<xdr:pic>/g)).toHaveLength(2);
    expect([...files.keys()].filter((k) => k.startsWith('xl/media/'))).toHaveLength(2);
    const lo = await recalculateInLibreOffice(out);
    expect(lo.sheets.get('Card')?.get('A1')).toBe('Customer Ann');
    expect(lo.sheets.get('Card (2)')?.get('A1')).toBe('Customer Bob');
    expect([...lo.parts.keys()].filter((k) => /^xl\/media\//.test(k)).length).toBeGreaterThanOrEqual(1);
  });

  it('reports a missing workbook, a template of another kind and cycles', async () => {
    const ids = async (related: Record<string, Uint8Array>): Promise<string[]> => {
      const err = await render(host(), { title: 'x' }, { relatedItems: related }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TemplateError);
      return (err as TemplateError).errors.map((e) => e.id);
    };
    expect(await ids({})).toEqual(['include_missing']);
    expect(await ids({ detail: docx(p('x')) })).toEqual(['include_format']);
    expect(await ids({ detail: host() })).toEqual(['include_cycle']);
  });
});
