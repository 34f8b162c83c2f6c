// The process log: one JSON object per line on stdout (pino), for every part of a docgen process: the API's
// requests, the Temporal worker and its core (worker/logging.ts forwards them), the converter and the
// command's own events. A line carries `level` (as a word), `time` (ISO 8601), `name` (docgen-api,
// docgen-worker, docgen), `component` and, where they are known, `operationId`, `subscriptionId`,
// `workflowId` and the error `code`.
import pino, { type Logger, type LoggerOptions } from 'pino';

export type { Logger };

export interface LogOptions {
  /** pino level: trace, debug, info, warn, error, fatal, silent. */
  level: string;
  /** The process: docgen-api, docgen-worker, docgen (both). */
  name: string;
  /** Where lines go; default stdout. */
  destination?: pino.DestinationStream | 'stdout' | 'stderr';
  serializers?: LoggerOptions['serializers'];
}

export function createLogger(opts: LogOptions): Logger {
  return pino(
    {
      name: opts.name,
      level: opts.level,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      serializers: { err: pino.stdSerializers.err, ...opts.serializers },
    },
    typeof opts.destination === 'object' ? opts.destination : pino.destination({ fd: opts.destination === 'stderr' ? 2 : 1, sync: true }),
  );
}

let current: Logger | undefined;

/** The logger of this process: the one installed by the command, else a default at level info. */
export function processLogger(): Logger {
  current ??= createLogger({ level: 'info', name: 'docgen' });
  return current;
}

export function installProcessLogger(logger: Logger): void {
  current = logger;
}

/** True for a pino logger (as opposed to Fastify logger options). */
export function isLogger(value: unknown): value is Logger {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Logger).child === 'function' &&
    typeof (value as Logger).info === 'function'
  );
}
