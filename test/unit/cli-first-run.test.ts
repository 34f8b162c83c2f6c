// The pure parts of the first-run CLI: batch rows (JSON and CSV), per-row file names, what `docgen start`
// does about a missing LibreOffice, and the committed examples being what examples/build.ts builds.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readRows, rowFileName } from '../../cli/batch.ts';
import { detectCsvSeparator, parseCsv } from '../../core/rows.ts';
import { converterInstallPlan } from '../../cli/converter-install.ts';
import { buildExamples } from '../../examples/build.ts';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-cli-unit-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
const file = (name: string, text: string) => {
  const p = path.join(tmp, name);
  fs.writeFileSync(p, text);
  return p;
};

describe('batch rows', () => {
  it('parses RFC 4180 CSV: quotes, doubled quotes, commas and line breaks inside quotes, CRLF, BOM', () => {
    expect(parseCsv('\ufeffa,b\r\n"x, y","say ""hi"""\r\n"two\nlines",\n')).toEqual([
      ['a', 'b'],
      ['x, y', 'say "hi"'],
      ['two\nlines', ''],
    ]);
    expect(() => parseCsv('a\n"open')).toThrow('not closed');
  });

  it('reads CSV rows as objects: dotted headers nest, plain numbers become numbers', () => {
    const rows = readRows(file('r.csv', 'id,customer.name,balance,zip\nC-1,"ACME, Inc.",12.5,007\n'));
    expect(rows).toEqual([{ id: 'C-1', customer: { name: 'ACME, Inc.' }, balance: 12.5, zip: '007' }]);
  });

  it('names the line of a CSV row with the wrong number of fields, and refuses JSON that is not an array of objects', () => {
    expect(() => readRows(file('bad.csv', 'a,b\n1,2\n3\n'))).toThrow('line 3: 1 fields, the header has 2');
    expect(() => readRows(file('obj.json', '{"a":1}'))).toThrow('needs a JSON array');
    expect(() => readRows(file('arr.json', '[{"a":1}, 2]'))).toThrow('row 2 is not an object');
    expect(() => readRows(file('broken.json', '[{'))).toThrow('not valid JSON');
  });

  it('reads semicolon- and tab-separated CSV (what spreadsheets write where the comma is the decimal separator)', () => {
    const expected = [
      { id: 'C-1', name: 'ACME; Inc.', balance: '12,5' },
      { id: 'C-2', name: 'Globex, SA', balance: 7 },
    ];
    expect(readRows(file('semi.csv', 'id;name;balance\r\nC-1;"ACME; Inc.";12,5\r\nC-2;Globex, SA;7\r\n'))).toEqual(expected);
    expect(readRows(file('tab.csv', 'id\tname\tbalance\nC-1\tACME; Inc.\t12,5\nC-2\t"Globex, SA"\t7\n'))).toEqual(expected);
    expect(detectCsvSeparator('a,b\n1,2\n')).toBe(',');
    // A comma inside an unquoted value of a semicolon file does not make it comma-separated.
    expect(detectCsvSeparator('a;b\n1,5;2\n3;4\n')).toBe(';');
    // One column: nothing to detect, commas.
    expect(readRows(file('one.csv', 'id\nC-1\nC-2\n'))).toEqual([{ id: 'C-1' }, { id: 'C-2' }]);
  });

  it('says which separator it read, and which it accepts, when a row does not fit the header', () => {
    expect(() => readRows(file('ragged.csv', 'id;name\nC-1;a;b\n'))).toThrow(
      "line 2: 3 fields, the header has 2 (separated by ';', read from the header; the separator may be ',', ';', tab; quote a value that contains it)",
    );
  });

  it('names each row file after a field when asked, safely, else after the row number', () => {
    expect(rowFileName({ id: 'C-1' }, 1, 'letter', 'pdf', 'id')).toBe('C-1.pdf');
    expect(rowFileName({ id: '../../etc/passwd' }, 2, 'letter', 'pdf', 'id')).toBe('.._.._etc_passwd.pdf');
    expect(rowFileName({ id: '' }, 3, 'letter', 'docx', 'id')).toBe('letter-003.docx');
    expect(rowFileName({}, 12, 'letter', 'docx')).toBe('letter-012.docx');
  });
});

describe('docgen start and a missing LibreOffice', () => {
  const base = { missing: true, optedOut: false, root: true, debian: true, aptGet: true };
  it('installs it as root on Debian/Ubuntu with the CI script', () => {
    expect(converterInstallPlan(base, '/x/.ci/install-converter.sh')).toEqual({
      action: 'install',
      command: ['bash', '/x/.ci/install-converter.sh'],
    });
  });
  it('prints the exact command when it may not install (not root, or opted out)', () => {
    expect(converterInstallPlan({ ...base, root: false }, '/x/i.sh')).toEqual({
      action: 'print',
      message: expect.stringContaining('run `sudo bash /x/i.sh`'),
    });
    expect(converterInstallPlan({ ...base, optedOut: true }, '/x/i.sh')).toEqual({
      action: 'print',
      message: expect.stringContaining('run `bash /x/i.sh` (CONVERTER_AUTO_INSTALL=false'),
    });
  });
  it('does not run apt-get where there is none, and does nothing when LibreOffice is there', () => {
    expect(converterInstallPlan({ ...base, debian: false }).action).toBe('print');
    expect(converterInstallPlan({ ...base, aptGet: false }).action).toBe('print');
    expect(converterInstallPlan({ ...base, missing: false })).toEqual({ action: 'none' });
  });
});

describe('examples/', () => {
  it('holds exactly what examples/build.ts builds', () => {
    const out = fs.mkdtempSync(path.join(tmp, 'examples-'));
    const built = buildExamples(out);
    expect(built.length).toBeGreaterThanOrEqual(8);
    for (const f of built) {
      const committed = path.join(import.meta.dirname, '..', '..', 'examples', path.basename(f));
      expect(fs.existsSync(committed), `${path.basename(f)} is committed`).toBe(true);
      expect(Buffer.compare(fs.readFileSync(f), fs.readFileSync(committed)), `${path.basename(f)} matches node examples/build.ts`).toBe(0);
    }
  });
});
