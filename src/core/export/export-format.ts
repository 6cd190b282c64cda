// The Bindery export, format version 1 (docs/backup.md has the full specification): a gzip-compressed POSIX tar,
// every member's SHA-256 in its pax header, holding
//   manifest.json                 format, version, scope, counts
//   users.jsonl                   {username, name, email}
//   books.jsonl                   one line per book the exported data refers to, with its metadata and files
//   shelves.jsonl, progress.jsonl, bookmarks.jsonl, annotations.jsonl, notes.jsonl, sessions.jsonl, ratings.jsonl
//   markdown/<user>/<title> [<ref>].md   a book's highlights and notes, to read
// Lines refer to users by username and to books by `ref`, the book's id in the exporting catalog (stable within one
// export only; `bindery import bindery-export` matches books by file hash, then path, then ISBN).
import { CodedError } from '../coded-error.ts';

export const EXPORT_FORMAT = 'bindery-export';
export const EXPORT_FORMAT_VERSION = 1;

export const EXPORT_KINDS = ['users', 'books', 'shelves', 'progress', 'bookmarks', 'annotations', 'notes', 'sessions', 'ratings'] as const;
export type ExportKind = (typeof EXPORT_KINDS)[number];

export function kindMember(kind: ExportKind): string {
  return `${kind}.jsonl`;
}

export interface ExportManifest {
  format: typeof EXPORT_FORMAT;
  formatVersion: number;
  createdAt: string;
  binderyVersion: string;
  /** `user`: one user's own data; `all`: every user's (an administrator's export). */
  scope: 'user' | 'all';
  users: string[];
  counts: Record<ExportKind, number>;
}

export type ExportErrorCode = 'USER_NOT_FOUND' | 'DAMAGED' | 'UNSUPPORTED' | 'NOT_FOUND' | 'INVALID';

export class ExportError extends CodedError<ExportErrorCode> {}

/** Columns that tie a row to this catalog (ids), left out of the lines. */
export const LOCAL_COLUMNS = new Set(['id', 'user_id', 'book_id', 'book_file_id', 'shelf_id']);

export function camel(column: string): string {
  return column.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
}

export function snake(field: string): string {
  return field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** A row as a line's fields: camelCase names, local ids left out. */
export function rowFields(row: Record<string, unknown>, leaveOut: readonly string[] = []): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [column, value] of Object.entries(row)) if (!LOCAL_COLUMNS.has(column) && !leaveOut.includes(column)) out[camel(column)] = value;
  return out;
}

/** A line's fields back as a row of a table with these columns (fields the table lacks are ignored). */
export function fieldsRow(fields: Record<string, unknown>, columns: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const column of columns) {
    if (LOCAL_COLUMNS.has(column)) continue;
    const value = fields[camel(column)];
    if (value !== undefined) out[column] = value;
  }
  return out;
}

export function checkExportManifest(raw: unknown): ExportManifest {
  const m = raw as Partial<ExportManifest> | null;
  if (!m || typeof m !== 'object' || m.format !== EXPORT_FORMAT) throw new ExportError('UNSUPPORTED', 'not a Bindery export (manifest.json names another format)');
  if (typeof m.formatVersion !== 'number' || m.formatVersion < 1 || m.formatVersion > EXPORT_FORMAT_VERSION) {
    throw new ExportError('UNSUPPORTED', `export format version ${String(m.formatVersion)} is not supported by this Bindery (it reads version ${EXPORT_FORMAT_VERSION}); use a newer Bindery`);
  }
  if (!Array.isArray(m.users) || (m.scope !== 'user' && m.scope !== 'all')) throw new ExportError('DAMAGED', 'manifest.json is incomplete');
  return m as ExportManifest;
}
