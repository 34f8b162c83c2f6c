// The converter's settings. The service reads them with every other setting (config/env.ts: CONVERTER,
// GOTENBERG_URL, CONVERTER_POOL_SIZE, CONVERTER_QUEUE_LIMIT, CONVERTER_TIMEOUT_MS, CONVERTER_RECYCLE_AFTER,
// CONVERTER_NETWORK_ISOLATION, CONVERTER_SANDBOX, SOFFICE, UNO_PYTHON, CONVERTER_MAX_MEMORY_MB, CONVERTER_SUBSCRIPTION_INSTANCES,
// CONVERTER_CONTENDED_TIMEOUT_MS, CONVERTER_SUBSCRIPTION_BUDGET_MS, CONVERTER_BUDGET_WINDOW_MS, the TEMPLATE_MAX_*
// cost limits, CSV_ESCAPE_FORMULAS) and hands them over with configureConverter() before the converter starts; the converter
// itself reads no environment. A script that imports convert() without configuring gets the defaults below.
import os from 'node:os';
import type { TemplateLimits } from '../engine/limits.ts';

export type ConverterMode = 'auto' | 'libreoffice' | 'gotenberg' | 'none';
export type NetworkIsolation = 'auto' | 'required' | 'off';
export type SandboxMode = 'auto' | 'required' | 'off';

/** Where the converter reports its events (instances started, restarted, a missing memory cap): a message
 *  and structured fields, `level` among them (default info). */
export type ConverterLog = (msg: string, fields?: { level?: 'info' | 'warn' | 'error'; [field: string]: unknown }) => void;

export interface ConverterSettings {
  /** auto = Gotenberg when gotenbergUrl is set, else the LibreOffice pool; none = no conversion. */
  mode: ConverterMode;
  gotenbergUrl: string | undefined;
  /** LibreOffice instances; 0 = the CPU count. */
  poolSize: number;
  queueLimit: number;
  timeoutMs: number;
  recycleAfter: number;
  networkIsolation: NetworkIsolation;
  /** Each LibreOffice instance in a bwrap filesystem sandbox (converter/sandbox.ts): auto = when the
   *  machine allows it, required = refuse to start without it, off = never. */
  sandbox: SandboxMode;
  soffice: string;
  unoPython: string;
  /** Address-space limit of each LibreOffice instance in MB; 0 = none. LibreOffice starts and converts
   *  ordinary documents well within the default; a hostile one (millions of paragraphs, huge whitespace)
   *  cannot take the machine's memory. */
  maxMemoryMb: number;
  /** csv output: cells a spreadsheet would run as formulas (= + - @ tab CR first, numbers aside) are
   *  written as text (converter/csv.ts). */
  csvEscapeFormulas: boolean;
  /** Default: a line on stderr. The service passes its process log (telemetry/log.ts). */
  log?: ConverterLog;
  /** Instances one subscription's conversions may hold at once; 0 = all but one (at least one). */
  subscriptionInstances: number;
  /** Time limit of a conversion while another subscription's conversion waits for an instance. */
  contendedTimeoutMs: number;
  /** Time limit of a conversion while a subscription that used less LibreOffice time recently waits for
   *  an instance (fair queuing's slice). */
  sliceMs: number;
  /** Warm instances kept idle beside the pool that take over, at once, from an instance stopped by a time
   *  limit (slice, contended, timeout), so the waiting conversion does not wait for a restart. */
  spareInstances: number;
  /** The spare serves a lighter subscription's conversion while the instances are busy (the fairness lane)
   *  only when its document is estimated at most this many pages: a short job, not another long one. */
  spareMaxPages: number;
  /** Half-life of the LibreOffice time that orders waiting subscriptions (least used recently first). */
  fairHalfLifeMs: number;
  /** LibreOffice time one subscription may use per budgetWindowMs while others convert too; 0 = half
   *  of the pool's time in the window. */
  budgetMs: number;
  budgetWindowMs: number;
  /** A directory of the deployment's own fonts (e.g. licensed Office fonts), mounted read-only into each
   *  instance's sandbox and searched before the system's; '' = none. Read when an instance starts. */
  fontsDir: string;
  /** The cost limits (engine/cost.ts) a document handed to the pool must stay within; unset = the defaults. */
  limits?: Partial<TemplateLimits>;
}

export const DEFAULT_CONVERTER_SETTINGS: Readonly<ConverterSettings> = {
  mode: 'auto',
  gotenbergUrl: undefined,
  poolSize: 0,
  queueLimit: 64,
  timeoutMs: 120_000,
  recycleAfter: 1000,
  networkIsolation: 'auto',
  sandbox: 'auto',
  soffice: 'soffice',
  unoPython: '/usr/bin/python3',
  maxMemoryMb: 2_048,
  csvEscapeFormulas: true,
  subscriptionInstances: 0,
  contendedTimeoutMs: 30_000,
  sliceMs: 2_000,
  // A pool made directly (scripts, tests) has none unless asked; the service's default is 1 (config/env.ts).
  spareInstances: 0,
  spareMaxPages: 20,
  fairHalfLifeMs: 60_000,
  budgetMs: 0,
  budgetWindowMs: 600_000,
  fontsDir: '',
};

let current: ConverterSettings = { ...DEFAULT_CONVERTER_SETTINGS };

/** Sets the converter's settings (the fields given; the rest keep their values). Takes effect for
 *  converters created afterwards: call it before startConverter(). */
export function configureConverter(settings: Partial<ConverterSettings>): void {
  current = { ...current, ...settings };
}

export function converterSettings(): Readonly<ConverterSettings> {
  return current;
}

/** Instances in a pool created without `size`: the configured pool size, else the CPU count. */
export function defaultPoolSize(): number {
  return current.poolSize > 0 ? current.poolSize : os.availableParallelism();
}
