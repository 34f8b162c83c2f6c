// inferSchema on templates we did not write: every docxtemplater fixture's sample fits its schema and fills
// every tag (the round trip of test/unit/engine/schema.test.ts).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { inferSchema, inspect } from '../../engine/index.ts';
import type { JsonSchema } from '../../engine/index.ts';
import { keepOutput } from '../support/office-outputs.ts';
import { props, roundTrip, validator } from '../unit/engine/schema-helpers.ts';
import { docxtemplaterCorpus as corpus, requireShared } from './corpus.ts';

requireShared();

describe('inferSchema on templates we did not write (docxtemplater fixtures)', () => {
  const cases = JSON.parse(readFileSync(path.join(corpus, 'cases.json'), 'utf8')) as Array<{
    id: string;
    template: string;
    data: unknown;
    options: { delimiters?: { start: string; end: string }; paragraphLoop?: boolean };
  }>;
  const unique = [...new Map(cases.map((c) => [c.template, c])).values()];

  it('has fixtures to read', () => {
    expect(unique.length).toBeGreaterThanOrEqual(40);
  });

  it.each(unique.map((c) => [c.id, c] as const))('%s: the sample fits the schema and fills every tag', async (_id, c) => {
    const template = readFileSync(path.join(corpus, c.template));
    const r = await roundTrip(template, c.options);
    keepOutput(r.output, `schema-${c.id}`, template);
    expect(r.invalid).toEqual([]);
    expect(r.warnings).toEqual([]);
  });

  it('nested loops become arrays of objects holding arrays', () => {
    const c = cases.find((x) => x.id === 'nested-loops-products-fulltext');
    expect(c).toBeDefined();
    const schema = inferSchema(inspect(readFileSync(path.join(corpus, c?.template ?? ''))));
    const products = props(schema).products;
    expect(products?.type).toBe('array');
    const item = products?.items as JsonSchema;
    expect(item.type).toBe('object');
    expect(props(item).avantages?.type).toBe('array');
    // The fixture's own data fits the schema inferred from its template.
    expect(validator(schema)(c?.data)).toEqual([]);
  });
});
