// `docgen` subcommands: start, api, worker, credentials, render, inspect, config, einvoice-rules.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_SUBSCRIPTION } from '../api/auth/credentials.ts';
import { allSettings, ConfigError, type Config, configMarkdown, loadConfig } from '../config/env.ts';
import { ensureLibreOffice } from './converter-install.ts';
import { configureEInvoiceRules, prepareEInvoiceRules } from '../activities/einvoice-rules.ts';
import { adminTokenFile, obtainCredentials, pidAlive, readServiceFile, serviceFile } from './running.ts';
import { type RunningService, startService } from './service.ts';
import { type DevServer, portInUse, replaceLeftoverDevServer, resolveTemporalCli, startDevServer } from './temporal-dev.ts';
import { createLogger, installProcessLogger, type Logger } from '../telemetry/log.ts';
import type { TemplateErrorEntry } from '../engine/index.ts';

const HELP = `docgen: document generation service

Usage:
  docgen start                 the whole service on embedded defaults (Temporal dev server, worker, API)
  docgen api                   the HTTP API only (needs DATABASE_URL and TEMPORAL_ADDRESS)
  docgen worker                the Temporal worker only (needs DATABASE_URL and TEMPORAL_ADDRESS)
  docgen credentials [--json] [--subscription NAME]
                               development credentials (API key + bearer token) for a subscription
  docgen render --template T --data D.json --out O [--locale L] [--timezone TZ] [--strict]
                               the template engine alone, offline: O has the template's kind (docx/xlsx/pptx);
                               tags left empty for want of data are listed (--strict: refused)
  docgen render --template T --data ROWS.json|ROWS.csv --each --out DIR [--name FIELD]
                               one document per row, offline
  docgen generate --template T --data D.json --out F [--format pdf] [--locale L] [--timezone TZ] [--strict]
                               one document through the running service (any output format); tags left
                               empty for want of data are listed (--strict: refused)
  docgen generate --template T --data ROWS.json|ROWS.jsonl|ROWS.csv --each --out DIR [--format pdf] [--name FIELD] [--combined zip|pdf] [--concurrency N] [--strict]
                               one document per row through the running service; exit 1 if any failed
  docgen example [--out DIR]   generates the examples/ templates with the running service, prints the files
  docgen inspect TEMPLATE      tags, loops and template errors, as JSON (problems also on stderr, exit 1)
  docgen inspect --schema TEMPLATE [--sample]
                               the JSON Schema of the data the template reads (--sample: sample data from it)
  docgen config [--markdown]   the configuration variables and their current values (or the table of docs/configuration.md)
  docgen einvoice-rules        fetches and compiles the official e-invoice XSDs and Schematron (Maven Central, once;
                               start and worker do it too), prints their directory
  docgen --version             docgen's version, and Node's and the Temporal SDK's
`;

/** The log of a service command (start, api, worker), once it has one: its failures are log lines too. */
let serviceLog: Logger | undefined;

/** The process log of a service command (telemetry/log.ts), and Node's own warnings written into it. */
function startLog(config: Config, name: string): Logger {
  const log = createLogger({ level: config.logLevel, name });
  installProcessLogger(log);
  serviceLog = log;
  process.removeAllListeners('warning');
  process.on('warning', (warning) => log.warn({ component: 'node', err: warning }, warning.message));
  return log;
}

/** Lines that say the process started or is stopping: at info even when LOG_LEVEL asks for less. */
function lifecycle(log: Logger): Logger {
  return log.child({ component: 'cli' }, { level: log.level === 'silent' ? 'silent' : log.levelVal < 30 ? log.level : 'info' });
}

