// docker-compose.yml and the Dockerfile, checked without a Docker engine: the compose file validates against
// the Compose specification's JSON schema (shipped by the dclint package), and every variable the docgen
// services and images set is a setting of config/env.ts (a misspelt variable would be silently ignored).
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { settings } from '../../config/env.ts';

const root = path.resolve(import.meta.dirname, '../..');
const require = createRequire(import.meta.url);
const schema = JSON.parse(fs.readFileSync(path.join(path.dirname(require.resolve('dclint/package.json')), 'schemas', 'compose.schema.json'), 'utf8'));
// The schema names draft-07 by its https URI, which Ajv (draft-07 by default) does not register; skip the meta-check.
const validate = new Ajv({ strict: false, allErrors: true, validateSchema: false }).compile(schema);
const compose = parse(fs.readFileSync(path.join(root, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, { image?: string; command?: string[]; environment?: Record<string, string>; build?: { target?: string } }>;
};
const known = new Set(Object.values(settings).map((s) => s.env));

describe('docker-compose.yml', () => {
  it('is valid against the Compose specification schema', () => {
    const ok = validate(compose);
    expect(validate.errors ?? [], JSON.stringify(validate.errors, null, 1)).toEqual([]);
    expect(ok).toBe(true);
  });

  it('the validator rejects what the specification forbids (so the check above means something)', () => {
    expect(validate({ services: { x: { image: 'a', bogus: true } } })).toBe(false);
    expect(validate({ services: { x: { image: 'a', restart: 5 } } })).toBe(false);
  });

  it('has the scale-out topology', () => {
    expect(Object.keys(compose.services).sort()).toEqual(
      ['docgen-api', 'docgen-worker', 'postgresql', 's3', 's3-bucket', 'temporal', 'temporal-namespace', 'temporal-schema', 'temporal-ui'].sort(),
    );
    expect(compose.services['docgen-api']?.command).toEqual(['node', 'cli/docgen.mjs', 'api']);
    expect(compose.services['docgen-worker']?.command).toEqual(['node', 'cli/docgen.mjs', 'worker']);
    expect(compose.services['docgen-worker']?.build?.target).toBe('worker');
  });

  it('sets on the docgen services only variables that config/env.ts defines', () => {
    for (const name of ['docgen-api', 'docgen-worker']) {
      const env = Object.keys(compose.services[name]?.environment ?? {});
      expect(env.length, name).toBeGreaterThan(5);
      expect(env.filter((v) => !known.has(v)), `${name}: not in config/env.ts`).toEqual([]);
    }
    const env = compose.services['docgen-worker']!.environment!;
    expect(env.STORAGE_URL).toMatch(/^s3:\/\//);
    expect(env.DATABASE_URL).toMatch(/^postgres:\/\//);
  });
});

describe('Dockerfile', () => {
  const text = fs.readFileSync(path.join(root, 'Dockerfile'), 'utf8');

  it('sets only variables that config/env.ts defines', () => {
    const lines = text.replace(/\\\n/g, ' ').split('\n');
    const vars = lines.filter((l) => l.startsWith('ENV ')).flatMap((l) => [...l.matchAll(/([A-Z_][A-Z0-9_]*)=/g)].map((x) => x[1]!));
    expect(vars.length).toBeGreaterThan(3);
    expect(vars.filter((v) => !known.has(v))).toEqual([]);
  });

  it('runs Node 24 as a non-root user, with LibreOffice in the worker target only', () => {
    expect(text).toMatch(/^ARG NODE_VERSION=24$/m);
    const targets: Record<string, string> = Object.fromEntries(text.split(/^FROM /m).slice(1).map((stage) => [/ AS (\w+)/.exec(stage.split('\n')[0]!)?.[1] ?? '', stage]));
    expect(Object.keys(targets)).toEqual(['deps', 'api', 'worker']);
    expect(targets.api).toMatch(/^USER node$/m);
    expect(targets.worker).toMatch(/^USER node$/m);
    expect(targets.worker!.trimEnd().split('\n').filter((l) => l.startsWith('USER ')).pop()).toBe('USER node');
    expect(targets.worker).toContain('install-converter.sh');
    expect(targets.api).not.toContain('install-converter.sh');
    // Every top-level folder the service imports is copied into the image.
    for (const dir of ['activities', 'api', 'cli', 'config', 'connectors', 'core', 'engine', 'store', 'telemetry', 'worker', 'workflows']) {
      expect(targets.api, dir).toContain(`COPY ${dir} ./${dir}`);
    }
  });
});
