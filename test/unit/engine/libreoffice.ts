import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { unzipText } from './helpers.ts';

/**
 * Opens a spreadsheet in real LibreOffice (headless), recalculating every formula on load, and reads
 * back what LibreOffice computed and saved: cell values per sheet, and the saved parts (charts,
 * conditional formats) as LibreOffice understood them.
 */

const run = promisify(execFile);

// Always recalculate OOXML formulas on load, whatever cached values the file carries.
const RECALC_XCU =
  '<?xml version="1.0" encoding="UTF-8"?><oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">' +
  '<item oor:path="/org.openoffice.Office.Calc/Formula/Load"><prop oor:name="OOXMLRecalcMode" oor:op="fuse"><value>0</value></prop></item>' +
  '<item oor:path="/org.openoffice.Office.Calc/Formula/Load"><prop oor:name="ODFRecalcMode" oor:op="fuse"><value>0</value></prop></item>' +
  '</oor:items>';

export interface Recalculated {
  /** Sheet name -> cell ref -> value as text (numbers as LibreOffice saved them). */
  sheets: Map<string, Map<string, string>>;
  /** Every XML part of the file LibreOffice saved. */
  parts: Map<string, string>;
}

export async function recalculateInLibreOffice(xlsxBytes: Uint8Array): Promise<Recalculated> {
  const dir = await mkdtemp(join(tmpdir(), 'docgen-engine-lo-'));
  try {
    const profile = join(dir, 'profile');
    await mkdir(join(profile, 'user'), { recursive: true });
    await writeFile(join(profile, 'user', 'registrymodifications.xcu'), RECALC_XCU);
    const input = join(dir, 'in.xlsx');
    const outDir = join(dir, 'out');
    await writeFile(input, xlsxBytes);
    await run(
      'soffice',
      [
        `-env:UserInstallation=${pathToFileURL(profile).href}`,
        '--headless',
        '--norestore',
        '--convert-to',
        'xlsx:Calc MS Excel 2007 XML',
        '--outdir',
        outDir,
        input,
      ],
      { timeout: 120_000 },
    );
    const parts = unzipText(await readFile(join(outDir, 'in.xlsx')));
    return { sheets: readValues(parts), parts };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function readValues(parts: Map<string, string>): Map<string, Map<string, string>> {
  const shared = [...(parts.get('xl/sharedStrings.xml') ?? '').matchAll(/<si>([\s\S]*?)<\/si>/g)].map((m) =>
    unescape((m[1] ?? '').replace(/<[^>]+>/g, '')),
  );
  const wb = parts.get('xl/workbook.xml') ?? '';
  const rels = parts.get('xl/_rels/workbook.xml.rels') ?? '';
  const out = new Map<string, Map<string, string>>();
  for (const m of wb.matchAll(/<sheet\b[^>]*>/g)) {
    const name = unescape(/\sname="([^"]*)"/.exec(m[0])?.[1] ?? '');
    const id = /\sr:id="([^"]*)"/.exec(m[0])?.[1] ?? '';
    const target = new RegExp(`<Relationship\\b[^>]*Id="${id}"[^>]*>`).exec(rels)?.[0];
    const path = `xl/${/Target="([^"]*)"/.exec(target ?? '')?.[1] ?? ''}`.replace('xl//xl/', 'xl/').replace(/^xl\/\/?/, 'xl/');
    const xml = parts.get(path) ?? '';
    const cells = new Map<string, string>();
    for (const c of xml.matchAll(/<c r="([A-Z]+\d+)"([^>]*?)(?:\/>|>([\s\S]*?)<\/c>)/g)) {
      const t = /\st="([^"]*)"/.exec(c[2] ?? '')?.[1];
      const v = /<v>([^<]*)<\/v>/.exec(c[3] ?? '')?.[1];
      if (v === undefined) continue;
      cells.set(c[1] ?? '', t === 's' ? (shared[Number(v)] ?? '?') : unescape(v));
    }
    out.set(name, cells);
  }
  return out;
}

function unescape(s: string): string {
  return s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');
}

/** The text LibreOffice reads from a Word document (proves it opens it), one line per paragraph. */
export async function textInLibreOffice(docxBytes: Uint8Array): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'docgen-engine-lo-'));
  try {
    const input = join(dir, 'in.docx');
    await writeFile(input, docxBytes);
    await run(
      'soffice',
      [
        `-env:UserInstallation=${pathToFileURL(join(dir, 'profile')).href}`,
        '--headless',
        '--norestore',
        '--convert-to',
        'txt:Text (encoded):UTF8',
        '--outdir',
        join(dir, 'out'),
        input,
      ],
      { timeout: 120_000 },
    );
    return (await readFile(join(dir, 'out', 'in.txt'), 'utf8')).replace(/^\uFEFF/, '');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Converts a document to PDF in LibreOffice and returns its text (pdftotext) and page count (pdfinfo). */
export async function pdfInLibreOffice(
  bytes: Uint8Array,
  ext: 'docx' | 'pptx' | 'xlsx',
): Promise<{ text: string; pages: number; pdf: Uint8Array }> {
  const dir = await mkdtemp(join(tmpdir(), 'docgen-engine-lo-'));
  try {
    const input = join(dir, `in.${ext}`);
    await writeFile(input, bytes);
    await run(
      'soffice',
      [
        `-env:UserInstallation=${pathToFileURL(join(dir, 'profile')).href}`,
        '--headless',
        '--norestore',
        '--convert-to',
        'pdf',
        '--outdir',
        join(dir, 'out'),
        input,
      ],
      { timeout: 120_000 },
    );
    const pdfPath = join(dir, 'out', 'in.pdf');
    const text = (await run('pdftotext', ['-layout', pdfPath, '-'], { maxBuffer: 16 << 20 })).stdout;
    const info = (await run('pdfinfo', [pdfPath])).stdout;
    return { text, pages: Number(/^Pages:\s+(\d+)/m.exec(info)?.[1] ?? NaN), pdf: new Uint8Array(await readFile(pdfPath)) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
