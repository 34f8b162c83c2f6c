import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../config/env.ts';

describe('PAGE_COUNT', () => {
  it('defaults to auto and accepts exact and document', () => {
    expect(loadConfig({}).pageCount).toBe('auto');
    expect(loadConfig({ PAGE_COUNT: 'exact' }).pageCount).toBe('exact');
    expect(loadConfig({ PAGE_COUNT: 'document', CONVERTER: 'none' }).pageCount).toBe('document');
  });

  it('refuses an unknown value and exact without a converter, naming the setting', () => {
    expect(() => loadConfig({ PAGE_COUNT: 'estimate' })).toThrow(/PAGE_COUNT must be one of auto, exact, document/);
    expect(() => loadConfig({ PAGE_COUNT: 'exact', CONVERTER: 'none' })).toThrow(ConfigError);
    expect(() => loadConfig({ PAGE_COUNT: 'exact', CONVERTER: 'none' })).toThrow(/PAGE_COUNT=exact needs a converter/);
  });
});
