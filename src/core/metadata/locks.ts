// Metadata locks: a locked field keeps its value through edits, scans and metadata fetches until it is unlocked.
import type { SqlExec } from '../store/sql-exec.ts';
import { ALL_BOOK_LOCK_COLUMNS, BOOK_LOCKS, COMIC_LOCKS } from './metadata-fields.ts';

type Row = Record<string, unknown>;

/** Grimmory's "all fields locked": every lock BookMetadata carries (or the catalog's own all-fields flag). */
export function allFieldsLocked(row: Row | undefined): boolean {
  if (!row) return false;
  return row.all_fields_locked === 1 || [...BOOK_LOCKS.values()].every((column) => row[column] === 1);
}

export function isLocked(row: Row | undefined, lockColumn: string): boolean {
  return row !== undefined && (row.all_fields_locked === 1 || row[lockColumn] === 1);
}

/** The lock column a ToggleFieldLocksRequest key names (`titleLocked`, also `title`; `thumbnailLocked` is the cover's). */
export function lockColumnFor(field: string): string | undefined {
  const key = field.endsWith('Locked') ? field : `${field}Locked`;
  if (key === 'thumbnailLocked') return 'cover_locked';
  return BOOK_LOCKS.get(key);
}

/**
 * Turns the catalog's all-fields flag into the individual locks it stands for, so one of them can then be lifted
 * without lifting the others.
 */
export async function expandAllFieldsLock(exec: SqlExec, bookId: number): Promise<void> {
  const row = await exec.get('select all_fields_locked from book_metadata where book_id = ?', [bookId]);
  if (row?.all_fields_locked !== 1) return;
  await exec.run(`update book_metadata set all_fields_locked = 0, ${ALL_BOOK_LOCK_COLUMNS.map((c) => `${c} = 1`).join(', ')} where book_id = ?`, [bookId]);
  await exec.run(`update comic_metadata set ${[...COMIC_LOCKS.values()].map((c) => `${c} = 1`).join(', ')} where book_id = ?`, [bookId]);
}

/** Sets the given lock columns of one book (book_metadata columns only). */
export async function setLocks(exec: SqlExec, bookId: number, locks: ReadonlyMap<string, boolean>): Promise<void> {
  if (locks.size === 0) return;
  if ([...locks.values()].some((locked) => !locked)) await expandAllFieldsLock(exec, bookId);
  const columns = [...locks.keys()];
  await exec.run(`update book_metadata set ${columns.map((c) => `${c} = ?`).join(', ')} where book_id = ?`, [...columns.map((c) => (locks.get(c) ? 1 : 0)), bookId]);
}

/** Locks or unlocks every field of one book, its comic fields included. */
export async function setAllLocks(exec: SqlExec, bookId: number, locked: boolean): Promise<void> {
  const v = locked ? 1 : 0;
  await exec.run(`update book_metadata set all_fields_locked = ?, ${ALL_BOOK_LOCK_COLUMNS.map((c) => `${c} = ?`).join(', ')} where book_id = ?`, [v, ...ALL_BOOK_LOCK_COLUMNS.map(() => v), bookId]);
  await exec.run(`update comic_metadata set ${[...COMIC_LOCKS.values()].map((c) => `${c} = ?`).join(', ')} where book_id = ?`, [...[...COMIC_LOCKS.values()].map(() => v), bookId]);
}
