// Refusals shared by bookmarks, highlights and notes: each belongs to one user, and a location holds one of a kind.
import { CodedError } from '../coded-error.ts';

export class ReaderNoteError extends CodedError<'NOT_FOUND' | 'DUPLICATE' | 'INVALID'> {}

/** Another user's item is reported exactly like a missing one: its existence is not theirs to learn. */
export function requireOwned<T>(row: T | undefined, what: string, id: number): T {
  if (row === undefined) throw new ReaderNoteError('NOT_FOUND', `${what} not found: ${id}`);
  return row;
}

/** Keys of `changes` whose value is given (not undefined, not null): Grimmory's partial-update rule. */
export function givenValues<T extends object>(changes: T): { [K in keyof T]?: NonNullable<T[K]> } {
  return Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined && value !== null)) as { [K in keyof T]?: NonNullable<T[K]> };
}
