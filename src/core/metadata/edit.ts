// Editing one book's metadata (MetadataUpdateWrapper), with Grimmory's rules: a field locked in the catalog keeps its
// value; clear flags empty a field; the replace mode decides between overwriting, filling gaps and taking only what
// was given; the lock flags in the request are stored last, so a lock lifted by a request applies from the next one.
import type { SqlExec } from '../store/sql-exec.ts';
import { nowIso } from '../time.ts';
import { allFieldsLocked, expandAllFieldsLock, isLocked } from './locks.ts';
import {
  BOOK_LOCKS,
  COMIC_LOCKS,
  COMIC_NAME_LISTS,
  COMIC_ROLES,
  COMIC_SCALARS,
  columnValue,
  MetadataEditError,
  NAME_FIELDS,
  nameList,
  SCALAR_FIELDS,
  type NameKind,
  type Scalar,
} from './metadata-fields.ts';
import { refreshSearchText } from '../books/search-text.ts';
import { currentComicNames, currentCreators, currentNames, replaceComicNames, replaceCreators, replaceNames } from './names-store.ts';
import { emitEvent } from '../events/live-events.ts';

export const REPLACE_MODES = ['REPLACE_ALL', 'REPLACE_MISSING', 'REPLACE_WHEN_PROVIDED'] as const;
export type ReplaceMode = (typeof REPLACE_MODES)[number];

export interface EditOptions {
  /** null: take every value that is given, leave the rest (the bulk editor's mode). */
  replaceMode: ReplaceMode | null;
  /** Add to the existing authors and categories instead of replacing them. */
  mergeCategories: boolean;
  mergeMoods: boolean;
  mergeTags: boolean;
}

interface ParsedComic {
  scalars: Map<string, Scalar | undefined>;
  lists: Map<string, string[] | undefined>;
  locks: Map<string, boolean>;
}

/** A validated edit: every value already in the form its column stores. */
export interface ParsedEdit {
  scalars: Map<string, Scalar | undefined>;
  names: Map<NameKind, string[] | undefined>;
  clear: Set<string>;
  /** Lock column → locked, for the lock flags the request carries. */
  locks: Map<string, boolean>;
  comic: ParsedComic | undefined;
  thumbnailUrl: string | undefined;
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function lockValue(raw: unknown, path: string): boolean | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw === 'boolean') return raw;
  if (raw === 'true' || raw === 'false') return raw === 'true';
  throw new MetadataEditError('INVALID', `${path}: expected true or false`);
}

function parseComic(raw: unknown): ParsedComic | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (!isObject(raw)) throw new MetadataEditError('INVALID', 'metadata.comicMetadata: expected an object');
  const scalars = new Map(COMIC_SCALARS.map((f) => [f.key, columnValue(f, raw[f.key], 'metadata.comicMetadata')]));
  const lists = new Map<string, string[] | undefined>();
  for (const key of [...COMIC_NAME_LISTS.map((l) => l.key), ...COMIC_ROLES.map((r) => r.key)]) lists.set(key, nameList(raw[key], `metadata.comicMetadata.${key}`));
  const locks = new Map<string, boolean>();
  for (const [key, column] of COMIC_LOCKS) {
    const value = lockValue(raw[key], `metadata.comicMetadata.${key}`);
    if (value !== undefined) locks.set(column, value);
  }
  return { scalars, lists, locks };
}

/** Checks and converts a MetadataUpdateWrapper's metadata and clear flags; throws INVALID naming the bad field. */
export function parseEdit(metadata: unknown, clearFlags: unknown): ParsedEdit | undefined {
  if (metadata === undefined || metadata === null) return undefined;
  if (!isObject(metadata)) throw new MetadataEditError('INVALID', 'metadata: expected an object');
  if (clearFlags !== undefined && clearFlags !== null && !isObject(clearFlags)) throw new MetadataEditError('INVALID', 'clearFlags: expected an object');
  const clear = new Set(Object.entries(clearFlags ?? {}).filter(([, v]) => v === true || v === 'true').map(([k]) => k));
  const scalars = new Map(SCALAR_FIELDS.map((f) => [f.key, columnValue(f, metadata[f.key])]));
  const names = new Map<NameKind, string[] | undefined>();
  for (const kind of Object.keys(NAME_FIELDS) as NameKind[]) names.set(kind, nameList(metadata[kind], `metadata.${kind}`));
  const locks = new Map<string, boolean>();
  for (const [key, column] of BOOK_LOCKS) {
    const value = lockValue(metadata[key], `metadata.${key}`);
    if (value !== undefined) locks.set(column, value);
  }
  const thumbnail = metadata.thumbnailUrl;
  if (thumbnail !== undefined && thumbnail !== null && typeof thumbnail !== 'string') throw new MetadataEditError('INVALID', 'metadata.thumbnailUrl: expected a string');
  return { scalars, names, clear, locks, comic: parseComic(metadata.comicMetadata), thumbnailUrl: typeof thumbnail === 'string' && thumbnail.trim() !== '' ? thumbnail.trim() : undefined };
}

