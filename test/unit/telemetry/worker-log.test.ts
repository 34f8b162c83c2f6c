// The worker's log lines (the Temporal runtime's logger, worker/index.ts installRuntime) carry each field
// once: a `component` bound on the logger and the line's own were both written before (issue 41 §2).
import { Writable } from 'node:stream';
import { Runtime } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { installRuntime } from '../../../worker/index.ts';
import { createLogger } from '../../../telemetry/log.ts';

describe('worker log lines', () => {
  it('name their component once, the SDK component when there is one, else worker', () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
        done();
      },
    });
    installRuntime(createLogger({ level: 'debug', name: 'docgen-worker', destination: sink }));
    const runtime = Runtime.instance();
    runtime.logger.warn('from a workflow', { sdkComponent: 'workflow', workflowId: 'w-1' });
    runtime.logger.warn('from the runtime');
    // The runtime buffers forwarded lines briefly (to order them with the core's): hand them on now.
    runtime.flushLogs();
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(line.match(/"component":/g), line).toHaveLength(1);
    expect(lines.map((l) => (JSON.parse(l) as { component: string }).component)).toEqual(['workflow', 'worker']);
  });
});
