// Batch name and path patterns (engine/text-pattern.ts): template tags and filters over one row.
import { describe, expect, it } from 'vitest';
import { compileTextPattern, TemplateError } from '../../../engine/text-pattern.ts';

const ctx = { locale: 'en-GB', timezone: 'Europe/London' };

describe('compileTextPattern', () => {
  it('renders fields, nested fields and filters of a row', () => {
    const p = compileTextPattern('Invoice {number} - {customer.name | upper} {date | date:"yyyy-MM"}', 'document.name');
    expect(p.hasTags).toBe(true);
    expect(p.render({ number: 'A-7', customer: { name: 'Acme' }, date: '2026-03-04T10:00:00Z' }, ctx)).toBe('Invoice A-7 - ACME 2026-03');
    expect(compileTextPattern('invoice', 'document.name').hasTags).toBe(false);
    expect(compileTextPattern('root/{region}', 'document.path').render({}, ctx)).toBe('root/');
  });

  it('refuses, all at once, tags that are not plain fields and tags that do not parse', () => {
    let err: unknown;
    try {
      compileTextPattern('{#items}x{/items} {a +} {', 'document.name');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TemplateError);
    const messages = (err as TemplateError).errors.map((e) => e.message);
    expect(messages[0]).toBe('document.name: tag "#items" must be a plain field (such as {number} or {date | date:\'YYYY-MM\'})');
    expect(messages.some((m) => m.startsWith('document.name: tag "a +"'))).toBe(true);
    expect(messages.at(-1)).toContain('is never closed');
  });

  it('fails a row whose value a filter cannot format, and a missing value when strict', () => {
    const p = compileTextPattern('{total | round:99}', 'document.name');
    expect(() => p.render({ total: 1.5 }, ctx)).toThrow(TemplateError);
    expect(() => compileTextPattern('{id}', 'document.name').render({}, { ...ctx, strict: true })).toThrow(
      'document.name: no value for tag "id"',
    );
  });
});
