// core/errors.ts: one registry of codes, statuses and messages.
import { describe, expect, it } from 'vitest';
import { ApiError, errorRegistry, innerError, RETRYABLE_CODES } from '../../../core/errors.ts';

describe('the error registry', () => {
  it("marks retryable exactly the failures a later retry of the same request can get past: the service's, a rate limit, a timeout", () => {
    for (const [code, spec] of Object.entries(errorRegistry)) {
      expect(RETRYABLE_CODES.includes(code as keyof typeof errorRegistry), code).toBe(spec.status >= 500 || spec.status === 429);
    }
    expect(RETRYABLE_CODES).toContain('GENERATION_TIMEOUT');
    expect(RETRYABLE_CODES).not.toContain('VALIDATION_ERROR');
  });

  it('renders a code with its status and message, the message standing for the user message too', () => {
    expect(innerError('TEMPLATE_NOT_FOUND')).toEqual({
      code: 'TEMPLATE_NOT_FOUND',
      message: 'The template could not be resolved.',
      userMessage: 'The template could not be resolved.',
    });
    const e = new ApiError('VALIDATION_ERROR', 'document.name is required');
    expect([e.status, e.code, e.innerErrors]).toEqual([
      400,
      'VALIDATION_ERROR',
      [innerError('VALIDATION_ERROR', 'document.name is required')],
    ]);
  });
});
