import { describe, expect, it } from 'vitest';
import { render } from '../../support/engine.ts';
import { row, sheetCells, unzipText, xlsx } from './helpers.ts';

const strings = ['Item', 'Qty', '{#items}{name}', '{qty}', '{price}{/items}', 'Total', '{total}', '{when}', '{flag}', '{missing}'];

describe('render xlsx', () => {
  it('writes numbers, booleans and dates as typed cells and strings inline', async () => {
    const out = await render(
      xlsx({
        strings,
        rows: row(1, [
          ['A1', 's:6', 1],
          ['B1', 's:7', 0],
          ['C1', 's:8'],
          ['D1', 's:9'],
          ['E1', 's:0'],
        ]),
      }),
      { total: 12.5, when: '2024-03-01', flag: true },
    );
    const cells = sheetCells(out);
    // Style 0 has no date format, so the date gets an appended date variant of it (index 3).
    expect(cells).toEqual(['A1=num:12.5@1', 'B1=num:45352@3', 'C1=bool:1', 'D1=', 'E1=Item']);
    const styles = unzipText(out).get('xl/styles.xml') ?? '';
    expect(styles).toContain('<cellXfs count="7">');
  });

  it('repeats rows and shifts everything below: rows, merged cells, formulas, names, tables', async () => {
    const tpl = xlsx({
      strings,
      rows:
        row(1, [
          ['A1', 's:0'],
          ['B1', 's:1'],
        ]) +
        row(2, [
          ['A2', 's:2'],
          ['B2', 's:3'],
          ['C2', 's:4'],
          ['D2', 'f:B2*C2'],
        ]) +
        row(3, [
          ['A3', 's:5'],
          ['B3', 'f:SUM(B2:B2)'],
          ['C3', 's:6'],
        ]) +
        row(5, [['A5', 'f:LOG10(B3)+$B$1']]),
      tail: '<mergeCells count="2"><mergeCell ref="A3:B3"/><mergeCell ref="C2:D2"/></mergeCells><conditionalFormatting sqref="B2:B2 A5"><cfRule type="expression" priority="1"><formula>1</formula></cfRule></conditionalFormatting>',
      definedNames: `<definedName name="items">'Data Sheet'!$A$2:$C$2</definedName><definedName name="other">Other!$A$2</definedName>`,
      table:
        '<?xml version="1.0" encoding="UTF-8"?><table xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" id="1" name="T" displayName="T" ref="A1:D2"><autoFilter ref="A1:D2"/><tableColumns count="4"><tableColumn id="1" name="Item"/><tableColumn id="2" name="Qty"/><tableColumn id="3" name="Price"/><tableColumn id="4" name="Amount"/></tableColumns></table>',
      calcChain: true,
    });
    const out = await render(tpl, {
      items: [
        { name: 'a', qty: 1, price: 2 },
        { name: 'b', qty: 3, price: 4 },
        { name: 'c', qty: 5, price: 6 },
      ],
      total: 9,
    });
    expect(sheetCells(out)).toEqual([
      'A1=Item',
      'B1=Qty',
      'A2=a',
      'B2=num:1',
      'C2=num:2',
      'D2==B2*C2',
      'A3=b',
      'B3=num:3',
      'C3=num:4',
      'D3==B3*C3',
      'A4=c',
      'B4=num:5',
      'C4=num:6',
      'D4==B4*C4',
      'A5=Total',
      'B5==SUM(B2:B4)',
      'C5=num:9',
      'A7==LOG10(B5)+$B$1',
    ]);
    const files = unzipText(out);
    const sheet = files.get('xl/worksheets/sheet1.xml') ?? '';
    expect(sheet).toContain('<dimension ref="A1:C7"/>');
    expect(sheet).toContain(
      '<mergeCells count="4"><mergeCell ref="A5:B5"/><mergeCell ref="C2:D2"/><mergeCell ref="C3:D3"/><mergeCell ref="C4:D4"/></mergeCells>',
    );
    expect(sheet).toContain('sqref="B2:B4 A7"');
    expect([...sheet.matchAll(/<row r="(\d+)"/g)].map((m) => m[1])).toEqual(['1', '2', '3', '4', '5', '7']);
    expect(files.get('xl/workbook.xml')).toContain(`<definedName name="items">'Data Sheet'!$A$2:$C$4</definedName>`);
    expect(files.get('xl/workbook.xml')).toContain('<definedName name="other">Other!$A$2</definedName>');
    expect(files.get('xl/workbook.xml')).toContain('fullCalcOnLoad="1"');
    expect(files.get('xl/tables/table1.xml')).toContain('ref="A1:D4"><autoFilter ref="A1:D4"/>');
    expect(files.has('xl/calcChain.xml')).toBe(false);
    expect(files.get('[Content_Types].xml')).not.toContain('calcChain');
    expect(files.get('xl/_rels/workbook.xml.rels')).not.toContain('calcChain');
  });

  it('removes the rows of an empty loop and moves the rows below up', async () => {
    const tpl = xlsx({
      strings,
      rows:
        row(1, [['A1', 's:0']]) +
        row(2, [
          ['A2', 's:2'],
          ['C2', 's:4'],
        ]) +
        row(3, [
          ['A3', 's:5'],
          ['B3', 's:6'],
        ]),
    });
    const out = await render(tpl, { items: [], total: 0 });
    expect(sheetCells(out)).toEqual(['A1=Item', 'A2=Total', 'B2=num:0']);
  });
});
