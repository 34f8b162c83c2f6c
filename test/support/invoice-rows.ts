// Rows for batch tests and the batch benchmark: the invoice example (examples/invoice.json) varied per row
// (number, customer, items, dates), so each row's document differs as a real mail merge's would.
import fs from 'node:fs';
import path from 'node:path';
import { repoRoot } from './docgen-start.ts';

export function invoiceRows(n: number): Record<string, unknown>[] {
  const base = JSON.parse(fs.readFileSync(path.join(repoRoot, 'examples', 'invoice.json'), 'utf8')) as Record<string, any>;
  const items = base.items as Record<string, unknown>[];
  return Array.from({ length: n }, (_, i) => {
    const count = 1 + (i % items.length);
    const rowItems = Array.from({ length: count }, (_, k) => items[(i + k) % items.length]!);
    return {
      ...base,
      number: `INV-2026-${String(i + 1).padStart(5, '0')}`,
      issuedOn: `2026-${String(1 + (i % 12)).padStart(2, '0')}-${String(1 + (i % 28)).padStart(2, '0')}`,
      customer: { ...base.customer, name: `Customer ${i + 1} Ltd.` },
      items: rowItems,
    };
  });
}