async function cmdStart(config: Config): Promise<void> {
  const log = (line: string) => process.stdout.write(`${line}\n`);
  fs.mkdirSync(config.dataDir, { recursive: true });
  const previous = readServiceFile(config);
  if (previous && pidAlive(previous.pid)) {
    throw new Error(`docgen is already running from ${config.dataDir} (pid ${previous.pid}, ${previous.baseUrl}/v1)`);
  }
  let dev: DevServer | undefined;
  let temporalAddress = config.temporalAddress;
  let uiUrl: string | undefined;
  if (!temporalAddress) {
    const cli = resolveTemporalCli(config.temporalCli, log).path;
    const pidFile = path.join(config.dataDir, 'temporal', 'dev-server.json');
    await replaceLeftoverDevServer(pidFile, log);
    if (await portInUse(config.temporalPort)) {
      throw new Error(
        `port ${config.temporalPort} is taken: set TEMPORAL_PORT (and TEMPORAL_UI_PORT) to free ports, or TEMPORAL_ADDRESS=127.0.0.1:${config.temporalPort} to use the Temporal server already there`,
      );
    }
    log(`Starting the Temporal dev server (${cli})...`);
    dev = await startDevServer({
      cli,
      port: config.temporalPort,
      uiPort: config.temporalUiPort,
      dbFile: path.join(config.dataDir, 'temporal', 'temporal.db'),
      logFile: path.join(config.dataDir, 'temporal', 'server.log'),
      pidFile,
    });
    temporalAddress = dev.address;
    uiUrl = dev.uiUrl;
  }
  ensureLibreOffice(config.converterAutoInstall, log);
  einvoiceRulesAtStart(log);
  const adminToken = randomBytes(32).toString('base64url');
  let service: RunningService;
  try {
    service = await startService({ config, temporalAddress, api: true, worker: true, adminToken, log: startLog(config, 'docgen') });
  } catch (err) {
    await dev?.stop();
    throw err;
  }
  fs.writeFileSync(adminTokenFile(config), adminToken, { mode: 0o600 });
  fs.writeFileSync(serviceFile(config), JSON.stringify({ pid: process.pid, baseUrl: service.baseUrl, temporalAddress, uiUrl }, null, 2));
  const api = `${service.baseUrl}/v1`;
  // One write: whoever reads the output (a script, a test waiting for "docgen is ready.") gets the whole banner
  // with its first line.
  const banner = [
    '',
    'docgen is ready.',
    `  API            ${api}`,
    `  API docs       ${api}/docs   (OpenAPI: ${api}/openapi.json)`,
    `  Studio         ${service.baseUrl}/studio   (template authors: tags, data, live preview)`,
    `  Temporal UI    ${uiUrl ?? `(external cluster at ${temporalAddress})`}`,
    `  Temporal       ${temporalAddress} namespace ${config.temporalNamespace}, task queue ${config.taskQueue}`,
    `  Converter      ${service.converterStatus}`,
    `  Data           ${config.dataDir}`,
    `  Storage        ${config.storageUrl ?? path.join(config.dataDir, 'storage')}`,
    ...(service.metricsUrl ? [`  Metrics        ${service.metricsUrl}/metrics`] : []),
    '  Credentials    npx docgen credentials --json',
    'Press Ctrl+C to stop.',
  ];
  log(banner.join('\n'));
  await waitForSignal(async () => {
    log('Stopping: finishing running work...');
    await service.stop();
    await dev?.stop();
    fs.rmSync(serviceFile(config), { force: true });
    fs.rmSync(adminTokenFile(config), { force: true });
  });
}

async function cmdHalf(config: Config, half: 'api' | 'worker'): Promise<void> {
  if (!config.temporalAddress) throw new ConfigError(`docgen ${half} needs TEMPORAL_ADDRESS (host:port of the Temporal frontend)`);
  const log = startLog(config, `docgen-${half}`);
  if (half === 'worker') einvoiceRulesAtStart((line) => lifecycle(log).info(line));
  const service = await startService({
    config,
    temporalAddress: config.temporalAddress,
    api: half === 'api',
    worker: half === 'worker',
    log,
  });
  const events = lifecycle(log);
  const metrics = service.metricsUrl ? { metricsUrl: `${service.metricsUrl}/metrics` } : {};
  if (half === 'api') events.info({ url: `${service.baseUrl}/v1`, ...metrics }, `docgen api listening on ${service.baseUrl}/v1`);
  else events.info({ taskQueue: config.taskQueue, ...metrics }, `docgen worker polling task queue ${config.taskQueue}`);
  await waitForSignal(async () => {
    events.info(`docgen ${half} stopping: finishing running work`);
    await service.stop();
    events.info(`docgen ${half} stopped`);
  });
}

