// Commands that call the running service through the SDK (client/), with the development credentials of
// the data directory: `docgen generate` (one document, or one per row with --each) and `docgen example`.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import {
  type BatchRequest,
  type BatchRow,
  DocgenClient,
  DocgenError,
  type FileFormat,
  type GenerateWarning,
  type TemplateFormat,
} from '../client/index.ts';
import { type Config, ConfigError } from '../config/env.ts';
import { describeError, progressLine, readRows, rowFileName } from './batch.ts';
import { obtainCredentials, runningService } from './running.ts';

const TEMPLATE_FORMATS: readonly TemplateFormat[] = ['docx', 'xlsx', 'pptx'];
type CombinedFormat = NonNullable<BatchRequest['combined']>['format'];
const OUTPUT_FORMATS: readonly FileFormat[] = ['docx', 'xlsx', 'pptx', 'pdf', 'csv'];
const COMBINED_FORMATS: readonly CombinedFormat[] = ['zip', 'pdf'];

/** `value` when it is one of `list` (as the list's type, the API's union), else undefined. */
const oneOf = <T extends string>(list: readonly T[], value: string): T | undefined => list.find((v) => v === value);

function extOf(file: string): string {
  return path.extname(file).slice(1).toLowerCase();
}

function templateFormatOf(file: string): TemplateFormat {
  const format = oneOf(TEMPLATE_FORMATS, extOf(file));
  if (!format) throw new ConfigError(`${file}: a template must be a .docx, .xlsx or .pptx file`);
  return format;
}

async function clientFor(config: Config, subscription?: string): Promise<DocgenClient> {
  runningService(config);
  const creds = await obtainCredentials(config, subscription);
  return new DocgenClient({ baseUrl: creds.baseUrl, apiKey: creds.apiKey, accessToken: creds.accessToken, retries: 2, timeoutMs: 180_000 });
}

export interface GenerateJob {
  template: string;
  templateBytes: Uint8Array;
  data: unknown;
  format: FileFormat;
  out: string;
  locale: string;
  timezone: string;
  /** document.options.strict: a tag without a value fails the generate instead of rendering empty. */
  strict?: boolean;
}

/** Upload the template and the data, generate synchronously, download to `out`. Returns `out` and the tags
 *  that rendered empty for want of data (the service's result.data.warnings). */
export async function generateOne(
  docgen: DocgenClient,
  job: GenerateJob,
): Promise<{ out: string; warnings: GenerateWarning[]; warningsOmitted: number }> {
  const [template] = await docgen.uploads.templates([{ name: path.basename(job.template), content: job.templateBytes }]);
  const [data] = await docgen.uploads.data([{ name: 'data.json', content: JSON.stringify(job.data) }]);
  const name = path.basename(job.out, path.extname(job.out));
  const res = await docgen.generation.generate(
    {
      template: { urn: template!.id, loadMethod: 'Storage', fileFormat: templateFormatOf(job.template), name: path.basename(job.template) },
      data: { urn: data!.id, loadMethod: 'Storage' },
      document: {
        name,
        fileFormat: job.format,
        deliveryMethod: 'Storage',
        path: 'root',
        timezone: job.timezone,
        locale: job.locale,
        ...(job.strict ? { options: { strict: true } } : {}),
      },
    },
    { idempotencyKey: randomUUID() },
  );
  const file = await docgen.storage.download(res.result.data.document.urn);
  fs.mkdirSync(path.dirname(path.resolve(job.out)), { recursive: true });
  fs.writeFileSync(job.out, file.bytes);
  return { out: job.out, warnings: res.result.data.warnings ?? [], warningsOmitted: res.result.data.warningsOmitted ?? 0 };
}

/** The tags left empty for want of data, for people (stderr), as `docgen render` lists them. */
function warningLines(warnings: GenerateWarning[], omitted: number): string {
  const count = warnings.length + omitted;
  const lines = warnings.map((w) => `  ${w.message}`);
  if (omitted > 0) lines.push(`  ... and ${omitted} more`);
  return `docgen: ${count} tag${count === 1 ? '' : 's'} rendered empty, the data has no value (--strict refuses them):\n${lines.join('\n')}\n`;
}

