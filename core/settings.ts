// What a setting is (an environment variable, its default, its parser, its meaning) and the parsers the
// settings share. config/env.ts holds the service's own settings; each location declares its own in its
// registration (connectors/<name>/index.ts, LocationRegistration.settings), and config, `docgen config`
// and the README's table take both. Pure functions: no Node built-ins, no other folder.

export type Parser<T> = (raw: string, name: string) => T;

export interface Setting<T> {
  readonly env: string;
  readonly description: string;
  readonly default: T;
  readonly parse: Parser<T>;
  /** `docgen config` prints "(set)" instead of the value. */
  readonly secret?: boolean;
}

/** A table of settings by key (the key is the Config field). */
export type SettingsTable = Readonly<Record<string, Setting<unknown>>>;
/** The values a table of settings parses to. */
export type ValuesOf<S> = { [K in keyof S]: S[K] extends Setting<infer T> ? T : never };

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export function setting<T>(env: string, def: T, parse: Parser<T>, description: string, opts: { secret?: boolean } = {}): Setting<T> {
  return { env, default: def, parse, description, ...opts };
}

/** A table's values from settings parsed elsewhere (config/env.ts connectorSettingsOf), each missing one its default. */
export function valuesOf<S extends SettingsTable>(table: S, given: Readonly<Record<string, unknown>>): ValuesOf<S> {
  const out: Record<string, unknown> = {};
  for (const [key, s] of Object.entries(table)) out[key] = given[key] ?? s.default;
  return out as ValuesOf<S>;
}

export const int =
  (min: number, max: number): Parser<number> =>
  (raw, name) => {
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) {
      throw new ConfigError(`${name} must be an integer between ${min} and ${max}, got ${JSON.stringify(raw)}`);
    }
    return n;
  };
export const str: Parser<string> = (raw) => raw;
export const optionalStr: Parser<string | undefined> = (raw) => (raw === '' ? undefined : raw);
export const url: Parser<string | undefined> = (raw, name) => {
  if (raw === '') return undefined;
  try {
    return new URL(raw).toString();
  } catch {
    throw new ConfigError(`${name} must be a URL, got ${JSON.stringify(raw)}`);
  }
};
export const oneOf =
  <T extends string>(...values: T[]): Parser<T> =>
  (raw, name) => {
    if ((values as string[]).includes(raw)) return raw as T;
    throw new ConfigError(`${name} must be one of ${values.join(', ')}, got ${JSON.stringify(raw)}`);
  };
export const bool: Parser<boolean> = (raw, name) => {
  const v = raw.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(v)) return true;
  if (['0', 'false', 'no', 'off'].includes(v)) return false;
  throw new ConfigError(`${name} must be true or false, got ${JSON.stringify(raw)}`);
};
export const bytes: Parser<number> = (raw, name) => {
  const m = /^(\d+)\s*(b|kb|mb|gb)?$/i.exec(raw.trim());
  if (!m) throw new ConfigError(`${name} must be a size such as 20MB or 1048576, got ${JSON.stringify(raw)}`);
  const unit = (m[2] ?? 'b').toLowerCase();
  const factor = unit === 'gb' ? 1024 ** 3 : unit === 'mb' ? 1024 ** 2 : unit === 'kb' ? 1024 : 1;
  return Number(m[1]) * factor;
};
export const httpUrl: Parser<string | undefined> = (raw, name) => {
  const v = url(raw, name);
  if (v && !/^https?:/.test(v)) throw new ConfigError(`${name} must be an http(s) URL, got ${JSON.stringify(raw)}`);
  return v?.replace(/\/$/, '');
};
/** An http(s) URL that must be set, kept as written except for a trailing slash on a bare path. */
export const requiredHttpUrl: Parser<string> = (raw, name) => {
  const v = httpUrl(raw, name);
  if (!v) throw new ConfigError(`${name} must be an http(s) URL`);
  return raw.endsWith('/') ? `${v}/` : v;
};
export const hostList: Parser<string[]> = (raw, name) => {
  const hosts = raw
    .split(',')
    .map((h) => h.trim().toLowerCase())
    .filter(Boolean);
  for (const h of hosts) {
    if (!/^(http:\/\/)?(\*\.)?[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:\d{1,5})?$/.test(h))
      throw new ConfigError(`${name}: ${JSON.stringify(h)} is not a host name or *.domain`);
  }
  return hosts;
};