/** The official e-invoice rules (activities/einvoice-rules.ts), fetched and compiled in the background on the
 *  first start (the service is ready meanwhile; the first e-invoices wait for them); a machine that cannot
 *  fetch them refuses e-invoice requests saying why (NOT_SUPPORTED). */
function einvoiceRulesAtStart(log: (line: string) => void): void {
  prepareEInvoiceRules(log).catch((err: unknown) =>
    log(
      `E-invoice rules could not be prepared (${err instanceof Error ? err.message : String(err)}): e-invoice requests are refused (NOT_SUPPORTED) until \`npx docgen einvoice-rules\` succeeds`,
    ),
  );
}

function waitForSignal(onStop: () => Promise<void>): Promise<void> {
  return new Promise((resolve) => {
    let stopping = false;
    const handler = (signal: NodeJS.Signals) => {
      if (stopping) {
        if (serviceLog) serviceLog.error({ component: 'cli', signal }, `${signal} again: exiting now`);
        else process.stderr.write(`${signal} again: exiting now\n`);
        process.exit(1);
      }
      stopping = true;
      onStop().then(
        () => resolve(),
        (err: unknown) => {
          if (serviceLog) serviceLog.error({ component: 'cli', err }, 'error while stopping');
          else process.stderr.write(`error while stopping: ${String(err)}\n`);
          process.exitCode = 1;
          resolve();
        },
      );
    };
    process.once('SIGINT', handler);
    process.once('SIGTERM', handler);
  });
}

async function cmdCredentials(config: Config, args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { json: { type: 'boolean' }, subscription: { type: 'string' } } });
  const subscription = values.subscription ?? DEFAULT_SUBSCRIPTION;
  const creds = await obtainCredentials(config, subscription);
  if (values.json) {
    process.stdout.write(`${JSON.stringify(creds)}\n`);
    return;
  }
  process.stdout.write(
    [
      `# subscription ${subscription} (${creds.subscriptionId}), user ${creds.userId}. Load into your shell: eval "$(npx docgen credentials)"`,
      `export DOCGEN_URL=${creds.baseUrl}`,
      `export DOCGEN_API_KEY=${creds.apiKey}`,
      `export DOCGEN_TOKEN=${creds.accessToken}`,
      '# send both on every request: -H "Authorization: Bearer $DOCGEN_TOKEN" -H "X-Api-Key: $DOCGEN_API_KEY"',
      '',
    ].join('\n'),
  );
}

/** Every template problem on its own line with where it is, so an author can fix them all in one go. */
async function reportProblems(errors: readonly TemplateErrorEntry[], headline: string): Promise<void> {
  const { describeLocation } = await import('../engine/index.ts');
  const lines = errors.map((e) => `  ${describeLocation(e.location)}: ${e.message} [${e.id}]`);
  process.stderr.write(`docgen: ${headline} (${errors.length} problem${errors.length === 1 ? '' : 's'}):\n${lines.join('\n')}\n`);
  process.exitCode = 1;
}

