import { BarcodeError, linearCode, qrCode } from './barcodes.ts';
import type { BarcodeImage } from './barcodes.ts';
import { TemplateError } from './errors.ts';
/**
 * Filters available after `|` in a tag. Locale-sensitive output goes through Intl so documents
 * follow the request's locale and timezone; formatters are cached because constructing Intl
 * objects costs far more than using them.
 */

export interface FilterContext {
  locale: string;
  timezone: string;
}

/** Locale and time zone names already resolved (bounded): a batch renders with the same ones row after row. */
const canonicalLocales = new Map<string, string>();
const canonicalZones = new Map<string, string>();
function remember(map: Map<string, string>, name: string, canonical: string): void {
  if (map.size >= 1_000) map.clear();
  map.set(name, canonical);
}

/** The filters' context of a render's `locale` and `timezone` options (en-US and UTC when unset); an unknown
 *  one is an `invalid_option` TemplateError. */
export function filterContextOf(loc: unknown, zone: unknown): FilterContext {
  let locale = 'en-US';
  if (loc !== undefined && loc !== null && loc !== '') {
    const known = typeof loc === 'string' ? canonicalLocales.get(loc) : undefined;
    if (known) locale = known;
    else {
      try {
        locale = Intl.getCanonicalLocales(loc as string)[0] ?? 'en-US';
      } catch {
        throw TemplateError.single('invalid_option', `unknown locale ${JSON.stringify(loc)}`);
      }
      if (typeof loc === 'string') remember(canonicalLocales, loc, locale);
    }
  }
  let timezone = 'UTC';
  if (zone !== undefined && zone !== null && zone !== '') {
    const known = typeof zone === 'string' ? canonicalZones.get(zone) : undefined;
    if (known) timezone = known;
    else {
      try {
        // An Intl.DateTimeFormat costs a fraction of a millisecond to build: once per zone name, not per render.
        timezone = new Intl.DateTimeFormat('en-US', { timeZone: zone as string }).resolvedOptions().timeZone;
      } catch {
        throw TemplateError.single('invalid_option', `unknown time zone ${JSON.stringify(zone)}`);
      }
      if (typeof zone === 'string') remember(canonicalZones, zone, timezone);
    }
  }
  return { locale, timezone };
}

export type Filter = (input: unknown, args: unknown[], ctx: FilterContext) => unknown;

export class FilterError extends Error {
  readonly id = 'filter_failed';
}

const numberFormats = new Map<string, Intl.NumberFormat>();
const dateFormats = new Map<string, Intl.DateTimeFormat>();

function numberFormat(locale: string, opts: Intl.NumberFormatOptions): Intl.NumberFormat {
  const key = `${locale}|${JSON.stringify(opts)}`;
  let f = numberFormats.get(key);
  if (f === undefined) {
    if (numberFormats.size > 500) numberFormats.clear();
    try {
      f = new Intl.NumberFormat(locale, opts);
    } catch (e) {
      throw new FilterError(e instanceof Error ? e.message : String(e));
    }
    numberFormats.set(key, f);
  }
  return f;
}

function dateFormat(locale: string, opts: Intl.DateTimeFormatOptions): Intl.DateTimeFormat {
  const key = `${locale}|${JSON.stringify(opts)}`;
  let f = dateFormats.get(key);
  if (f === undefined) {
    if (dateFormats.size > 500) dateFormats.clear();
    try {
      f = new Intl.DateTimeFormat(locale, opts);
    } catch (e) {
      throw new FilterError(e instanceof Error ? e.message : String(e));
    }
    dateFormats.set(key, f);
  }
  return f;
}

/** How a value reads in a document: docxtemplater-compatible for primitives, empty for nothing. */
export function toText(v: unknown): string {
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? '' : v.toISOString();
  if (Array.isArray(v)) return v.map(toText).join(',');
  if (typeof v === 'object') return '[object Object]';
  return '';
}

function toNumber(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && v.trim() !== '') {
    const n = Number(v);
    return Number.isNaN(n) ? undefined : n;
  }
  if (typeof v === 'bigint') return Number(v);
  return undefined;
}

export function toDate(v: unknown): Date | undefined {
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? undefined : v;
  if (typeof v === 'number' && Number.isFinite(v)) return new Date(v);
  if (typeof v === 'string' && v.trim() !== '') {
    const d = new Date(v);
    return Number.isNaN(d.getTime()) ? undefined : d;
  }
  return undefined;
}

function digitsArg(a: unknown, fallback: number | undefined): number | undefined {
  if (a === undefined || a === null) return fallback;
  const n = toNumber(a);
  if (n === undefined || !Number.isInteger(n) || n < 0 || n > 20) throw new FilterError(`invalid number of digits ${JSON.stringify(a)}`);
  return n;
}

