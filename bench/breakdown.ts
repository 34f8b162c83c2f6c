// Where the time of one generate goes, read from its workflow history (benchmarks only).
//
// A generate's history, with eager start and local activities, is short:
//   WorkflowExecutionStarted -> WorkflowTaskScheduled -> WorkflowTaskStarted -> [WorkflowTaskCompleted ->
//   MarkerRecorded (one per local activity)]... -> WorkflowExecutionCompleted
// The markers are written when the task completes, so their event times say nothing of when each step ran.
// Their payload does: `original_schedule_time` is when the worker scheduled the local activity (the worker's
// clock, the same machine). Its `complete_time` is not usable: it is the workflow's own clock (the task's
// start plus the activities' run times), which stands still while the workflow code runs, so it reads
// earlier than the next step's schedule time. Each local activity is therefore measured from its schedule
// time to the next point (the next step's schedule time, or the task's completion): the activity plus the
// workflow activation that follows it. Server event times and the client's wall clock are on the same
// machine, so the client's send/receive times line up with them (to a millisecond).
import type { temporal } from '@temporalio/proto';

type Ts = { seconds?: unknown; nanos?: number | null } | null | undefined;

/** Wall-clock milliseconds of a protobuf Timestamp (or an RFC 3339 string, as JSON payloads carry). */
export function tsMs(t: Ts | string): number {
  if (t === undefined || t === null) return NaN;
  if (typeof t === 'string') {
    // Date.parse keeps milliseconds only; keep the sub-millisecond digits too.
    const m = /\.(\d+)Z$/.exec(t);
    const base = Date.parse(t.replace(/\.\d+Z$/, 'Z'));
    return m ? base + Number(`0.${m[1]}`) * 1000 : base;
  }
  const s = Number(t.seconds ?? 0);
  return s * 1000 + (t.nanos ?? 0) / 1e6;
}

export interface Step {
  name: string;
  ms: number;
}

const decoder = new TextDecoder();

function payloadJson(p: temporal.api.common.v1.IPayload | undefined): any {
  if (!p?.data) return undefined;
  try {
    return JSON.parse(decoder.decode(p.data));
  } catch {
    return undefined;
  }
}

/**
 * The steps of one run: `request -> workflow started` (HTTP, auth, validation, the start call), `workflow
 * started -> first task` (eager start: ~0), `first task -> first step` (creating the workflow in the
 * worker's sandbox), one entry per local activity (the activity and the workflow activation after it; the
 * last one also holds sending the task's completion and the server's commit), `workflow completed ->
 * response` (the result fetch, the response and HTTP). Local activities
 * that run in parallel are not expected here (a generate runs them one after another).
 */
export function stepsOf(history: temporal.api.history.v1.IHistory, sentAt: number, receivedAt: number): Step[] {
  const events = history.events ?? [];
  // A timeline of points; each names the interval that *starts* there (set below when it is known).
  const points: { t: number; name: string }[] = [];
  let tasks = 0;
  const scheduledType = new Map<number, string>();
  for (const e of events) {
    const t = tsMs(e.eventTime);
    if (e.workflowExecutionStartedEventAttributes)
      points.push({ t, name: tasks === 0 ? 'workflow started -> first workflow task started' : '' });
    else if (e.workflowTaskStartedEventAttributes) {
      tasks++;
      points.push({
        t,
        name: tasks === 1 ? 'first workflow task -> first step scheduled (creating the workflow)' : 'workflow task started -> next point',
      });
    } else if (e.workflowTaskCompletedEventAttributes) points.push({ t, name: 'WorkflowTaskCompleted -> next point' });
    else if (e.workflowTaskScheduledEventAttributes && tasks > 0) points.push({ t, name: 'workflow task dispatch (-> task started)' });
    else if (e.activityTaskScheduledEventAttributes) {
      const type = e.activityTaskScheduledEventAttributes.activityType?.name ?? 'activity';
      scheduledType.set(Number(e.eventId), type);
      points.push({ t, name: `activity ${type} dispatch (scheduled -> started)` });
    } else if (e.activityTaskStartedEventAttributes) {
      points.push({
        t,
        name: `activity ${scheduledType.get(Number(e.activityTaskStartedEventAttributes.scheduledEventId)) ?? ''} (started -> completed)`,
      });
    } else if (e.activityTaskCompletedEventAttributes) {
      points.push({
        t,
        name: `activity ${scheduledType.get(Number(e.activityTaskCompletedEventAttributes.scheduledEventId)) ?? ''} completed -> next point`,
      });
    } else if (e.workflowExecutionCompletedEventAttributes || e.workflowExecutionFailedEventAttributes) {
      points.push({ t, name: 'WorkflowExecutionCompleted -> response received (result fetch, response, HTTP)' });
    }
    const m = e.markerRecordedEventAttributes;
    if (m?.markerName === 'core_local_activity') {
      const data = payloadJson(m.details?.data?.payloads?.[0]);
      const scheduled = tsMs(data?.original_schedule_time ?? data?.originalScheduleTime);
      if (Number.isFinite(scheduled))
        points.push({
          t: scheduled,
          name: `local activity ${String(data.activity_type ?? data.activityType)} (+ the workflow activation after it)`,
        });
    }
  }
  points.sort((x, y) => x.t - y.t);
  const steps: Step[] = [
    { name: 'HTTP + auth + checks + start call (request -> WorkflowExecutionStarted)', ms: (points[0]?.t ?? receivedAt) - sentAt },
  ];
  for (const [i, p] of points.entries()) steps.push({ name: p.name, ms: (points[i + 1]?.t ?? receivedAt) - p.t });
  return steps.filter((s) => s.name !== '');
}

/** Medians per step name over many runs, in the order of first appearance. */
export function medianSteps(runs: Step[][]): { name: string; median: number; n: number }[] {
  const order: string[] = [];
  const by = new Map<string, number[]>();
  for (const r of runs) {
    // A step that appears twice in one run (e.g. two resolveTemplate) is summed.
    const sums = new Map<string, number>();
    for (const s of r) sums.set(s.name, (sums.get(s.name) ?? 0) + s.ms);
    for (const [name, ms] of sums) {
      if (!by.has(name)) {
        by.set(name, []);
        order.push(name);
      }
      by.get(name)!.push(ms);
    }
  }
  return order.map((name) => ({ name, median: median(by.get(name)!), n: by.get(name)!.length }));
}

export function median(xs: number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] ?? NaN) : ((s[m - 1] ?? 0) + (s[m] ?? 0)) / 2;
}

/** Wall-clock now, with the sub-millisecond part of performance.now(). */
export function wallNow(): number {
  return performance.timeOrigin + performance.now();
}