function defaults(values: { locale?: string | undefined; timezone?: string | undefined }): { locale: string; timezone: string } {
  const resolved = Intl.DateTimeFormat().resolvedOptions();
  return { locale: values.locale ?? resolved.locale, timezone: values.timezone ?? resolved.timeZone };
}

export async function cmdGenerate(config: Config, args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      template: { type: 'string', short: 't' },
      data: { type: 'string', short: 'd' },
      format: { type: 'string', short: 'f' },
      out: { type: 'string', short: 'o' },
      each: { type: 'boolean' },
      name: { type: 'string' },
      concurrency: { type: 'string' },
      combined: { type: 'string' },
      locale: { type: 'string' },
      timezone: { type: 'string' },
      subscription: { type: 'string' },
      strict: { type: 'boolean' },
    },
  });
  const problems: string[] = [];
  if (!values.template) problems.push('--template FILE (a .docx, .xlsx or .pptx) is required');
  else if (!oneOf(TEMPLATE_FORMATS, extOf(values.template)))
    problems.push(`--template ${values.template}: must be a .docx, .xlsx or .pptx file`);
  else if (!fs.existsSync(values.template)) problems.push(`--template ${values.template}: no such file`);
  if (!values.data) problems.push('--data FILE (.json; with --each a JSON array or a .csv file) is required');
  else if (!fs.existsSync(values.data)) problems.push(`--data ${values.data}: no such file`);
  if (!values.out) problems.push(values.each ? '--out DIR (one file per row goes there) is required' : '--out FILE is required');
  const requested = values.format ?? (values.out && !values.each ? extOf(values.out) : values.template ? extOf(values.template) : '');
  const outputFormat = oneOf(OUTPUT_FORMATS, requested);
  if (!outputFormat) problems.push(`--format ${requested || '(none)'}: must be one of ${OUTPUT_FORMATS.join(', ')}`);
  const combined = values.combined === undefined ? undefined : oneOf(COMBINED_FORMATS, values.combined);
  if (values.combined !== undefined && !combined) problems.push(`--combined ${values.combined}: must be zip or pdf`);
  const concurrency = Number(values.concurrency ?? 4);
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 64)
    problems.push(`--concurrency ${values.concurrency}: must be an integer between 1 and 64`);
  if (problems.length > 0) throw new ConfigError(`generate:\n  ${problems.join('\n  ')}`);
  const format = outputFormat!;
  const template = values.template!;
  const templateBytes = fs.readFileSync(template);
  const { locale, timezone } = defaults(values);
  const docgen = await clientFor(config, values.subscription);
  if (!values.each) {
    let data: unknown;
    try {
      data = JSON.parse(fs.readFileSync(values.data!, 'utf8'));
    } catch (err) {
      throw new ConfigError(`--data ${values.data}: not valid JSON (${err instanceof Error ? err.message : String(err)})`);
    }
    try {
      const { out, warnings, warningsOmitted } = await generateOne(docgen, {
        template,
        templateBytes,
        data,
        format,
        out: values.out!,
        locale,
        timezone,
        ...(values.strict ? { strict: true } : {}),
      });
      process.stdout.write(`wrote ${out} (${fs.statSync(out).size} bytes)\n`);
      if (warnings.length > 0) process.stderr.write(warningLines(warnings, warningsOmitted));
    } catch (err) {
      if (!(err instanceof DocgenError)) throw err;
      throw new Error(`generate failed:\n  ${describeError(err).join('\n  ')}`, { cause: err });
    }
    return;
  }
  await generateEach(docgen, {
    template,
    templateBytes,
    data: values.data!,
    format,
    outDir: values.out!,
    locale,
    timezone,
    concurrency,
    ...(values.name ? { nameField: values.name } : {}),
    ...(combined ? { combined } : {}),
    ...(values.strict ? { strict: true } : {}),
  });
}

