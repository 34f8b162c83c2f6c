// The throwaway location (test/fixtures/locations/dropbox), registered in one line, is a delivery target of a
// real generate: the API accepts it, the workflow writes the document through it, the answer names it.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerLocation } from '../../connectors/registry.ts';
import { dropbox } from '../fixtures/locations/dropbox/index.ts';

registerLocation(dropbox);

// After the registration: the API's schemas are built from the registry when first imported.
const { startStack } = await import('../support/stack.ts');
const { client, generateBody } = await import('../support/http.ts');

describe('a location registered in one line, delivered to by generate', () => {
  let stack: Awaited<ReturnType<typeof startStack>>;
  let root: string;

  beforeAll(async () => {
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'docgen-dropbox-generate-'));
    // Its setting, as the service's own: from the configuration.
    const overrides = { converterMode: 'none' as const, dropboxRoot: root };
    stack = await startStack(overrides);
  });
  afterAll(async () => {
    await stack?.stop();
    await fs.rm(root, { recursive: true, force: true });
  });

  it('writes the generated document into its directory and answers with its urn', async () => {
    const api = client(await stack.credentials());
    const { templateUrn, dataUrn } = await api.uploadPair();
    const res = await api.call('POST', '/documents/document/generate', {
      json: generateBody(templateUrn, dataUrn, { document: { deliveryMethod: 'Dropbox', path: '' } }),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const doc = res.body.result.data.document as { deliveryMethod: string; urn: string; name: string };
    expect(doc).toMatchObject({ deliveryMethod: 'Dropbox', name: 'letter.docx' });
    const subscriptions = await fs.readdir(root);
    expect(subscriptions).toHaveLength(1);
    const written = await fs.readFile(path.join(root, subscriptions[0]!, doc.urn));
    expect(written.subarray(0, 2).toString()).toBe('PK');
  });
});
