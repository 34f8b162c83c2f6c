import { describe, expect, it } from 'vitest';
import { evaluate, ExpressionError, parseExpression } from '../../../engine/expression.ts';

const ctx = { locale: 'en-US', timezone: 'UTC' };
const run = (src: string, data: unknown, c = ctx): unknown => evaluate(parseExpression(src), [data], c);

describe('expressions', () => {
  it('evaluates literals, paths, operators and ternaries', () => {
    const data = { a: { b: [10, 20] }, n: 3, s: 'x', t: true };
    expect(run('a.b[1]', data)).toBe(20);
    expect(run('n * 2 + 1', data)).toBe(7);
    expect(run('(n + 1) % 3', data)).toBe(1);
    expect(run('s + "y" + n', data)).toBe('xy3');
    expect(run('n > 2 && t ? "big" : "small"', data)).toBe('big');
    expect(run('!t || n >= 4', data)).toBe(false);
    expect(run('"1000" == 1000', data)).toBe(true);
    expect(run('missing.deep.path', data)).toBe(undefined);
    expect(run('missing ?? "d"', data)).toBe('d');
    expect(run('-n', data)).toBe(-3);
    expect(run('[1, 2][0]', data)).toBe(1);
    expect(run('\u201cquoted\u201d', data)).toBe('quoted');
  });

  it('resolves names in enclosing scopes, innermost first', () => {
    expect(evaluate(parseExpression('name + "/" + company'), [{ company: 'C', name: 'outer' }, { name: 'inner' }], ctx)).toBe('inner/C');
    expect(evaluate(parseExpression('.'), [{}, 'item'], ctx)).toBe('item');
  });

  it('cannot reach prototypes, constructors or functions', () => {
    const data = { o: {}, s: 'str', f: () => 1 };
    for (const src of [
      'constructor',
      'o.constructor',
      'o.__proto__',
      's.constructor',
      'o["constructor"]',
      'o["__proto__"]',
      'toString',
      'o.hasOwnProperty',
      'f',
      's.length.constructor',
      'o.prototype',
    ]) {
      expect(run(src, data), src).toBe(undefined);
    }
    expect(() => parseExpression('o.toString()')).toThrow(ExpressionError);
    expect(() => parseExpression('a = 1')).toThrow(ExpressionError);
  });

  it('reports syntax errors with an offset', () => {
    try {
      parseExpression('a + * b');
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ExpressionError);
      expect((e as ExpressionError).id).toBe('expression_syntax');
      expect((e as ExpressionError).offset).toBe(4);
    }
    expect(() => parseExpression('a | nosuchfilter')).toThrow(/unknown filter "nosuchfilter"/);
  });
});

describe('filters', () => {
  const de = { locale: 'de-DE', timezone: 'Europe/Berlin' };
  it('formats currency, numbers and percentages with Intl and the locale', () => {
    expect(run('amount | currency:"EUR"', { amount: 1234.5 })).toBe(
      new Intl.NumberFormat('en-US', { style: 'currency', currency: 'EUR' }).format(1234.5),
    );
    expect(run('amount | currency:"EUR"', { amount: 1234.5 }, de)).toBe(
      new Intl.NumberFormat('de-DE', { style: 'currency', currency: 'EUR' }).format(1234.5),
    );
    expect(run('n | number:2', { n: 1234.5 })).toBe('1,234.50');
    expect(run('n | number:2', { n: 1234.5 }, de)).toBe('1.234,50');
    expect(run('n | percent', { n: 0.25 })).toBe('25%');
  });

  it('formats dates with a pattern in the document time zone', () => {
    const d = '2024-03-01T23:30:00Z';
    expect(run('d | date:"dd MMM yyyy"', { d })).toBe('01 Mar 2024');
    expect(run('d | date:"dd.MM.yyyy HH:mm"', { d }, de)).toBe('02.03.2024 00:30');
    expect(run('d | date:"EEEE d MMMM"', { d }, de)).toBe('Samstag 2 März');
    expect(run('d | date:"yyyy-MM-dd \'at\' h a"', { d })).toBe('2024-03-01 at 11 PM');
  });

  it('upper, lower, default, sum, count, join', () => {
    const data = { s: 'straße', items: [{ price: 0.1 }, { price: 0.2 }, { price: '3' }], list: ['a', 'b'] };
    expect(run('s | upper', data)).toBe('STRASSE');
    expect(run('"ABC" | lower', data)).toBe('abc');
    expect(run('x | default:"–"', data)).toBe('–');
    expect(run('s | default:"–"', data)).toBe('straße');
    expect(run('items | sum:"price"', data)).toBe(3.3);
    expect(run('items | count', data)).toBe(3);
    expect(run('list | join:", "', data)).toBe('a, b');
    expect(run('items | sum:"price" | number:1', data)).toBe('3.3');
  });

  it('turns Intl failures into filter errors', () => {
    expect(() => run('n | currency:"NOT A CODE"', { n: 1 })).toThrow(/Invalid currency code/i);
  });
});
