// The schema round trip the schema tests share (test/unit/engine/schema.test.ts, test/shared/schema-corpus.test.ts):
// infer the schema of a template, make sample data from it, judge the sample with a real JSON Schema validator
// (ajv, draft 2020-12, strict) and render the template with it.
import { Ajv2020 } from 'ajv/dist/2020.js';
import { inferSchema, inspect, renderWithWarnings, sampleData } from '../../../engine/index.ts';
import type { JsonSchema } from '../../../engine/index.ts';

export function validator(schema: JsonSchema): (data: unknown) => string[] {
  const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
  const validate = ajv.compile(schema);
  return (data) => (validate(data) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message ?? ''}`));
}

export async function roundTrip(
  template: Uint8Array,
  options: { delimiters?: { start: string; end: string }; paragraphLoop?: boolean; linebreaks?: boolean } = {},
) {
  const inspected = inspect(template, options);
  const schema = inferSchema(inspected);
  const sample = sampleData(schema);
  const invalid = validator(schema)(sample);
  const { output, warnings } = await renderWithWarnings(template, sample, options);
  return { schema, sample, invalid, warnings, output };
}

export const props = (s: unknown): Record<string, JsonSchema> => ((s as JsonSchema).properties ?? {}) as Record<string, JsonSchema>;
