// withTimeout: the time limit holds even when the event loop is too busy for its timer to run first.
import { describe, expect, it } from 'vitest';
import { FormatError } from '../../src/core/formats/errors.ts';
import { withTimeout } from '../../src/core/formats/pdf-loader.ts';

const busyFor = (ms: number): void => {
  const end = performance.now() + ms;
  while (performance.now() < end);
};

describe('withTimeout', () => {
  it('refuses work that finished after the limit before the timer could run', async () => {
    // The work ends in a microtask 20 ms after the 5 ms timer was set: the timer never got its turn.
    const late = Promise.resolve().then(() => {
      busyFor(20);
      return 'done';
    });
    const error = await withTimeout(late, 5, 'Opening the PDF').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FormatError);
    expect((error as FormatError).message).toMatch(/Opening the PDF did not finish within 5 ms/);
  });

  it('answers work that finishes within the limit', async () => {
    await expect(withTimeout(Promise.resolve('done'), 1_000, 'Opening the PDF')).resolves.toBe('done');
  });
});
