// One validated configuration, parsed once at start-up. A bad value fails fast and names the variable.
// The same table feeds `docgen config` and the configuration table in docs/configuration.md, so docs cannot drift. The
// service's own settings are here; each location declares its own in its registration
// (connectors/registry.ts locationSettings), and allSettings() lists both.
import { isIP } from 'node:net';
import path from 'node:path';
import { AllowListError, outboundPolicy } from '../connectors/http/address-policy.ts';
import { DEFAULT_TEMPLATE_LIMITS as TL, type TemplateLimits } from '../engine/limits.ts';
import type { ConnectorSettings } from '../connectors/connections.ts';
import { type LocationConfig, locationSettings } from '../connectors/registry.ts';
import {
  bool,
  bytes,
  ConfigError,
  httpUrl,
  int,
  oneOf,
  optionalStr,
  type Parser,
  type Setting,
  setting,
  type SettingsTable,
  str,
  url,
  type ValuesOf,
} from '../core/settings.ts';

export { ConfigError } from '../core/settings.ts';
import { type ConverterSettings, DEFAULT_CONVERTER_SETTINGS as CS } from '../converter/settings.ts';

/** `0,5s,5m,2h` -> milliseconds; a bare number is milliseconds. */
const durations: Parser<number[]> = (raw, name) => {
  const units: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
  const out = raw
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => {
      const m = /^(\d+)\s*(ms|s|m|h|d)?$/i.exec(part);
      if (!m) throw new ConfigError(`${name} must be a comma-separated list of durations such as 0,5s,5m,2h, got ${JSON.stringify(raw)}`);
      return Number(m[1]) * (units[(m[2] ?? 'ms').toLowerCase()] ?? 1);
    });
  if (out.length === 0 || out.length > 100) throw new ConfigError(`${name} must list between 1 and 100 delays`);
  return out;
};
const allowList: Parser<string[]> = (raw, name) => {
  try {
    return [...outboundPolicy(raw).entries];
  } catch (err) {
    if (err instanceof AllowListError) throw new ConfigError(`${name}: ${err.message}`);
    throw err;
  }
};

/** Unset = the data directory; `s3://bucket[/prefix]` = object storage; anything else = a directory. */
const storageUrl: Parser<string | undefined> = (raw, name) => {
  if (raw === '') return undefined;
  if (raw.startsWith('s3:')) {
    let u: URL;
    try {
      u = new URL(raw);
    } catch {
      throw new ConfigError(`${name} must be s3://bucket[/prefix] or a directory, got ${JSON.stringify(raw)}`);
    }
    if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(u.hostname) || u.search || u.hash || u.username) {
      throw new ConfigError(
        `${name}: ${JSON.stringify(raw)} is not s3://bucket[/prefix] with a valid bucket name (3-63 lowercase letters, digits, dots, hyphens)`,
      );
    }
    return raw;
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(raw) && !raw.startsWith('file://')) {
    throw new ConfigError(`${name} must be s3://bucket[/prefix], file:///directory or a directory, got ${JSON.stringify(raw)}`);
  }
  return raw;
};
const optionalPort: Parser<number | undefined> = (raw, name) => (raw === '' ? undefined : int(0, 65535)(raw, name));
/** TRUST_PROXY: addresses and CIDR ranges (and proxy-addr's names loopback, linklocal, uniquelocal) of the
 *  proxies whose X-Forwarded-For is believed. */
const trustedProxies: Parser<string[] | undefined> = (raw, name) => {
  const entries = raw
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  if (entries.length === 0) return undefined;
  for (const e of entries) {
    const [address = '', prefix, extra] = e.split('/');
    const family = isIP(address);
    const prefixOk = prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 6 ? 128 : 32));
    if (!['loopback', 'linklocal', 'uniquelocal'].includes(e) && (family === 0 || !prefixOk || extra !== undefined)) {
      throw new ConfigError(
        `${name}: ${JSON.stringify(e)} is not an address, a CIDR range (10.0.0.0/8), loopback, linklocal or uniquelocal`,
      );
    }
  }
  return entries;
};

