// The engine as the tests use it: every rendered document is also kept for schema validation when
// DOCGEN_TEST_OUTPUTS is set (test/support/office-outputs.ts). Also the conformance checker's engine module.
import * as engine from '../../engine/index.ts';
import { currentLabel, keepOutput } from './office-outputs.ts';

export * from '../../engine/index.ts';

export async function render(...args: Parameters<typeof engine.render>): Promise<Uint8Array> {
  const out = await engine.render(...args);
  keepOutput(out, currentLabel(), args[0]);
  return out;
}

export function renderSync(...args: Parameters<typeof engine.renderSync>): Uint8Array {
  const out = engine.renderSync(...args);
  keepOutput(out, currentLabel(), args[0]);
  return out;
}
