// The OpenAPI document as client generators read it (issue 32): operationIds, named schemas, enums derived
// from the location registry and core/formats.ts, the async generate's callback, 429 everywhere, a file
// upload, examples from the README's walk-through, a Redocly lint with no problem at all, and the SDK's
// generated types (client/openapi.ts) fresh. The document is the one the service serves, made without
// services (api/openapi-document.ts).
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { openapiDocument } from '../../api/openapi-document.ts';
import { LOCATION_CATALOG } from '../../connectors/registry.ts';
import { ALL_FORMATS, TEMPLATE_FORMATS } from '../../core/formats.ts';
import { methodsFor } from '../../core/locations.ts';
import { REMOVE_MODES } from '../../core/manage.ts';
import { checkBatchRules, COMBINED_FORMATS } from '../../core/batch.ts';
import { errorRegistry } from '../../core/errors.ts';
import { ROWS_FORMATS } from '../../core/rows.ts';
import { COMBINED_DELIVERY } from '../../api/schemas/batches.ts';
import { CLIENT_TYPES, clientTypes, lintDocument } from '../../scripts/openapi.ts';

type Json = Record<string, any>;
const root = path.resolve(import.meta.dirname, '..', '..');
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

let doc: Json;
let operations: { path: string; method: string; op: Json }[];
const schemas = () => doc.components.schemas as Record<string, Json>;
const op = (p: string, method: string) => doc.paths[`/v1${p}`][method] as Json;
/** The schema a $ref names (one level). */
const deref = (s: Json) => (typeof s.$ref === 'string' ? schemas()[s.$ref.replace('#/components/schemas/', '')]! : s);

beforeAll(async () => {
  doc = await openapiDocument();
  operations = Object.entries(doc.paths as Json).flatMap(([p, item]) =>
    Object.entries(item as Json)
      .filter(([m]) => METHODS.includes(m))
      .map(([method, o]) => ({ path: p, method, op: o as Json })),
  );
});

