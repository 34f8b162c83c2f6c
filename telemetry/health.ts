// Readiness checks shared by the API (GET /v1/ready) and the metrics endpoint of every process (/ready).

/** One readiness check: resolves with a short detail when the dependency is usable, throws when it is not. */
export type ReadinessCheck = () => Promise<string | undefined | void>;

export interface CheckResult {
  ready: boolean;
  detail: string;
}

export interface ReadinessReport {
  status: 'ready' | 'not ready';
  /** The names of the checks that failed (empty when ready). */
  notReady: string[];
  checks: Record<string, CheckResult>;
}

const CHECK_TIMEOUT_MS = 3_000;

/** Runs every check at once, each bounded in time, and names those that failed. */
export async function runReadiness(checks: Record<string, ReadinessCheck>, timeoutMs = CHECK_TIMEOUT_MS): Promise<ReadinessReport> {
  const entries = await Promise.all(
    Object.entries(checks).map(async ([name, check]): Promise<[string, CheckResult]> => {
      let timer: NodeJS.Timeout | undefined;
      try {
        const detail = await Promise.race([
          check(),
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
          }),
        ]);
        return [name, { ready: true, detail: detail || 'ok' }];
      } catch (err) {
        return [name, { ready: false, detail: redact(err instanceof Error ? err.message : String(err)) }];
      } finally {
        clearTimeout(timer);
      }
    }),
  );
  const notReady = entries.filter(([, r]) => !r.ready).map(([n]) => n);
  const report: ReadinessReport = { status: notReady.length ? 'not ready' : 'ready', notReady, checks: Object.fromEntries(entries) };
  for (const fn of listeners) fn(report);
  return report;
}

const listeners = new Set<(report: ReadinessReport) => void>();
/** Called with every readiness report (the docgen_ready gauge of telemetry/metrics.ts). */
export function onReadinessReport(fn: (report: ReadinessReport) => void): void {
  listeners.add(fn);
}

/** Drops user:password@ from any URL in a message (a driver may echo its connection string). */
function redact(message: string): string {
  return message.replace(/\/\/[^/@\s]*@/g, '//').slice(0, 500);
}
