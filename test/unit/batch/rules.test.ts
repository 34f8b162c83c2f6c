// A batch's own rules (core/batch.ts) and the row urn (activities/batch/ids.ts), pure.
import { describe, expect, it } from 'vitest';
import { combinedUrn, rowUrn, uuidv5 } from '../../../activities/batch/index.ts';
import { type BatchRequest, checkBatchRules, generateShapeOf } from '../../../core/batch.ts';
import { type GenerateRequest, parseGenerateRequest } from '../../../core/generate.ts';
import { LOCATION_CATALOG } from '../../../connectors/registry.ts';

const checkGenerateRules = (req: GenerateRequest) => parseGenerateRequest(req, LOCATION_CATALOG).problems;
const rules = (over: Partial<BatchRequest> = {}) => checkBatchRules(request(over), LOCATION_CATALOG);

const request = (over: Partial<BatchRequest> = {}): BatchRequest => ({
  template: { urn: 't', loadMethod: 'Storage', fileFormat: 'docx' },
  data: { urn: 'd', loadMethod: 'Storage' },
  document: {
    name: 'Invoice {number}',
    path: 'root/{region}',
    fileFormat: 'pdf',
    deliveryMethod: 'Storage',
    timezone: 'UTC',
    locale: 'en-GB',
  },
  ...over,
});

describe('batch rules', () => {
  it('accepts patterns as names and paths, and checks the rest as a generate', () => {
    expect(rules()).toEqual([]);
    expect(checkGenerateRules(generateShapeOf(request()))).toEqual([]);
    expect(checkGenerateRules(generateShapeOf(request({ document: { ...request().document, path: '{region}' } })))[0]?.message).toMatch(
      /^document\.path /,
    );
  });

  it('lets rows go only into the combined output, which then must be given', () => {
    const noDelivery = { ...request().document, deliveryMethod: undefined };
    expect(rules({ document: noDelivery }).map((e) => e.message)).toEqual([
      'document.deliveryMethod is required unless combined names where the combined output goes',
    ]);
    expect(rules({ document: noDelivery, combined: { format: 'pdf', name: 'all', path: 'root', deliveryMethod: 'Storage' } })).toEqual([]);
    // Checked as a Storage delivery at root, whatever the path pattern says.
    expect(generateShapeOf(request({ document: { ...noDelivery, path: 'x' } })).document).toMatchObject({
      deliveryMethod: 'Storage',
      path: 'root',
    });
  });

  it('checks the combined target with the locations generate writes to, a zip at any of them', () => {
    const combined = (c: Partial<NonNullable<BatchRequest['combined']>>) =>
      rules({ combined: { format: 'zip', name: 'all', path: 'root', deliveryMethod: 'Storage', ...c } }).map((e) => e.message);
    expect(combined({})).toEqual([]);
    expect(combined({ deliveryMethod: 'DriveA', path: 'Shared Documents/out' })).toEqual([]);
    expect(combined({ deliveryMethod: 'crm' })).toEqual(['combined.deliveryMethod must be one of Storage, DriveA, DriveB']);
    expect(combined({ format: 'tar' })).toEqual(['combined.format must be one of zip, pdf']);
  });

  it('names every problem of the batch fields at once', () => {
    const messages = rules({
      data: { urn: 'https://example.org/graphql', loadMethod: 'GraphQL', query: '{ a }', rowsFormat: 'csv' },
      document: { ...request().document, fileFormat: 'docx' },
      combined: { format: 'pdf', name: 'a/b', path: 'x', deliveryMethod: 'Storage' },
      stopAfterFailures: 0,
    }).map((e) => e.message);
    expect(messages).toEqual([
      'data.rowsPath is required for GraphQL: the path of the list in the result, such as customers',
      "combined.format pdf merges the rows' PDFs: document.fileFormat must be pdf (it is docx)",
      // The combined output is a target like a generate's document: its location's path rule, the file-name rule.
      "combined.path must be 'root' or start with 'root/' for Storage",
      'combined.name must be a file name without slashes or control characters (1-255 characters)',
      'stopAfterFailures must be a whole number of at least 1',
    ]);
    expect(rules({ data: { urn: 'd', loadMethod: 'Storage', rowsPath: 'a.__proto__' } })[0]?.message).toContain(
      'data.rowsPath must be a dotted path',
    );
    expect(rules({ data: { urn: 'd', loadMethod: 'Storage', rowsPath: 'items', rowsFormat: 'jsonl' } })[0]?.message).toContain(
      'cannot be used with data.rowsFormat jsonl',
    );
  });
});

describe('row urns', () => {
  it("are RFC 9562 UUIDv5 (the RFC's own example), one per batch and row, the same on every attempt", () => {
    expect(uuidv5('6ba7b810-9dad-11d1-80b4-00c04fd430c8', 'www.example.com')).toBe('2ed6657d-e927-568b-95e1-2665a8aea6a2');
    const batch = '0d7c6c4e-8a1b-4b7e-9d35-3f4a5b6c7d8e';
    expect(rowUrn(batch, 1)).toBe(rowUrn(batch, 1));
    expect(new Set([rowUrn(batch, 1), rowUrn(batch, 2), rowUrn('1d7c6c4e-8a1b-4b7e-9d35-3f4a5b6c7d8e', 1), combinedUrn(batch)]).size).toBe(
      4,
    );
  });
});
