import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { inspect, render, TemplateError, templateCacheStats } from '../../support/engine.ts';
import { docText, docx, p, table, unzipText } from './helpers.ts';

describe('render options', () => {
  it('exposes global and fieldExpression variables; data names win', async () => {
    const out = await render(
      docx(p('{company} {net} {a}')),
      { a: 'data', price: 10, qty: 3 },
      {
        variables: [
          { name: 'company', value: 'ACME', type: 'global' },
          { name: 'net', value: 'price * qty', type: 'fieldExpression' },
          { name: 'a', value: 'variable', type: 'global' },
        ],
      },
    );
    expect(docText(out)).toEqual(['ACME 30 data']);
    const err = await render(docx(p('{x}')), {}, { variables: [{ name: 'bad', value: 'a +', type: 'fieldExpression' }] }).catch(
      (e: unknown) => e,
    );
    expect((err as TemplateError).errors.map((e) => e.id)).toEqual(['invalid_variable']);
  });

  it('uses locale and timezone in filters', async () => {
    const out = await render(
      docx(p('{n | number:2} {d | date:"dd.MM.yyyy HH:mm"}')),
      { n: 1234.5, d: '2024-01-31T23:30:00Z' },
      { locale: 'de-DE', timezone: 'Europe/Berlin' },
    );
    expect(docText(out)).toEqual(['1.234,50 01.02.2024 00:30']);
    for (const bad of [{ locale: 'not a locale!' }, { timezone: 'Mars/Base' }, { delimiters: { start: '', end: '}' } }]) {
      const err = await render(docx(p('x')), {}, bad).catch((e: unknown) => e);
      expect(err, JSON.stringify(bad)).toBeInstanceOf(TemplateError);
    }
  });

  it('writes embedded metadata to docProps/custom.xml from JSON text or an object', async () => {
    const out = await render(docx(p('x')), {}, { embedded: '{"CaseId":"C-1 & 2","Pages":3,"Signed":true}' });
    const files = unzipText(out);
    const custom = files.get('docProps/custom.xml') ?? '';
    expect(custom).toContain('name="CaseId"><vt:lpwstr>C-1 &amp; 2</vt:lpwstr>');
    expect(custom).toContain('name="Pages"><vt:i4>3</vt:i4>');
    expect(custom).toContain('name="Signed"><vt:bool>true</vt:bool>');
    expect(files.get('[Content_Types].xml')).toContain('PartName="/docProps/custom.xml"');
    expect(files.get('_rels/.rels')).toContain('Target="docProps/custom.xml"');
    const err = await render(docx(p('x')), {}, { embedded: '{not json' }).catch((e: unknown) => e);
    expect((err as TemplateError).errors.map((e) => e.id)).toEqual(['invalid_embedded']);
  });

  it('caches compiled templates by content', async () => {
    const tpl = docx(p('cache {me}'));
    await render(tpl, { me: 1 });
    const before = templateCacheStats().entries;
    await render(Uint8Array.from(tpl), { me: 2 });
    expect(templateCacheStats().entries).toBe(before);
    expect(docText(await render(tpl, { me: 3 }))).toEqual(['cache 3']);
  });

  it('caches a template that carries megabytes of images (its cost is its bytes and inflated XML, not eight times its size)', async () => {
    // A stored 3 MB part (an image's bytes do not compress): the package is about 3 MB.
    const image = new Uint8Array(randomBytes(3 * 1024 * 1024));
    const tpl = docx(p('logo {me}'), { 'word/media/logo.bin': image });
    await render(tpl, { me: 1 });
    const before = templateCacheStats();
    expect(docText(await render(tpl, { me: 2 }))).toEqual(['logo 2']);
    expect(templateCacheStats()).toEqual(before);
    expect(before.bytes).toBeGreaterThan(3 * 1024 * 1024);
  });
});

describe('inspect', () => {
  it('lists tags, loops and includes with locations', () => {
    const tpl = docx(p('{name}') + table([['{#items}{a | upper}', '{b}{/items}']]) + p('{>footer}') + p('{^empty}none{/empty}'));
    const r = inspect(tpl);
    expect(r.format).toBe('docx');
    expect(r.errors).toEqual([]);
    expect(r.loops).toEqual(['items', 'empty']);
    expect(r.includes).toEqual(['footer']);
    expect(r.tags.map((t) => `${t.kind}:${t.value}@${t.location.paragraph}`)).toEqual([
      'field:name@1',
      'open:items@2',
      'field:a | upper@2',
      'field:b@3',
      'close:items@3',
      'include:footer@4',
      'inverted:empty@5',
      'close:empty@5',
    ]);
  });

  it('reports every template error with its location instead of throwing', () => {
    const r = inspect(docx(p('ok') + p('{#a}') + p('{b +}') + p('{/c}') + p('{x | nofilter}')));
    expect(r.errors.map((e) => [e.id, e.location?.paragraph])).toEqual([
      ['loop_mismatch', 4],
      ['expression_syntax', 3],
      ['unknown_filter', 5],
    ]);
  });

  it('throws a TemplateError for a package it cannot open', () => {
    expect(() => inspect(new Uint8Array(10))).toThrow(TemplateError);
  });
});
