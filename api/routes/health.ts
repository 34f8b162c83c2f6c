// GET /v1/health and GET /v1/ready (extensions): liveness and readiness probes for load balancers,
// orchestrators and compose health checks. Unauthenticated; they reveal which dependency is down, never a
// credential or an address with its password.
import type { FastifyInstance } from 'fastify';
import Type from 'typebox';
import { type ReadinessCheck, runReadiness } from '../../telemetry/health.ts';

export type { ReadinessCheck };

const CheckSchema = Type.Object({ ready: Type.Boolean(), detail: Type.String() });
const ReadySchema = Type.Object({
  status: Type.Union([Type.Literal('ready'), Type.Literal('not ready')]),
  notReady: Type.Array(Type.String(), { description: 'Names of the checks that failed' }),
  checks: Type.Record(Type.String(), CheckSchema, { description: 'database, temporal, storage, converter: ready or not, and why' }),
});

export default async function healthRoutes(app: FastifyInstance, opts: { checks: Record<string, ReadinessCheck> }) {
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
          'Runs every check (each bounded to 3 s). 200 when all pass; 503 when one fails, naming it in `notReady` with the reason in `checks`. No credentials needed.',
        security: [],
        response: { 200: ReadySchema, 503: ReadySchema },
      },
    },
    async (_request, reply) => {
      const report = await runReadiness(opts.checks);
      return reply.code(report.notReady.length ? 503 : 200).header('cache-control', 'no-store').send(report);
    },
  );
}
