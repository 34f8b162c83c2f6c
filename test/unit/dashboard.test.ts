// deploy/grafana/docgen.json as Grafana imports it: unique panel ids, panels laid out without overlap, every
// query on the dashboard's Prometheus variable with a legend. Its queries are parsed as PromQL by
// scripts/check-deploy.sh (promtool), and every metric they name is checked against a running service's
// /metrics by test/integration/metrics.test.ts.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

type Panel = {
  id: number;
  type: string;
  title: string;
  gridPos: { x: number; y: number; w: number; h: number };
  datasource: { uid: string };
  targets: { refId: string; expr: string; legendFormat: string; datasource: { uid: string } }[];
};
const dashboard = JSON.parse(fs.readFileSync(path.resolve(import.meta.dirname, '../../deploy/grafana/docgen.json'), 'utf8')) as {
  uid: string;
  title: string;
  templating: { list: { name: string; type: string }[] };
  panels: Panel[];
};

describe('the Grafana dashboard', () => {
  it('has unique panel ids and titles, laid out on the 24-column grid without overlap', () => {
    const { panels } = dashboard;
    expect(panels.length).toBeGreaterThanOrEqual(12);
    expect(new Set(panels.map((p) => p.id)).size).toBe(panels.length);
    expect(new Set(panels.map((p) => p.title)).size).toBe(panels.length);
    const cells = new Set<string>();
    for (const p of panels) {
      expect(p.gridPos.x + p.gridPos.w, p.title).toBeLessThanOrEqual(24);
      for (let x = p.gridPos.x; x < p.gridPos.x + p.gridPos.w; x++) {
        for (let y = p.gridPos.y; y < p.gridPos.y + p.gridPos.h; y++) {
          expect(cells.has(`${x},${y}`), `${p.title} overlaps at ${x},${y}`).toBe(false);
          cells.add(`${x},${y}`);
        }
      }
    }
  });

  it('queries the chosen Prometheus and jobs, with a legend for every series', () => {
    expect(dashboard.templating.list.map((v) => [v.name, v.type])).toEqual([
      ['datasource', 'datasource'],
      ['job', 'query'],
    ]);
    for (const p of dashboard.panels) {
      expect(p.datasource.uid, p.title).toBe('${datasource}');
      expect(p.targets.length, p.title).toBeGreaterThan(0);
      for (const t of p.targets) {
        expect(t.datasource.uid, p.title).toBe('${datasource}');
        expect(t.legendFormat, p.title).not.toBe('');
        // docgen's and the SDK's metrics are filtered by the job variable (process_* too).
        expect(t.expr, p.title).toContain('job=~"$job"');
      }
    }
  });
});
