// `docgen render --each` on CSV files a spreadsheet wrote: LibreOffice saves examples/customers.csv again with
// a semicolon (the default where the comma is the decimal separator) and with a tab; each gives the same
// letters as the comma-separated original.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { docgenBin, repoRoot } from '../support/docgen-start.ts';
import { docxParagraphs } from '../support/office.ts';

const run = promisify(execFile);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-batch-csv-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** examples/customers.csv saved by LibreOffice with the given field separator (a character code). */
async function savedByLibreOffice(separatorCode: number, name: string): Promise<string> {
  const outDir = path.join(tmp, name);
  const profile = pathToFileURL(path.join(tmp, `profile-${name}`)).href;
  const filter = `csv:Text - txt - csv (StarCalc):${separatorCode},34,76`;
  await run(
    'soffice',
    [
      `-env:UserInstallation=${profile}`,
      '--headless',
      '--norestore',
      '--convert-to',
      filter,
      '--outdir',
      outDir,
      path.join(repoRoot, 'examples', 'customers.csv'),
    ],
    { timeout: 120_000 },
  );
  return path.join(outDir, 'customers.csv');
}

async function renderEach(data: string, name: string): Promise<Map<string, string[]>> {
  const out = path.join(tmp, `out-${name}`);
  await run(
    process.execPath,
    [
      docgenBin,
      'render',
      '--template',
      path.join(repoRoot, 'examples', 'reminder.docx'),
      '--data',
      data,
      '--each',
      '--name',
      'id',
      '--out',
      out,
    ],
    { cwd: repoRoot },
  );
  return new Map(fs.readdirSync(out).map((f) => [f, docxParagraphs(fs.readFileSync(path.join(out, f)))]));
}

describe('docgen render --each with CSV from a spreadsheet', () => {
  it('reads semicolon- and tab-separated files as the comma-separated one', { timeout: 180_000 }, async () => {
    const semicolon = await savedByLibreOffice(59, 'semicolon');
    const tab = await savedByLibreOffice(9, 'tab');
    expect(fs.readFileSync(semicolon, 'utf8').split('\n')[0]).toBe('id;name;contact;city;balance;dueOn');
    expect(fs.readFileSync(tab, 'utf8').split('\n')[0]).toBe('id\tname\tcontact\tcity\tbalance\tdueOn');
    const expected = await renderEach(path.join(repoRoot, 'examples', 'customers.csv'), 'comma');
    expect([...expected.keys()].sort()).toEqual(['C-1001.docx', 'C-1002.docx', 'C-1003.docx']);
    expect(expected.get('C-1003.docx')?.join('\n')).toContain('Initech, Ltd.');
    expect(await renderEach(semicolon, 'semicolon')).toEqual(expected);
    expect(await renderEach(tab, 'tab')).toEqual(expected);
  });
});
