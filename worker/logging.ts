// The Temporal side of the process log (telemetry/log.ts): the SDK's runtime logger, which also receives the
// workflow and activity context loggers and, forwarded, the Rust core's logs, written as JSON lines by the
// process's pino logger. A failure that is the caller's mistake (an error code of core/errors.ts with a 4xx
// status: a broken template, an expired upload) is an `info` line with its `code` and message, not a
// warning with a stack trace; anything else keeps its level and its serialized error.
import { ApplicationFailure, type LogLevel, type LogMetadata, type Logger as TemporalLogger } from '@temporalio/common';
import { makeTelemetryFilterString, type ActivityInterceptorsFactory } from '@temporalio/worker';
import { errorRegistry, isErrorCode } from '../core/errors.ts';
import type { Logger } from '../telemetry/log.ts';

const LEVELS: Record<LogLevel, 'trace' | 'debug' | 'info' | 'warn' | 'error'> = {
  TRACE: 'trace',
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
};

/** The core's log filter for a process logging at `pinoLevel`. The SDK reports routine state changes at
 *  INFO, which this log files under debug (see temporalLogger): at info and warn the core sends WARN and
 *  up, at debug its INFO, at trace its DEBUG; the crates below it (gRPC, HTTP) never below WARN. */
export function coreLogFilter(pinoLevel: string): string {
  const core: LogLevel =
    pinoLevel === 'trace' ? 'DEBUG' : pinoLevel === 'debug' ? 'INFO' : pinoLevel === 'info' || pinoLevel === 'warn' ? 'WARN' : 'ERROR';
  return makeTelemetryFilterString({ core, other: core === 'ERROR' ? 'ERROR' : 'WARN' });
}

/** The caller's mistake an error is, if it is one: its error code and message. */
export function callerMistake(error: unknown): { code: string; message: string } | undefined {
  for (let e = error, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    if (e instanceof ApplicationFailure && isErrorCode(e.type) && errorRegistry[e.type].status < 500)
      return { code: e.type, message: e.message };
  }
  return undefined;
}

/** What a workflow id says of its operation (README, "Operators: finding a job"): `<kind>-<operationId>`,
 *  or `<kind>-<subscriptionId>-key-<key>` for a request with an Idempotency-Key. */
export function idsOfWorkflow(workflowId: unknown): { operationId?: string; subscriptionId?: string } {
  if (typeof workflowId !== 'string') return {};
  const keyed = KEYED_ID.exec(workflowId);
  if (keyed) return { subscriptionId: keyed[1]! };
  const plain = PLAIN_ID.exec(workflowId);
  return plain ? { operationId: plain[1]! } : {};
}

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const KEYED_ID = new RegExp(`^(?:generate-async|generate|manage)-(${UUID})-key-`);
const PLAIN_ID = new RegExp(`^(?:generate-async|generate|manage)-(${UUID})$`);

/** The SDK's Logger writing through pino: `sdkComponent` becomes `component` (else `component`, given
 *  here rather than bound on `logger`: a bound one and the line's own would both be written), ids are added from the
 *  workflow id when missing, errors are classified as above. A workflow's failure reaches the log from the
 *  workflow thread as a plain Error (its failure type is lost on the way): it is the caller's mistake when
 *  it carries the message of the mistake an activity of that workflow just failed with. */
export function temporalLogger(logger: Logger, component = 'worker'): TemporalLogger {
  const recent = new Map<string, { code: string; message: string }>();
  const remember = (workflowId: unknown, mistake: { code: string; message: string }) => {
    if (typeof workflowId !== 'string') return;
    recent.delete(workflowId);
    recent.set(workflowId, mistake);
    if (recent.size > 1000) recent.delete(recent.keys().next().value!);
  };
  const mistakeOf = (error: unknown, workflowId: unknown) => {
    const found = callerMistake(error);
    if (found) return found;
    const earlier = typeof workflowId === 'string' ? recent.get(workflowId) : undefined;
    return earlier && error instanceof Error && error.message === earlier.message ? earlier : undefined;
  };
  const log = (level: LogLevel, message: string, meta: LogMetadata = {}) => {
    const { sdkComponent, error } = meta as Record<string, unknown>;
    let to = LEVELS[level];
    // The office worker (worker/index.ts) runs activities only, by design: the core's warning about it is not news.
    if (sdkComponent === 'core' && message === 'No workflows registered, not polling for workflow tasks') to = 'debug';
    // The SDK's and the core's INFO lines are routine (a worker polling, a bundle built): debug here. The
    // workflows' and activities' own lines keep their level.
    if (to === 'info' && sdkComponent !== 'workflow' && sdkComponent !== 'activity') to = 'debug';
    // A line below the log's level goes no further: the SDK logs every activity's start and end at debug
    // (several per generate), and building their fields cost more than the steps' own bookkeeping. A line
    // with an error goes on: a caller's mistake is remembered for the workflow's failure that follows it.
    if (error === undefined && !logger.isLevelEnabled(to)) return;
    // An activity's task token completes it from outside: not a thing to ship with the logs.
    const { sdkComponent: _component, error: _error, spanContexts: _spans, taskToken: _token, ...rest } = meta as Record<string, unknown>;
    const fields: Record<string, unknown> = { component: sdkComponent ?? component, ...idsOfWorkflow(rest.workflowId), ...rest };
    if (error !== undefined) {
      const mistake = mistakeOf(error, rest.workflowId);
      if (mistake) remember(rest.workflowId, mistake);
      if (mistake && (to === 'warn' || to === 'error')) {
        to = 'info';
        fields.code = mistake.code;
        fields.reason = mistake.message;
        message = `${message}: the caller's request (${mistake.code})`;
      } else {
        fields.err = error;
        if (error instanceof ApplicationFailure && error.type) fields.code = error.type;
      }
    }
    logger[to](fields, message);
  };
  return {
    log,
    trace: (m, meta) => log('TRACE', m, meta),
    debug: (m, meta) => log('DEBUG', m, meta),
    info: (m, meta) => log('INFO', m, meta),
    warn: (m, meta) => log('WARN', m, meta),
    error: (m, meta) => log('ERROR', m, meta),
  };
}

/** Finds `subscriptionId` and `operationId` in an activity's input (the steps carry them, nested a level or two). */
function idsOfInput(
  value: unknown,
  depth = 0,
  found: { subscriptionId?: string; operationId?: string } = {},
): { subscriptionId?: string; operationId?: string } {
  if (value === null || typeof value !== 'object' || depth > 3) return found;
  for (const [k, v] of Object.entries(value)) {
    if ((k === 'subscriptionId' || k === 'operationId') && typeof v === 'string') found[k] ??= v;
    else if (typeof v === 'object') idsOfInput(v, depth + 1, found);
    if (found.subscriptionId && found.operationId) break;
  }
  return found;
}

/** Adds the subscription and operation of an activity's input to every line its execution logs (the SDK's
 *  "Activity failed" included). */
export const activityLogContext: ActivityInterceptorsFactory = () => {
  let ids: Record<string, string> = {};
  return {
    inbound: {
      execute: (input, next) => {
        ids = idsOfInput(input.args) as Record<string, string>;
        return next(input);
      },
    },
    outbound: {
      getLogAttributes: (input, next) => next({ ...input, ...ids }),
    },
  };
};
