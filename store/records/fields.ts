// One declaration per record kind (spec 2.2 - 2.6): each field once, in wire order, with its type, its
// column, whether the client sets it, whether lists filter and order by it, and its list spelling where the
// spec gives the list other names than create (data sources). The repositories derive their SELECT lists,
// row mappers, written columns and list columns from it (store/records/*.ts); the API derives the create,
// get and list schemas (api/schemas/records.ts). Only the wire prose is the API's.
import type { Queryable } from '../db.ts';
import { type ColumnSpec, type ColumnType, iso, type ListQuery, type ListResult, runList } from './list.ts';

/** A link to a document solution, as records show it. */
export interface SolutionRef {
  id: string;
  name: string;
  description: string;
}

export type FieldType = 'uuid' | 'text' | 'boolean' | 'date' | 'solutions';

export interface Field {
  type: FieldType;
  /** The row's column: `<alias>.<col>` of the record's table, or `sql AS col` when `sql` is given (a join).
   *  Absent for `solutions`, which the repository reads from a link table. */
  col?: string;
  sql?: string;
  /** The list's filter/order SQL when it is not the selected one (a nullable join). */
  listSql?: string;
  /** Set by the client on create (and update). */
  input?: true;
  /** A list column (spec 4.9), named in PascalCase after the list spelling. */
  list?: true;
  /** A null column stays null on the wire (otherwise a null text reads ''). */
  nullable?: true;
  /** The list response's spelling where the spec differs from create's. */
  listed?: string;
  /** Shown only by the single-record responses (create, get) or only by list items. */
  only?: 'one' | 'listed';
}

export type Fields = Readonly<Record<string, Field>>;

export interface RecordKind<F extends Fields = Fields> {
  table: string;
  /** The table's alias in the repository's SQL. */
  alias: string;
  /** The record's id column and its subscription column. */
  key: string;
  tenant: string;
  fields: F;
}

/** A text field the client sets and lists filter and order by. */
export const clientText = (col: string) => ({ type: 'text', col, input: true, list: true }) as const;
/** A server-managed uuid (an id, the subscription, a user). */
export const uuid = (col: string) => ({ type: 'uuid', col }) as const;
/** A server-managed timestamp lists filter and order by (created_date, last_modified_date). */
export const timestamp = (col: string) => ({ type: 'date', col, list: true }) as const;

type ValueOf<T extends Field> = T['type'] extends 'boolean'
  ? boolean
  : T['type'] extends 'solutions'
    ? SolutionRef[]
    : T extends { nullable: true }
      ? string | null
      : string;

/** The stored record as the repository reads it (the create spelling; solution links are the repository's). */
export type RecordOf<F extends Fields> = { -readonly [K in keyof F as F[K] extends { col: string } ? K : never]: ValueOf<F[K]> };
/** The stored fields the client sets. */
export type InputOf<F extends Fields> = {
  -readonly [K in keyof F as F[K] extends { input: true; col: string } ? K : never]: ValueOf<F[K]>;
};
/** A list item: the list spelling, single-record fields left out. */
export type ListedOf<F extends Fields> = {
  -readonly [K in keyof F as F[K] extends { only: 'one' } ? never : F[K] extends { listed: infer L extends string } ? L : K]: ValueOf<F[K]>;
};

const pascal = (s: string) => (s[0]?.toUpperCase() ?? '') + s.slice(1);
const entries = (kind: RecordKind) => Object.entries(kind.fields);

/** The SELECT list of every stored field. */
export function selectList(kind: RecordKind): string {
  return entries(kind)
    .flatMap(([, f]) => (f.col === undefined ? [] : [f.sql ? `${f.sql} AS ${f.col}` : `${kind.alias}.${f.col}`]))
    .join(', ');
}

