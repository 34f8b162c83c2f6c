// A batch's combined outputs: the streamed zip (read back by Python's zipfile and Info-ZIP, readers we did
// not write) and the merged PDF (qpdf; page count and order read back by poppler's pdfinfo and pdftotext).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buffer } from 'node:stream/consumers';
import { afterAll, describe, expect, it } from 'vitest';
import { mergePdfFiles, pdfPages } from '../../../activities/batch/pdf.ts';
import { safeEntryName, uniqueNames, zipStream } from '../../../activities/batch/zip.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-batch-combined-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A PDF of `pages` pages, each saying `<label> page <n>` (Helvetica, classic xref table). */
function makePdf(label: string, pages: number): Uint8Array {
  const objects: string[] = [];
  const pageIds = Array.from({ length: pages }, (_, i) => 4 + 2 * i);
  objects[1] = '<< /Type /Catalog /Pages 2 0 R >>';
  objects[2] = `<< /Type /Pages /Kids [${pageIds.map((id) => `${id} 0 R`).join(' ')}] /Count ${pages} >>`;
  objects[3] = '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>';
  pageIds.forEach((id, i) => {
    const text = `BT /F1 24 Tf 72 720 Td (${label} page ${i + 1}) Tj ET`;
    objects[id] = `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${id + 1} 0 R >>`;
    objects[id + 1] = `<< /Length ${text.length} >>\nstream\n${text}\nendstream`;
  });
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  for (let i = 1; i < objects.length; i++) {
    offsets[i] = out.length;
    out += `${i} 0 obj\n${objects[i]}\nendobj\n`;
  }
  const xref = out.length;
  out += `xref\n0 ${objects.length}\n0000000000 65535 f \n${offsets
    .slice(1)
    .map((o) => `${String(o).padStart(10, '0')} 00000 n \n`)
    .join('')}`;
  out += `trailer\n<< /Size ${objects.length} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

describe('combined zip', () => {
  it('streams every entry in order, stored, readable by zipfile and unzip, names made safe and unique', async () => {
    const names = uniqueNames();
    const entries = [
      { name: names(safeEntryName('north/Invoice A-1.pdf')), bytes: Buffer.from('first') },
      { name: names(safeEntryName('north/Invoice A-1.pdf')), bytes: Buffer.from('second') },
      { name: names(safeEntryName('../../etc/passwd')), bytes: new Uint8Array(0) },
      { name: names(safeEntryName('/abs/Ünïcode €.docx')), bytes: new Uint8Array(70_000).fill(7) },
    ];
    async function* gen() {
      for (const e of entries) yield e;
    }
    const file = path.join(dir, 'a.zip');
    fs.writeFileSync(file, await buffer(zipStream(gen())));
    const listing = execFileSync('python3', [
      '-c',
      'import sys, zipfile, json; z = zipfile.ZipFile(sys.argv[1]); print(json.dumps([[i.filename, i.compress_type, len(z.read(i))] for i in z.infolist()])); assert z.testzip() is None',
      file,
    ]).toString();
    expect(JSON.parse(listing)).toEqual([
      ['north/Invoice A-1.pdf', 0, 5],
      ['north/Invoice A-1 (2).pdf', 0, 6],
      ['etc/passwd', 0, 0],
      ['abs/Ünïcode €.docx', 0, 70_000],
    ]);
    expect(execFileSync('unzip', ['-tq', file]).toString()).toContain('No errors detected');
    expect(execFileSync('unzip', ['-p', file, 'north/Invoice A-1 (2).pdf']).toString()).toBe('second');
  });

  it('writes ZIP64 end records past 65,535 entries', async () => {
    function* many() {
      for (let i = 0; i < 65_540; i++) yield { name: `r${i}.txt`, bytes: Buffer.from(String(i)) };
    }
    const file = path.join(dir, 'many.zip');
    fs.writeFileSync(file, await buffer(zipStream(many())));
    const out = execFileSync('python3', [
      '-c',
      'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); n = z.namelist(); print(len(n), n[-1], z.read(n[-1]).decode())',
      file,
    ])
      .toString()
      .trim();
    expect(out).toBe('65540 r65539.txt 65539');
  });
});

describe('merged PDF', () => {
  it('puts every page of every input in order, and counts them', async () => {
    const inputs = [makePdf('row1', 1), makePdf('row2', 3), makePdf('row3', 2)].map((bytes, i) => {
      const f = path.join(dir, `in${i}.pdf`);
      fs.writeFileSync(f, bytes);
      return f;
    });
    const output = path.join(dir, 'merged.pdf');
    const { pages } = await mergePdfFiles(inputs, output, { workDir: dir });
    expect(pages).toBe(6);
    expect(await pdfPages(inputs[1]!)).toBe(3);
    expect(execFileSync('pdfinfo', [output]).toString()).toMatch(/Pages:\s+6/);
    const text = execFileSync('pdftotext', [output, '-']).toString();
    const order = [...text.matchAll(/row(\d) page (\d)/g)].map((m) => `${m[1]}.${m[2]}`);
    expect(order).toEqual(['1.1', '2.1', '2.2', '2.3', '3.1', '3.2']);
  });

  it('refuses an input that is not a PDF, as final', async () => {
    const bad = path.join(dir, 'bad.pdf');
    fs.writeFileSync(bad, 'not a pdf');
    await expect(mergePdfFiles([bad], path.join(dir, 'x.pdf'), { workDir: dir })).rejects.toMatchObject({
      name: 'PdfMergeError',
      retryable: false,
    });
  });
});
