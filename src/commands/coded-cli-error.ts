// A domain refusal (a CodedError) turned into the CLI's error: code `<PREFIX><CODE>`, the exit code its table names.
import type { CodedError } from '../core/coded-error.ts';
import { CliError } from './exit-codes.ts';

export async function withCliErrors<T, C extends string>(
  errorClass: abstract new (...args: never[]) => CodedError<C>,
  prefix: string,
  exitCodes: Record<C, number>,
  work: () => Promise<T>,
): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof errorClass) throw new CliError(`${prefix}${error.code}`, error.message, exitCodes[error.code]);
    throw error;
  }
}
