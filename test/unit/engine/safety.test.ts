import { deflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { inspect, render, TemplateError } from '../../support/engine.ts';
import { writeZip } from '../../../engine/zip.ts';
import { docx, p, zip } from './helpers.ts';

async function errorOf(promise: Promise<unknown>): Promise<TemplateError> {
  const e = await promise.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(TemplateError);
  return e as TemplateError;
}

const ids = (e: TemplateError): string[] => e.errors.map((x) => x.id);

describe('package safety', () => {
  it('refuses bytes that are not a zip package', async () => {
    expect(ids(await errorOf(render(new Uint8Array([1, 2, 3]), {})))).toEqual(['invalid_package']);
    expect(ids(await errorOf(render(Buffer.from('PK\u0005\u0006'.padEnd(40, '\0')), {})))).toEqual(['invalid_package']);
    expect(ids(await errorOf(render(zip({ 'a.txt': 'hello' }), {})))).toEqual(['invalid_package']);
  });

  it('refuses entry names that escape the package', async () => {
    for (const name of ['../evil.xml', 'word/../../evil.xml', '/etc/passwd', 'C:/x.xml', '..\\x.xml']) {
      const bytes = writeZip([{ name, data: Buffer.from('x') }]);
      expect(ids(await errorOf(render(bytes, {}))), name).toEqual(['unsafe_entry_name']);
    }
  });

  it('refuses any DOCTYPE, in templated and untouched parts alike', async () => {
    const doctype = '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]><x>&a;</x>';
    const e1 = await errorOf(render(docx(p('{a}'), { 'word/settings.xml': doctype }), {}));
    expect(ids(e1)).toEqual(['doctype_forbidden']);
    expect(e1.errors[0]?.location?.part).toBe('word/settings.xml');
    const e2 = await errorOf(render(zip({ '[Content_Types].xml': doctype }), {}));
    expect(ids(e2)).toEqual(['doctype_forbidden']);
  });

  it('refuses macro code even in a docm-style package', async () => {
    const e = await errorOf(render(docx(p('{a}'), { 'word/vbaProject.bin': new Uint8Array([0xd0, 0xcf, 0x11, 0xe0]) }), {}));
    expect(ids(e)).toEqual(['macros_refused']);
  });

  it('enforces zip limits: ratio, declared size, entry count, lying headers', async () => {
    const zeros = new Uint8Array(50 * 1024 * 1024);
    expect(ids(await errorOf(render(docx(p('x'), { 'word/media/bomb.bin': zeros }), {})))).toEqual(['limit_exceeded']);

    const many: Record<string, string> = {};
    for (let i = 0; i < 5001; i++) many[`f${i}.xml`] = '<a/>';
    expect(ids(await errorOf(render(zip(many), {})))).toEqual(['limit_exceeded']);

    // A central directory that under-declares the size: inflation stops at the declared size.
    const good = docx(p('{a}'));
    const buf = Buffer.from(good);
    const cd = buf.indexOf(Buffer.from('PK\u0001\u0002', 'latin1'));
    let at = cd;
    while (at >= 0) {
      const nameLen = buf.readUInt16LE(at + 28);
      const name = buf.toString('utf8', at + 46, at + 46 + nameLen);
      if (name === 'word/document.xml') buf.writeUInt32LE(10, at + 24);
      at = buf.indexOf(Buffer.from('PK\u0001\u0002', 'latin1'), at + 4);
    }
    expect(ids(await errorOf(render(buf, { a: 1 })))).toEqual(['invalid_package']);

    const raw = deflateRawSync(Buffer.alloc(1000));
    expect(raw.length).toBeLessThan(1000);
  });
});

// ---- property-style fuzzing with a seeded generator (fast-check is not available) ----

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ATOMS = [
  'a',
  'b',
  'items',
  'x.y',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'valueOf',
  'this',
  '.',
  '1',
  '2.5',
  '"s"',
  "'q'",
  '"',
  "'",
  '(',
  ')',
  '[',
  ']',
  '+',
  '-',
  '*',
  '/',
  '%',
  '==',
  '!=',
  '===',
  '<',
  '>',
  '<=',
  '>=',
  '&&',
  '||',
  '!',
  '?',
  ':',
  '|',
  'upper',
  'lower',
  'currency',
  'date',
  'number',
  'sum',
  'count',
  'join',
  'default',
  'nofilter',
  '#',
  '^',
  '/',
  '@',
  '%',
  '>',
  ',',
  ' ',
  '{',
  '}',
  'Object',
  'process',
  'globalThis',
  'constructor.constructor',
  '["constructor"]',
  '.__proto__.polluted',
  '= 1',
  '()',
  'new',
  'Function',
  '\\',
  '\n',
  '&',
  '<w:p>',
];

function randomExpr(rnd: () => number): string {
  const n = 1 + Math.floor(rnd() * 8);
  let s = '';
  for (let i = 0; i < n; i++) s += ATOMS[Math.floor(rnd() * ATOMS.length)] ?? '';
  return s;
}

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const protoNames = (): string => Object.getOwnPropertyNames(Object.prototype).sort().join(',');

async function expectCleanOutcome(run: () => Promise<unknown>, label: string): Promise<void> {
  try {
    await run();
  } catch (e) {
    if (!(e instanceof TemplateError)) throw new Error(`${label}: non-template error ${String(e)}`, { cause: e });
    expect(e.errors.length, label).toBeGreaterThan(0);
    for (const entry of e.errors) {
      expect(typeof entry.id, label).toBe('string');
      expect(entry.message.length, label).toBeGreaterThan(0);
    }
  }
}

describe('fuzz: every failure is a clean TemplateError', () => {
  it('random expressions in tags never crash, hang or touch prototypes', async () => {
    const rnd = mulberry32(0xc0ffee);
    const before = protoNames();
    const data = { a: 1, b: 'two', items: [{ price: 1 }, { price: 2 }], x: { y: [1, 2] }, d: '2024-01-01' };
    for (let i = 0; i < 400; i++) {
      const expr = randomExpr(rnd);
      const template = docx(p(`{${esc(expr)}}`) + p(`{#items}{${esc(randomExpr(rnd))}}{/items}`));
      await expectCleanOutcome(() => render(template, data), `expression ${JSON.stringify(expr)}`);
      await expectCleanOutcome(() => Promise.resolve().then(() => inspect(template)), `inspect ${JSON.stringify(expr)}`);
    }
    expect(protoNames()).toBe(before);
    expect(({} as Record<string, unknown>).polluted).toBe(undefined);
  });

  it('mangled zips never crash or hang', async () => {
    const rnd = mulberry32(42);
    const base = docx(p('Hello {name}') + p('{#items}{.}{/items}'));
    for (let i = 0; i < 300; i++) {
      const bytes = Uint8Array.from(base);
      const mode = i % 4;
      if (mode === 0) {
        for (let k = 0; k < 1 + Math.floor(rnd() * 8); k++) bytes[Math.floor(rnd() * bytes.length)] = Math.floor(rnd() * 256);
      }
      const mangled =
        mode === 1
          ? bytes.subarray(0, Math.floor(rnd() * bytes.length))
          : mode === 2
            ? Buffer.concat([
                bytes.subarray(0, 100),
                Buffer.from(Array.from({ length: 64 }, () => Math.floor(rnd() * 256))),
                bytes.subarray(100),
              ])
            : bytes;
      if (mode === 3) {
        // Corrupt bytes inside the central directory, where sizes and offsets live.
        const cd = Buffer.from(bytes).lastIndexOf(Buffer.from('PK\u0001\u0002', 'latin1'));
        if (cd >= 0) bytes[cd + 10 + Math.floor(rnd() * 36)] = Math.floor(rnd() * 256);
      }
      await expectCleanOutcome(() => render(mangled, { name: 'n', items: [1, 2] }), `mangled zip #${i}`);
      await expectCleanOutcome(() => Promise.resolve().then(() => inspect(mangled)), `inspect mangled zip #${i}`);
    }
  });
});

describe('pathological input', () => {
  it('turns cyclic data and absurd nesting into TemplateErrors', async () => {
    const cyclic: unknown[] = [];
    cyclic.push(cyclic);
    await errorOf(render(docx(p('{c}')), { c: cyclic }));
    const depth = 3000;
    const deep = docx(p('{#a}'.repeat(depth) + 'x' + '{/a}'.repeat(depth)));
    const a: Record<string, unknown> = {};
    a['a'] = a;
    await expectCleanOutcome(() => render(deep, a), 'deep nesting');
  });
});
