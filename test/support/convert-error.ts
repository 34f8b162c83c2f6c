// The ConvertError a converter call rejects with (tests of the converter).
import { expect } from 'vitest';
import { ConvertError } from '../../converter/index.ts';

export async function rejection(p: Promise<unknown>): Promise<ConvertError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(ConvertError);
    return e as ConvertError;
  }
  throw new Error('expected a rejection');
}