async function cmdRender(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      template: { type: 'string', short: 't' },
      data: { type: 'string', short: 'd' },
      out: { type: 'string', short: 'o' },
      locale: { type: 'string' },
      timezone: { type: 'string' },
      each: { type: 'boolean' },
      name: { type: 'string' },
      strict: { type: 'boolean' },
    },
  });
  if (!values.template || !values.data || !values.out)
    throw new ConfigError(`render needs --template, --data and --out${values.each ? ' (a directory with --each)' : ''}`);
  const { render, renderWithWarnings, templateFormat } = await import('../engine/index.ts');
  const template = fs.readFileSync(values.template);
  const options = {
    ...(values.locale ? { locale: values.locale } : {}),
    ...(values.timezone ? { timezone: values.timezone } : {}),
    ...(values.strict ? { strict: true } : {}),
  };
  // The engine writes the template's own kind; a file named otherwise (out.pdf) would hide a docx.
  const kind = templateFormat(template);
  const wanted = path.extname(values.out).slice(1).toLowerCase();
  if (!values.each && kind !== undefined && wanted !== '' && wanted !== kind) {
    throw new ConfigError(
      `render writes ${kind}, the template's kind; ${values.out} asks for ${wanted}: name it .${kind}` +
        (wanted === 'pdf' || wanted === 'csv'
          ? `, or convert with the running service: docgen generate --template ${values.template} --data ${values.data} --format ${wanted} --out ${values.out}`
          : ''),
    );
  }
  if (values.each) {
    const { readRows, rowFileName, runBatch } = await import('./batch.ts');
    const rows = readRows(values.data);
    const outDir = values.out;
    fs.mkdirSync(outDir, { recursive: true });
    const ext = path.extname(values.template).slice(1).toLowerCase();
    const base = path.basename(values.template, path.extname(values.template));
    const result = await runBatch(
      rows,
      async (row, index) => {
        const file = path.join(outDir, rowFileName(row, index, base, ext, values.name));
        fs.writeFileSync(file, await render(template, row, options));
        return file;
      },
      { concurrency: 1, out: process.stdout, outDir },
    );
    if (result.failed.length > 0) process.exitCode = 1;
    return;
  }
  const data: unknown = JSON.parse(fs.readFileSync(values.data, 'utf8'));
  let out: Uint8Array;
  let warnings: readonly TemplateErrorEntry[];
  try {
    ({ output: out, warnings } = await renderWithWarnings(template, data, options));
  } catch (err) {
    const { TemplateError } = await import('../engine/index.ts');
    if (!(err instanceof TemplateError)) throw err;
    return reportProblems(err.errors, `${values.template} cannot be rendered`);
  }
  fs.writeFileSync(values.out, out);
  process.stdout.write(`wrote ${values.out} (${out.byteLength} bytes)\n`);
  if (warnings.length > 0) {
    const { describeLocation } = await import('../engine/index.ts');
    const missing = warnings.filter((w) => w.id !== 'image_invalid');
    const images = warnings.filter((w) => w.id === 'image_invalid');
    const lines = (list: readonly TemplateErrorEntry[]) => list.map((w) => `  ${describeLocation(w.location)}: ${w.message}`).join('\n');
    if (missing.length > 0)
      process.stderr.write(
        `docgen: ${missing.length} tag${missing.length === 1 ? '' : 's'} rendered empty, the data has no value (--strict refuses them):\n${lines(missing)}\n`,
      );
    // A damaged image (a PNG cut short) was left out: IMAGE_INVALID, as the service's warnings say it.
    if (images.length > 0)
      process.stderr.write(
        `docgen: ${images.length} image${images.length === 1 ? '' : 's'} left out, damaged (IMAGE_INVALID; --strict refuses them):\n${lines(images)}\n`,
      );
  }
}

/** Prints the tags, loops and problems as JSON; problems are also listed on stderr and make the exit code 1. */
async function cmdInspect(args: string[]): Promise<void> {
  const schema = args.includes('--schema');
  const sample = args.includes('--sample');
  const unknown = args.find((a) => a.startsWith('-') && a !== '--schema' && a !== '--sample');
  if (unknown) throw new ConfigError(`inspect: unknown option ${unknown}`);
  const file = args.find((a) => !a.startsWith('-'));
  if (!file) throw new ConfigError('inspect needs a template file');
  const { inspect, inferSchema, sampleData, TemplateError } = await import('../engine/index.ts');
  let result;
  try {
    result = inspect(fs.readFileSync(file));
  } catch (err) {
    if (!(err instanceof TemplateError)) throw err;
    return reportProblems(err.errors, `${file} cannot be opened as a template`);
  }
  if (schema || sample) {
    const inferred = inferSchema(result);
    process.stdout.write(`${JSON.stringify(sample ? sampleData(inferred) : inferred, null, 2)}\n`);
  } else process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  if (result.errors.length > 0) await reportProblems(result.errors, `${file} has template problems`);
}

function cmdConfig(config: Config, args: string[]): void {
  if (args.includes('--markdown')) {
    process.stdout.write(`${configMarkdown()}\n`);
    return;
  }
  for (const [key, s] of Object.entries(allSettings())) {
    const raw = (config as Record<string, unknown>)[key];
    const value = 'secret' in s && s.secret && raw !== undefined ? '(set)' : raw;
    process.stdout.write(`${s.env.padEnd(26)} ${String(value ?? '(unset)').padEnd(28)} ${s.description}\n`);
  }
}

