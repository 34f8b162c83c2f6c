// GET /v1/health and GET /v1/ready (extensions): liveness and readiness probes for load balancers,
// orchestrators and compose health checks. Unauthenticated, so they say only whether each check passes:
// never a path, an address, an endpoint or an error text (a data directory printed here once helped a
// tenant locate another tenant's files). Operators get the details elsewhere: the METRICS_PORT server's
// /ready (not public: bind it to a private address) answers the full report, and the API logs a failing
// check with its reason when it starts failing (warn) and when it passes again (info).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyBaseLogger } from 'fastify';
import { type ReadinessCheck, type ReadinessReport, runReadiness } from '../../telemetry/health.ts';
import { health, ready as readySchema } from '../schemas/operations.ts';

export type { ReadinessCheck };

/** What an anonymous caller may see of a report: the names and whether each check passed. */
function publicReport(report: ReadinessReport) {
  return {
    status: report.status,
    notReady: report.notReady,
    checks: Object.fromEntries(Object.entries(report.checks).map(([name, c]) => [name, { ready: c.ready }])),
  };
}

const healthRoutes: FastifyPluginAsyncTypebox<{ checks: Record<string, ReadinessCheck> }> = async (app, opts) => {
  // A check's last logged failure, so a probe every few seconds logs a failure once, not once per probe.
  const failing = new Map<string, string>();
  const logChanges = (log: FastifyBaseLogger, report: ReadinessReport) => {
    for (const [check, { ready, detail }] of Object.entries(report.checks)) {
      if (!ready && failing.get(check) !== detail) log.warn({ check, detail }, 'readiness check failed');
      else if (ready && failing.has(check)) log.info({ check, detail }, 'readiness check passes again');
      if (ready) failing.delete(check);
      else failing.set(check, detail);
    }
  };
  // Probes that arrive while the checks run share that run: a flood of /v1/ready costs one run at a time.
  let running: Promise<ReadinessReport> | undefined;
  const ready = (log: FastifyBaseLogger) => {
    running ??= runReadiness(opts.checks)
      .then((report) => {
        logChanges(log, report);
        return report;
      })
      .finally(() => {
        running = undefined;
      });
    return running;
  };

  app.get('/v1/health', { schema: health }, async () => ({ status: 'ok' as const }));
  app.get('/v1/ready', { schema: readySchema }, async (request, reply) => {
    const report = await ready(request.log);
    return reply
      .code(report.notReady.length ? 503 : 200)
      .header('cache-control', 'no-store')
      .send(publicReport(report));
  });
};

export default healthRoutes;
