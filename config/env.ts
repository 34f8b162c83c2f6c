// One validated configuration, parsed once at start-up. A bad value fails fast and names the variable.
// The same table feeds `docgen config` and the README's configuration table, so docs cannot drift.
import path from 'node:path';

type Parser<T> = (raw: string, name: string) => T;

interface Setting<T> {
  readonly env: string;
  readonly description: string;
  readonly default: T;
  readonly parse: Parser<T>;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

const int =
  (min: number, max: number): Parser<number> =>
  (raw, name) => {
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) {
      throw new ConfigError(`${name} must be an integer between ${min} and ${max}, got ${JSON.stringify(raw)}`);
    }
    return n;
  };
const str: Parser<string> = (raw) => raw;
const optionalStr: Parser<string | undefined> = (raw) => (raw === '' ? undefined : raw);
const url: Parser<string | undefined> = (raw, name) => {
  if (raw === '') return undefined;
  try {
    return new URL(raw).toString();
  } catch {
    throw new ConfigError(`${name} must be a URL, got ${JSON.stringify(raw)}`);
  }
};
const oneOf =
  <T extends string>(...values: T[]): Parser<T> =>
  (raw, name) => {
    if ((values as string[]).includes(raw)) return raw as T;
    throw new ConfigError(`${name} must be one of ${values.join(', ')}, got ${JSON.stringify(raw)}`);
  };
const bytes: Parser<number> = (raw, name) => {
  const m = /^(\d+)\s*(b|kb|mb|gb)?$/i.exec(raw.trim());
  if (!m) throw new ConfigError(`${name} must be a size such as 20MB or 1048576, got ${JSON.stringify(raw)}`);
  const unit = (m[2] ?? 'b').toLowerCase();
  const factor = unit === 'gb' ? 1024 ** 3 : unit === 'mb' ? 1024 ** 2 : unit === 'kb' ? 1024 : 1;
  return Number(m[1]) * factor;
};

function setting<T>(env: string, def: T, parse: Parser<T>, description: string): Setting<T> {
  return { env, default: def, parse, description };
}

export const settings = {
  host: setting('HOST', '127.0.0.1', str, 'Address the HTTP API listens on'),
  port: setting('PORT', 8080, int(0, 65535), 'Port of the HTTP API (0 = any free port)'),
  publicBaseUrl: setting('PUBLIC_BASE_URL', undefined, url, 'Base URL printed and used in links (default http://HOST:PORT)'),
  dataDir: setting('DOCGEN_DATA_DIR', '.docgen', str, 'Directory for the embedded database, storage and Temporal dev server'),
  databaseUrl: setting('DATABASE_URL', undefined, optionalStr, 'PostgreSQL connection string; unset = embedded PGlite in the data directory'),
  temporalAddress: setting('TEMPORAL_ADDRESS', undefined, optionalStr, 'host:port of an existing Temporal frontend; unset = `docgen start` runs a dev server'),
  temporalNamespace: setting('TEMPORAL_NAMESPACE', 'default', str, 'Temporal namespace'),
  taskQueue: setting('TEMPORAL_TASK_QUEUE', 'docgen', str, 'Task queue the worker polls and the API starts workflows on'),
  temporalCli: setting('TEMPORAL_CLI', undefined, optionalStr, 'Path to the `temporal` CLI binary used for the dev server'),
  temporalPort: setting('TEMPORAL_PORT', 7233, int(1, 65535), 'Port of the embedded Temporal dev server'),
  temporalUiPort: setting('TEMPORAL_UI_PORT', 8233, int(1, 65535), 'Port of the embedded Temporal Web UI'),
  jwtIssuer: setting('JWT_ISSUER', 'docgen-local', str, 'Expected `iss` of bearer tokens'),
  jwtAudience: setting('JWT_AUDIENCE', 'docgen-api', str, 'Expected `aud` of bearer tokens'),
  jwtJwksUrl: setting('JWT_JWKS_URL', undefined, url, 'JWKS URL of an identity provider; unset = the local signing key in the database'),
  jwtAlgorithms: setting('JWT_ALGORITHMS', 'ES256,RS256', str, 'Accepted JWT algorithms (comma-separated; `none` and HMAC are never accepted)'),
  uploadMaxBytes: setting('UPLOAD_MAX_BYTES', 20 * 1024 * 1024, bytes, 'Maximum size of one uploaded file (e.g. 20MB)'),
  uploadRetentionSeconds: setting('UPLOAD_RETENTION_SECONDS', 86_400, int(1, 31_536_000), 'How long an uploaded template or data file stays resolvable (spec: 24 hours)'),
  generateTimeoutMs: setting('GENERATE_TIMEOUT_MS', 120_000, int(1_000, 3_600_000), 'How long a synchronous generate waits for its workflow'),
  logLevel: setting('LOG_LEVEL', 'info', oneOf('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'), 'Log level (pino)'),
} as const;

type Settings = typeof settings;
export type Config = { [K in keyof Settings]: Settings[K] extends Setting<infer T> ? T : never };

/** Parses the environment (or the given record) into a Config; throws ConfigError naming the variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env, overrides: Partial<Config> = {}): Config {
  const out: Record<string, unknown> = {};
  for (const [key, s] of Object.entries(settings) as [keyof Settings, Setting<unknown>][]) {
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
  return config;
}

export function baseUrl(config: Config, port: number = config.port): string {
  if (config.publicBaseUrl) return config.publicBaseUrl.replace(/\/$/, '');
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}
