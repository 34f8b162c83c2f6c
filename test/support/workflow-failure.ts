// What went wrong inside a workflow, for an assertion's message: a 500 FUNCTION_EXECUTION_ERROR names only
// the workflow, and the test stack logs nothing. Reads the run's history from the run's Temporal server and
// lists every failure it holds (activity and local-activity failures, the workflow's own), causes included.
import { Client, Connection } from '@temporalio/client';
import { inject } from 'vitest';

type Failure = { message?: string | null; cause?: Failure | null; applicationFailureInfo?: { type?: string | null } | null };

function chain(f: Failure | null | undefined): string {
  const parts: string[] = [];
  for (let c = f; c; c = c.cause)
    parts.push(`${c.applicationFailureInfo?.type ? `[${c.applicationFailureInfo.type}] ` : ''}${c.message ?? ''}`);
  return parts.join(' <- ');
}

export async function workflowFailures(workflowId: string): Promise<string> {
  const connection = await Connection.connect({ address: inject('temporalAddress') });
  try {
    const history = await new Client({ connection }).workflow.getHandle(workflowId).fetchHistory();
    const found: string[] = [];
    for (const e of history.events ?? []) {
      const failure =
        e.activityTaskFailedEventAttributes?.failure ??
        e.workflowExecutionFailedEventAttributes?.failure ??
        e.workflowTaskFailedEventAttributes?.failure ??
        e.markerRecordedEventAttributes?.failure;
      if (failure) found.push(`event ${String(e.eventId)}: ${chain(failure as Failure)}`);
      if (e.activityTaskTimedOutEventAttributes)
        found.push(`event ${String(e.eventId)}: activity timed out: ${chain(e.activityTaskTimedOutEventAttributes.failure as Failure)}`);
    }
    return found.join('\n') || '(no failure in the history)';
  } catch (err) {
    return `(history of ${workflowId} unreadable: ${(err as Error).message})`;
  } finally {
    await connection.close();
  }
}