export const settings = {
  host: setting('HOST', '127.0.0.1', str, 'Address the HTTP API listens on'),
  port: setting('PORT', 8080, int(0, 65535), 'Port of the HTTP API (0 = any free port)'),
  keepAliveTimeoutMs: setting(
    'HTTP_KEEP_ALIVE_TIMEOUT_MS',
    72_000,
    int(1_000, 3_600_000),
    "How long the API keeps an idle keep-alive connection open (Fastify's default 72 s); behind a load balancer, above the balancer's idle timeout. A stop closes idle connections at once whatever it is",
  ),
  publicBaseUrl: setting('PUBLIC_BASE_URL', undefined, url, 'Base URL printed and used in links (default http://HOST:PORT)'),
  dataDir: setting('DOCGEN_DATA_DIR', '.docgen', str, 'Directory for the embedded database, storage and Temporal dev server'),
  databaseUrl: setting(
    'DATABASE_URL',
    undefined,
    optionalStr,
    'PostgreSQL connection string; unset = embedded PGlite in the data directory',
  ),
  pgliteSharedBuffersMb: setting(
    'PGLITE_SHARED_BUFFERS_MB',
    16,
    int(1, 4_096),
    "Page cache of the embedded PGlite database (PostgreSQL's shared_buffers, inside its WebAssembly memory, in the docgen process) in MB; pages it does not hold are read back from the data directory through the OS's file cache. PGlite's own default, 128 MB, costs ~120 MB more RSS once the cache has filled; without DATABASE_URL only",
  ),
  temporalAddress: setting(
    'TEMPORAL_ADDRESS',
    undefined,
    optionalStr,
    'host:port of an existing Temporal frontend; unset = `docgen start` runs a dev server',
  ),
  temporalNamespace: setting('TEMPORAL_NAMESPACE', 'default', str, 'Temporal namespace'),
  taskQueue: setting('TEMPORAL_TASK_QUEUE', 'docgen', str, 'Task queue the worker polls and the API starts workflows on'),
  temporalCli: setting('TEMPORAL_CLI', undefined, optionalStr, 'Path to the `temporal` CLI binary used for the dev server'),
  temporalPort: setting('TEMPORAL_PORT', 7233, int(1, 65535), 'Port of the embedded Temporal dev server'),
  temporalUiPort: setting('TEMPORAL_UI_PORT', 8233, int(1, 65535), 'Port of the embedded Temporal Web UI'),
  jwtIssuer: setting('JWT_ISSUER', 'docgen-local', str, 'Expected `iss` of bearer tokens'),
  jwtAudience: setting('JWT_AUDIENCE', 'docgen-api', str, 'Expected `aud` of bearer tokens'),
  jwtJwksUrl: setting('JWT_JWKS_URL', undefined, url, 'JWKS URL of an identity provider; unset = the local signing key in the database'),
  jwtAlgorithms: setting(
    'JWT_ALGORITHMS',
    'ES256,RS256',
    str,
    'Accepted JWT algorithms (comma-separated; `none` and HMAC are never accepted)',
  ),
  uploadMaxBytes: setting('UPLOAD_MAX_BYTES', 20 * 1024 * 1024, bytes, 'Maximum size of one uploaded file (e.g. 20MB)'),
  uploadRetentionSeconds: setting(
    'UPLOAD_RETENTION_SECONDS',
    86_400,
    int(1, 31_536_000),
    'How long an uploaded template or data file stays resolvable (spec: 24 hours)',
  ),
  uploadSweepSeconds: setting(
    'UPLOAD_SWEEP_SECONDS',
    60,
    int(1, 86_400),
    'How often the upload sweeper erases the bytes of uploads whose retention period is over (they stop resolving at the end of the period, whatever this is)',
  ),
  generateTimeoutMs: setting(
    'GENERATE_TIMEOUT_MS',
    120_000,
    int(1_000, 3_600_000),
    'How long a synchronous generate or manage waits for its run; past it the caller gets 504 GENERATION_TIMEOUT and the run goes on (a retry with the same Idempotency-Key, or the operationId of the 504 as the key, returns its outcome)',
  ),
  batchChunkRows: setting(
    'BATCH_CHUNK_ROWS',
    50,
    int(1, 10_000),
    'Rows per page of a batch (POST /documents/document/generate/batch), and per chunk activity where the batch is short (see BATCH_CHUNK_MAX_ROWS): orchestration is paid per chunk, not per row',
  ),
  batchChunkMaxRows: setting(
    'BATCH_CHUNK_MAX_ROWS',
    200,
    int(1, 100_000),
    "Most rows one chunk activity takes: a long batch's chunks take several pages of BATCH_CHUNK_ROWS rows (a window's share of the pages left, so the window stays full and the last chunks are one page each), and Temporal's cost per chunk is paid that much less often (not for a batch with stopAfterFailures); at most BATCH_CHUNK_ROWS makes every chunk one page",
  ),
  batchWindow: setting(
    'BATCH_WINDOW',
    8,
    int(1, 256),
    'Chunk activities of one batch in flight at once (the sliding window), across all workers',
  ),
  batchSlots: setting(
    'BATCH_SLOTS',
    0,
    int(0, 256),
    "Chunk activities one worker runs at once (from the batch task queue, all batches together; the rest wait in Temporal); 0 = twice the LibreOffice pool size, so a row's merge and writes overlap another's conversion. Merge threads and LibreOffice serve waiting work round-robin per subscription, so other tenants' generates wait for at most one batch job each",
  ),
  workerDrainSeconds: setting(
    'WORKER_DRAIN_SECONDS',
    30,
    int(1, 86_400),
    "On SIGTERM a worker stops polling and lets its running activities finish for this long before cancelling them (the SDK's shutdownGraceTime); give the process manager at least this plus 30 s (Kubernetes terminationGracePeriodSeconds, compose stop_grace_period)",
  ),
  batchHeartbeatSeconds: setting(
    'BATCH_HEARTBEAT_SECONDS',
    20,
    int(2, 3_600),
    'A chunk that stops heartbeating for this long (its worker died) is retried on another worker, after its last recorded row',
  ),
  batchChunksPerRun: setting(
    'BATCH_CHUNKS_PER_RUN',
    100,
    int(1, 10_000),
    'Chunks per run of a batch workflow before it continues as new (keeps its history bounded)',
  ),
  batchMaxRows: setting('BATCH_MAX_ROWS', 100_000, int(1, 10_000_000), 'Most rows in one batch'),
  clientTokenTtlSeconds: setting(
    'CLIENT_TOKEN_TTL_SECONDS',
    3_600,
    int(60, 31_536_000),
    'Lifetime of a client-authorization token (POST /common/client/token) and of a service-authorization token (POST /common/service/token)',
  ),
  converterSlots: setting(
    'CONVERTER_SLOTS',
    0,
    int(0, 1_000),
    'Conversions of async generations one worker runs at once (from the office task queue; the rest wait in Temporal); 0 = twice the LibreOffice pool size (CONVERTER_POOL_SIZE, default the CPU count)',
  ),
  converterAutoInstall: setting(
    'CONVERTER_AUTO_INSTALL',
    true,
    bool,
    '`docgen start` installs LibreOffice (pdf/csv output) when it is missing and it runs as root on Debian/Ubuntu, as .ci/install-converter.sh does; false = only print the command',
  ),
  einvoiceRulesDir: setting(
    'EINVOICE_RULES_DIR',
    undefined,
    optionalStr,
    'Directory of the official e-invoice XSDs and Schematron (compiled), which `docgen start`, `docgen worker` and `docgen einvoice-rules` fetch from Maven Central when it is empty; unset = ~/.cache/docgen/einvoice-rules-<versions>. Without them e-invoice requests are refused (NOT_SUPPORTED)',
  ),
  converterMode: setting(
    'CONVERTER',
    CS.mode,
    oneOf('auto', 'libreoffice', 'gotenberg', 'none'),
    'Which converter does pdf/csv output: auto = Gotenberg when GOTENBERG_URL is set, else the embedded LibreOffice pool; none = no conversion (pdf/csv requests answer 400)',
  ),
  gotenbergUrl: setting(
    'GOTENBERG_URL',
    CS.gotenbergUrl,
    httpUrl,
    'Gotenberg server for conversions (scale-out), e.g. http://gotenberg:3000; basic auth in the URL is sent as such',
  ),
  converterPoolSize: setting(
    'CONVERTER_POOL_SIZE',
    CS.poolSize,
    int(0, 256),
    'Warm LibreOffice instances in this worker; 0 = the CPU count',
  ),
  converterQueueLimit: setting(
    'CONVERTER_QUEUE_LIMIT',
    CS.queueLimit,
    int(1, 100_000),
    'Conversions that may wait for a free instance before new ones are refused (QUEUE_FULL, retried by the workflow)',
  ),
  converterTimeoutMs: setting(
    'CONVERTER_TIMEOUT_MS',
    CS.timeoutMs,
    int(1_000, 3_600_000),
    "Time limit of one conversion or page count; past it LibreOffice is stopped and the generate fails with 400 TEMPLATE_TOO_COMPLEX (not retried: the cost is the document's), for a synchronous generate as for an async one",
  ),
  converterSubscriptionInstances: setting(
    'CONVERTER_SUBSCRIPTION_INSTANCES',
    CS.subscriptionInstances,
    int(0, 256),
    "LibreOffice instances one subscription's conversions and page counts may hold at once; the others stay free for other subscriptions, even while idle, except that with a spare (CONVERTER_SPARE_INSTANCES) a subscription alone on the pool borrows them for short jobs (within CONVERTER_SPARE_MAX_PAGES); 0 = all but one (at least one)",
  ),
  converterContendedTimeoutMs: setting(
    'CONVERTER_CONTENDED_TIMEOUT_MS',
    CS.contendedTimeoutMs,
    int(1_000, 3_600_000),
    "Time limit of a conversion or page count while another subscription's waits for an instance (every instance busy, e.g. a pool of one): past it LibreOffice is stopped and the generate fails with 400 TEMPLATE_TOO_COMPLEX; CONVERTER_TIMEOUT_MS or more = no such limit",
  ),
  converterSliceMs: setting(
    'CONVERTER_SLICE_MS',
    CS.sliceMs,
    int(100, 3_600_000),
    'Time limit of a conversion or page count while a subscription that used less LibreOffice time recently (CONVERTER_FAIR_HALF_LIFE_MS) waits for an instance: past it LibreOffice is stopped and the generate fails with 400 TEMPLATE_TOO_COMPLEX naming this setting; CONVERTER_TIMEOUT_MS or more = no such limit',
  ),
  converterSpareInstances: setting(
    'CONVERTER_SPARE_INSTANCES',
    1,
    int(0, 16),
    "Warm LibreOffice instances kept idle beside CONVERTER_POOL_SIZE that take over at once from an instance stopped by a time limit (CONVERTER_SLICE_MS, CONVERTER_CONTENDED_TIMEOUT_MS, CONVERTER_TIMEOUT_MS), so the conversion waiting for it does not wait for a LibreOffice restart (seconds); each costs an idle LibreOffice's memory (~250 MB); 0 = none",
  ),
  converterSpareMaxPages: setting(
    'CONVERTER_SPARE_MAX_PAGES',
    CS.spareMaxPages,
    int(1, 100_000),
    "While every instance is busy, a spare runs the conversion of a subscription that used less LibreOffice time than each one holding an instance (the fairness lane), when its document is estimated at most this many pages: a short job is not held behind another subscription's long ones",
  ),
  converterFairHalfLifeMs: setting(
    'CONVERTER_FAIR_HALF_LIFE_MS',
    CS.fairHalfLifeMs,
    int(1_000, 86_400_000),
    'Waiting conversions are served to the subscription that used the least LibreOffice time recently, each millisecond used counting half after this long',
  ),
  converterSubscriptionBudgetMs: setting(
    'CONVERTER_SUBSCRIPTION_BUDGET_MS',
    CS.budgetMs,
    int(0, 1_000_000_000),
    "LibreOffice time one subscription may use per CONVERTER_BUDGET_WINDOW_MS while other subscriptions use the converter too; past it its new conversions are refused with 429 TOO_MANY_REQUESTS (Retry-After) until the window frees enough; counted per worker process (its own pool's time: N workers allow N budgets); 0 = half of the pool's time in the window",
  ),
  converterBudgetWindowMs: setting(
    'CONVERTER_BUDGET_WINDOW_MS',
    CS.budgetWindowMs,
    int(1_000, 86_400_000),
    'The rolling window of CONVERTER_SUBSCRIPTION_BUDGET_MS',
  ),
  converterRecycleAfter: setting(
    'CONVERTER_RECYCLE_AFTER',
    CS.recycleAfter,
    int(1, 1_000_000),
    'Conversions after which a LibreOffice instance is restarted (bounds its memory growth)',
  ),
  converterNetworkIsolation: setting(
    'CONVERTER_NETWORK_ISOLATION',
    CS.networkIsolation,
    oneOf('auto', 'required', 'off'),
    'LibreOffice without network access (unshare -n): auto = when the machine allows it, required = refuse to start without it, off = never',
  ),
  converterSandbox: setting(
    'CONVERTER_SANDBOX',
    CS.sandbox,
    oneOf('auto', 'required', 'off'),
    "Each LibreOffice instance in a bubblewrap (bwrap) filesystem sandbox that sees only the system read-only, its profile and its job, so a document can read no other file (another tenant's, the data directory): auto = when the machine allows it (bwrap installed, namespaces allowed), required = refuse to start without it, off = never",
  ),
  csvEscapeFormulas: setting(
    'CSV_ESCAPE_FORMULAS',
    CS.csvEscapeFormulas,
    bool,
    "csv output: a cell that begins with = + - @, a tab or a carriage return and is not a number (-5 stays -5) is written as text, prefixed with ' and quoted, so a spreadsheet that opens the file runs no formula (OWASP CSV injection); false = cells as LibreOffice exports them",
  ),
  converterFontsDir: setting(
    'CONVERTER_FONTS_DIR',
    CS.fontsDir,
    str,
    "A directory of the deployment's own fonts (TrueType/OpenType, e.g. licensed Office fonts such as Aptos or Calibri), mounted read-only into each LibreOffice sandbox and used before the installed ones; empty = none",
  ),
  soffice: setting('SOFFICE', CS.soffice, str, 'The LibreOffice executable'),
  unoPython: setting('UNO_PYTHON', CS.unoPython, str, 'Python with the uno module (python3-uno) that runs the LibreOffice bridge'),
  callbackRetryScheduleMs: setting(
    'CALLBACK_RETRY_SCHEDULE',
    [0, 5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000],
    durations,
    'Async callback delivery: the delay before each attempt (first = before the first attempt), e.g. 0,5s,5m,30m,2h,5h,10h,10h; a Retry-After answer can only lengthen a delay',
  ),
  callbackTimeoutMs: setting('CALLBACK_TIMEOUT_MS', 15_000, int(100, 300_000), 'Time limit of one callback attempt (connect to last byte)'),
  outboundAllow: setting(
    'OUTBOUND_ALLOW',
    [] as string[],
    allowList,
    'Comma-separated hosts (example.com, *.example.com), IP addresses and CIDRs outbound HTTP may reach although they are private, loopback or link-local; empty = public addresses only',
  ),
  outboundTimeoutMs: setting(
    'OUTBOUND_TIMEOUT_MS',
    15_000,
    int(100, 300_000),
    'Time limit of one outbound fetch for generation (GraphQL data, images from URLs), connect to last byte',
  ),
  outboundMaxBytes: setting(
    'OUTBOUND_MAX_BYTES',
    10 * 1024 * 1024,
    bytes,
    'Largest response an outbound fetch for generation may return (GraphQL data, one image), e.g. 10MB',
  ),
  templateMaxParts: setting(
    'TEMPLATE_MAX_PARTS',
    TL.maxParts,
    int(10, 1_000_000),
    'Most parts (zip entries) in a template package; checked at upload',
  ),
  templateMaxPartBytes: setting(
    'TEMPLATE_MAX_PART_BYTES',
    TL.maxPartBytes,
    bytes,
    'Largest inflated part of a template or document package (e.g. word/document.xml); checked at upload',
  ),
  templateMaxTotalBytes: setting(
    'TEMPLATE_MAX_TOTAL_BYTES',
    TL.maxTotalBytes,
    bytes,
    'Largest inflated size of a whole template or document package; checked at upload',
  ),
  templateMaxRatio: setting(
    'TEMPLATE_MAX_RATIO',
    TL.maxRatio,
    int(10, 1_000_000),
    'Highest compression ratio of a package part past 1 MB inflated (zip bombs); checked at upload',
  ),
  templateMaxXmlElements: setting(
    'TEMPLATE_MAX_XML_ELEMENTS',
    TL.maxXmlElements,
    int(1_000, 100_000_000),
    'Most XML elements (paragraphs, runs, cells...) in one templated part',
  ),
  templateMaxLoopIterations: setting(
    'TEMPLATE_MAX_LOOP_ITERATIONS',
    TL.maxLoopIterations,
    int(1, 100_000_000),
    'Most loop iterations one merge runs, all loops together',
  ),
  templateMaxOutputBytes: setting('TEMPLATE_MAX_OUTPUT_BYTES', TL.maxOutputBytes, bytes, 'Largest merged document'),
  templateMaxPages: setting(
    'TEMPLATE_MAX_PAGES',
    TL.maxPages,
    int(1, 10_000_000),
    "Most pages a merged document may come to, estimated before any conversion from its lines of text, table rows, page and section breaks, slides and sheet rows (LibreOffice's time grows faster than its pages)",
  ),
  templateMaxParagraphChars: setting(
    'TEMPLATE_MAX_PARAGRAPH_CHARS',
    TL.maxParagraphChars,
    int(1_000, 1_000_000_000),
    "Most characters in one paragraph of a merged document, all its runs together (LibreOffice's layout of a paragraph is quadratic in its length)",
  ),
  templateMaxTableRows: setting(
    'TEMPLATE_MAX_TABLE_ROWS',
    TL.maxTableRows,
    int(10, 100_000_000),
    'Most rows in one table of a merged document (the layout of a table grows with the square of its rows)',
  ),
  templateMaxCells: setting(
    'TEMPLATE_MAX_CELLS',
    TL.maxCells,
    int(1_000, 1_000_000_000),
    'Most cells in a merged workbook, all sheets together',
  ),
  templateMaxImagePixels: setting(
    'TEMPLATE_MAX_IMAGE_PIXELS',
    TL.maxImagePixels,
    int(1_000_000, 100_000_000_000),
    'Most pixels of all images of a merged document together, each image once (a small PNG can decode to a bitmap of billions of pixels)',
  ),
  workflowDebugAids: setting(
    'WORKFLOW_DEBUG_AIDS',
    'off',
    oneOf('off', 'on'),
    "The Temporal SDK's debugging aids in the workflow sandbox: on = a 5 s timeout on each workflow activation (a workflow stuck in a loop fails its task) and stack traces of running workflows in the Temporal UI; off = both disabled (the UI's stack trace is empty), which saves ~10 ms per generate and most of the workflow thread's CPU (worker/sandbox.ts)",
  ),
  workflowBundleCache: setting(
    'WORKFLOW_BUNDLE_CACHE',
    undefined,
    optionalStr,
    'Directory where a worker keeps the workflow bundle (seconds of webpack per start) for the next process, used again while the files it was made from are unchanged (worker/bundle-cache.ts); unset = ~/.cache/docgen/workflow-bundles; off = bundle at every start',
  ),
  v8SemiSpaceMb: setting(
    'V8_SEMI_SPACE_MB',
    8,
    int(0, 1_024),
    "V8's semi-space size in MB for `docgen start`, `docgen api` and `docgen worker` (node's --max-semi-space-size, set by cli/docgen.mjs, which restarts itself in place with it, and with glibc's MALLOC_ARENA_MAX=2 unless the environment sets MALLOC_ARENA_MAX; the Temporal SDK's workflow thread gets a young generation of three times this): V8's own default grows with the heap limit, to 128 MB of young generation per heap on a machine with a 4 GB limit; smaller means more, shorter scavenges; 0 = V8's default",
  ),
  mergeThreads: setting(
    'MERGE_THREADS',
    0,
    int(0, 256),
    'Merges one worker runs at once, each on its own thread (waiting merges are served round-robin per subscription); 0 = the CPU count',
  ),
  mergeSubscriptionThreads: setting(
    'MERGE_SUBSCRIPTION_THREADS',
    0,
    int(0, 256),
    "Merge threads one subscription's merges may hold at once; the others stay free for other subscriptions, even while idle; 0 = all but one (at least one)",
  ),
  mergeTimeoutMs: setting(
    'MERGE_TIMEOUT_MS',
    30_000,
    int(100, 3_600_000),
    'Time limit of one merge; past it the merge thread is ended and the generate fails with 400 TEMPLATE_TOO_COMPLEX',
  ),
  mergeMaxMemoryMb: setting(
    'MERGE_MAX_MEMORY_MB',
    1_024,
    int(64, 65_536),
    'Heap limit of each merge thread in MB; a merge that needs more fails with 400 TEMPLATE_TOO_COMPLEX',
  ),
  converterMaxMemoryMb: setting(
    'CONVERTER_MAX_MEMORY_MB',
    CS.maxMemoryMb,
    int(0, 1_048_576),
    'Address-space limit of each LibreOffice instance in MB (RLIMIT_AS); a conversion that needs more fails and its instance restarts; 0 = no limit',
  ),
  pageCount: setting(
    'PAGE_COUNT',
    'auto',
    oneOf('auto', 'exact', 'document'),
    "How `pages-generated` counts docx/xlsx pages: exact = the pages of the PDF rendition (LibreOffice layout, no PDF written; needs a converter: a count that fails fails the step, which is retried); document = the document's own statistic (docProps/app.xml Pages for docx, worksheets for xlsx), nothing converted; auto = exact when a converter is available, else the statistic, and the statistic when an exact count times out or crashes (logged as a warning)",
  ),
  authCacheSeconds: setting(
    'AUTH_CACHE_SECONDS',
    30,
    int(0, 3_600),
    "How long the API trusts a bearer token + API key pair it has verified without checking it again (in memory, per process, at most 10 000 pairs, never past the token's expiry); a revoked API key or a removed user is refused within this time; 0 = check every request",
  ),
  rateLimitPerMinute: setting(
    'RATE_LIMIT_PER_MINUTE',
    1_200,
    int(0, 10_000_000),
    'Requests per minute one subscription may send (sustained, all its API keys together), and one client address to the routes that need no credentials (health, readiness, API docs); past it the API answers 429 TOO_MANY_REQUESTS with Retry-After; counted where RATE_LIMIT_STORE says; 0 = no limit',
  ),
  rateLimitStore: setting(
    'RATE_LIMIT_STORE',
    'database',
    oneOf('database', 'memory'),
    'Where the API counts RATE_LIMIT_* and AUTH_FAILURES_*: database = in the database every API process shares (one UPSERT per counted request; two API processes allow what one does), memory = per API process (N processes allow N times the limits)',
  ),
  rateLimitBurst: setting(
    'RATE_LIMIT_BURST',
    200,
    int(1, 10_000_000),
    'Requests one subscription (or one client address, to the public routes) may send at once above the per-minute rate',
  ),
  authFailuresPerMinute: setting(
    'AUTH_FAILURES_PER_MINUTE',
    30,
    int(0, 10_000_000),
    'Failed authentications per minute one client address may make (sustained; an IPv6 address counts by its /64); past it every request from that address whose credentials are not already verified (AUTH_CACHE_SECONDS) answers 429 TOO_MANY_REQUESTS with Retry-After, before any key lookup or signature check; 0 = no limit',
  ),
  authFailuresBurst: setting(
    'AUTH_FAILURES_BURST',
    30,
    int(1, 10_000_000),
    'Failed authentications one client address may make at once above AUTH_FAILURES_PER_MINUTE',
  ),
  trustProxy: setting(
    'TRUST_PROXY',
    undefined,
    trustedProxies,
    "Reverse proxies in front of the API whose X-Forwarded-For names the client: their addresses or CIDR ranges, comma-separated (also loopback, linklocal, uniquelocal); unset = the connection's address is the client's. The client address is what the per-address limits count and what the request log shows: behind a proxy, unset, every client shares the proxy's",
  ),
  storageUrl: setting(
    'STORAGE_URL',
    undefined,
    storageUrl,
    'Where blobs (uploads, documents, scratch) live: unset = DOCGEN_DATA_DIR/storage; `s3://bucket/prefix` = an S3-compatible object store (shared by every process); a directory path',
  ),
  s3Endpoint: setting(
    'S3_ENDPOINT',
    undefined,
    httpUrl,
    'S3 endpoint for a self-hosted server (versitygw, MinIO, Ceph), e.g. http://s3:7070; unset = AWS',
  ),
  s3PublicEndpoint: setting(
    'S3_PUBLIC_ENDPOINT',
    undefined,
    httpUrl,
    'S3 endpoint put in presigned download URLs when clients reach the store under another name; unset = S3_ENDPOINT',
  ),
  s3Region: setting('S3_REGION', 'us-east-1', str, 'S3 region'),
  s3ForcePathStyle: setting(
    'S3_FORCE_PATH_STYLE',
    'auto',
    oneOf('auto', 'true', 'false'),
    'Path-style S3 URLs (host/bucket/key); auto = on when S3_ENDPOINT is set',
  ),
  awsAccessKeyId: setting(
    'AWS_ACCESS_KEY_ID',
    undefined,
    optionalStr,
    'S3 access key; unset = the AWS SDK standard chain (profile, instance or pod role)',
  ),
  awsSecretAccessKey: setting('AWS_SECRET_ACCESS_KEY', undefined, optionalStr, 'S3 secret key (with AWS_ACCESS_KEY_ID)', { secret: true }),
  awsSessionToken: setting('AWS_SESSION_TOKEN', undefined, optionalStr, 'S3 session token for temporary credentials', { secret: true }),
  storageDownload: setting(
    'STORAGE_DOWNLOAD',
    'stream',
    oneOf('stream', 'redirect'),
    'Document downloads: stream = through the API; redirect = 302 to a short-lived presigned URL of the object store (S3 only; the directory store always streams)',
  ),
  storagePresignSeconds: setting(
    'STORAGE_PRESIGN_SECONDS',
    300,
    int(1, 604_800),
    'Lifetime of a presigned download URL (STORAGE_DOWNLOAD=redirect)',
  ),
  metricsPort: setting(
    'METRICS_PORT',
    undefined,
    optionalPort,
    "Port of this process's Prometheus endpoint (/metrics, plus /health and /ready); unset = no metrics server, 0 = any free port",
  ),
  metricsHost: setting('METRICS_HOST', '127.0.0.1', str, 'Address the metrics endpoint listens on (0.0.0.0 in a container)'),
  logLevel: setting('LOG_LEVEL', 'info', oneOf('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'), 'Log level (pino)'),
} as const;