const currency: Filter = (input, args, ctx) => {
  const n = toNumber(input);
  if (n === undefined) return input;
  const code = typeof args[0] === 'string' && args[0] !== '' ? args[0].toUpperCase() : 'EUR';
  const digits = digitsArg(args[1], undefined);
  const opts: Intl.NumberFormatOptions = { style: 'currency', currency: code };
  if (digits !== undefined) {
    opts.minimumFractionDigits = digits;
    opts.maximumFractionDigits = digits;
  }
  return numberFormat(ctx.locale, opts).format(n);
};

const number: Filter = (input, args, ctx) => {
  const n = toNumber(input);
  if (n === undefined) return input;
  const digits = digitsArg(args[0], undefined);
  const opts: Intl.NumberFormatOptions = digits === undefined ? {} : { minimumFractionDigits: digits, maximumFractionDigits: digits };
  return numberFormat(ctx.locale, opts).format(n);
};

const percent: Filter = (input, args, ctx) => {
  const n = toNumber(input);
  if (n === undefined) return input;
  const digits = digitsArg(args[0], 0);
  return numberFormat(ctx.locale, { style: 'percent', minimumFractionDigits: digits, maximumFractionDigits: digits }).format(n);
};

// Pattern letters (Unicode/LDML subset) mapped onto Intl parts, so names and digits are localized.
const DATE_TOKEN = /'([^']*)'|yyyy|yy|MMMM|MMM|MM|M|dd|d|EEEE|EEE|HH|H|hh|h|mm|m|ss|s|a|[^']/g;

function partsOf(d: Date, ctx: FilterContext, opts: Intl.DateTimeFormatOptions): Map<string, string> {
  const m = new Map<string, string>();
  for (const p of dateFormat(ctx.locale, { ...opts, timeZone: ctx.timezone }).formatToParts(d)) m.set(p.type, p.value);
  return m;
}

function formatPattern(d: Date, pattern: string, ctx: FilterContext): string {
  let out = '';
  for (const m of pattern.matchAll(DATE_TOKEN)) {
    const tok = m[0];
    if (m[1] !== undefined) {
      out += m[1] === '' ? "'" : m[1];
      continue;
    }
    switch (tok) {
      case 'yyyy':
        out += partsOf(d, ctx, { year: 'numeric' }).get('year') ?? '';
        break;
      case 'yy':
        out += partsOf(d, ctx, { year: '2-digit' }).get('year') ?? '';
        break;
      case 'MMMM':
        out += partsOf(d, ctx, { month: 'long' }).get('month') ?? '';
        break;
      case 'MMM':
        out += partsOf(d, ctx, { month: 'short' }).get('month') ?? '';
        break;
      case 'MM':
        out += partsOf(d, ctx, { month: '2-digit' }).get('month') ?? '';
        break;
      case 'M':
        out += partsOf(d, ctx, { month: 'numeric' }).get('month') ?? '';
        break;
      case 'dd':
        out += partsOf(d, ctx, { day: '2-digit' }).get('day') ?? '';
        break;
      case 'd':
        out += partsOf(d, ctx, { day: 'numeric' }).get('day') ?? '';
        break;
      case 'EEEE':
        out += partsOf(d, ctx, { weekday: 'long' }).get('weekday') ?? '';
        break;
      case 'EEE':
        out += partsOf(d, ctx, { weekday: 'short' }).get('weekday') ?? '';
        break;
      case 'HH':
        out += (partsOf(d, ctx, { hour: '2-digit', hourCycle: 'h23' }).get('hour') ?? '').padStart(2, '0');
        break;
      case 'H':
        out += String(Number(partsOf(d, ctx, { hour: 'numeric', hourCycle: 'h23' }).get('hour') ?? ''));
        break;
      case 'hh':
        out += (partsOf(d, ctx, { hour: '2-digit', hourCycle: 'h12' }).get('hour') ?? '').padStart(2, '0');
        break;
      case 'h':
        out += String(Number(partsOf(d, ctx, { hour: 'numeric', hourCycle: 'h12' }).get('hour') ?? ''));
        break;
      case 'mm':
        out += (partsOf(d, ctx, { minute: '2-digit' }).get('minute') ?? '').padStart(2, '0');
        break;
      case 'm':
        out += String(Number(partsOf(d, ctx, { minute: 'numeric' }).get('minute') ?? ''));
        break;
      case 'ss':
        out += (partsOf(d, ctx, { second: '2-digit' }).get('second') ?? '').padStart(2, '0');
        break;
      case 's':
        out += String(Number(partsOf(d, ctx, { second: 'numeric' }).get('second') ?? ''));
        break;
      case 'a':
        out += partsOf(d, ctx, { hour: 'numeric', hourCycle: 'h12' }).get('dayPeriod') ?? '';
        break;
      default:
        out += tok;
    }
  }
  return out;
}

const STYLES = new Set(['full', 'long', 'medium', 'short']);

// A date without a time (or a time without a zone) is a calendar/wall-clock value: shown as written,
// never shifted into the document's time zone.
const FLOATING_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3})\d*)?)?)?$/;

