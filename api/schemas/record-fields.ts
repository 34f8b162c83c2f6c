// The record schemas derived from the record declarations (store/records/fields.ts): the properties of
// the create/get response, of a list item and of the create/update body, typed from the declaration so
// that routes see the same fields the repositories write. The prose (descriptions) is given here, by field.
import Type, { type TArray, type TBoolean, type TNull, type TOptional, type TSchema, type TString, type TUnion } from 'typebox';
import type { Field, Fields, RecordKind } from '../../store/records/fields.ts';
import { wireFields } from '../../store/records/fields.ts';
import { component } from './components.ts';

export const SolutionRef = component(
  'SolutionRef',
  Type.Object({ id: Type.String({ format: 'uuid' }), name: Type.String(), description: Type.String() }),
);

type WireSchema<F extends Field> = F['type'] extends 'boolean'
  ? TBoolean
  : F['type'] extends 'solutions'
    ? TArray<typeof SolutionRef>
    : F extends { nullable: true }
      ? TUnion<[TString, TNull]>
      : TString;

type OneProperties<F extends Fields> = { -readonly [K in keyof F as F[K] extends { only: 'listed' } ? never : K]: WireSchema<F[K]> };
type ListedProperties<F extends Fields> = {
  -readonly [K in keyof F as F[K] extends { only: 'one' } ? never : F[K] extends { listed: infer L extends string } ? L : K]: WireSchema<
    F[K]
  >;
};
type InputProperties<F extends Fields> = {
  -readonly [K in keyof F as F[K] extends { input: true } ? K : never]: TOptional<WireSchema<F[K]>>;
};

/** Descriptions of a response's fields, by the field's name in that response. */
export type Docs = Readonly<Partial<Record<string, string>>>;

function wireSchema(f: Field, description: string | undefined): TSchema {
  const doc = description === undefined ? {} : { description };
  switch (f.type) {
    case 'uuid':
      return f.nullable ? Type.Union([Type.String({ format: 'uuid' }), Type.Null()], doc) : Type.String({ format: 'uuid', ...doc });
    case 'text':
      return Type.String(doc);
    case 'boolean':
      return Type.Boolean(doc);
    case 'date':
      return Type.String({ format: 'date-time', ...doc });
    case 'solutions':
      return Type.Array(SolutionRef, doc);
  }
}

function properties(kind: RecordKind, view: 'one' | 'listed', docs: Docs): Record<string, TSchema> {
  return Object.fromEntries(wireFields(kind, view).map(([name, f]) => [name, wireSchema(f, docs[name])]));
}

/** The create/get response's fields (the create spelling). */
export function oneProperties<F extends Fields>(kind: RecordKind<F>, docs: Docs = {}): OneProperties<F> {
  return properties(kind, 'one', docs) as OneProperties<F>;
}

/** A list item's fields (the list spelling). */
export function listedProperties<F extends Fields>(kind: RecordKind<F>, docs: Docs = {}): ListedProperties<F> {
  return properties(kind, 'listed', docs) as ListedProperties<F>;
}

/** The body's fields: each client-set field, optional, as `make` shapes it (by its declaration unless
 *  `make` says otherwise). The order is the declaration's. */
export function inputProperties<F extends Fields, P extends { [K in keyof InputProperties<F>]?: TSchema }>(
  kind: RecordKind<F>,
  make: (name: string, f: Field) => TSchema,
  given: P,
): Omit<InputProperties<F>, keyof P> & P {
  return Object.fromEntries(
    Object.entries(kind.fields).flatMap(([name, f]) =>
      f.input ? [[name, (given as Record<string, TSchema>)[name] ?? Type.Optional(make(name, f))]] : [],
    ),
  ) as Omit<InputProperties<F>, keyof P> & P;
}
