// The README's first screen and walk-through, run from the README text itself against a real
// `docgen start`, so the README cannot drift: the "Try it" commands (after `npm ci && npm start`, which
// is what the service below runs) and the "Upload, generate, download" block, verbatim, through bash.
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { pdfaIdentification } from '../../converter/index.ts';
import { readZip } from '../../engine/zip.ts';
import { keepEInvoice } from '../support/einvoice-outputs.ts';
import { keepPdfA } from '../support/pdfa-outputs.ts';
import { docgenStartEnv, repoRoot, spawnDocgenStart, type DocgenStart } from '../support/docgen-start.ts';

const readme = fs.readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
const pkg = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string> };

/** The ```sh block between `<!-- NAME:start -->` and `<!-- NAME:end -->`. */
function block(name: string): string {
  const section = new RegExp(`<!-- ${name}:start -->\\n([\\s\\S]*?)<!-- ${name}:end -->`).exec(readme)?.[1];
  const code = section && /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  if (!code) throw new Error(`README.md has no sh block marked ${name}`);
  return code;
}

const outDir = path.join(repoRoot, 'examples', 'out');

async function bash(script: string, env: NodeJS.ProcessEnv): Promise<string> {
  try {
    // stdout only: npm may print warnings about the machine's own npm configuration on stderr.
    const { stdout } = await promisify(execFile)('bash', ['-euo', 'pipefail', '-c', script], {
      cwd: repoRoot,
      env,
      timeout: 300_000,
      maxBuffer: 16 << 20,
    });
    return stdout;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${e.message}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`, { cause: err });
  }
}

function pdfPages(file: string): number {
  expect(fs.readFileSync(file).subarray(0, 5).toString('latin1')).toBe('%PDF-');
  return Number(/^Pages:\s+(\d+)/m.exec(execFileSync('pdfinfo', [file], { encoding: 'utf8' }))?.[1]);
}

describe('README walk-through, run from the README text', () => {
  let svc: DocgenStart;
  let env: NodeJS.ProcessEnv;
  let dataDir: string;
  beforeAll(async () => {
    fs.rmSync(outDir, { recursive: true, force: true });
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-readme-'));
    env = await docgenStartEnv(dataDir, { TEMPORAL_CLI: inject('temporalCli') });
    // This process's Node (24) first on PATH, as `npm start`/`npx` arrange through node_modules/.bin.
    env.PATH = `${path.dirname(process.execPath)}${path.delimiter}${env.PATH ?? ''}`;
    svc = await spawnDocgenStart(env);
    env = svc.env; // the ports it started on (spawnDocgenStart picks fresh ones if one was taken meanwhile)
  });
  afterAll(async () => {
    await svc?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.rmSync(outDir, { recursive: true, force: true });
  });

  it('"Try it": npm ci && npm start, then the commands after it', async () => {
    const lines = block('try-it')
      .split('\n')
      .map((l) => l.replace(/\s+#.*$/, '').trim())
      .filter(Boolean);
    // The first command is what the service in beforeAll runs (npm start = docgen start).
    expect(lines[0]).toBe('npm ci && npm start');
    expect(pkg.scripts.start).toBe('node cli/docgen.mjs start');
    const rest = lines.slice(1);
    expect(rest).toEqual(['npx docgen example']);
    const out = await bash(rest.join('\n'), env);
    const files = [...out.matchAll(/^ {2}(examples\/out\/\S+)/gm)].map((m) => m[1]!);
    expect(files.sort()).toEqual(
      ['invoice.docx', 'invoice.pdf', 'monthly-report.pdf', 'monthly-report.xlsx', 'products.pdf', 'products.pptx'].map(
        (f) => `examples/out/${f}`,
      ),
    );
    for (const f of files.filter((f) => !f.endsWith('.pdf')))
      expect(readZip(fs.readFileSync(path.join(repoRoot, f))).size).toBeGreaterThan(3);
    expect(pdfPages(path.join(repoRoot, 'examples/out/invoice.pdf'))).toBe(1);
    expect(pdfPages(path.join(repoRoot, 'examples/out/products.pdf'))).toBe(3); // a slide per product
    // The README shows this output: the same lines, but for sizes and times.
    const strip = (s: string) => s.replace(/\d+ bytes, \d+ ms/g, 'N').replace(/^Generating the examples in .*$/m, 'Generating');
    const shown = /`npx docgen example` generates[\s\S]*?```text\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(strip(shown ?? '')).toBe(strip(out.replace(/^pdf skipped.*\n/m, '')));
  }, 180_000);

  it('"Upload, generate, download": the curl walk-through and the CLI, verbatim', async () => {
    const out = await bash(block('walkthrough'), env);
    const result = JSON.parse(fs.readFileSync(path.join(outDir, 'result.json'), 'utf8')) as {
      result: { statusCode: number; data: { document: { name: string; fileFormat: string } } };
    };
    expect(result.result.statusCode).toBe(201);
    expect(result.result.data.document).toMatchObject({ name: 'invoice.pdf', fileFormat: 'pdf' });
    expect(pdfPages(path.join(outDir, 'invoice.pdf'))).toBe(1);
    // The e-invoice variant: a PDF/A-3b with the Factur-X XML inside.
    const facturx = fs.readFileSync(path.join(outDir, 'invoice-facturx.pdf'));
    expect(pdfaIdentification(facturx)).toEqual({ part: 3, conformance: 'B' });
    expect(facturx.toString('latin1')).toContain('/UF (factur-x.xml)');
    keepEInvoice(facturx, 'readme-walkthrough-facturx', 'pdf');
    keepPdfA(facturx, 'readme-walkthrough-facturx');
    expect(pdfPages(path.join(outDir, 'report.pdf'))).toBe(1);
    expect(out).toContain(`wrote examples/out/report.pdf`);
    expect(fs.readdirSync(path.join(outDir, 'reminders')).sort()).toEqual(['C-1001.pdf', 'C-1002.pdf', 'C-1003.pdf']);
    expect(out).toMatch(/3 of 3 document\(s\) written to .*examples\/out\/reminders/);
  }, 180_000);
});
