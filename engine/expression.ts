import { FILTERS } from './filters.ts';
import type { FilterContext } from './filters.ts';

/**
 * The tag expression language: literals, scope paths, operators, ternary and `| filter:arg`.
 * It is interpreted over an AST we build ourselves: there is no path from a template to JavaScript
 * evaluation, no function calls, and property reads only see own properties of data values, so
 * prototypes and constructors are unreachable by construction.
 */

export type Expr =
  | { t: 'lit'; v: unknown }
  | { t: 'id'; name: string }
  | { t: 'this' }
  | { t: 'member'; obj: Expr; prop: string }
  | { t: 'index'; obj: Expr; index: Expr }
  | { t: 'unary'; op: string; a: Expr }
  | { t: 'binary'; op: string; a: Expr; b: Expr }
  | { t: 'cond'; c: Expr; a: Expr; b: Expr }
  | { t: 'array'; items: Expr[] }
  | { t: 'filter'; name: string; input: Expr; args: Expr[] };

export class ExpressionError extends Error {
  readonly id: string;
  readonly offset: number;
  constructor(id: string, message: string, offset: number) {
    super(message);
    this.id = id;
    this.offset = offset;
  }
}

type Tok =
  | { k: 'num'; v: number; p: number }
  | { k: 'str'; v: string; p: number }
  | { k: 'id'; v: string; p: number }
  | { k: 'op'; v: string; p: number }
  | { k: 'end'; p: number };

const OPS3 = ['===', '!=='];
const OPS2 = ['==', '!=', '<=', '>=', '&&', '||', '??'];
const OPS1 = '+-*/%<>!?:|()[].,';
const QUOTES: Record<string, string> = { '"': '"', "'": "'", '\u201c': '\u201d', '\u2018': '\u2019', '\u201e': '\u201c' };

function isIdStart(c: string): boolean {
  return /[\p{L}_$]/u.test(c);
}
function isIdPart(c: string): boolean {
  return /[\p{L}\p{N}_$]/u.test(c);
}

function lex(src: string): Tok[] {
  const toks: Tok[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i] ?? '';
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    const start = i;
    if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(src[i + 1] ?? ''))) {
      const m = /^(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/.exec(src.slice(i));
      const text = m?.[0] ?? c;
      toks.push({ k: 'num', v: Number(text), p: start });
      i += text.length;
      continue;
    }
    const close = QUOTES[c];
    if (close !== undefined) {
      let v = '';
      i++;
      for (;;) {
        if (i >= src.length) throw new ExpressionError('expression_syntax', 'unterminated string literal', start);
        const d = src[i] ?? '';
        if (d === close || (close !== c && d === c && c !== '\u201e')) {
          i++;
          break;
        }
        if (d === '\\' && i + 1 < src.length) {
          const e = src[i + 1] ?? '';
          v += e === 'n' ? '\n' : e === 't' ? '\t' : e;
          i += 2;
          continue;
        }
        v += d;
        i++;
      }
      toks.push({ k: 'str', v, p: start });
      continue;
    }
    if (isIdStart(c)) {
      let j = i + 1;
      while (j < src.length && isIdPart(src[j] ?? '')) j++;
      toks.push({ k: 'id', v: src.slice(i, j), p: start });
      i = j;
      continue;
    }
    const three = src.slice(i, i + 3);
    const two = src.slice(i, i + 2);
    if (OPS3.includes(three)) {
      toks.push({ k: 'op', v: three, p: start });
      i += 3;
    } else if (OPS2.includes(two)) {
      toks.push({ k: 'op', v: two, p: start });
      i += 2;
    } else if (OPS1.includes(c)) {
      toks.push({ k: 'op', v: c, p: start });
      i++;
    } else {
      throw new ExpressionError('expression_syntax', `unexpected character ${JSON.stringify(c)}`, start);
    }
  }
  toks.push({ k: 'end', p: src.length });
  return toks;
}

