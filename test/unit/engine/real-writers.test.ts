import { describe, expect, it } from 'vitest';
import { render } from '../../support/engine.ts';
import { sheetCells, unzipText, xlsxBook, zip } from './helpers.ts';
import { packageProblems } from './package-check.ts';

/**
 * Packages as other writers make them (Excel's formatted blanks, the .NET Open XML SDK's prefixes,
 * openpyxl's local namespace declarations, SharePoint's document properties), each a minimal reproducer.
 */

const s = (ref: string, i: number): string => `<c r="${ref}" t="s"><v>${i}</v></c>`;
const n = (ref: string, v: number): string => `<c r="${ref}"><v>${v}</v></c>`;

describe('xlsx: shared formulas after a formatted blank cell', () => {
  it('gives each follower its own formula when a self-closing styled cell comes before it', async () => {
    // Excel writes a formatted empty cell as <c r="C2" s="0"/>; D2 (right after such a blank) is the master
    // of D2:E3, filled right and down over a looped row (row 2) and the row below it.
    const tpl = xlsxBook({
      strings: ['{#items}{qty}', '{/items}'],
      sheets: [
        {
          name: 'Data',
          rows:
            `<row r="2">${s('A2', 0)}${s('B2', 1)}<c r="C2" s="0"/><c r="D2"><f t="shared" ref="D2:E3" si="0">A2*10</f><v>0</v></c><c r="E2"><f t="shared" si="0"/><v>0</v></c></row>` +
            `<row r="3">${n('A3', 7)}<c r="C3" s="0"/><c r="D3"><f t="shared" si="0"/><v>0</v></c><c r="E3"><f t="shared" si="0"/><v>0</v></c></row>`,
        },
      ],
    });
    const out = await render(tpl, { items: [{ qty: 1 }, { qty: 2 }] });
    const cells = sheetCells(out);
    expect(cells.filter((c) => /^[DE]/.test(c))).toEqual(['D2==A2*10', 'E2==B2*10', 'D3==A3*10', 'E3==B3*10', 'D4==A4*10', 'E4==B4*10']);
  });
});
