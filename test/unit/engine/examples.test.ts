import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readRows } from '../../../cli/batch.ts';
import { render } from '../../support/engine.ts';
import { keepOutput } from '../../support/office-outputs.ts';
import { docText } from './helpers.ts';

// The examples users try first: each template with its data renders, and the templates and the documents
// are kept for schema validation (DOCGEN_TEST_OUTPUTS), like every output of the tests.

const dir = path.join(import.meta.dirname, '..', '..', '..', 'examples');
const cases: Array<[string, () => unknown[]]> = [
  ['invoice.docx', () => [JSON.parse(fs.readFileSync(path.join(dir, 'invoice.json'), 'utf8'))]],
  ['monthly-report.xlsx', () => [JSON.parse(fs.readFileSync(path.join(dir, 'monthly-report.json'), 'utf8'))]],
  ['products.pptx', () => [JSON.parse(fs.readFileSync(path.join(dir, 'products.json'), 'utf8'))]],
  ['reminder.docx', () => readRows(path.join(dir, 'customers.csv'))],
];

describe('examples/', () => {
  it.each(cases)('%s renders with its data', async (name, data) => {
    const template = new Uint8Array(fs.readFileSync(path.join(dir, name)));
    keepOutput(template, `example-template-${name}`);
    for (const row of data()) {
      const out = await render(template, row);
      expect(out.byteLength).toBeGreaterThan(0);
    }
  });

  it('the invoice says who it is for', async () => {
    const out = await render(
      new Uint8Array(fs.readFileSync(path.join(dir, 'invoice.docx'))),
      JSON.parse(fs.readFileSync(path.join(dir, 'invoice.json'), 'utf8')),
    );
    expect(docText(out).join('\n')).toContain('INV-2026-0117');
  });
});
