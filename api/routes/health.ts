// GET /v1/health and GET /v1/ready (extensions): liveness and readiness probes for load balancers,
// orchestrators and compose health checks. Unauthenticated, so they say only whether each check passes:
// never a path, an address, an endpoint or an error text (a data directory printed here once helped a
// tenant locate another tenant's files). Operators get the details elsewhere: the METRICS_PORT server's
// /ready (not public: bind it to a private address) answers the full report, and the API logs a failing
// check with its reason when it starts failing (warn) and when it passes again (info).
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import Type from 'typebox';
import { type ReadinessCheck, type ReadinessReport, runReadiness } from '../../telemetry/health.ts';

export type { ReadinessCheck };

const ReadySchema = Type.Object({
  status: Type.Union([Type.Literal('ready'), Type.Literal('not ready')]),
  notReady: Type.Array(Type.String(), { description: 'Names of the checks that failed' }),
  checks: Type.Record(Type.String(), Type.Object({ ready: Type.Boolean() }), {
    description: 'database, temporal, storage, converter: whether each passes. The reasons are in the service log and on the METRICS_PORT /ready, never here.',
  }),
});

/** What an anonymous caller may see of a report: the names and whether each check passed. */
function publicReport(report: ReadinessReport) {
  return {
    status: report.status,
    notReady: report.notReady,
    checks: Object.fromEntries(Object.entries(report.checks).map(([name, c]) => [name, { ready: c.ready }])),
  };
}

export default async function healthRoutes(app: FastifyInstance, opts: { checks: Record<string, ReadinessCheck> }) {
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

  app.get(
    '/v1/health',
    {
      schema: {
        tags: ['Operations'],
        summary: 'Liveness: the process answers (extension)',
        description: 'Always 200 while the process runs; checks no dependency (see /v1/ready). No credentials needed.',
        security: [],
        response: { 200: Type.Object({ status: Type.Literal('ok') }) },
      },
    },
    async () => ({ status: 'ok' as const }),
  );
  app.get(
    '/v1/ready',
    {
      schema: {
        tags: ['Operations'],
        summary: 'Readiness: database, Temporal, storage and converter reachable (extension)',
        description:
          'Runs every check (each bounded to 3 s). 200 when all pass; 503 when one fails, naming it in `notReady`. No credentials needed, so it says only which check failed: the reason is logged by the service and answered by /ready on the METRICS_PORT server.',
        security: [],
        response: { 200: ReadySchema, 503: ReadySchema },
      },
    },
    async (request, reply) => {
      const report = await ready(request.log);
      return reply.code(report.notReady.length ? 503 : 200).header('cache-control', 'no-store').send(publicReport(report));
    },
  );
}