const BINARY_PREC: Record<string, number> = {
  '??': 1,
  '||': 2,
  '&&': 3,
  '==': 4,
  '!=': 4,
  '===': 4,
  '!==': 4,
  '<': 5,
  '>': 5,
  '<=': 5,
  '>=': 5,
  '+': 6,
  '-': 6,
  '*': 7,
  '/': 7,
  '%': 7,
};

const KEYWORDS: Record<string, unknown> = { true: true, false: false, null: null, undefined };

class Parser {
  private pos = 0;
  private readonly toks: Tok[];
  private depth = 0;

  constructor(toks: Tok[]) {
    this.toks = toks;
  }

  private peek(): Tok {
    return this.toks[this.pos] ?? { k: 'end', p: 0 };
  }
  private next(): Tok {
    const t = this.peek();
    this.pos++;
    return t;
  }
  private isOp(v: string): boolean {
    const t = this.peek();
    return t.k === 'op' && t.v === v;
  }
  private expectOp(v: string): void {
    const t = this.next();
    if (t.k !== 'op' || t.v !== v) throw new ExpressionError('expression_syntax', `expected '${v}'`, t.p);
  }

  parseAll(): Expr {
    const e = this.filterChain();
    const t = this.peek();
    if (t.k !== 'end') throw new ExpressionError('expression_syntax', `unexpected ${describe(t)}`, t.p);
    return e;
  }

  private filterChain(): Expr {
    let e = this.ternary();
    while (this.isOp('|')) {
      this.next();
      const name = this.next();
      if (name.k !== 'id') throw new ExpressionError('expression_syntax', 'expected a filter name after |', name.p);
      if (!Object.hasOwn(FILTERS, name.v)) throw new ExpressionError('unknown_filter', `unknown filter "${name.v}"`, name.p);
      const args: Expr[] = [];
      while (this.isOp(':')) {
        this.next();
        args.push(this.ternary());
      }
      e = { t: 'filter', name: name.v, input: e, args };
    }
    return e;
  }

  private ternary(): Expr {
    const c = this.binary(0);
    if (!this.isOp('?')) return c;
    this.next();
    const a = this.ternary();
    this.expectOp(':');
    const b = this.ternary();
    return { t: 'cond', c, a, b };
  }

  private binary(minPrec: number): Expr {
    let left = this.unary();
    for (;;) {
      const t = this.peek();
      if (t.k !== 'op') break;
      const prec = BINARY_PREC[t.v];
      if (prec === undefined || prec <= minPrec) break;
      this.next();
      const right = this.binary(prec);
      left = { t: 'binary', op: t.v, a: left, b: right };
    }
    return left;
  }

  private unary(): Expr {
    const t = this.peek();
    if (t.k === 'op' && (t.v === '!' || t.v === '-' || t.v === '+')) {
      this.next();
      if (++this.depth > 200) throw new ExpressionError('expression_syntax', 'expression nested too deeply', t.p);
      const a = this.unary();
      this.depth--;
      return { t: 'unary', op: t.v, a };
    }
    return this.postfix(this.primary());
  }

  private postfix(e: Expr): Expr {
    for (;;) {
      if (this.isOp('.')) {
        this.next();
        const name = this.next();
        if (name.k !== 'id') throw new ExpressionError('expression_syntax', 'expected a property name after .', name.p);
        e = { t: 'member', obj: e, prop: name.v };
      } else if (this.isOp('[')) {
        this.next();
        const index = this.filterChain();
        this.expectOp(']');
        e = { t: 'index', obj: e, index };
      } else if (this.isOp('(')) {
        throw new ExpressionError('expression_syntax', 'function calls are not allowed in expressions', this.peek().p);
      } else {
        return e;
      }
    }
  }

