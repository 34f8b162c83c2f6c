// A batch's merged PDF: every row's pages, in row order, in one file, by qpdf (Debian package `qpdf`,
// installed with the converter: .ci/install-converter.sh). Why qpdf rather than a JavaScript library such as
// pdf-lib: qpdf copies page objects between files without decoding their content streams, reads its inputs
// lazily from disk (at most 200 open at once, --keep-files-open-threshold), and writes the output as it goes;
// pdf-lib holds every input and the whole output in the JavaScript heap, which a batch of 100,000 invoices
// would not fit. The inputs are local files: the activity downloads the rows' PDFs into a directory first.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export class PdfMergeError extends Error {
  override name = 'PdfMergeError';
  /** false: qpdf is not installed (NOT_SUPPORTED), or the inputs are not PDFs (the rows' fault). */
  readonly retryable: boolean;
  constructor(message: string, retryable: boolean) {
    super(message);
    this.retryable = retryable;
  }
}

let available: boolean | undefined;

/** Whether qpdf runs on this machine (checked once per process). */
export async function pdfMergeAvailable(): Promise<boolean> {
  if (available !== undefined) return available;
  try {
    await run('qpdf', ['--version']);
    available = true;
  } catch {
    available = false;
  }
  return available;
}

/** Merges `inputs` (PDF files, in order) into `output`; returns the page count of the output, which the
 *  caller checks against the sum of the inputs' pages. The argument list goes through a file (`@file`), so
 *  any number of inputs fits. */
export async function mergePdfFiles(
  inputs: string[],
  output: string,
  opts: { signal?: AbortSignal; workDir: string },
): Promise<{ pages: number }> {
  if (!(await pdfMergeAvailable()))
    throw new PdfMergeError('a merged PDF needs qpdf on the worker (Debian package qpdf; .ci/install-converter.sh installs it)', false);
  if (inputs.length === 0) throw new PdfMergeError('there is no document to merge', false);
  const args = path.join(opts.workDir, 'qpdf-args.txt');
  // One argument per line; file names are ours (no line breaks in them).
  fs.writeFileSync(args, ['--empty', '--warning-exit-0', '--no-original-object-ids', '--pages', ...inputs, '--', output].join('\n'));
  try {
    await run('qpdf', [`@${args}`], { ...(opts.signal ? { signal: opts.signal } : {}), maxBuffer: 4 * 1024 * 1024 });
  } catch (err) {
    const e = err as { stderr?: string; code?: unknown; name?: string };
    if (e.name === 'AbortError') throw err;
    // Exit 2: an input is not a readable PDF; the batch's own file, so retrying will not help.
    throw new PdfMergeError(`qpdf could not merge the documents: ${(e.stderr ?? String(err)).trim().slice(0, 500)}`, e.code !== 2);
  }
  return { pages: await pdfPages(output) };
}

/** The page count qpdf reads from a file. */
export async function pdfPages(file: string): Promise<number> {
  const { stdout } = await run('qpdf', ['--show-npages', file]);
  const n = Number(stdout.trim());
  if (!Number.isInteger(n)) throw new PdfMergeError(`qpdf --show-npages said ${JSON.stringify(stdout.slice(0, 100))}`, true);
  return n;
}
