// What the converter tells whoever watches it (the service's metrics: telemetry/metrics.ts, wired by
// cli/service.ts): each conversion's outcome and time, and how long each waited for an instance. The
// converter knows nothing of Prometheus; listeners must be quick and must not throw.

export interface ConversionEvent {
  from: string;
  to: string;
  /** From the call to the result (queue wait included), in seconds. */
  seconds: number;
  /** The ConvertError code of a failure (TIMEOUT, QUEUE_FULL, CRASHED...), or ERROR for anything else. */
  failure?: string;
}

export interface QueueWaitEvent {
  /** ConvertOptions.tenant (the subscription); '' for conversions without one (scripts). */
  tenant: string;
  seconds: number;
}

type Listeners = { conversion: Set<(e: ConversionEvent) => void>; queueWait: Set<(e: QueueWaitEvent) => void> };
const listeners: Listeners = { conversion: new Set(), queueWait: new Set() };

/** Listens to every conversion handed to a converter (not same-format sanitizing); returns the unsubscribe. */
export function onConversion(fn: (e: ConversionEvent) => void): () => void {
  listeners.conversion.add(fn);
  return () => listeners.conversion.delete(fn);
}

/** Listens to the queue wait of every job (conversion or page count) a LibreOffice pool starts; returns the unsubscribe. */
export function onQueueWait(fn: (e: QueueWaitEvent) => void): () => void {
  listeners.queueWait.add(fn);
  return () => listeners.queueWait.delete(fn);
}

export function reportConversion(e: ConversionEvent): void {
  for (const fn of listeners.conversion) fn(e);
}

/** Called by the pool when a job starts on an instance. */
export function reportQueueWait(tenant: string, ms: number): void {
  if (listeners.queueWait.size === 0) return;
  const e = { tenant, seconds: Math.max(0, ms) / 1000 };
  for (const fn of listeners.queueWait) fn(e);
}