/** A selected row in the record's spelling (solution links left to the repository). */
export function fromRow<F extends Fields>(kind: RecordKind<F>, row: Record<string, unknown>): RecordOf<F> {
  const out: Record<string, unknown> = {};
  for (const [name, f] of entries(kind)) {
    if (f.col === undefined) continue;
    const v = row[f.col];
    out[name] = f.type === 'date' ? iso(v as Date) : f.type === 'boolean' ? v : (v ?? (f.nullable ? null : ''));
  }
  return out as RecordOf<F>;
}

/** The client-set fields with their columns, in declaration order. */
export function inputColumns<F extends Fields>(kind: RecordKind<F>): [keyof InputOf<F> & string, string][] {
  return entries(kind).flatMap(([name, f]) => (f.input && f.col ? [[name as keyof InputOf<F> & string, f.col]] : []));
}

const COLUMN_TYPE: Record<FieldType, ColumnType> = { uuid: 'text', text: 'text', boolean: 'boolean', date: 'date', solutions: 'text' };

/** The columns a list filters and orders by (spec 4.9). */
export function listColumns(kind: RecordKind): ColumnSpec[] {
  return entries(kind).flatMap(([name, f]): ColumnSpec[] => {
    if (!f.list || f.col === undefined) return [];
    const expr = f.sql ?? `${kind.alias}.${f.col}`;
    const sql = f.listSql ?? (f.type === 'uuid' ? (f.nullable ? `coalesce(${expr}::text, '')` : `${expr}::text`) : expr);
    return [{ name: pascal(f.listed ?? name), sql, type: COLUMN_TYPE[f.type] }];
  });
}

/** The names a response shows, with their declaration: `one` for create and get, `listed` for list items. */
export function wireFields(kind: RecordKind, view: 'one' | 'listed'): [string, Field][] {
  return entries(kind).flatMap(([name, f]): [string, Field][] =>
    f.only && f.only !== view ? [] : [[view === 'listed' ? (f.listed ?? name) : name, f]],
  );
}

/** A record in the list spelling: renamed where the spec renames, single-record fields left out. */
export function listedSpelling<F extends Fields>(kind: RecordKind<F>, rec: RecordOf<F>): ListedOf<F> {
  const out: Record<string, unknown> = {};
  for (const [name, f] of entries(kind)) if (f.only !== 'one') out[f.listed ?? name] = (rec as Record<string, unknown>)[name];
  return out as ListedOf<F>;
}

/** `$first, $first+1, ...`: the placeholders of `n` values. */
export const placeholders = (n: number, first: number) => Array.from({ length: n }, (_, i) => `$${first + i}`).join(', ');
/** `col = $first, ...`: an UPDATE's assignments of `cols`. */
export const assignments = (cols: readonly string[], first: number) => cols.map((c, i) => `${c} = $${first + i}`).join(', ');

/** A page of the subscription's live records (spec 4.9), newest first unless the query orders; `from` is the
 *  table with the joins the selected fields need. */
export function listRecords(
  db: Queryable,
  kind: RecordKind,
  subscriptionId: string,
  q: ListQuery,
  from = `${kind.table} ${kind.alias}`,
): Promise<ListResult<Record<string, unknown>>> {
  const a = kind.alias;
  return runList(
    db,
    {
      from,
      select: selectList(kind),
      scope: `${a}.${kind.tenant} = $1 AND NOT ${a}.is_deleted`,
      scopeParams: [subscriptionId],
      columns: listColumns(kind),
      defaultOrder: `${a}.created_date DESC`,
      tieBreaker: `${a}.${kind.key}`,
    },
    q,
  );
}

/** Marks a live record deleted; false when there was none (unknown, another subscription's, deleted). */
export async function softDelete(db: Queryable, kind: RecordKind, subscriptionId: string, userId: string, id: string): Promise<boolean> {
  const r = await db.query(
    `UPDATE ${kind.table} SET is_deleted = true, last_modified_user_id = $3, last_modified_date = now()
     WHERE ${kind.key} = $1 AND ${kind.tenant} = $2 AND NOT is_deleted RETURNING ${kind.key}`,
    [id, subscriptionId, userId],
  );
  return r.rows.length > 0;
}
