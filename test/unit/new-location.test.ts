// A new location is its folder plus one line: a throwaway location (test/fixtures/locations/dropbox) is
// registered here in one line, and everything derived from the registry knows it: the OpenAPI enums and
// descriptions (as its capabilities say), the configuration (its setting parsed from the environment, named
// in errors, in the configuration table), and the registry, which writes a file to it and reads it back.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createLocationRegistry, registerLocation } from '../../connectors/registry.ts';
import { FsBlobStore } from '../../connectors/storage/blob-store.ts';
import { dropbox } from '../fixtures/locations/dropbox/index.ts';

registerLocation(dropbox);

// Imported after the registration: the API's schemas and the configuration read the registry when built.
const { openapiDocument } = await import('../../api/openapi-document.ts');
const { ConfigError, configMarkdown, connectorSettingsOf, loadConfig } = await import('../../config/env.ts');

type Schema = { enum?: string[]; description?: string; properties?: Record<string, Schema>; $ref?: string };

describe('a location registered in one line', () => {
  const dirs: string[] = [];
  const tempDir = async () => {
    const d = await fs.mkdtemp(path.join(os.tmpdir(), 'docgen-dropbox-test-'));
    dirs.push(d);
    return d;
  };
  afterAll(async () => {
    for (const d of dirs) await fs.rm(d, { recursive: true, force: true });
  });

  it('is in the OpenAPI enums its capabilities allow, and in their descriptions', async () => {
    const doc = (await openapiDocument()) as { components: { schemas: Record<string, Schema> } };
    const s = doc.components.schemas;
    const generate = s.GenerateRequest!.properties!;
    expect(generate.document!.properties!.deliveryMethod!.enum).toContain('Dropbox');
    expect(generate.template!.properties!.loadMethod!.enum).toContain('Dropbox');
    expect(generate.template!.properties!.urn!.description).toContain('Dropbox: a Dropbox file id');
    expect(generate.document!.properties!.path!.description).toContain('Dropbox: ignored (one folder per subscription)');
    expect(s.GeneratedDocument!.properties!.deliveryMethod!.enum).toContain('Dropbox');
    // It reads no data and takes no part in manage.
    expect(generate.data!.properties!.loadMethod!.enum).toEqual(['Storage', 'DriveA', 'DriveB', 'GraphQL']);
    expect(s.ManageRequest!.properties!.targetDocument!.properties!.deliveryMethod!.enum).not.toContain('Dropbox');
    expect(s.ManageRequest!.properties!.sourceDocument!.properties!.loadMethod!.enum).not.toContain('Dropbox');
  });

  it('has its setting parsed from the environment, named in errors and in the configuration table', async () => {
    const root = await tempDir();
    const config = loadConfig({ DROPBOX_ROOT: root });
    expect(connectorSettingsOf(config).dropboxRoot).toBe(root);
    expect(connectorSettingsOf(loadConfig({})).dropboxRoot).toBe(path.join(os.tmpdir(), 'docgen-dropbox'));
    expect(() => loadConfig({ DROPBOX_ROOT: 'relative/dir' })).toThrow(ConfigError);
    expect(() => loadConfig({ DROPBOX_ROOT: 'relative/dir' })).toThrow(/DROPBOX_ROOT must be an absolute directory, got "relative\/dir"/);
    expect(configMarkdown()).toMatch(/\| `DROPBOX_ROOT` \| `[^`]+` \| Directory the Dropbox test location keeps its files in \|/);
  });

  it('writes a file and reads it back through the registry', async () => {
    const root = await tempDir();
    const blobs = new FsBlobStore(await tempDir());
    const registry = createLocationRegistry({
      db: undefined as never,
      blobs,
      settings: connectorSettingsOf(loadConfig({ DROPBOX_ROOT: root })),
      connections: undefined as never,
    });
    const bytes = new TextEncoder().encode('PK a template');
    const put = await blobs.put('scratch/in/template.docx', bytes);
    const source = { key: 'scratch/in/template.docx', ...put, contentType: 'application/octet-stream' };

    const ctx = { subscriptionId: 'sub1', userId: 'user1' };
    const writer = registry.require({ method: 'Dropbox', capability: 'write', field: 'document.deliveryMethod', fileFormat: 'docx' });
    const written = await writer.write!(ctx, { urn: 'doc-1', name: 'invoice', path: '', fileFormat: 'docx', source });
    expect(written).toMatchObject({ urn: 'doc-1', name: 'invoice.docx' });
    expect(new Uint8Array(await fs.readFile(path.join(root, 'sub1', 'doc-1')))).toEqual(bytes);

    const reader = registry.require({ method: 'Dropbox', capability: 'readTemplate', field: 'template.loadMethod', fileFormat: 'docx' });
    const read = await reader.readTemplate!(ctx, 'doc-1');
    expect(read.sha256).toBe(put.sha256);
    expect(new Uint8Array(await blobs.get(read.key))).toEqual(bytes);
    // Another subscription does not see it.
    await expect(reader.readTemplate!({ subscriptionId: 'sub2' }, 'doc-1')).rejects.toMatchObject({ code: 'TEMPLATE_NOT_FOUND' });
  });

  it('refuses what its registration does not offer, naming the field', async () => {
    const registry = createLocationRegistry({
      db: undefined as never,
      blobs: undefined as never,
      settings: {},
      connections: undefined as never,
    });
    const { problems } = await registry.check('sub1', [
      { method: 'Dropbox', capability: 'readData', field: 'data.loadMethod' },
      { method: 'Dropbox', capability: 'write', field: 'document.deliveryMethod', fileFormat: 'csv' },
    ]);
    expect(problems.map((p) => p.message)).toEqual([
      'data.loadMethod Dropbox is not available to read data from in this deployment yet',
      'document.deliveryMethod Dropbox does not hold csv files',
    ]);
  });
});
