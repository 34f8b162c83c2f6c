// Decimal arithmetic for invoice amounts: a value is a bigint of units of 10^-scale, never a binary float.
// EN 16931 amounts have two decimals (BR-DEC-*); quantities, prices and rates may have more. Rounding is
// half away from zero, as the standard's calculation rules and the Schematron's round() do.

export interface Dec {
  /** The value times 10^scale. */
  readonly units: bigint;
  readonly scale: number;
}

const DECIMAL = /^([+-]?)(\d+)(?:\.(\d+))?$/;

/** A decimal from its text ("12.50", "-3", "0.125"), or undefined when it is not one. JSON numbers are
 *  read from their shortest text (String(n)), which is the literal as written for up to 15 digits; an
 *  exponent (1e21, 1e-7) is refused. */
export function parseDec(v: unknown): Dec | undefined {
  const text = typeof v === 'number' ? (Number.isFinite(v) ? String(v) : '') : typeof v === 'string' ? v.trim() : '';
  const m = DECIMAL.exec(text);
  if (!m) return undefined;
  const frac = m[3] ?? '';
  const units = BigInt(`${m[2]}${frac}`) * (m[1] === '-' ? -1n : 1n);
  return { units, scale: frac.length };
}

export function dec(text: string): Dec {
  const d = parseDec(text);
  if (!d) throw new Error(`not a decimal: ${text}`);
  return d;
}

export const ZERO: Dec = { units: 0n, scale: 0 };

function rescale(a: Dec, scale: number): bigint {
  return a.units * 10n ** BigInt(scale - a.scale);
}

export function add(a: Dec, b: Dec): Dec {
  const scale = Math.max(a.scale, b.scale);
  return { units: rescale(a, scale) + rescale(b, scale), scale };
}

export function sub(a: Dec, b: Dec): Dec {
  return add(a, neg(b));
}

export function neg(a: Dec): Dec {
  return { units: -a.units, scale: a.scale };
}

export function mul(a: Dec, b: Dec): Dec {
  return { units: a.units * b.units, scale: a.scale + b.scale };
}

/** a / b rounded half away from zero to `scale` decimals. */
export function div(a: Dec, b: Dec, scale: number): Dec {
  if (b.units === 0n) throw new Error('division by zero');
  // a/b = (a.units / 10^a.scale) / (b.units / 10^b.scale); times 10^(scale+1) to round on the extra digit.
  const num = a.units * 10n ** BigInt(b.scale + scale + 1);
  const den = b.units * 10n ** BigInt(a.scale);
  return round({ units: num / den, scale: scale + 1 }, scale);
}

/** Rounded half away from zero to `scale` decimals (or extended to them). */
export function round(a: Dec, scale: number): Dec {
  if (a.scale <= scale) return { units: rescale(a, scale), scale };
  const f = 10n ** BigInt(a.scale - scale);
  const q = a.units / f;
  const r = a.units % f;
  const abs = r < 0n ? -r : r;
  const up = abs * 2n >= f ? (a.units < 0n ? -1n : 1n) : 0n;
  return { units: q + up, scale };
}

export function cmp(a: Dec, b: Dec): number {
  const scale = Math.max(a.scale, b.scale);
  const x = rescale(a, scale);
  const y = rescale(b, scale);
  return x < y ? -1 : x > y ? 1 : 0;
}

export const eq = (a: Dec, b: Dec): boolean => cmp(a, b) === 0;
export const isNegative = (a: Dec): boolean => a.units < 0n;
export const isZero = (a: Dec): boolean => a.units === 0n;

export function sum(values: readonly Dec[]): Dec {
  return values.reduce(add, ZERO);
}

/** The text of a decimal with exactly `scale` decimals (rounded): `fixed(x, 2)` for amounts. */
export function fixed(a: Dec, scale: number): string {
  const r = round(a, scale);
  const negative = r.units < 0n;
  const digits = (negative ? -r.units : r.units).toString().padStart(scale + 1, '0');
  const int = digits.slice(0, digits.length - scale);
  const frac = digits.slice(digits.length - scale);
  return `${negative ? '-' : ''}${int}${scale > 0 ? `.${frac}` : ''}`;
}

/** The shortest text of a decimal (no trailing zeros): quantities and rates ("2", "19", "7.5"). */
export function plain(a: Dec): string {
  let { units, scale } = a;
  while (scale > 0 && units % 10n === 0n) {
    units /= 10n;
    scale--;
  }
  return fixed({ units, scale }, scale);
}
