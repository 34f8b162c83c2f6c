import { describe, expect, it } from 'vitest';
import { render } from '../../support/engine.ts';
import { row, sheetCells, xlsxBook } from './helpers.ts';
import { recalculateInLibreOffice } from './libreoffice.ts';

// Values a spreadsheet author checks by formula: calendar dates stay on their day in any time zone,
// `{$index}` numbers the looped rows from 0.

const strings = ['{#rows}{$index}', '{day}', '{day | date:"dd.MM.yyyy"}{/rows}'];

function template(): Uint8Array {
  return xlsxBook({
    strings,
    sheets: [
      {
        name: 'Days',
        rows:
          row(1, [
            ['A1', 's:0'],
            ['B1', 's:1'],
            ['C1', 's:2'],
          ]) +
          row(2, [
            ['A2', 'f:SUM(A1:A1)'],
            ['B2', 'f:TEXT(B1,"yyyy-mm-dd")'],
            ['C2', 'f:COUNTA(C1:C1)'],
          ]),
      },
    ],
  });
}

const data = { rows: [{ day: '2026-01-15' }, { day: '2026-02-28' }, { day: '2026-03-01' }] };

describe('xlsx values', () => {
  it('writes calendar dates on their day and 0-based {$index} in every time zone', async () => {
    for (const timezone of ['America/Los_Angeles', 'Asia/Tokyo']) {
      const cells = sheetCells(await render(template(), data, { timezone }));
      expect(cells.filter((c) => /^[ABC][123]=/.test(c))).toEqual([
        'A1=num:0',
        'B1=num:46037@1',
        'C1=15.01.2026',
        'A2=num:1',
        'B2=num:46081@1',
        'C2=28.02.2026',
        'A3=num:2',
        'B3=num:46082@1',
        'C3=01.03.2026',
      ]);
    }
  });

  it('LibreOffice reads the same days and indexes', async () => {
    const lo = await recalculateInLibreOffice(await render(template(), data, { timezone: 'America/Los_Angeles' }));
    const days = lo.sheets.get('Days');
    expect(days?.get('A4')).toBe('3');
    expect(days?.get('B4')).toBe('2026-01-15');
    expect(days?.get('C4')).toBe('3');
    expect(days?.get('C2')).toBe('28.02.2026');
  });
});
