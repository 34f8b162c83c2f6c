// The Helm chart (deploy/helm/docgen), read without helm (scripts/check-deploy.sh renders and validates it
// with helm and kubeconform in CI): every variable it sets on the docgen containers is a setting of
// config/env.ts (a misspelt one would be silently ignored), the pods' grace periods cover the drains they
// must allow, the worker's sandbox settings take the values config/env.ts accepts, and the probes use the
// service's health and readiness paths.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { drainGraceMs } from '../../cli/service.ts';
import { allSettings, loadConfig } from '../../config/env.ts';

const root = path.resolve(import.meta.dirname, '../..');
const chart = path.join(root, 'deploy/helm/docgen');
const read = (f: string) => fs.readFileSync(path.join(chart, f), 'utf8');
type Values = Record<string, any>;
const values = parse(read('values.yaml')) as Values;
const production = parse(fs.readFileSync(path.join(root, 'deploy/helm/values-production.yaml'), 'utf8')) as Values;
const known = new Set(Object.values(allSettings()).map((s) => s.env));

describe('the Helm chart', () => {
  it('sets on the docgen containers only variables that config/env.ts defines', () => {
    const templates = ['_helpers.tpl', 'api.yaml', 'worker.yaml'].map((f) => read(path.join('templates', f))).join('\n');
    const named = [...templates.matchAll(/^\s*- name: ([A-Z][A-Z0-9_]*)$/gm)].map((m) => m[1]!);
    expect(named.length).toBeGreaterThan(12);
    const fromValues = [values, production]
      .flatMap((v) => [
        ...Object.keys(v.env ?? {}),
        ...Object.keys(v.api?.env ?? {}),
        ...Object.keys(v.worker?.env ?? {}),
        ...(v.extraSecretEnv ?? []).flatMap((e: { keys: string[] }) => e.keys),
        v.database?.urlKey,
        v.storage?.accessKeyIdKey,
        v.storage?.secretAccessKeyKey,
      ])
      .filter((k): k is string => typeof k === 'string');
    expect([...named, ...fromValues].filter((v) => !known.has(v))).toEqual([]);
    // The check sees a misspelling.
    expect(known.has('WORKER_DRAIN_SECOND')).toBe(false);
  });

  it('gives each pod the grace its process needs to drain', () => {
    for (const v of [values, production]) {
      const api = { ...values.api, ...v.api };
      const worker = { ...values.worker, ...v.worker };
      const env = Object.fromEntries(Object.entries({ ...values.env, ...v.env, ...api.env }).map(([k, x]) => [k, String(x)]));
      expect(api.terminationGracePeriodSeconds * 1000).toBeGreaterThanOrEqual(
        drainGraceMs(loadConfig(env)) + api.preStopSleepSeconds * 1000,
      );
      // The worker: WORKER_DRAIN_SECONDS from drainSeconds, the grace that plus the pools' shutdown.
      expect(loadConfig({ WORKER_DRAIN_SECONDS: String(worker.drainSeconds) }).workerDrainSeconds).toBe(worker.drainSeconds);
      expect(worker.terminationGraceExtraSeconds).toBeGreaterThanOrEqual(15);
    }
    expect(read('templates/worker.yaml')).toContain(
      'terminationGracePeriodSeconds: {{ add $w.drainSeconds $w.terminationGraceExtraSeconds }}',
    );
  });

  it("takes for the worker's sandbox the values config/env.ts accepts; production requires it", () => {
    for (const v of [values, production]) {
      const worker = { ...values.worker, ...v.worker };
      const config = loadConfig({ CONVERTER_SANDBOX: worker.sandbox, CONVERTER_NETWORK_ISOLATION: worker.networkIsolation });
      expect(config.converterSandbox).toBe(worker.sandbox);
      expect(config.converterNetworkIsolation).toBe(worker.networkIsolation);
    }
    expect(production.worker.sandbox).toBe('required');
    expect(production.worker.seccompProfile.type).toBe('Localhost');
    expect(() => loadConfig({ CONVERTER_SANDBOX: 'always' })).toThrow(/CONVERTER_SANDBOX/);
  });

  it('probes the API on /v1/health and /v1/ready and the worker on its metrics port', () => {
    const api = read('templates/api.yaml');
    expect(api).toMatch(/livenessProbe:\n\s+httpGet: \{ path: \/v1\/health, port: http \}/);
    expect(api).toMatch(/readinessProbe:\n\s+httpGet: \{ path: \/v1\/ready, port: http \}/);
    const worker = read('templates/worker.yaml');
    expect(worker).toMatch(/readinessProbe:\n\s+httpGet: \{ path: \/ready, port: metrics \}/);
    // The KEDA triggers watch every task queue the workers poll (worker/index.ts).
    expect(worker).toContain('list "" "-office" "-batch"');
    expect(worker).toContain('- type: temporal');
  });
});
