// WORKFLOW_DEBUG_AIDS (worker/sandbox.ts): by default the worker starts the SDK's workflow thread with its
// sandbox timeout and promise-hook stack traces turned off; `on` keeps the SDK's behaviour. Observed from
// outside, through the stack-trace query the Temporal UI sends to a running workflow (an upload's
// retention timer, which sleeps).
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { client } from '../support/http.ts';
import { startStack } from '../support/stack.ts';

describe('the workflow sandbox', () => {
  let connection: Connection;
  let temporal: Client;
  beforeAll(async () => {
    connection = await Connection.connect({ address: inject('temporalAddress') });
    temporal = new Client({ connection });
  });
  afterAll(async () => {
    await connection?.close();
  });

  async function stackTraceOfARetentionTimer(debugAids: 'on' | 'off'): Promise<string> {
    const stack = await startStack({ workflowDebugAids: debugAids });
    try {
      const api = client(await stack.credentials());
      const { templateUrn } = await api.uploadPair();
      const handle = temporal.workflow.getHandle(`upload-retention-${templateUrn}`);
      try {
        return String(await handle.query('__stack_trace'));
      } catch (err) {
        return `query failed: ${(err as Error).message}`;
      }
    } finally {
      await stack.stop();
    }
  }

  it('runs workflows without the debugging aids by default (no stack trace), and with them when asked', async () => {
    // No promise was traced: the stack is empty (the UI shows an empty "Stack Trace" tab).
    expect(await stackTraceOfARetentionTimer('off')).toBe('');
    // The SDK's own behaviour: where the workflow waits (workflows/retention.ts, its sleep).
    expect(await stackTraceOfARetentionTimer('on')).toMatch(/at .*workflows\/retention\.ts:\d+/);
  });
});
