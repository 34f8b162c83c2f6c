import { describe, expect, it } from 'vitest';
import { render } from '../../support/engine.ts';
import { row, sheetCells, unzipText, xlsx } from './helpers.ts';
import { recalculateInLibreOffice } from './libreoffice.ts';

// A looped row is Excel filling the row down and inserting the copies: a relative row follows each copy,
// a `$` row stays where it is, and a range whose end is absolute grows over the inserted copies. A
// running total (`SUM($D$2:D2)`) and a share of the total (`D2/SUM($D$2:$D$2)`) come out right, and a
// reference to the total row below the loop points at where that row ends up.

const strings = ['Item', 'Amount', '{#items}{name}', '{amount}', '{/items}', 'Total'];

function template(): Uint8Array {
  return xlsx({
    strings,
    rows:
      row(1, [
        ['A1', 's:0'],
        ['D1', 's:1'],
      ]) +
      row(2, [
        ['A2', 's:2'],
        ['D2', 's:3'],
        ['E2', 'f:SUM($D$2:D2)'],
        ['F2', 'f:D2/SUM($D$2:$D$2)'],
        ['G2', 'f:D2/$D$3'],
        ['H2', 's:4'],
      ]) +
      row(3, [
        ['A3', 's:5'],
        ['D3', 'f:SUM(D2:D2)'],
      ]),
    tail:
      '<conditionalFormatting sqref="D2"><cfRule type="expression" dxfId="0" priority="1"><formula>D2&gt;AVERAGE($D$2:$D$2)</formula></cfRule></conditionalFormatting>' +
      '<dataValidations count="1"><dataValidation type="list" allowBlank="1" sqref="B1"><formula1>$A$2:$A$2</formula1></dataValidation></dataValidations>',
    definedNames: `<definedName name="amounts">'Data Sheet'!$D$2:$D$2</definedName>`,
  });
}

const data = { items: [10, 20, 30].map((amount, i) => ({ name: `item ${i + 1}`, amount })) };

describe('absolute references in looped rows', () => {
  it('keep $ rows, grow ranges whose end is absolute, and follow rows rendered later', async () => {
    const out = await render(template(), data);
    expect(sheetCells(out).filter((c) => /^[D-G]/.test(c))).toEqual([
      'D1=Amount',
      'D2=num:10',
      'E2==SUM($D$2:D2)',
      'F2==D2/SUM($D$2:$D$4)',
      'G2==D2/$D$5',
      'D3=num:20',
      'E3==SUM($D$2:D3)',
      'F3==D3/SUM($D$2:$D$4)',
      'G3==D3/$D$5',
      'D4=num:30',
      'E4==SUM($D$2:D4)',
      'F4==D4/SUM($D$2:$D$4)',
      'G4==D4/$D$5',
      'D5==SUM(D2:D4)',
    ]);
    const files = unzipText(out);
    const sheet = files.get('xl/worksheets/sheet1.xml') ?? '';
    expect(sheet).toContain('<conditionalFormatting sqref="D2:D4">');
    expect(sheet).toContain('<formula>D2&gt;AVERAGE($D$2:$D$4)</formula>');
    expect(sheet).toContain('<formula1>$A$2:$A$4</formula1>');
    expect(sheet).not.toContain('\u0001');
    expect(files.get('xl/workbook.xml')).toContain(`<definedName name="amounts">'Data Sheet'!$D$2:$D$4</definedName>`);
  });

  it('a single item and an empty list leave nothing unresolved', async () => {
    const one = await render(template(), { items: [{ name: 'a', amount: 5 }] });
    expect(sheetCells(one).filter((c) => /^[E-G]2|^D3/.test(c))).toEqual([
      'E2==SUM($D$2:D2)',
      'F2==D2/SUM($D$2:$D$2)',
      'G2==D2/$D$3',
      'D3==SUM(D2:D2)',
    ]);
    const none = await render(template(), { items: [] });
    expect(sheetCells(none)).toEqual(['A1=Item', 'D1=Amount', 'A2=Total', 'D2==SUM(#REF!)']);
  });

  it('LibreOffice computes running totals and shares of the total', async () => {
    const lo = await recalculateInLibreOffice(await render(template(), data));
    const cells = lo.sheets.get('Data Sheet');
    expect(['E2', 'E3', 'E4', 'D5'].map((c) => cells?.get(c))).toEqual(['10', '30', '60', '60']);
    for (const [ref, share] of [
      ['F2', 1 / 6],
      ['F3', 2 / 6],
      ['F4', 3 / 6],
      ['G2', 1 / 6],
      ['G4', 3 / 6],
    ] as const) {
      expect(Number(cells?.get(ref))).toBeCloseTo(share, 9);
    }
  });
});
