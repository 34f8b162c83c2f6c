// POST /documents/template/inspect (extension): a template's tags, problems and the JSON Schema of the data
// it reads, for backends and the studio (api/routes/inspect.ts).
import Type from 'typebox';
import { component } from './components.ts';
import { errorResponses, successEnvelope } from './envelopes.ts';
import { TemplateLocation } from './generation.ts';

/** Where a tag or problem is (generate's TemplateLocation), plus the same in words. */
export const TagLocation = component(
  'TagLocation',
  Type.Object(
    {
      ...TemplateLocation.properties,
      where: Type.String({ description: 'The same for people: `word/document.xml, paragraph 3` or `sheet "Sales", cell B2`' }),
    },
    { description: "Where a tag is in the template (generate's TemplateLocation) and the same in words" },
  ),
);

export const InspectedTag = component(
  'InspectedTag',
  Type.Object({
    kind: Type.String({
      description:
        'field, open (loop or section), inverted, close, raw ({@x}), image ({%x}), include ({>name}), slide ({:items}), html ({~x}), htmlBlock ({~~x})',
      examples: ['field'],
    }),
    source: Type.String({ description: 'The text between the delimiters, as written', examples: ['customer.name'] }),
    value: Type.String({ description: 'The expression, loop expression or include name', examples: ['customer.name'] }),
    location: TagLocation,
  }),
);

export const TemplateProblem = component(
  'TemplateProblem',
  Type.Object({
    code: Type.String({
      description: "The engine's problem id (engine/README.md, Error ids), e.g. unclosed_loop, unknown_filter",
      examples: ['unclosed_loop'],
    }),
    message: Type.String({ examples: ['loop "items" is never closed'] }),
    location: Type.Optional(TagLocation),
  }),
);

export const TemplateInspection = component(
  'TemplateInspection',
  Type.Object({
    fileName: Type.String({ examples: ['invoice.docx'] }),
    format: Type.String({ description: 'docx, xlsx or pptx: what the package is', examples: ['docx'] }),
    tags: Type.Array(InspectedTag, { description: 'Every tag in document order (parts, then paragraphs or cells)' }),
    loops: Type.Array(Type.String(), { description: 'Loop and section expressions, without duplicates' }),
    includes: Type.Array(Type.String(), {
      description: 'Included template names ({>name}): each needs a relatedItems entry when generating',
    }),
    problems: Type.Array(TemplateProblem, { description: 'Every template problem with its location; empty when the template is valid' }),
    schema: Type.Unknown({
      description:
        "JSON Schema (draft 2020-12) of the data the template reads, inferred from its tags: loops are arrays of objects, sections without data and inverted sections booleans, filters give types (| currency a number, | date a date string), images a data URL or {data, width, height}. Each property's description names its tags and their locations.",
    }),
    sample: Type.Unknown({
      description:
        'Sample data generated from the schema (plausible values named after the fields, two items per list): it renders with no missing value',
    }),
  }),
);

export const inspectTemplate = (maxBytes: number) => ({
  operationId: 'inspectTemplate',
  tags: ['Document template'],
  summary: 'Inspect a template: its tags, problems and the JSON Schema of its data (extension)',
  description: `Send one .docx, .xlsx or .pptx file as multipart/form-data, or JSON \`{"template": {"urn": "<id>", "loadMethod": "Storage"}}\` naming a template upload of this subscription (not consumed: an inspection is not a generate; an upload that is consumed, expired or another subscription's answers 400 TEMPLATE_NOT_FOUND). Nothing is stored. The answer lists every tag with its location, every template problem with its location (a template with problems still answers 200: they are the answer), and the data the template reads as a JSON Schema with sample data. A file of another extension, or one that is not an Office package of its kind, answers 400 INVALID_TEMPLATE_FORMAT naming the file and field; a package over the template limits 400 TEMPLATE_TOO_COMPLEX; more than ${maxBytes} bytes 413 FILE_TOO_LARGE. \`docgen inspect --schema FILE\` prints the same schema locally.`,
  consumes: ['multipart/form-data'],
  response: { 200: successEnvelope(TemplateInspection), ...errorResponses(400, 401, 413) },
  'x-openapi': {
    requestBody: {
      required: true,
      description:
        'multipart/form-data with one template file (.docx, .xlsx or .pptx) under any field name (`file` here), or JSON naming a template upload',
      content: {
        'multipart/form-data': {
          schema: {
            type: 'object',
            required: ['file'],
            properties: { file: { type: 'string', format: 'binary', description: 'The template' } },
          },
        },
        'application/json': {
          schema: {
            type: 'object',
            required: ['template'],
            properties: {
              template: {
                type: 'object',
                required: ['urn', 'loadMethod'],
                properties: {
                  urn: { type: 'string', format: 'uuid', description: 'An id from POST /documents/template/upload' },
                  loadMethod: { type: 'string', enum: ['Storage'] },
                },
              },
            },
          },
        },
      },
    },
  },
});
