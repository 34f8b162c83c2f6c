// docker-compose.yml and the Dockerfile, checked without a Docker engine: the compose file validates against
// the Compose specification's JSON schema (shipped by the dclint package), every variable the docgen
// services and images set is a setting of config/env.ts (a misspelt variable would be silently ignored),
// the image copies every folder the service's imports reach, Temporal runs the same versions as the dev
// server and scripts/temporal-server.sh, passwords are required, and only the API is published.
// test/e2e/image.test.ts runs what the Dockerfile lays out.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Ajv } from 'ajv';
import { execFileSync } from 'node:child_process';
import { describe, expect, inject, it } from 'vitest';
import { ensureTemporalCli } from '../../cli/temporal-dev.ts';
import { parse } from 'yaml';
import { drainGraceMs } from '../../cli/service.ts';
import { allSettings, loadConfig } from '../../config/env.ts';
import { parseDockerfile } from '../support/dockerfile.ts';

const root = path.resolve(import.meta.dirname, '../..');
const require = createRequire(import.meta.url);
const schema = JSON.parse(
  fs.readFileSync(path.join(path.dirname(require.resolve('dclint/package.json')), 'schemas', 'compose.schema.json'), 'utf8'),
);
// The schema names draft-07 by its https URI, which Ajv (draft-07 by default) does not register; skip the meta-check.
const validate = new Ajv({ strict: false, allErrors: true, validateSchema: false }).compile(schema);
type Service = {
  image?: string;
  command?: string[];
  environment?: Record<string, string>;
  build?: { target?: string };
  ports?: string[];
  stop_grace_period?: string;
  restart?: string;
  healthcheck?: { test?: string[] };
  depends_on?: Record<string, { condition: string }> | string[];
};
const composeText = fs.readFileSync(path.join(root, 'docker-compose.yml'), 'utf8');
const compose = parse(composeText, { merge: true }) as { services: Record<string, Service> };
const portsOverride = parse(fs.readFileSync(path.join(root, 'deploy', 'compose.ports.yml'), 'utf8')) as {
  services: Record<string, Service>;
};
const known = new Set(Object.values(allSettings()).map((s) => s.env));

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
      [
        'docgen-api',
        'docgen-db',
        'docgen-worker',
        'postgresql',
        's3',
        's3-bucket',
        'temporal',
        'temporal-namespace',
        'temporal-schema',
        'temporal-ui',
      ].sort(),
    );
    expect(compose.services['docgen-api']?.command).toEqual(['node', 'cli/docgen.mjs', 'api']);
    expect(compose.services['docgen-worker']?.command).toEqual(['node', 'cli/docgen.mjs', 'worker']);
    expect(compose.services['docgen-worker']?.build?.target).toBe('worker');
  });

  it('runs Temporal Server and UI at the versions of the dev server and of scripts/temporal-server.sh', () => {
    const tag = (service: string) => /:\$\{\w+:-([^}]+)\}$/.exec(compose.services[service]?.image ?? '')?.[1];
    const script = /^SERVER_VERSION=v(\S+)$/m.exec(fs.readFileSync(path.join(root, 'scripts', 'temporal-server.sh'), 'utf8'))?.[1];
    const dev = /Server (\d+\.\d+)\.\d+, UI (\S+)\)/.exec(
      execFileSync(inject('temporalCli') ?? ensureTemporalCli(process.env.TEMPORAL_CLI, () => undefined), ['--version'], {
        encoding: 'utf8',
      }),
    );
    expect(dev, 'temporal --version names the server and UI versions').not.toBeNull();
    for (const service of ['temporal', 'temporal-schema', 'temporal-namespace']) expect(tag(service), service).toBe(script);
    expect(script?.split('.').slice(0, 2).join('.')).toBe(dev![1]);
    expect(tag('temporal-ui')).toBe(dev![2]);
  });

  it('requires every password and secret (no default a deployment could run with)', () => {
    // `$${X}` is the shell's variable inside a command, not an interpolation of compose's.
    const refs = [...composeText.matchAll(/(?<!\$)\$\{(\w+)([^}]*)\}/g)].filter((m) => /PASSWORD|SECRET/.test(m[1]!));
    expect(refs.length).toBeGreaterThanOrEqual(6);
    for (const [ref, , rest] of refs) expect(rest, ref).toMatch(/^:\?\S/);
    expect(composeText).not.toMatch(/change-me/i);
  });

  it('publishes the API only; deploy/compose.ports.yml adds Temporal, its UI and S3 on loopback', () => {
    const published = Object.entries(compose.services)
      .filter(([, s]) => s.ports?.length)
      .map(([name]) => name);
    expect(published).toEqual(['docgen-api']);
    expect(Object.keys(portsOverride.services).sort()).toEqual(['s3', 'temporal', 'temporal-ui']);
    for (const [name, s] of Object.entries(portsOverride.services)) {
      for (const p of s.ports ?? []) expect(p, name).toMatch(/^127\.0\.0\.1:\d+:\d+$/);
    }
    const merged = structuredClone(compose);
    for (const [name, s] of Object.entries(portsOverride.services)) merged.services[name] = { ...merged.services[name], ...s };
    expect(validate(merged), JSON.stringify(validate.errors)).toBe(true);
  });

  it('restarts every long-running service when it dies, and retries the one-shot jobs a few times', () => {
    const oneShot = ['docgen-db', 's3-bucket', 'temporal-namespace', 'temporal-schema'];
    for (const [name, s] of Object.entries(compose.services)) {
      if (oneShot.includes(name)) expect(s.restart, name).toMatch(/^on-failure:\d+$/);
      else expect(s.restart, name).toBe('unless-stopped');
    }
  });

  it('checks the health of every long-running service but the UI, and starts what needs S3 once it answers', () => {
    for (const name of ['postgresql', 'temporal', 's3', 'docgen-api', 'docgen-worker'])
      expect(compose.services[name]?.healthcheck?.test?.length, name).toBeGreaterThan(1);
    const s3 = compose.services.s3!;
    const healthPath = s3.environment?.VGW_HEALTH;
    expect(healthPath).toMatch(/^\//);
    expect(s3.healthcheck!.test!.join(' ')).toContain(`:7070${healthPath}`);
    expect(compose.services['s3-bucket']?.depends_on).toEqual({ s3: { condition: 'service_healthy' } });
  });

  it('connects docgen as its own database user, made by the docgen-db job, not as Temporal', () => {
    const url = new URL(compose.services['docgen-api']!.environment!.DATABASE_URL!.replace(/\$\{[^}]*\}/g, 'x'));
    expect(url.username).toBe('docgen');
    expect(url.pathname).toBe('/docgen');
    expect(compose.services['docgen-worker']!.environment!.DATABASE_URL).toBe(compose.services['docgen-api']!.environment!.DATABASE_URL);
    expect(compose.services.temporal!.environment!.POSTGRES_USER).not.toBe('docgen');
    const job = compose.services['docgen-db']!;
    expect(job.command!.join('\n')).toMatch(/CREATE ROLE docgen LOGIN[\s\S]*ALTER DATABASE docgen OWNER TO docgen/);
    for (const name of ['docgen-api', 'docgen-worker']) {
      expect((compose.services[name]!.depends_on as Record<string, { condition: string }>)['docgen-db'], name).toEqual({
        condition: 'service_completed_successfully',
      });
    }
  });

  it('gives the API time to drain its requests on stop', () => {
    const grace = /^(\d+)s$/.exec(compose.services['docgen-api']?.stop_grace_period ?? '')?.[1];
    expect(Number(grace) * 1000).toBeGreaterThanOrEqual(drainGraceMs(loadConfig({})));
  });

  it('sets on the docgen services only variables that config/env.ts defines', () => {
    for (const name of ['docgen-api', 'docgen-worker']) {
      const env = Object.keys(compose.services[name]?.environment ?? {});
      expect(env.length, name).toBeGreaterThan(5);
      expect(
        env.filter((v) => !known.has(v)),
        `${name}: not in config/env.ts`,
      ).toEqual([]);
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
    const targets: Record<string, string> = Object.fromEntries(
      text
        .split(/^FROM /m)
        .slice(1)
        .map((stage) => [/ AS (\w+)/.exec(stage.split('\n')[0]!)?.[1] ?? '', stage]),
    );
    expect(Object.keys(targets)).toEqual(['deps', 'api', 'worker']);
    expect(targets.api).toMatch(/^USER node$/m);
    expect(targets.worker).toMatch(/^USER node$/m);
    expect(
      targets
        .worker!.trimEnd()
        .split('\n')
        .filter((l) => l.startsWith('USER '))
        .pop(),
    ).toBe('USER node');
    expect(targets.worker).toContain('install-converter.sh');
    expect(targets.api).not.toContain('install-converter.sh');
  });

  it('copies into the images every folder the service loads: those of the files cli/docgen.mjs reaches by import', () => {
    const reached = reachableFiles('cli/docgen.mjs');
    const folders = [...new Set([...reached].map((f) => f.split('/')[0]!).filter((f) => !f.includes('.')))].sort();
    // The walk finds the whole service (a broken walk would find nothing to check).
    expect(folders).toEqual(expect.arrayContaining(['api', 'cli', 'converter', 'security', 'worker', 'workflows']));
    expect(reached).toContain('converter/uno_bridge.py');
    const api = parseDockerfile(text).find((s) => s.name === 'api')!;
    const copied = new Set(
      api.instructions.filter((i) => i.op === 'COPY' && !i.args.startsWith('--from')).flatMap((i) => i.args.split(/\s+/).slice(0, -1)),
    );
    expect(folders.filter((f) => !copied.has(f))).toEqual([]);
  });
});

/**
 * The repository files a program reaches from `entry`: relative static and dynamic imports (`from '../x.ts'`,
 * `import('./y.ts')`), and files it opens beside itself (`new URL('./z.ts', import.meta.url)`, a literal file
 * name joined to its own directory). Paths relative to the repository.
 */
function reachableFiles(entry: string): Set<string> {
  const seen = new Set<string>();
  const visit = (rel: string) => {
    if (seen.has(rel)) return;
    seen.add(rel);
    if (!/\.(ts|mjs|js)$/.test(rel)) return;
    const code = fs.readFileSync(path.join(root, rel), 'utf8').replace(/^\s*\/\/.*$/gm, '');
    const specifiers = [
      ...code.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bnew URL\(\s*)'(\.{1,2}\/[^']+)'/g),
      ...code.matchAll(/dirname\([^;]*import\.meta\.url\)\)?,\s*'([^'./][^']*\.\w+)'/g),
    ].map((m) => m[1]!);
    for (const spec of specifiers) {
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(rel), spec));
      if (fs.existsSync(path.join(root, target))) visit(target);
    }
  };
  visit(entry);
  return seen;
}
