// The sidecar file format Grimmory reads and writes (`<book>.metadata.json`): its shape, a validating parser that
// keeps only the fields it knows, and the serializer.
import type { ComicValues } from '../books/comic-values.ts';
import { SidecarError } from './errors.ts';

export interface SidecarSeries {
  name?: string;
  number?: number;
  total?: number;
}

export interface SidecarIdentifiers {
  asin?: string;
  goodreadsId?: string;
  googleId?: string;
  hardcoverId?: string;
  hardcoverBookId?: string;
  comicvineId?: string;
  lubimyczytacId?: string;
  ranobedbId?: string;
  audibleId?: string;
}

export interface SidecarRating {
  average?: number;
  count?: number;
}

export interface SidecarRatings {
  amazon?: SidecarRating;
  goodreads?: SidecarRating;
  hardcover?: SidecarRating;
  lubimyczytac?: SidecarRating;
  ranobedb?: SidecarRating;
  audible?: SidecarRating;
}

/** Grimmory's ComicMetadata without its lock flags (a sidecar never changes locks). */
export type SidecarComic = ComicValues;

export interface SidecarBookMetadata {
  title?: string;
  subtitle?: string;
  authors?: string[];
  publisher?: string;
  /** `yyyy-MM-dd`. */
  publishedDate?: string;
  description?: string;
  isbn10?: string;
  isbn13?: string;
  language?: string;
  pageCount?: number;
  categories?: string[];
  moods?: string[];
  tags?: string[];
  series?: SidecarSeries;
  identifiers?: SidecarIdentifiers;
  ratings?: SidecarRatings;
  ageRating?: number;
  contentRating?: string;
  narrator?: string;
  abridged?: boolean;
  comicMetadata?: SidecarComic;
}

export interface SidecarCoverInfo {
  source?: string;
  path?: string;
}

export interface SidecarMetadata {
  version?: string;
  /** ISO-8601 instant. */
  generatedAt?: string;
  generatedBy?: string;
  metadata?: SidecarBookMetadata;
  cover?: SidecarCoverInfo;
}

export const SIDECAR_VERSION = '1.0';
export const GENERATED_BY = 'bindery';
/** Far above any real sidecar (a long description is some tens of kilobytes); a bigger file is refused unread. */
export const MAX_SIDECAR_BYTES = 1024 * 1024;
const MAX_LIST = 1000;

type Kind = 'string' | 'int' | 'number' | 'boolean' | 'date' | 'strings' | Spec;
type Spec = { [key: string]: Kind };

// Field order is Grimmory's, so a file written here lists its fields as Grimmory's would.
const SERIES: Spec = { name: 'string', number: 'number', total: 'int' };
const IDENTIFIERS: Spec = {
  asin: 'string', goodreadsId: 'string', googleId: 'string', hardcoverId: 'string', hardcoverBookId: 'string', comicvineId: 'string',
  lubimyczytacId: 'string', ranobedbId: 'string', audibleId: 'string',
};
const RATING: Spec = { average: 'number', count: 'int' };
const RATINGS: Spec = { amazon: RATING, goodreads: RATING, hardcover: RATING, lubimyczytac: RATING, ranobedb: RATING, audible: RATING };
const COMIC: Spec = {
  issueNumber: 'string', volumeName: 'string', volumeNumber: 'int', storyArc: 'string', storyArcNumber: 'int', alternateSeries: 'string',
  alternateIssue: 'string', pencillers: 'strings', inkers: 'strings', colorists: 'strings', letterers: 'strings', coverArtists: 'strings',
  editors: 'strings', imprint: 'string', format: 'string', blackAndWhite: 'boolean', manga: 'boolean', readingDirection: 'string',
  characters: 'strings', teams: 'strings', locations: 'strings', webLink: 'string', notes: 'string',
};
const BOOK: Spec = {
  title: 'string', subtitle: 'string', authors: 'strings', publisher: 'string', publishedDate: 'date', description: 'string',
  isbn10: 'string', isbn13: 'string', language: 'string', pageCount: 'int', categories: 'strings', moods: 'strings', tags: 'strings',
  series: SERIES, identifiers: IDENTIFIERS, ratings: RATINGS, ageRating: 'int', contentRating: 'string', narrator: 'string',
  abridged: 'boolean', comicMetadata: COMIC,
};
const COVER: Spec = { source: 'string', path: 'string' };

