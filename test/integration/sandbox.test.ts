// WORKFLOW_DEBUG_AIDS (worker/sandbox.ts): by default the worker starts the SDK's workflow thread with its
// sandbox timeout and promise-hook stack traces turned off; `on` keeps the SDK's behaviour. Observed from
// outside, through the stack-trace query the Temporal UI sends to a running workflow (the upload sweeper,
// which sleeps between sweeps).
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { uploadSweeperId } from '../../api/temporal.ts';
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

  async function stackTraceOfTheSweeper(debugAids: 'on' | 'off'): Promise<string> {
    const stack = await startStack({ workflowDebugAids: debugAids });
    try {
      const handle = temporal.workflow.getHandle(uploadSweeperId(stack.config.taskQueue));
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
    expect(await stackTraceOfTheSweeper('off')).toBe('');
    // The SDK's own behaviour: where the workflow waits (workflows/retention.ts, its sleep).
    expect(await stackTraceOfTheSweeper('on')).toMatch(/at .*workflows\/retention\.ts:\d+/);
  });
});