function floatingDate(v: unknown): Date | undefined {
  if (typeof v !== 'string') return undefined;
  const m = FLOATING_DATE.exec(v.trim());
  if (!m) return undefined;
  const d = new Date(
    Date.UTC(
      Number(m[1]),
      Number(m[2]) - 1,
      Number(m[3]),
      Number(m[4] ?? 0),
      Number(m[5] ?? 0),
      Number(m[6] ?? 0),
      Number((m[7] ?? '0').padEnd(3, '0')),
    ),
  );
  return Number.isNaN(d.getTime()) ? undefined : d;
}

const date: Filter = (input, args, context) => {
  const floating = floatingDate(input);
  const d = floating ?? toDate(input);
  if (d === undefined) return input;
  const ctx = floating === undefined ? context : { ...context, timezone: 'UTC' };
  const pattern = args[0];
  if (pattern === undefined || pattern === null) return dateFormat(ctx.locale, { dateStyle: 'medium', timeZone: ctx.timezone }).format(d);
  if (typeof pattern !== 'string') throw new FilterError('date: the format must be a string');
  if (STYLES.has(pattern)) return dateFormat(ctx.locale, { dateStyle: pattern as 'full', timeZone: ctx.timezone }).format(d);
  return formatPattern(d, pattern, ctx);
};

const fieldOf = (item: unknown, field: unknown): unknown => {
  if (typeof field !== 'string' || field === '') return item;
  if (item === null || typeof item !== 'object' || !Object.hasOwn(item, field)) return undefined;
  if (field === '__proto__' || field === 'constructor' || field === 'prototype') return undefined;
  return (item as Record<string, unknown>)[field];
};

const sum: Filter = (input, args) => {
  if (!Array.isArray(input)) return toNumber(input) ?? 0;
  let total = 0;
  for (const item of input) total += toNumber(fieldOf(item, args[0])) ?? 0;
  // Binary floating point turns 0.1+0.2 into 0.30000000000000004; money sums should not show that.
  return Math.round(total * 1e9) / 1e9;
};

function sizeArg(a: unknown, fallback: number, name: string): number {
  if (a === undefined || a === null) return fallback;
  const n = toNumber(a);
  if (n === undefined || !Number.isFinite(n) || n < 10 || n > 2000)
    throw new FilterError(`${name}: the size must be a number of pixels between 10 and 2000`);
  return n;
}

/** `{%url | qrcode[:size]}`, `{%sku | code128[:height]}`, `{%gtin | ean13[:height]}`: image values. */
function barcodeFilter(name: string, make: (text: string, size: number) => BarcodeImage, fallback: number): Filter {
  return (input, args) => {
    if (input === undefined || input === null || input === '') return input;
    try {
      return make(toText(input), sizeArg(args[0], fallback, name));
    } catch (e) {
      if (e instanceof BarcodeError) throw new FilterError(`${name}: ${e.message}`);
      throw e;
    }
  };
}

export const FILTERS: Record<string, Filter> = Object.assign(Object.create(null) as Record<string, Filter>, {
  qrcode: barcodeFilter('qrcode', (t, s) => qrCode(t, s), 150),
  code128: barcodeFilter('code128', (t, s) => linearCode('code128', t, s), 60),
  ean13: barcodeFilter('ean13', (t, s) => linearCode('ean13', t, s), 60),
  currency,
  number,
  percent,
  date,
  upper: ((input, _args, ctx) => toText(input).toLocaleUpperCase(ctx.locale)) satisfies Filter,
  lower: ((input, _args, ctx) => toText(input).toLocaleLowerCase(ctx.locale)) satisfies Filter,
  capitalize: ((input, _args, ctx) => {
    const s = toText(input);
    return s.charAt(0).toLocaleUpperCase(ctx.locale) + s.slice(1);
  }) satisfies Filter,
  trim: ((input) => toText(input).trim()) satisfies Filter,
  default: ((input, args) => (input === undefined || input === null || input === '' ? args[0] : input)) satisfies Filter,
  sum,
  count: ((input) => (Array.isArray(input) ? input.length : input === undefined || input === null ? 0 : 1)) satisfies Filter,
  join: ((input, args) => {
    const sep = args[0] === undefined ? ', ' : toText(args[0]);
    return Array.isArray(input) ? input.map(toText).join(sep) : toText(input);
  }) satisfies Filter,
  round: ((input, args) => {
    const n = toNumber(input);
    if (n === undefined) return input;
    const f = 10 ** (digitsArg(args[0], 0) ?? 0);
    return Math.round(n * f) / f;
  }) satisfies Filter,
  abs: ((input) => {
    const n = toNumber(input);
    return n === undefined ? input : Math.abs(n);
  }) satisfies Filter,
  first: ((input) => (Array.isArray(input) ? (input as unknown[])[0] : input)) satisfies Filter,
  last: ((input) => (Array.isArray(input) ? (input as unknown[])[input.length - 1] : input)) satisfies Filter,
});