/** The usage lines of one subcommand (its entries in HELP with their continuation lines), or undefined. */
export function commandHelp(cmd: string): string | undefined {
  const blocks: string[] = [];
  let current: string[] | undefined;
  for (const line of HELP.split('\n')) {
    if (/^ {2}docgen /.test(line)) {
      current = line.startsWith(`  docgen ${cmd} `) || line === `  docgen ${cmd}` ? [line] : undefined;
      if (current) blocks.push(...current);
    } else if (current && /^ {4,}\S/.test(line)) blocks.push(line);
    else current = undefined;
  }
  return blocks.length > 0 ? `Usage:\n${blocks.join('\n')}\n` : undefined;
}

const isHelp = (arg: string | undefined) => arg === '--help' || arg === '-h' || arg === 'help';
const isVersion = (arg: string | undefined) => arg === '--version' || arg === '-V' || arg === 'version';

/** `docgen 0.1.0 (Node v24.21.0, Temporal SDK 1.24.0)`: package.json's versions, which the images carry. */
function versionLine(): string {
  const pkg = JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version: string;
    dependencies?: Record<string, string>;
  };
  const sdk = pkg.dependencies?.['@temporalio/worker'];
  return `docgen ${pkg.version} (Node ${process.version}${sdk ? `, Temporal SDK ${sdk}` : ''})\n`;
}

async function main(argv: string[]): Promise<void> {
  const [cmd, ...rest] = argv;
  if (!cmd || isHelp(cmd)) {
    process.stdout.write(HELP);
    return;
  }
  if (isVersion(cmd)) {
    process.stdout.write(versionLine());
    return;
  }
  // `docgen <command> --help` (anywhere among its arguments): that command's usage, nothing run.
  if (rest.some((a) => a === '--help' || a === '-h')) {
    const usage = commandHelp(cmd);
    if (!usage) throw new ConfigError(`unknown command ${JSON.stringify(cmd)}\n\n${HELP}`);
    process.stdout.write(usage);
    return;
  }
  if (cmd === 'render') return cmdRender(rest);
  if (cmd === 'inspect') return cmdInspect(rest);
  const config = loadConfig();
  configureEInvoiceRules(config.einvoiceRulesDir);
  switch (cmd) {
    case 'einvoice-rules':
      process.stdout.write(`${await prepareEInvoiceRules((line) => process.stderr.write(`${line}\n`))}\n`);
      return;
    case 'start':
      return cmdStart(config);
    case 'api':
    case 'worker':
      return cmdHalf(config, cmd);
    case 'credentials':
      return cmdCredentials(config, rest);
    case 'generate':
      return (await import('./remote.ts')).cmdGenerate(config, rest);
    case 'example':
      return (await import('./remote.ts')).cmdExample(config, rest);
    case 'config':
      return cmdConfig(config, rest);
    default:
      throw new ConfigError(`unknown command ${JSON.stringify(cmd)}\n\n${HELP}`);
  }
}

main(process.argv.slice(2)).then(
  // Background handles (gRPC, timers, the converter pool) must not keep a finished command alive; the
  // long-running commands return only once they have stopped cleanly.
  () => process.exit(process.exitCode ?? 0),
  (err: unknown) => {
    const message = err instanceof Error ? err.message : String(err);
    // `docgen api` and `docgen worker` fail as they log, a JSON line (also when the configuration itself is
    // wrong), on stderr as any command's failure. `docgen start` has a person at its terminal.
    const [cmd] = process.argv.slice(2);
    if (cmd === 'api' || cmd === 'worker') {
      createLogger({ level: 'info', name: `docgen-${cmd}`, destination: 'stderr' }).fatal(
        { component: 'cli', ...(err instanceof ConfigError ? {} : { err }) },
        `docgen: ${message}`,
      );
    } else process.stderr.write(`docgen: ${message}\n`);
    process.exit(1);
  },
);
