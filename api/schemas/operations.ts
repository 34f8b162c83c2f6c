// Liveness and readiness (extensions): no credentials, so readiness says only whether each check passes.
import Type from 'typebox';
import { component } from './components.ts';

const TAG = 'Operations';

export const ReadinessReport = component(
  'ReadinessReport',
  Type.Object({
    status: Type.Union([Type.Literal('ready'), Type.Literal('not ready')]),
    notReady: Type.Array(Type.String(), { description: 'Names of the checks that failed' }),
    checks: Type.Record(Type.String(), Type.Object({ ready: Type.Boolean() }), {
      description:
        'database, temporal, storage, converter: whether each passes. The reasons are in the service log and on the METRICS_PORT /ready, never here.',
    }),
  }),
);

export const health = {
  operationId: 'health',
  tags: [TAG],
  summary: 'Liveness: the process answers (extension)',
  description: 'Always 200 while the process runs; checks no dependency (see /v1/ready). No credentials needed.',
  security: [],
  response: { 200: Type.Object({ status: Type.Literal('ok') }) },
};

export const ready = {
  operationId: 'ready',
  tags: [TAG],
  summary: 'Readiness: database, Temporal, storage and converter reachable (extension)',
  description:
    'Runs every check (each bounded to 3 s). 200 when all pass; 503 when one fails, naming it in `notReady`. No credentials needed, so it says only which check failed: the reason is logged by the service and answered by /ready on the METRICS_PORT server.',
  security: [],
  response: { 200: ReadinessReport, 503: ReadinessReport },
};