function missing(value: unknown): boolean {
  return value === null || value === undefined || (typeof value === 'string' && value.trim() === '');
}

/** Whether a field gets `value` under the replace mode, given what it holds now. */
function takes(mode: ReplaceMode | null, current: unknown, value: Scalar | undefined): boolean {
  switch (mode) {
    case null:
      return value !== undefined && value !== null;
    case 'REPLACE_ALL':
      return true;
    case 'REPLACE_MISSING':
      return missing(current) && value !== undefined && value !== null;
    case 'REPLACE_WHEN_PROVIDED':
      return !missing(value);
  }
}

/** The names a list ends up with, or undefined when it stays as it is. */
function resolvedNames(mode: ReplaceMode | null, current: string[], given: string[], merge: boolean): string[] | undefined {
  if (given.length === 0) return mode === 'REPLACE_ALL' ? [] : undefined;
  if (mode === 'REPLACE_MISSING') return current.length === 0 ? given : undefined;
  return merge ? [...current, ...given.filter((n) => !current.includes(n))] : given;
}

/** Everything the edit could change, to tell a real change from a no-op. */
async function snapshot(exec: SqlExec, bookId: number): Promise<string> {
  const row = await exec.get('select * from book_metadata where book_id = ?', [bookId]);
  const comic = await exec.get('select * from comic_metadata where book_id = ?', [bookId]);
  const lists: unknown[] = [];
  for (const field of Object.values(NAME_FIELDS)) lists.push(await currentNames(exec, bookId, field));
  if (comic) {
    for (const list of COMIC_NAME_LISTS) lists.push(await currentComicNames(exec, bookId, list));
    for (const role of COMIC_ROLES) lists.push(await currentCreators(exec, bookId, role.role));
  }
  return JSON.stringify([row, comic ?? null, lists]);
}

function hasLockChanges(edit: ParsedEdit, row: Record<string, unknown>, comicRow: Record<string, unknown> | undefined): boolean {
  const all = row.all_fields_locked === 1;
  for (const [column, locked] of edit.locks) if ((all || row[column] === 1) !== locked) return true;
  for (const [column, locked] of edit.comic?.locks ?? []) if ((all || comicRow?.[column] === 1) !== locked) return true;
  return false;
}

function hasComicContent(comic: ParsedComic): boolean {
  return [...comic.scalars.values()].some((v) => !missing(v)) || [...comic.lists.values()].some((l) => (l?.length ?? 0) > 0) || [...comic.locks.values()].some(Boolean);
}

async function applyComic(exec: SqlExec, bookId: number, comic: ParsedComic, bookRow: Record<string, unknown>, mode: ReplaceMode | null): Promise<void> {
  let row = await exec.get('select * from comic_metadata where book_id = ?', [bookId]);
  if (!row) {
    if (!hasComicContent(comic)) return;
    await exec.run('insert into comic_metadata (book_id) values (?)', [bookId]);
    row = (await exec.get('select * from comic_metadata where book_id = ?', [bookId])) ?? {};
  }
  const locked = (column: string): boolean => bookRow.all_fields_locked === 1 || row[column] === 1;
  const sets: [string, Scalar][] = [];
  for (const field of COMIC_SCALARS) {
    if (locked(field.lockColumn)) continue;
    const value = comic.scalars.get(field.key);
    if (takes(mode, row[field.column], value)) sets.push([field.column, value ?? null]);
  }
  if (sets.length > 0) await exec.run(`update comic_metadata set ${sets.map(([c]) => `${c} = ?`).join(', ')} where book_id = ?`, [...sets.map(([, v]) => v), bookId]);
  for (const list of COMIC_NAME_LISTS) {
    if (locked(list.lockColumn)) continue;
    const next = resolvedNames(mode, await currentComicNames(exec, bookId, list), comic.lists.get(list.key) ?? [], mode === null);
    if (next) await replaceComicNames(exec, bookId, list, next);
  }
  for (const role of COMIC_ROLES) {
    if (locked(role.lockColumn) || locked('creators_locked')) continue;
    const next = resolvedNames(mode, await currentCreators(exec, bookId, role.role), comic.lists.get(role.key) ?? [], false);
    if (next) await replaceCreators(exec, bookId, role.role, next);
  }
  if (comic.locks.size > 0) {
    const columns = [...comic.locks.keys()];
    await exec.run(`update comic_metadata set ${columns.map((c) => `${c} = ?`).join(', ')} where book_id = ?`, [...columns.map((c) => (comic.locks.get(c) ? 1 : 0)), bookId]);
  }
}