/** Every setting: the service's own, then the registered locations'. */
export function allSettings(): SettingsTable {
  return { ...settings, ...locationSettings() };
}

export type Config = ValuesOf<typeof settings> & LocationConfig;

/** Parses the environment (or the given record) into a Config; throws ConfigError naming the variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env, overrides: Partial<Config> = {}): Config {
  const out: Record<string, unknown> = {};
  for (const [key, s] of Object.entries(allSettings())) {
    const raw = env[s.env];
    out[key] = raw === undefined ? s.default : s.parse(raw, s.env);
  }
  const config = { ...(out as Config), ...overrides };
  config.dataDir = path.resolve(config.dataDir);
  const algs = config.jwtAlgorithms.split(',').map((a) => a.trim());
  for (const alg of algs) {
    if (!/^(ES(256|384|512)|RS(256|384|512)|PS(256|384|512)|EdDSA)$/.test(alg)) {
      throw new ConfigError(`JWT_ALGORITHMS: ${JSON.stringify(alg)} is not an accepted asymmetric algorithm`);
    }
  }
  if (config.pageCount === 'exact' && config.converterMode === 'none') {
    throw new ConfigError(
      'PAGE_COUNT=exact needs a converter, and CONVERTER=none disables it: set PAGE_COUNT=auto or document, or enable a converter',
    );
  }
  return config;
}

/** The configuration table of docs/configuration.md; test/unit/readme.test.ts keeps the page equal to it. */
export function configMarkdown(): string {
  const rows = Object.values(allSettings()).map((s: Setting<unknown>) => {
    const def = s.default === undefined ? '' : Array.isArray(s.default) ? s.default.join(',') : String(s.default);
    return `| \`${s.env}\` | ${def === '' ? '(unset)' : `\`${def}\``} | ${s.description.replace(/\|/g, '\\|')} |`;
  });
  return ['| Variable | Default | Meaning |', '|---|---|---|', ...rows].join('\n');
}

/** The template limits (engine/limits.ts) this configuration sets. */
export function templateLimits(config: Config): TemplateLimits {
  return {
    maxParts: config.templateMaxParts,
    maxPartBytes: config.templateMaxPartBytes,
    maxTotalBytes: config.templateMaxTotalBytes,
    maxRatio: config.templateMaxRatio,
    maxXmlElements: config.templateMaxXmlElements,
    maxLoopIterations: config.templateMaxLoopIterations,
    maxOutputBytes: config.templateMaxOutputBytes,
    maxPages: config.templateMaxPages,
    maxParagraphChars: config.templateMaxParagraphChars,
    maxTableRows: config.templateMaxTableRows,
    maxCells: config.templateMaxCells,
    maxImagePixels: config.templateMaxImagePixels,
  };
}

export function baseUrl(config: Config, port: number = config.port): string {
  if (config.publicBaseUrl) return config.publicBaseUrl.replace(/\/$/, '');
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** The converter's part of the configuration, for configureConverter(). */
export function converterSettingsOf(config: Config): ConverterSettings {
  return {
    mode: config.converterMode,
    gotenbergUrl: config.gotenbergUrl,
    poolSize: config.converterPoolSize,
    queueLimit: config.converterQueueLimit,
    timeoutMs: config.converterTimeoutMs,
    recycleAfter: config.converterRecycleAfter,
    networkIsolation: config.converterNetworkIsolation,
    sandbox: config.converterSandbox,
    csvEscapeFormulas: config.csvEscapeFormulas,
    soffice: config.soffice,
    unoPython: config.unoPython,
    maxMemoryMb: config.converterMaxMemoryMb,
    subscriptionInstances: config.converterSubscriptionInstances,
    contendedTimeoutMs: config.converterContendedTimeoutMs,
    sliceMs: config.converterSliceMs,
    spareInstances: config.converterSpareInstances,
    spareMaxPages: config.converterSpareMaxPages,
    fairHalfLifeMs: config.converterFairHalfLifeMs,
    budgetMs: config.converterSubscriptionBudgetMs,
    budgetWindowMs: config.converterBudgetWindowMs,
    fontsDir: config.converterFontsDir,
    limits: templateLimits(config),
  };
}

/** The connectors' part of the configuration (the settings the locations declare): endpoints are service
 *  settings, never tenant values. */
export function connectorSettingsOf(config: Config): ConnectorSettings {
  const values = config as unknown as Record<string, unknown>;
  return Object.fromEntries(Object.keys(locationSettings()).map((key) => [key, values[key]]));
}