describe('the OpenAPI document', () => {
  it('gives every operation a unique operationId', () => {
    expect(operations.length).toBeGreaterThan(50);
    const ids = operations.map((o) => o.op.operationId);
    expect(
      ids.filter((id) => typeof id !== 'string'),
      'operations without one',
    ).toEqual([]);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("names the spec's resources in components/schemas, and operations refer to them", () => {
    for (const name of [
      'GenerateRequest',
      'GenerateResult',
      'ErrorEnvelope',
      'InnerError',
      'Document',
      'DocumentTemplate',
      'Configuration',
      'ManageRequest',
      'ManageResult',
      'UploadResult',
    ]) {
      expect(schemas()[name], name).toBeDefined();
    }
    const generate = op('/documents/document/generate', 'post');
    expect(generate.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/GenerateRequest' });
    expect(generate.responses['201'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/GenerateResult' });
    expect(op('/documents/document/manage', 'post').requestBody.content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/ManageRequest',
    });
    // No operation carries its own copy of the error envelope: every one refers to the component.
    const withoutExamples = JSON.stringify(doc.paths, (key, value: unknown) =>
      key === 'example' || key === 'examples' ? undefined : value,
    );
    const inline = withoutExamples.match(/"innerErrors"/g) ?? [];
    expect(inline).toEqual([]);
    // Every component is used.
    const text = JSON.stringify({ paths: doc.paths, components: doc.components });
    for (const name of Object.keys(schemas())) expect(text.includes(`"#/components/schemas/${name}"`), name).toBe(true);
  });

  it('lists fileFormat, loadMethod and deliveryMethod as enums of the location registry and core/formats.ts', () => {
    const g = schemas().GenerateRequest!.properties;
    expect(g.template.properties.fileFormat.$ref).toBe('#/components/schemas/TemplateFormat');
    expect(deref(g.template.properties.fileFormat).enum).toEqual([...TEMPLATE_FORMATS]);
    expect(g.template.properties.loadMethod.enum).toEqual(methodsFor(LOCATION_CATALOG, 'generate', 'readTemplate'));
    expect(g.data.properties.loadMethod.enum).toEqual([...methodsFor(LOCATION_CATALOG, 'generate', 'readData'), 'GraphQL']);
    expect(g.document.properties.fileFormat.$ref).toBe('#/components/schemas/FileFormat');
    expect(deref(g.document.properties.fileFormat).enum).toEqual(ALL_FORMATS);
    expect(g.document.properties.deliveryMethod.enum).toEqual(methodsFor(LOCATION_CATALOG, 'generate', 'write'));
    const m = schemas().ManageRequest!.properties;
    expect(m.sourceDocument.properties.loadMethod.enum).toEqual(methodsFor(LOCATION_CATALOG, 'manage', 'readDocument'));
    expect(m.sourceDocument.properties.remove.enum).toEqual([...REMOVE_MODES]);
    expect(m.targetDocument.properties.deliveryMethod.enum).toEqual(methodsFor(LOCATION_CATALOG, 'manage', 'write'));
    expect(m.targetDocument.properties.deliveryMethod.enum).toContain('crm');
    expect(deref(schemas().GeneratedDocument!.properties.fileFormat).enum).toEqual(ALL_FORMATS);
  });

  it('names each list of formats once: every fileFormat enum is a $ref to FileFormat or TemplateFormat (issue 41)', () => {
    const inlineFormats: string[] = [];
    const refs: string[] = [];
    const walk = (node: unknown, where: string) => {
      if (Array.isArray(node)) return node.forEach((n, i) => walk(n, `${where}/${i}`));
      if (node === null || typeof node !== 'object') return;
      for (const [k, v] of Object.entries(node as Json)) {
        if (k === 'fileFormat' && v && typeof v === 'object') {
          if ((v as Json).enum) inlineFormats.push(`${where}/${k}`);
          if ((v as Json).$ref) refs.push((v as Json).$ref);
        }
        if (k !== 'examples' && k !== 'example') walk(v, `${where}/${k}`);
      }
    };
    walk(doc, '');
    expect(inlineFormats).toEqual([]);
    expect(new Set(refs)).toEqual(new Set(['#/components/schemas/FileFormat', '#/components/schemas/TemplateFormat']));
    expect(refs.length).toBeGreaterThanOrEqual(8);
  });

  it('names every success answer: each 2xx JSON body is a $ref to a component (issue 41)', () => {
    const inline = operations.flatMap(({ path: p, method, op: o }) =>
      Object.entries(o.responses as Json)
        .filter(
          ([status, r]) =>
            /^2/.test(status) && (r as Json).content?.['application/json'] && !(r as Json).content['application/json'].schema.$ref,
        )
        .map(([status]) => `${method} ${p} ${status}`),
    );
    expect(inline).toEqual([]);
    expect(op('/documents/document/generate/batch', 'post').responses['201'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/StartBatchResponse',
    });
    expect(
      deref(op('/documents/batch/{id}', 'get').responses['200'].content['application/json'].schema).properties.result.properties.data
        .properties.batch,
    ).toEqual({
      $ref: '#/components/schemas/BatchProgress',
    });
  });

  it("lists the batch's fields and the error codes as enums, while the batch's rules still answer every problem at once", () => {
    const b = schemas().BatchRequest!.properties;
    expect(b.combined.properties.format.enum).toEqual([...COMBINED_FORMATS]);
    expect(b.combined.properties.deliveryMethod.enum).toEqual([...COMBINED_DELIVERY]);
    expect(b.document.properties.deliveryMethod.enum).toEqual(methodsFor(LOCATION_CATALOG, 'generate', 'write'));
    expect(b.data.properties.rowsFormat.enum).toEqual([...ROWS_FORMATS]);
    expect(b.data.properties.variables.items.properties.type.enum).toEqual(['graphql', 'header']);
    expect(schemas().BatchStarted!.properties.status.enum).toEqual(['running']);
    expect(schemas().InnerError!.properties.code.enum).toEqual(Object.keys(errorRegistry));
    expect(JSON.stringify(doc)).not.toContain('x-documented-enum');
    // The combined output's places are exactly those the batch's rules accept.
    const rules = (deliveryMethod: string) =>
      checkBatchRules(
        {
          template: { urn: 't', loadMethod: 'Storage', fileFormat: 'docx' },
          data: { urn: 'd', loadMethod: 'Storage' },
          document: { name: 'x', fileFormat: 'docx', path: 'root', timezone: 'UTC', locale: 'en-US' },
          combined: { format: 'zip', name: 'all', path: deliveryMethod === 'Storage' ? 'root' : '', deliveryMethod },
        } as Parameters<typeof checkBatchRules>[0],
        LOCATION_CATALOG,
      ).filter((e) => e.message.includes('combined.deliveryMethod'));
    for (const m of COMBINED_DELIVERY) expect(rules(m), m).toEqual([]);
    expect(rules('Dropbox')).toHaveLength(1);
  });

  it('spells every identifier a client passes back as a urn as a plain string (no format: uuid)', () => {
    expect(schemas().UploadedFile!.properties.id).not.toHaveProperty('format');
    const urns: string[] = [];
    const walk = (node: unknown, where: string) => {
      if (Array.isArray(node)) return node.forEach((n, i) => walk(n, `${where}/${i}`));
      if (node === null || typeof node !== 'object') return;
      for (const [k, v] of Object.entries(node as Json)) {
        if (k === 'urn' && v && typeof v === 'object' && !(v as Json).$ref) {
          urns.push(where);
          expect((v as Json).type, `${where}/urn`).toBe('string');
          expect(v, `${where}/urn`).not.toHaveProperty('format');
        }
        if (k !== 'examples' && k !== 'example') walk(v, `${where}/${k}`);
      }
    };
    walk(doc.components, '');
    expect(urns.length).toBeGreaterThan(5);
  });

  it("documents the batch's summary callback: the counts in a metered envelope, or the error envelope with them", () => {
    const post = (Object.values(op('/documents/document/generate/batch', 'post').callbacks.summary as Json)[0] as Json).post;
    expect(post.requestBody.content['application/json'].schema.oneOf).toEqual([
      { $ref: '#/components/schemas/BatchSummaryResult' },
      { $ref: '#/components/schemas/BatchSummaryError' },
    ]);
    expect(schemas().BatchSummaryResult!.properties.result.properties.data.properties.batch).toEqual({
      $ref: '#/components/schemas/BatchSummary',
    });
    expect(post.parameters.map((p: Json) => p.name)).toContain('webhook-signature');
  });

  it("documents the async generate's callback: the result or the error envelope, with Standard Webhooks headers", () => {
    const callbacks = op('/documents/document/generate/async', 'post').callbacks;
    const [expression, item] = Object.entries(callbacks.result as Json)[0]!;
    expect(expression).toMatch(/^\{\$request\.header\.X-Client-Authorization\}$/);
    const post = (item as Json).post;
    expect(post.requestBody.content['application/json'].schema.oneOf).toEqual([
      { $ref: '#/components/schemas/GenerateResult' },
      { $ref: '#/components/schemas/ErrorEnvelope' },
    ]);
    expect(post.parameters.filter((p: Json) => p.in === 'header' && p.required).map((p: Json) => p.name)).toEqual([
      'webhook-id',
      'webhook-timestamp',
      'webhook-signature',
      'user-agent',
    ]);
    expect(post.security).toEqual([{ callbackBearer: [] }]);
    expect(doc.components.securitySchemes.callbackBearer).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it('documents 429 with Retry-After on every operation', () => {
    for (const { path: p, method, op: o } of operations) {
      expect(o.responses['429']?.headers?.['Retry-After'], `${method} ${p}`).toBeDefined();
    }
  });

  it('describes the uploads as files (a file picker in /v1/docs), under the field name the README uses', () => {
    for (const p of ['/documents/template/upload', '/documents/data/upload']) {
      const schema = op(p, 'post').requestBody.content['multipart/form-data'].schema;
      expect(schema.properties.file).toMatchObject({ type: 'array', items: { type: 'string', format: 'binary' } });
    }
    expect(fs.readFileSync(path.join(root, 'README.md'), 'utf8')).toContain('-F file=@examples/invoice.docx');
  });

  it("takes the generate example from the README's walk-through", () => {
    const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
    const walkthrough = /<!-- walkthrough:start -->([\s\S]*?)<!-- walkthrough:end -->/.exec(readme)?.[1] ?? '';
    const raw = /"\$DOCGEN_URL\/documents\/document\/generate" -d '(\{[\s\S]*?\})'\s*\|/.exec(walkthrough)?.[1];
    expect(raw, 'the walk-through generates with curl -d').toBeDefined();
    const example = op('/documents/document/generate', 'post').requestBody.content['application/json'].example;
    // The shell splices the upload ids in: '$TEMPLATE', '$DATA'.
    const body = JSON.parse(
      raw!.replace(`"'$TEMPLATE'"`, JSON.stringify(example.template.urn)).replace(`"'$DATA'"`, JSON.stringify(example.data.urn)),
    );
    expect(example).toEqual(body);
    const result = op('/documents/document/generate', 'post').responses['201'].content['application/json'].example;
    expect(result.result).toMatchObject({
      statusCode: 201,
      message: 'Created',
      data: { document: { deliveryMethod: 'Storage', fileFormat: 'pdf' } },
    });
    expect(op('/documents/template/upload', 'post').responses['201'].content['application/json'].example.result.data.files[0].id).toBe(
      example.template.urn,
    );
    expect(op('/documents/data/upload', 'post').responses['201'].content['application/json'].example.result.data.files[0].id).toBe(
      example.data.urn,
    );
  });

  it("passes Redocly's recommended rules with no error and no warning", async () => {
    const problems = await lintDocument(doc);
    expect(problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`)).toEqual([]);
  });

  it('is what client/openapi.ts, the SDK types generated by openapi-typescript, was generated from (npm run sdk:generate)', async () => {
    expect(fs.readFileSync(CLIENT_TYPES, 'utf8') === (await clientTypes(doc)), 'client/openapi.ts is stale: run npm run sdk:generate').toBe(
      true,
    );
  });

  it('refers only to schemas it defines', () => {
    const refs = new Set(JSON.stringify(doc).match(/"#\/components\/schemas\/[^"]+"/g) ?? []);
    for (const r of refs) expect(deref({ $ref: JSON.parse(r) }), r).toBeDefined();
  });
});
