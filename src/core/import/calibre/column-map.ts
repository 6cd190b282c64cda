// `--map-column '#read=readStatus'`: where a calibre custom column's values go in Bindery.
import { ImportError } from '../grimmory/source.ts';
import type { CustomColumn, CustomValue } from './calibre-db.ts';

/** Per-user targets need the user the reading data belongs to; the rest are book metadata. */
export const COLUMN_TARGETS = {
  readStatus: 'user',
  dateFinished: 'user',
  personalRating: 'user',
  shelf: 'user',
  tags: 'book',
  categories: 'book',
  moods: 'book',
  subtitle: 'book',
  narrator: 'book',
  pageCount: 'book',
} as const;

export type ColumnTarget = keyof typeof COLUMN_TARGETS;

export interface ColumnMapping {
  label: string;
  target: ColumnTarget;
}

const ALIASES: Record<string, ColumnTarget> = { shelves: 'shelf', rating: 'personalRating', read: 'readStatus', genres: 'categories', genre: 'categories' };

export function parseColumnMapping(text: string): ColumnMapping {
  const at = text.indexOf('=');
  if (at <= 0) throw new ImportError('INVALID_ARGUMENT', `--map-column takes '#column=target' (e.g. '#read=readStatus'), not "${text}"`);
  const label = text.slice(0, at).trim().replace(/^#/, '');
  const wanted = text.slice(at + 1).trim();
  const target = (Object.keys(COLUMN_TARGETS) as ColumnTarget[]).find((t) => t.toLowerCase() === wanted.toLowerCase()) ?? ALIASES[wanted.toLowerCase()];
  if (!target) throw new ImportError('INVALID_ARGUMENT', `unknown target "${wanted}" in --map-column; known: ${Object.keys(COLUMN_TARGETS).join(', ')}`);
  return { label, target };
}

const READ_STATUSES = new Set(['UNREAD', 'READING', 'RE_READING', 'READ', 'PARTIALLY_READ', 'PAUSED', 'WONT_READ', 'ABANDONED']);

const STATUS_WORDS: Record<string, string> = {
  read: 'READ',
  finished: 'READ',
  done: 'READ',
  yes: 'READ',
  true: 'READ',
  reading: 'READING',
  'currently reading': 'READING',
  're-reading': 'RE_READING',
  rereading: 'RE_READING',
  're reading': 'RE_READING',
  unread: 'UNREAD',
  'to read': 'UNREAD',
  'to-read': 'UNREAD',
  'want to read': 'UNREAD',
  no: 'UNREAD',
  false: 'UNREAD',
  'partially read': 'PARTIALLY_READ',
  paused: 'PAUSED',
  'on hold': 'PAUSED',
  abandoned: 'ABANDONED',
  dnf: 'ABANDONED',
  "won't read": 'WONT_READ',
  'wont read': 'WONT_READ',
};

/** A ReadStatus name from a yes/no column or from words like "reading", "to read", "DNF". */
export function readStatusOf(value: CustomValue): string | null {
  if (value === null) return null;
  if (typeof value === 'boolean') return value ? 'READ' : 'UNREAD';
  const word = String(Array.isArray(value) ? value[0] : value).trim().toLowerCase().replace(/_/g, ' ');
  const named = word.toUpperCase().replace(/[ -]/g, '_');
  return STATUS_WORDS[word] ?? (READ_STATUSES.has(named) ? named : null);
}

/** The column's values as a list of names (tags, shelves, …). */
export function namesOf(value: CustomValue): string[] {
  if (value === null) return [];
  if (Array.isArray(value)) return value.filter((v) => v.trim() !== '');
  const text = String(value).trim();
  return text ? text.split(',').map((v) => v.trim()).filter(Boolean) : [];
}

/** Which column kinds each target can take, to refuse a mapping that cannot mean anything. */
export function checkMapping(mapping: ColumnMapping, column: CustomColumn | undefined): void {
  if (!column) throw new ImportError('INVALID_ARGUMENT', `the calibre library has no column #${mapping.label} (see --list-columns)`);
  const fits: Record<ColumnTarget, string[]> = {
    readStatus: ['bool', 'text', 'enumeration'],
    dateFinished: ['datetime'],
    personalRating: ['rating', 'int', 'float'],
    shelf: ['text', 'enumeration'],
    tags: ['text', 'enumeration'],
    categories: ['text', 'enumeration'],
    moods: ['text', 'enumeration'],
    subtitle: ['text', 'comments', 'enumeration'],
    narrator: ['text', 'enumeration'],
    pageCount: ['int', 'float'],
  };
  if (!fits[mapping.target].includes(column.datatype)) {
    throw new ImportError('INVALID_ARGUMENT', `#${column.label} holds ${column.datatype} values, which cannot go to ${mapping.target} (it takes ${fits[mapping.target].join(', ')})`);
  }
}
