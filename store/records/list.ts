// SQL for the list operations (spec 4.9). The API parses `orderby`/`filter` into a ListQuery whose column
// references are keys of a resource's fixed column map; only the map's SQL text ever reaches the query
// string, and every value travels as a parameter.
import type { Queryable } from '../db.ts';

export type ColumnType = 'text' | 'date' | 'boolean';

export interface ColumnSpec {
  /** API spelling, e.g. `Name`; matched case-insensitively, so `name` and `createdDate` work too. */
  name: string;
  sql: string;
  type: ColumnType;
}

export const CONDITIONS = ['CONTAINS', 'STARTS_WITH', 'ENDS_WITH', 'EQUALS', 'NOT_EQUALS', 'GREATER_THAN', 'LESS_THAN'] as const;
export type Condition = (typeof CONDITIONS)[number];

export interface FilterClause {
  column: string;
  condition: Condition;
  value: string | boolean;
}

export interface ListQuery {
  top: number;
  skip: number;
  orderBy?: { column: string; direction: 'ASC' | 'DESC' };
  filters: FilterClause[];
}

export interface ListResult<T> {
  rows: T[];
  rowCount: number;
}

function column(columns: readonly ColumnSpec[], name: string): ColumnSpec {
  const c = columns.find((x) => x.name.toLowerCase() === name.toLowerCase());
  // The API validated the name already; reaching this means a programming error, never user SQL.
  if (!c) throw new Error(`column ${name} is not listable`);
  return c;
}

const likeEscape = (s: string) => s.replace(/[\\%_]/g, (m) => `\\${m}`);

/** Text comparisons are case-insensitive throughout, so CONTAINS and EQUALS agree on what matches. */
function clauseSql(c: ColumnSpec, f: FilterClause, param: (v: unknown) => string): string {
  if (c.type === 'boolean') {
    const p = param(f.value === true || String(f.value).toLowerCase() === 'true');
    return f.condition === 'NOT_EQUALS' ? `${c.sql} <> ${p}` : `${c.sql} = ${p}`;
  }
  if (c.type === 'date') {
    const p = `${param(String(f.value))}::timestamptz`;
    const op = { EQUALS: '=', NOT_EQUALS: '<>', GREATER_THAN: '>', LESS_THAN: '<' }[f.condition as 'EQUALS'];
    return `${c.sql} ${op} ${p}`;
  }
  const v = String(f.value);
  switch (f.condition) {
    case 'CONTAINS':
      return `${c.sql} ILIKE ${param(`%${likeEscape(v)}%`)}`;
    case 'STARTS_WITH':
      return `${c.sql} ILIKE ${param(`${likeEscape(v)}%`)}`;
    case 'ENDS_WITH':
      return `${c.sql} ILIKE ${param(`%${likeEscape(v)}`)}`;
    case 'EQUALS':
      return `lower(${c.sql}) = lower(${param(v)})`;
    case 'NOT_EQUALS':
      return `lower(${c.sql}) <> lower(${param(v)})`;
    case 'GREATER_THAN':
      return `lower(${c.sql}) > lower(${param(v)})`;
    case 'LESS_THAN':
      return `lower(${c.sql}) < lower(${param(v)})`;
  }
}

/**
 * Runs `SELECT <select> FROM <from> WHERE <scope> AND <filters> ORDER BY ... LIMIT/OFFSET` plus the matching
 * count. `from`, `select` and `scope` are the repository's own constant SQL; `scopeParams` bind its `$n`.
 */
export async function runList<Row>(
  db: Queryable,
  spec: {
    from: string;
    select: string;
    scope: string;
    scopeParams: unknown[];
    columns: readonly ColumnSpec[];
    defaultOrder: string;
    tieBreaker: string;
  },
  q: ListQuery,
): Promise<ListResult<Row>> {
  const params = [...spec.scopeParams];
  const param = (v: unknown) => {
    params.push(v);
    return `$${params.length}`;
  };
  const where = [spec.scope, ...q.filters.map((f) => clauseSql(column(spec.columns, f.column), f, param))].join(' AND ');
  const countParams = [...params];
  let order = spec.defaultOrder;
  if (q.orderBy) {
    const c = column(spec.columns, q.orderBy.column);
    // Case-insensitive like the filters, and the same on every server collation.
    order = `${c.type === 'text' ? `lower(${c.sql})` : c.sql} ${q.orderBy.direction === 'DESC' ? 'DESC' : 'ASC'}`;
  }
  const limit = param(q.top);
  const offset = param(q.skip);
  const [page, count] = await Promise.all([
    db.query<Row>(
      `SELECT ${spec.select} FROM ${spec.from} WHERE ${where} ORDER BY ${order}, ${spec.tieBreaker} LIMIT ${limit} OFFSET ${offset}`,
      params,
    ),
    db.query<{ n: string | number }>(`SELECT count(*) AS n FROM ${spec.from} WHERE ${where}`, countParams),
  ]);
  return { rows: page.rows, rowCount: Number(count.rows[0]?.n ?? 0) };
}

export function iso(d: Date | string): string {
  return new Date(d).toISOString();
}