  private primary(): Expr {
    const t = this.next();
    if (++this.depth > 200) throw new ExpressionError('expression_syntax', 'expression nested too deeply', t.p);
    try {
      switch (t.k) {
        case 'num':
        case 'str':
          return { t: 'lit', v: t.v };
        case 'id':
          if (Object.hasOwn(KEYWORDS, t.v)) return { t: 'lit', v: KEYWORDS[t.v] };
          if (t.v === 'this') return { t: 'this' };
          return { t: 'id', name: t.v };
        case 'op':
          if (t.v === '(') {
            const e = this.filterChain();
            this.expectOp(')');
            return e;
          }
          if (t.v === '[') {
            const items: Expr[] = [];
            if (!this.isOp(']')) {
              for (;;) {
                items.push(this.ternary());
                if (!this.isOp(',')) break;
                this.next();
              }
            }
            this.expectOp(']');
            return { t: 'array', items };
          }
          if (t.v === '.') return { t: 'this' };
          throw new ExpressionError('expression_syntax', `unexpected ${describe(t)}`, t.p);
        case 'end':
          throw new ExpressionError('expression_syntax', 'unexpected end of expression', t.p);
      }
    } finally {
      this.depth--;
    }
  }
}

function describe(t: Tok): string {
  switch (t.k) {
    case 'end':
      return 'end of expression';
    case 'num':
      return `number ${t.v}`;
    case 'str':
      return `string ${JSON.stringify(t.v)}`;
    case 'id':
      return `name "${t.v}"`;
    case 'op':
      return `'${t.v}'`;
  }
}

export function parseExpression(src: string): Expr {
  if (src.length > 2000) throw new ExpressionError('expression_syntax', 'expression is too long', 0);
  const trimmed = src.trim();
  // `{.}` is the current item, as in docxtemplater.
  if (trimmed === '.' || trimmed === '') return { t: 'this' };
  return new Parser(lex(trimmed)).parseAll();
}

// ---- evaluation ----

const FORBIDDEN = new Set([
  '__proto__',
  'constructor',
  'prototype',
  '__defineGetter__',
  '__defineSetter__',
  '__lookupGetter__',
  '__lookupSetter__',
]);

/** Own-property read; anything that would walk a prototype chain or reach code is undefined. */
export function getProp(obj: unknown, key: unknown): unknown {
  if (obj === null || obj === undefined) return undefined;
  if (typeof key !== 'string' && typeof key !== 'number') return undefined;
  const k = String(key);
  if (FORBIDDEN.has(k)) return undefined;
  if (typeof obj === 'string') {
    if (k === 'length') return obj.length;
    return /^\d+$/.test(k) ? obj[Number(k)] : undefined;
  }
  if (typeof obj !== 'object') return undefined;
  if (obj instanceof Map) return obj.has(k) ? safeValue(obj.get(k)) : undefined;
  if (!Object.hasOwn(obj, k)) return undefined;
  return safeValue((obj as Record<string, unknown>)[k]);
}

function safeValue(v: unknown): unknown {
  return typeof v === 'function' || typeof v === 'symbol' ? undefined : v;
}

/** A scope chain: innermost last. Names resolve innermost-first, like docxtemplater loops. */
export type Scopes = readonly unknown[];

/**
 * A name present but null (or undefined) in an inner scope falls back to the outer scopes, as in
 * docxtemplater; null when no scope has a value but one has the name as null.
 */
export function lookup(scopes: Scopes, name: string): unknown {
  if (FORBIDDEN.has(name)) return undefined;
  let found: null | undefined;
  for (let i = scopes.length - 1; i >= 0; i--) {
    const s = scopes[i];
    if (s !== null && typeof s === 'object') {
      let v: unknown;
      if (s instanceof Map) {
        if (!s.has(name)) continue;
        v = safeValue(s.get(name));
      } else if (Object.hasOwn(s, name)) {
        v = safeValue((s as Record<string, unknown>)[name]);
      } else continue;
      if (v !== null && v !== undefined) return v;
      if (v === null) found = null;
    }
  }
  return found;
}

function toNum(v: unknown): number {
  if (v === undefined || v === null || v === '') return 0;
  if (typeof v === 'number') return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'string') return Number(v);
  if (v instanceof Date) return v.getTime();
  return NaN;
}

function isPrimitive(v: unknown): boolean {
  return v === null || (typeof v !== 'object' && typeof v !== 'function');
}

