// The Locations table (docs/locations.md) says what each location takes as a template and what generate delivers to
// it: the same as what each location registers (connectors/<name>/index.ts, which the API enforces: spec
// 4.4 rule 2 and 4.8 rules 1 and 3). It once listed docx, xlsx and pptx templates from DriveB, which the API
// refuses.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LOCATION_CATALOG } from '../../../connectors/registry.ts';
import { type GenerateRequest, parseGenerateRequest } from '../../../core/generate.ts';
import { ALL_FORMATS } from '../../../core/formats.ts';
import { entryOf, methodsFor } from '../../../core/locations.ts';

const readme = fs.readFileSync(path.resolve(import.meta.dirname, '../../../docs/locations.md'), 'utf8');

/** The table under "## Locations": header cells, and each row by its first cell. */
function locationsTable(): { columns: string[]; rows: Map<string, string[]> } {
  const section = readme.slice(readme.indexOf('# Locations'));
  const lines = section.split('\n').filter((l) => l.startsWith('|'));
  const cells = (l: string) =>
    l
      .split(/(?<!\\)\|/)
      .slice(1, -1)
      .map((c) => c.trim());
  const [header, , ...body] = lines;
  return { columns: cells(header!), rows: new Map(body.map((l) => [cells(l)[0]!, cells(l)])) };
}

const formatsIn = (cell: string) => ALL_FORMATS.filter((f) => new RegExp(`\\b${f}\\b`).test(cell)).sort();

describe("the README's Locations table", () => {
  const { columns, rows } = locationsTable();
  const column = (m: string) => columns.findIndex((c) => c.startsWith(m));
  const generateMethods = methodsFor(LOCATION_CATALOG, 'generate', 'write');

  it('lists, for each location, the template formats the API accepts from it', () => {
    const row = rows.get('Templates (and `relatedItems`)')!;
    for (const m of methodsFor(LOCATION_CATALOG, 'generate', 'readTemplate')) {
      const expected = [...entryOf(LOCATION_CATALOG, m)!.formats.templates].sort();
      expect(formatsIn(row[column(m)]!), m).toEqual(expected);
    }
    // And the API agrees with the table it is built on: a docx template from DriveB is refused.
    const body = (loadMethod: string, fileFormat: string) =>
      ({
        template: { urn: 'x', loadMethod, fileFormat },
        data: { urn: 'd', loadMethod: 'Storage' },
        document: { name: 'n', fileFormat: 'pdf', deliveryMethod: 'Storage', path: 'root', timezone: 'UTC', locale: 'en-GB' },
      }) as GenerateRequest;
    const problems = (loadMethod: string, fileFormat: string) =>
      parseGenerateRequest(body(loadMethod, fileFormat), LOCATION_CATALOG).problems;
    expect(problems('DriveB', 'docx').map((p) => p.code)).toContain('VALIDATION_ERROR');
    expect(problems('DriveB', 'gdoc')).toEqual([]);
  });

  it('lists, for each location, the formats generate delivers to it', () => {
    const row = rows.get('Generate delivers')!;
    expect(generateMethods).toEqual(['Storage', 'DriveA', 'DriveB']);
    for (const m of generateMethods) {
      const expected = [...entryOf(LOCATION_CATALOG, m)!.formats.writes].sort();
      expect(formatsIn(row[column(m)]!), m).toEqual(expected);
    }
  });
});
