// Reading a workflow history in tests: the local activities it ran, from their markers (type, summary,
// outcome). A local activity has no scheduled/started/completed events: one marker records each attempt
// sequence's end, with the activity's type in its details and the call's summary in the event's metadata.
import { Client, type Connection } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';

export interface LocalActivityRun {
  eventId: string;
  type: string | undefined;
  summary: string;
  /** The marker carries a failure (the local activity failed or timed out). */
  failed: boolean;
}

export function localActivities(events: temporal.api.history.v1.IHistoryEvent[] | null | undefined): LocalActivityRun[] {
  return (events ?? [])
    .filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity')
    .map((e) => {
      const payload = e.markerRecordedEventAttributes?.details?.data?.payloads?.[0];
      const data = payload ? (defaultPayloadConverter.fromPayload(payload) as { activity_type?: string }) : {};
      return {
        eventId: String(e.eventId),
        type: data.activity_type,
        summary: e.userMetadata?.summary ? String(defaultPayloadConverter.fromPayload(e.userMetadata.summary)) : '',
        failed: Boolean(e.markerRecordedEventAttributes?.failure),
      };
    });
}

/** Every string and payload of every event of a workflow's history, decoded as text: what the Temporal UI
 *  and anyone with access to the history can read (inputs, results, markers, failures, summaries). */
export async function historyText(connection: Connection, workflowId: string): Promise<string> {
  const history = await new Client({ connection }).workflow.getHandle(workflowId).fetchHistory();
  const decoded: string[] = [];
  const walk = (v: unknown): void => {
    if (v instanceof Uint8Array) decoded.push(Buffer.from(v).toString());
    else if (typeof v === 'string') decoded.push(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') Object.values(v).forEach(walk);
  };
  walk(history.events);
  return decoded.join('\n');
}
