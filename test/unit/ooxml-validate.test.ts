import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { docx } from './engine/helpers.ts';

// tools/ooxml-validate judges what the tests produce (CI runs it on DOCGEN_TEST_OUTPUTS). It must refuse
// what Word refuses, accept what Word writes (markup compatibility: ignorable Office 2010+ content,
// alternate content) and judge an output against the problems its template already had.

const run = promisify(execFile);
const script = path.join(import.meta.dirname, '..', '..', 'tools', 'ooxml-validate', 'run.sh');
const MC = 'xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"';
const W14 = 'xmlns:w14="http://schemas.microsoft.com/office/word/2010/wordml"';

async function validate(files: Record<string, Uint8Array>): Promise<{ code: number; out: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ooxml-validate-'));
  try {
    for (const [name, bytes] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
      fs.writeFileSync(path.join(dir, name), bytes);
    }
    return await run('bash', [script, dir], { maxBuffer: 16 << 20 }).then(
      (r) => ({ code: 0, out: r.stdout }),
      (e: { code?: number; stdout?: string }) => ({ code: e.code ?? 1, out: e.stdout ?? '' }),
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe('tools/ooxml-validate', () => {
  it('accepts what Word writes, refuses what Word repairs, and judges outputs against their templates', async () => {
    const word = docx(
      `<w:p ${MC} ${W14} mc:Ignorable="w14" w14:paraId="12AB34CD"><w:pPr><w:spacing w:after="120"/><w:jc w:val="center"/></w:pPr>` +
        '<w:r><mc:AlternateContent><mc:Choice Requires="w14"><w14:unknownToEcma/></mc:Choice><mc:Fallback><w:t>text</w:t></mc:Fallback></mc:AlternateContent></w:r></w:p>',
    );
    const wrongOrder = docx('<w:p><w:pPr><w:jc w:val="center"/><w:spacing w:after="120"/></w:pPr><w:r><w:t>x</w:t></w:r></w:p>');
    const cellWithoutParagraph = docx(
      '<w:tbl><w:tblPr/><w:tblGrid><w:gridCol w:w="10"/></w:tblGrid><w:tr><w:tc><w:tcPr/></w:tc></w:tr></w:tbl>',
    );
    const notIgnorable = docx(`<w:p ${W14} w14:paraId="12AB34CD"><w:r><w:t>x</w:t></w:r></w:p>`);
    const { code, out } = await validate({
      'word.docx': word,
      'wrong-order.docx': wrongOrder,
      'cell.docx': cellWithoutParagraph,
      'not-ignorable.docx': notIgnorable,
      // An output whose template already had the same problem is judged on what rendering added.
      'from-template-0123456789abcdef~0123456789abcdef.docx': wrongOrder,
      'templates/0123456789abcdef.docx': wrongOrder,
    });
    expect(code).toBe(1);
    const invalid = [...out.matchAll(/^INVALID .*\/([^/ ]+\.docx)/gm)].map((m) => m[1]).sort();
    expect(invalid).toEqual(['cell.docx', 'not-ignorable.docx', 'wrong-order.docx']);
    expect(out).toMatch(/wrong-order\.docx\n {2}word\/document\.xml: Expected elements .* instead of 'spacing@/);
    expect(out).toMatch(/^files 5, valid 2, invalid 3$/m);
  }, 180_000);
});