export interface EachJob {
  template: string;
  templateBytes: Uint8Array;
  /** The rows: a JSON array, JSON Lines or CSV file. */
  data: string;
  format: FileFormat;
  outDir: string;
  locale: string;
  timezone: string;
  /** Downloads at once. */
  concurrency: number;
  /** The row field that names each file (default: the template's name and the row number). */
  nameField?: string;
  /** Also ask for the combined output (zip, or pdf for pdf rows), downloaded into outDir. */
  combined?: CombinedFormat;
  /** document.options.strict: a row without a value for a tag fails. */
  strict?: boolean;
  out?: NodeJS.WritableStream & { isTTY?: boolean };
}

/** One document per row as one batch on the service (POST /documents/document/generate/batch): the rows file
 *  is uploaded as it is, the service generates the rows (a failed row does not stop the others), a live
 *  progress line follows it, then every document is downloaded into outDir. Ctrl+C cancels the batch (the
 *  rows done stay). Exit code 1 when a row failed. */
export async function generateEach(docgen: DocgenClient, job: EachJob): Promise<{ done: number; failed: number }> {
  const out = job.out ?? process.stdout;
  // Read here too: a file the service would refuse is refused before anything is uploaded, with its line.
  const rows = readRows(job.data);
  fs.mkdirSync(job.outDir, { recursive: true });
  const base = path.basename(job.template, path.extname(job.template));
  const templateFormat = oneOf(TEMPLATE_FORMATS, extOf(job.template));
  if (!templateFormat) throw new ConfigError(`--template ${job.template}: must be a .docx, .xlsx or .pptx file`);
  const ext = extOf(job.data);
  const [template] = await docgen.uploads.templates([{ name: path.basename(job.template), content: job.templateBytes }]);
  const [data] = await docgen.uploads.data([
    { name: `rows.${ext === 'csv' || ext === 'jsonl' || ext === 'ndjson' ? ext : 'json'}`, content: fs.readFileSync(job.data) },
  ]);
  // The file name pattern: the named field (the template's name when a row has none).
  const name = job.nameField ? `{${job.nameField} | default:${JSON.stringify(base)}}` : base;
  const t0 = Date.now();
  const started = await docgen.batches.start(
    {
      template: { urn: template!.id, loadMethod: 'Storage', fileFormat: templateFormat, name: path.basename(job.template) },
      data: { urn: data!.id, loadMethod: 'Storage' },
      document: {
        name,
        fileFormat: job.format,
        deliveryMethod: 'Storage',
        path: 'root',
        timezone: job.timezone,
        locale: job.locale,
        ...(job.strict ? { options: { strict: true } } : {}),
      },
      ...(job.combined ? { combined: { format: job.combined, name: base, path: 'root', deliveryMethod: 'Storage' } } : {}),
    },
    { idempotencyKey: randomUUID() },
  );
  const id = started.result.data.batch.id;
  out.write(`batch ${id}: ${started.result.data.batch.rowsTotal} rows of ${path.basename(job.data)} (${rows.length} read here)\n`);
  const progress = progressLine(out);
  const cancel = () => {
    out.write(`\ncancelling batch ${id} (the rows done stay)...\n`);
    void docgen.batches.cancel(id).catch(() => undefined);
  };
  process.once('SIGINT', cancel);
  let last;
  try {
    last = await docgen.batches.wait(id, {
      intervalMs: 500,
      onProgress: (p) =>
        progress({
          done: p.rowsDone + p.rowsFailed,
          total: p.rowsTotal,
          failed: p.rowsFailed,
          rate: p.rate,
          ...(p.estimatedEnd ? { eta: new Date(p.estimatedEnd).toLocaleTimeString() } : {}),
        }),
    });
  } finally {
    process.off('SIGINT', cancel);
  }
  // Every done row's document, `concurrency` downloads at once.
  const done: BatchRow[] = [];
  for await (const row of docgen.batches.allRows(id, 'done')) done.push(row);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.max(1, Math.min(job.concurrency, done.length)) }, async () => {
      while (next < done.length) {
        const row = done[next++]!;
        const file = path.join(
          job.outDir,
          rowFileName(
            job.nameField ? { name: (row.name ?? '').replace(/\.[^.]+$/, '') } : {},
            row.row,
            base,
            job.format,
            job.nameField ? 'name' : undefined,
          ),
        );
        fs.writeFileSync(file, (await docgen.storage.download(row.urn!)).bytes);
      }
    }),
  );
  if (last.combined?.urn) {
    const file = path.join(job.outDir, last.combined.name ?? `${base}.${job.combined}`);
    fs.writeFileSync(file, (await docgen.storage.download(last.combined.urn)).bytes);
    out.write(`combined ${last.combined.format}: ${file}${last.combined.pages !== undefined ? ` (${last.combined.pages} pages)` : ''}\n`);
  }
  const secs = ((Date.now() - t0) / 1000).toFixed(1);
  out.write(
    `${done.length} of ${last.rowsTotal} document(s) written to ${path.resolve(job.outDir)} in ${secs} s (batch ${last.status})${last.rowsFailed ? `; ${last.rowsFailed} failed:` : ''}\n`,
  );
  for await (const f of docgen.batches.allRows(id, 'failed')) out.write(`  row ${f.row}: ${f.code}: ${f.message}\n`);
  if (last.rowsFailed > 0 || last.status !== 'completed') process.exitCode = 1;
  return { done: done.length, failed: last.rowsFailed };
}