const INT32 = 2 ** 31;
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function validDate(y: number, m: number, d: number): string | undefined {
  if (!Number.isInteger(y) || !Number.isInteger(m) || !Number.isInteger(d) || y < 1 || y > 9999) return undefined;
  const date = new Date(Date.UTC(y, m - 1, d));
  if (date.getUTCFullYear() !== y || date.getUTCMonth() !== m - 1 || date.getUTCDate() !== d) return undefined;
  return `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
}

/** Numbers may also come as numeric text, as Jackson accepts them. */
function numberOf(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'string' && /^\s*-?\d+(\.\d+)?([eE][+-]?\d+)?\s*$/.test(value)) return Number(value);
  return undefined;
}

/** One field's clean value, or an error text; null reads as absent. */
function readValue(value: unknown, kind: Exclude<Kind, Spec>): { value?: unknown; error?: string } {
  switch (kind) {
    case 'string':
      return typeof value === 'string' ? { value } : { error: 'expected a string' };
    case 'boolean':
      return typeof value === 'boolean' ? { value } : { error: 'expected true or false' };
    case 'number': {
      const n = numberOf(value);
      return n === undefined ? { error: 'expected a number' } : { value: n };
    }
    case 'int': {
      const n = numberOf(value);
      return n === undefined || !Number.isInteger(n) || n < -INT32 || n >= INT32 ? { error: 'expected a whole number' } : { value: n };
    }
    case 'date': {
      const m = typeof value === 'string' ? /^(\d{4})-(\d{2})-(\d{2})$/.exec(value) : null;
      const parts = m ? [Number(m[1]), Number(m[2]), Number(m[3])] : Array.isArray(value) && value.length === 3 ? value : undefined;
      const date = parts && parts.every((p) => typeof p === 'number') ? validDate(parts[0] as number, parts[1] as number, parts[2] as number) : undefined;
      return date ? { value: date } : { error: 'expected a date as yyyy-MM-dd' };
    }
    case 'strings': {
      if (!Array.isArray(value)) return { error: 'expected a list of strings' };
      if (value.length > MAX_LIST) return { error: `more than ${MAX_LIST} entries` };
      const out: string[] = [];
      for (const item of value) {
        if (item === null) continue;
        if (typeof item !== 'string') return { error: 'expected a list of strings' };
        const trimmed = item.trim();
        if (trimmed !== '' && !out.includes(trimmed)) out.push(trimmed);
      }
      return { value: out };
    }
  }
}

/** The known fields of `source`, checked; unknown fields are ignored (files from newer versions stay readable). */
function readObject(source: Record<string, unknown>, spec: Spec, path: string, errors: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, kind] of Object.entries(spec)) {
    if (!Object.hasOwn(source, key)) continue;
    const value = source[key];
    if (value === null || value === undefined) continue;
    const where = path ? `${path}.${key}` : key;
    if (typeof kind === 'object') {
      if (isPlainObject(value)) out[key] = readObject(value, kind, where, errors);
      else errors.push(`${where}: expected an object`);
      continue;
    }
    const read = readValue(value, kind);
    if (read.error !== undefined) errors.push(`${where}: ${read.error}`);
    else out[key] = read.value;
  }
  return out;
}

function readInstant(value: unknown, errors: string[]): string | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value === 'string' && INSTANT.test(value) && !Number.isNaN(Date.parse(value))) return value;
  // Jackson's numeric form: seconds since the epoch, with the nanoseconds as a fraction.
  if (typeof value === 'number' && Number.isFinite(value) && Math.abs(value) < 1e11) return new Date(Math.round(value * 1000)).toISOString();
  errors.push('generatedAt: expected an ISO-8601 instant');
  return undefined;
}

/**
 * Parses and checks a sidecar file's text. Every problem found is listed in one SIDECAR_INVALID error; nothing of a
 * bad file is ever used.
 */
export function parseSidecar(text: string, fileName = 'the sidecar file'): SidecarMetadata {
  const invalid = (why: string): SidecarError => new SidecarError('SIDECAR_INVALID', `${fileName} is not a valid sidecar file: ${why}`);
  let root: unknown;
  try {
    root = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch (error) {
    throw invalid(`not JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  if (!isPlainObject(root)) throw invalid('the top level is not a JSON object');
  const errors: string[] = [];
  const out: SidecarMetadata = {};
  const version = root.version;
  if (version !== null && version !== undefined) {
    if (typeof version !== 'string') errors.push('version: expected a string');
    else if (!/^1(\.\d+)*$/.test(version.trim())) errors.push(`version: ${JSON.stringify(version.slice(0, 20))} is not supported (1.x is)`);
    else out.version = version.trim();
  }
  const generatedAt = readInstant(root.generatedAt, errors);
  if (generatedAt !== undefined) out.generatedAt = generatedAt;
  if (typeof root.generatedBy === 'string') out.generatedBy = root.generatedBy;
  else if (root.generatedBy !== null && root.generatedBy !== undefined) errors.push('generatedBy: expected a string');
  if (root.metadata !== null && root.metadata !== undefined) {
    if (isPlainObject(root.metadata)) out.metadata = readObject(root.metadata, BOOK, 'metadata', errors) as SidecarBookMetadata;
    else errors.push('metadata: expected an object');
  }
  if (root.cover !== null && root.cover !== undefined) {
    if (isPlainObject(root.cover)) out.cover = readObject(root.cover, COVER, 'cover', errors) as SidecarCoverInfo;
    else errors.push('cover: expected an object');
  }
  if (errors.length > 0) throw invalid(errors.slice(0, 10).join('; ') + (errors.length > 10 ? `; and ${errors.length - 10} more` : ''));
  return out;
}

/** The file's text: two-space indented JSON, fields in Grimmory's order, absent values left out. */
export function serializeSidecar(sidecar: SidecarMetadata): string {
  return `${JSON.stringify(sidecar, null, 2)}\n`;
}
