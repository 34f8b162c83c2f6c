import { describe, expect, it } from 'vitest';
import { holdBytes, takeHeld } from '../../../activities/held.ts';

describe('held merge outputs (activities/held.ts)', () => {
  it('gives the very array once, and only for the key and checksum it was held under', () => {
    const bytes = new Uint8Array([1, 2, 3]);
    holdBytes({ key: 'scratch/run-a/merged.docx', sha256: 'aa' }, bytes);
    expect(takeHeld({ key: 'scratch/run-a/merged.docx', sha256: 'bb' })).toBeUndefined();
    expect(takeHeld({ key: 'scratch/run-b/merged.docx', sha256: 'aa' })).toBeUndefined();
    expect(takeHeld({ key: 'scratch/run-a/merged.docx', sha256: 'aa' })).toBe(bytes);
    expect(takeHeld({ key: 'scratch/run-a/merged.docx', sha256: 'aa' })).toBeUndefined();
  });

  it('keeps a bounded number of documents, dropping the oldest', () => {
    for (let i = 0; i < 40; i++) holdBytes({ key: `scratch/run-${i}/merged.docx`, sha256: 'x' }, new Uint8Array(1));
    expect(takeHeld({ key: 'scratch/run-0/merged.docx', sha256: 'x' })).toBeUndefined();
    expect(takeHeld({ key: 'scratch/run-39/merged.docx', sha256: 'x' })).toBeDefined();
  });

  it('holds nothing without a checksum, nor a document too large to keep', () => {
    holdBytes({ key: 'scratch/run-c/merged.docx', sha256: '' }, new Uint8Array(1));
    expect(takeHeld({ key: 'scratch/run-c/merged.docx', sha256: '' })).toBeUndefined();
    holdBytes({ key: 'scratch/run-d/merged.docx', sha256: 'd' }, new Uint8Array(9 * 1024 * 1024));
    expect(takeHeld({ key: 'scratch/run-d/merged.docx', sha256: 'd' })).toBeUndefined();
  });
});