/** The examples in examples/ (built by examples/build.ts), run against the running service. */
export const EXAMPLES = [
  { template: 'invoice.docx', data: 'invoice.json', formats: ['pdf', 'docx'] },
  { template: 'monthly-report.xlsx', data: 'monthly-report.json', formats: ['xlsx', 'pdf'] },
  { template: 'products.pptx', data: 'products.json', formats: ['pptx', 'pdf'] },
] as const;

export async function cmdExample(config: Config, args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { out: { type: 'string', short: 'o' }, locale: { type: 'string' }, timezone: { type: 'string' } },
  });
  const examplesDir = path.resolve(import.meta.dirname, '..', 'examples');
  const outDir = path.resolve(values.out ?? path.join(examplesDir, 'out'));
  const docgen = await clientFor(config);
  const { locale, timezone } = { locale: values.locale ?? 'en-GB', timezone: values.timezone ?? 'Europe/London' };
  process.stdout.write(`Generating the examples in ${examplesDir} with the service at ${docgen.transport.baseUrl}...\n`);
  let failures = 0;
  let noConverter = '';
  for (const ex of EXAMPLES) {
    const templateFile = path.join(examplesDir, ex.template);
    const templateBytes = fs.readFileSync(templateFile);
    const data: unknown = JSON.parse(fs.readFileSync(path.join(examplesDir, ex.data), 'utf8'));
    for (const format of ex.formats) {
      const out = path.join(outDir, `${path.basename(ex.template, path.extname(ex.template))}.${format}`);
      const t0 = Date.now();
      try {
        await generateOne(docgen, { template: templateFile, templateBytes, data, format, out, locale, timezone });
        process.stdout.write(
          `  ${path.relative(process.cwd(), out) || out}  (${ex.template} + ${ex.data} -> ${format}, ${fs.statSync(out).size} bytes, ${Date.now() - t0} ms)\n`,
        );
      } catch (err) {
        if (format === 'pdf' && err instanceof DocgenError && err.code === 'NOT_SUPPORTED') {
          noConverter = err.innerErrors[0]?.message ?? err.message;
          continue;
        }
        failures++;
        process.stdout.write(`  ${ex.template} -> ${format} failed:\n    ${describeError(err).join('\n    ')}\n`);
      }
    }
  }
  if (noConverter) process.stdout.write(`pdf skipped: ${noConverter}\n`);
  process.stdout.write('Open the files above; the runs are in the Temporal UI (workflow type generateDocument).\n');
  if (failures > 0) process.exitCode = 1;
}
