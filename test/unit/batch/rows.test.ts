// The batch's row reader (core/rows.ts): every format gives the same rows however the file is cut into
// pieces, and every problem names where it is.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { detectCsvSeparator, parseCsv, readAllRows, type Row, RowReader, RowsError, type RowReaderOptions } from '../../../core/rows.ts';

/** Feeds `text` in pieces cut at `cuts` (positions), as a stream would deliver it. */
function inPieces(text: string, cuts: number[], opts: RowReaderOptions = {}): Row[] {
  const reader = new RowReader(opts);
  const at = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
  const rows: Row[] = [];
  let from = 0;
  for (const c of [...at, text.length]) {
    rows.push(...reader.push(text.slice(from, c)));
    from = c;
  }
  rows.push(...reader.end());
  return rows;
}

const row = fc.record({
  id: fc.integer(),
  name: fc.string(),
  nested: fc.record({ list: fc.array(fc.oneof(fc.string(), fc.integer(), fc.constant(null)), { maxLength: 3 }), text: fc.string() }),
});

describe('RowReader', () => {
  it('reads a JSON array streamed in any pieces as JSON.parse reads it whole', () => {
    fc.assert(
      fc.property(fc.array(row, { maxLength: 8 }), fc.array(fc.nat(), { maxLength: 6 }), fc.boolean(), (rows, cuts, pretty) => {
        const text = JSON.stringify(rows, null, pretty ? 2 : undefined);
        expect(inPieces(text, cuts)).toEqual(JSON.parse(text));
      }),
    );
  });

  it('reads JSON Lines streamed in any pieces, skipping blank lines', () => {
    fc.assert(
      fc.property(fc.array(row, { minLength: 1, maxLength: 8 }), fc.array(fc.nat(), { maxLength: 6 }), (rows, cuts) => {
        const text = `${rows.map((r) => JSON.stringify(r)).join('\n\n')}\r\n`;
        expect(inPieces(text, cuts)).toEqual(rows);
      }),
    );
  });

  it('reads CSV streamed in any pieces: quotes, doubled quotes, separators and line breaks inside fields, CRLF', () => {
    const cell = fc.string().filter((s) => !s.includes('\r'));
    fc.assert(
      fc.property(
        fc.array(fc.tuple(cell, cell), { minLength: 1, maxLength: 6 }),
        fc.constantFrom(',', ';', '\t'),
        fc.array(fc.nat(), { maxLength: 6 }),
        (cells, sep, cuts) => {
          const quote = (s: string) => `"${s.replace(/"/g, '""')}"`;
          const text = `id${sep}note\r\n${cells.map(([a, b]) => `${quote(a)}${sep}${quote(b)}`).join('\r\n')}\r\n`;
          const expected = cells.map(([a, b]) => ({
            id: /^-?(0|[1-9]\d*)(\.\d+)?$/.test(a) ? Number(a) : a,
            note: /^-?(0|[1-9]\d*)(\.\d+)?$/.test(b) ? Number(b) : b,
          }));
          expect(inPieces(text, cuts, { format: 'csv' })).toEqual(expected);
        },
      ),
    );
  });

  it('sniffs the format from the first character, builds nested objects from dotted CSV headers, types plain numbers', () => {
    expect(readAllRows('  [{"a":1}]')).toEqual([{ a: 1 }]);
    expect(readAllRows('{"a":1}\n{"a":2}')).toEqual([{ a: 1 }, { a: 2 }]);
    expect(readAllRows('\ufeffnumber;customer.name;total\nA-1;"Smith; J.";12.50\n')).toEqual([
      { number: 'A-1', customer: { name: 'Smith; J.' }, total: 12.5 },
    ]);
    expect(readAllRows('[]')).toEqual([]);
  });

  it('takes the list named by rowsPath from one JSON value (a GraphQL result)', () => {
    const value = { data: { customers: [{ id: 1 }, { id: 2 }] } };
    expect(readAllRows(JSON.stringify(value), { rowsPath: 'data.customers' })).toEqual([{ id: 1 }, { id: 2 }]);
    expect(() => readAllRows(JSON.stringify(value), { rowsPath: 'data.nothing', source: 'data.urn x' })).toThrow(
      'rowsPath "data.nothing" of data.urn x names nothing',
    );
    expect(() => readAllRows(JSON.stringify(value), { rowsPath: 'data' })).toThrow('is not a list');
  });

  it('names the problem and where it is', () => {
    const err = (text: string, opts: RowReaderOptions = {}) => {
      try {
        readAllRows(text, { source: 'rows.csv', ...opts });
      } catch (e) {
        expect(e).toBeInstanceOf(RowsError);
        return (e as Error).message;
      }
      throw new Error('no error');
    };
    expect(err('[{"a":1}, 3]')).toBe('rows.csv row 2 is not an object (each row is an object whose fields the template reads)');
    expect(err('[{"a":1}')).toContain('is not valid JSON: the array is not closed');
    expect(err('[{"a":1}] x')).toContain('text after the end of the JSON array');
    expect(err('{"a":1}\n{"a":')).toContain('line 2 is not valid JSON');
    expect(err('a;b\n1;2\n1;2;3\n')).toBe(
      "rows.csv line 3: 3 fields, the header has 2 (separated by ';', read from the header; the separator may be ',', ';', tab; quote a value that contains it)",
    );
    expect(err('a,b\n"1,2\n')).toContain('a quoted field is not closed');
    expect(err('')).toContain('is empty');
    expect(err('[{"a":1},{"a":2},{"a":3}]', { maxRows: 2 })).toBe('rows.csv has more than 2 rows (BATCH_MAX_ROWS)');
  });

  it('detects the separator from the beginning of a file cut anywhere', () => {
    const text = 'a;b;c\n1;2;3\n4;5;6\n';
    for (let cut = 6; cut <= text.length; cut++) expect(detectCsvSeparator(text.slice(0, cut), cut === text.length)).toBe(';');
    expect(parseCsv('x\ty\n1\t2', '\t')).toEqual([
      ['x', 'y'],
      ['1', '2'],
    ]);
  });
});