export interface EditOutcome {
  /** Something in the catalog changed (values or locks). */
  changed: boolean;
  /** A cover to fetch from this address, the cover not being locked. */
  coverUrl: string | undefined;
}

/** Applies a parsed edit to one book inside the caller's write transaction. */
export async function applyEdit(exec: SqlExec, bookId: number, edit: ParsedEdit, options: EditOptions): Promise<EditOutcome> {
  let row = await exec.get('select * from book_metadata where book_id = ?', [bookId]);
  if (!row) {
    const book = await exec.get('select id from book where id = ?', [bookId]);
    if (!book) throw new MetadataEditError('NOT_FOUND', `Book not found with ID: ${bookId}`);
    await exec.run('insert into book_metadata (book_id) values (?)', [bookId]);
    row = (await exec.get('select * from book_metadata where book_id = ?', [bookId])) ?? {};
  }
  const comicRow = await exec.get('select * from comic_metadata where book_id = ?', [bookId]);
  // With every field locked only a change of the locks themselves gets through.
  if (allFieldsLocked(row) && !hasLockChanges(edit, row, comicRow)) return { changed: false, coverUrl: undefined };
  const before = await snapshot(exec, bookId);
  const mode = options.replaceMode;

  const sets: [string, Scalar][] = [];
  for (const field of SCALAR_FIELDS) {
    if (isLocked(row, field.lockColumn)) continue;
    if (edit.clear.has(field.key)) {
      sets.push([field.column, null]);
      continue;
    }
    const value = edit.scalars.get(field.key);
    if (takes(mode, row[field.column], value)) sets.push([field.column, value ?? null]);
  }
  if (sets.length > 0) await exec.run(`update book_metadata set ${sets.map(([c]) => `${c} = ?`).join(', ')} where book_id = ?`, [...sets.map(([, v]) => v), bookId]);

  for (const kind of Object.keys(NAME_FIELDS) as NameKind[]) {
    const field = NAME_FIELDS[kind];
    if (isLocked(row, field.lockColumn)) continue;
    if (edit.clear.has(kind)) {
      await replaceNames(exec, bookId, field, []);
      continue;
    }
    // Grimmory merges authors under the same flag as categories.
    const merge = kind === 'moods' ? options.mergeMoods : kind === 'tags' ? options.mergeTags : options.mergeCategories;
    const next = resolvedNames(mode, await currentNames(exec, bookId, field), edit.names.get(kind) ?? [], merge);
    if (next) await replaceNames(exec, bookId, field, next);
  }

  if (edit.comic) await applyComic(exec, bookId, edit.comic, row, mode);

  if (edit.locks.size > 0) {
    if ([...edit.locks.values()].some((locked) => !locked)) await expandAllFieldsLock(exec, bookId);
    const columns = [...edit.locks.keys()];
    await exec.run(`update book_metadata set ${columns.map((c) => `${c} = ?`).join(', ')} where book_id = ?`, [...columns.map((c) => (edit.locks.get(c) ? 1 : 0)), bookId]);
  }

  const changed = (await snapshot(exec, bookId)) !== before;
  if (changed) {
    await refreshSearchText(exec, [bookId]);
    await exec.run('update book set metadata_updated_at = ? where id = ?', [nowIso(), bookId]);
    await emitEvent(exec, { kind: 'books-changed', bookIds: [bookId] });
  }
  // The cover lock as it was before this request decides, as in Grimmory.
  const coverUrl = edit.thumbnailUrl && !isLocked(row, 'cover_locked') ? edit.thumbnailUrl : undefined;
  return { changed, coverUrl };
}
