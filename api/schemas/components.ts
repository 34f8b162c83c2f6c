// Named schemas: the resources of the spec (GenerateRequest, GenerateResult, ErrorEnvelope, Document...) as
// they appear in the OpenAPI document's components/schemas, where generated clients find them by name. A
// schema is named where it is declared; routes use it inline as always (validation and serialization are
// Fastify's, unchanged), and the openapi plugin replaces each occurrence in the document with a $ref to its
// component (plugins/openapi.ts).
import Type, { type TSchema, type TUnsafe } from 'typebox';

const registry = new Map<string, TSchema>();

/** Names `schema` in the OpenAPI document (its `title`); a name serves one schema only. */
export function component<T extends TSchema>(name: string, schema: T): T {
  const known = registry.get(name);
  if (known && known !== schema) throw new Error(`two schemas are named ${name} in the OpenAPI document`);
  (schema as { title?: string }).title = name;
  registry.set(name, schema);
  return schema;
}

/** Every named schema, by name. */
export function components(): ReadonlyMap<string, TSchema> {
  return registry;
}

/** A string that must be one of `values` (an `enum` in validation and in the document, a union in
 *  generated clients; a string to the server's code, which checks it where it matters). The values come
 *  from the code's own lists (the location registry, core/formats.ts), never from a second copy. */
export function stringEnum(values: readonly string[], options: { description?: string; examples?: string[] } = {}): TUnsafe<string> {
  return Type.Unsafe<string>({ type: 'string', enum: [...values], ...options });
}

/** An object schema's properties, one per key (typed by the keys, which Object.fromEntries forgets). */
export function propertiesOf<K extends string, T extends TSchema>(keys: readonly K[], make: (key: K) => T): Record<K, T> {
  return Object.fromEntries(keys.map((k) => [k, make(k)])) as Record<K, T>;
}

/** The keyword that carries an enumeration for the document only (plugins/openapi.ts turns it into `enum`). */
export const DOCUMENTED_ENUM = 'x-documented-enum';

/** A string whose values the document lists as an `enum` (a union or enum class in generated clients), while
 *  the route's validation accepts any string: for fields that a rule of their own checks together with the
 *  request's other problems (the batch's rules answer every problem at once; Ajv would stop at the first). */
export function documentedEnum(values: readonly string[], options: { description?: string; examples?: string[] } = {}): TUnsafe<string> {
  return Type.Unsafe<string>({ type: 'string', [DOCUMENTED_ENUM]: [...values], ...options });
}

const byValue = new Map<string, { name: string; key: string }>();
/** Names every `{type: 'string', enum}` schema with exactly these values, wherever it is declared (core's
 *  request schemas included): one component, each occurrence a $ref to it (plugins/openapi.ts). */
export function enumComponent(name: string, values: readonly string[], description: string): void {
  const key = enumKey(values);
  if (byValue.has(key) && byValue.get(key)!.name !== name)
    throw new Error(`the values of ${name} are already named ${byValue.get(key)!.name}`);
  byValue.set(key, { name, key });
  const schema = Type.Unsafe<string>({ type: 'string', enum: [...values], description });
  (schema as { title?: string }).title = name;
  registry.set(name, schema);
}

function enumKey(values: readonly unknown[]): string {
  return JSON.stringify(values);
}

/** The component naming a string enum schema with these values, if any. */
export function enumComponentOf(schema: { type?: unknown; enum?: unknown; title?: unknown }): string | undefined {
  if (schema.type !== 'string' || !Array.isArray(schema.enum) || schema.title !== undefined) return undefined;
  return byValue.get(enumKey(schema.enum))?.name;
}

/** An answer without a body (204-like: Fastify sends nothing; the handler calls send(undefined)). */
export function noContent(description: string): TUnsafe<undefined> {
  return Type.Unsafe<undefined>({ type: 'null', description });
}

/** `schema` with an example of its own for one use (an operation's answer), still the same component. */
export function withExample<T extends TSchema>(schema: T, example: unknown): T {
  return { ...schema, examples: [example] };
}
