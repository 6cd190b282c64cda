// Assertions shared by the format extractor tests.
import { expect } from 'vitest';
import { FormatError, type FormatErrorCode } from '../../src/core/formats/errors.ts';

/** Awaits a promise that must reject with a FormatError of this code (and, optionally, a message matching `message`). */
export async function expectFormatError(promise: Promise<unknown>, code: FormatErrorCode, message?: RegExp): Promise<FormatError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(FormatError);
  const formatError = error as FormatError;
  expect(formatError.code).toBe(code);
  if (message) expect(formatError.message).toMatch(message);
  return formatError;
}