function looseEquals(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if ((a === null || a === undefined) && (b === null || b === undefined)) return true;
  if (a instanceof Date && b instanceof Date) return a.getTime() === b.getTime();
  if (!isPrimitive(a) || !isPrimitive(b) || a === null || b === null || a === undefined || b === undefined) return false;
  // Data often carries numbers as strings ("1000" == 1000 should hold in a template).
  if (typeof a === typeof b) return false;
  const x = typeof a === 'string' ? (a.trim() === '' ? 0 : Number(a)) : Number(a);
  const y = typeof b === 'string' ? (b.trim() === '' ? 0 : Number(b)) : Number(b);
  return x === y;
}

function compare(a: unknown, b: unknown, op: string): boolean {
  let x: unknown = a instanceof Date ? a.getTime() : a;
  let y: unknown = b instanceof Date ? b.getTime() : b;
  if (!(typeof x === 'string' && typeof y === 'string')) {
    x = toNum(x);
    y = toNum(y);
  }
  const xs = x as number | string;
  const ys = y as number | string;
  switch (op) {
    case '<':
      return xs < ys;
    case '>':
      return xs > ys;
    case '<=':
      return xs <= ys;
    default:
      return xs >= ys;
  }
}

export function evaluate(e: Expr, scopes: Scopes, ctx: FilterContext): unknown {
  switch (e.t) {
    case 'lit':
      return e.v;
    case 'id':
      return lookup(scopes, e.name);
    case 'this':
      return scopes[scopes.length - 1];
    case 'member':
      return getProp(evaluate(e.obj, scopes, ctx), e.prop);
    case 'index': {
      const obj = evaluate(e.obj, scopes, ctx);
      return getProp(obj, evaluate(e.index, scopes, ctx));
    }
    case 'array':
      return e.items.map((x) => evaluate(x, scopes, ctx));
    case 'unary': {
      const a = evaluate(e.a, scopes, ctx);
      if (e.op === '!') return !truthy(a);
      return e.op === '-' ? -toNum(a) : toNum(a);
    }
    case 'cond':
      return truthy(evaluate(e.c, scopes, ctx)) ? evaluate(e.a, scopes, ctx) : evaluate(e.b, scopes, ctx);
    case 'filter': {
      const fn = FILTERS[e.name];
      if (fn === undefined) throw new ExpressionError('unknown_filter', `unknown filter "${e.name}"`, 0);
      const input = evaluate(e.input, scopes, ctx);
      const args = e.args.map((a) => evaluate(a, scopes, ctx));
      return fn(input, args, ctx);
    }
    case 'binary': {
      const op = e.op;
      if (op === '&&') {
        const a = evaluate(e.a, scopes, ctx);
        return truthy(a) ? evaluate(e.b, scopes, ctx) : a;
      }
      if (op === '||') {
        const a = evaluate(e.a, scopes, ctx);
        return truthy(a) ? a : evaluate(e.b, scopes, ctx);
      }
      if (op === '??') {
        const a = evaluate(e.a, scopes, ctx);
        return a === null || a === undefined ? evaluate(e.b, scopes, ctx) : a;
      }
      const a = evaluate(e.a, scopes, ctx);
      const b = evaluate(e.b, scopes, ctx);
      switch (op) {
        case '+':
          if (typeof a === 'string' || typeof b === 'string') return plainString(a) + plainString(b);
          return toNum(a) + toNum(b);
        case '-':
          return toNum(a) - toNum(b);
        case '*':
          return toNum(a) * toNum(b);
        case '/':
          return toNum(a) / toNum(b);
        case '%':
          return toNum(a) % toNum(b);
        case '==':
          return looseEquals(a, b);
        case '!=':
          return !looseEquals(a, b);
        case '===':
          return a === b;
        case '!==':
          return a !== b;
        default:
          return compare(a, b, op);
      }
    }
  }
}

function plainString(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  return v instanceof Date ? v.toISOString() : '';
}

/** docxtemplater's section truthiness: empty arrays are false as well as JS falsy values. */
export function truthy(v: unknown): boolean {
  if (Array.isArray(v)) return v.length > 0;
  return Boolean(v);
}
