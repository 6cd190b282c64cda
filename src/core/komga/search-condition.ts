// Komga's search bodies (`POST /api/v1/books/list`, `/series/list`): `{condition, fullTextSearch}` where a condition is
// `{allOf: [...]}`, `{anyOf: [...]}` or one field with an operator object (`{"libraryId": {"operator": "is", "value":
// "1"}}`). Read into a checked tree here; books.ts compiles it to SQL and series-search.ts to a series filter. A body
// a Komga server would refuse is a SearchConditionError (the route's 400).
import { TEXT_OPERATORS, type TextOperator } from './text-match.ts';

export class SearchConditionError extends Error {}

export type Equality<T> = { operator: 'is' | 'isNot'; value: T };
export type EqualityNullable<T> = Equality<T> | { operator: 'isNull' | 'isNotNull' };
export type TextOp = { operator: TextOperator; value: string };
export type Numeric = { operator: 'is' | 'isNot' | 'greaterThan' | 'lessThan'; value: number };
export type NumericNullable = Numeric | { operator: 'isNull' | 'isNotNull' };
/** Dates as `yyyy-MM-dd` (the day of the instant, UTC), durations in milliseconds. */
export type DateOp =
  | { operator: 'before' | 'after'; date: string }
  | { operator: 'isInTheLast' | 'isNotInTheLast'; durationMs: number }
  | { operator: 'isNull' | 'isNotNull' };
export type BooleanOp = { operator: 'isTrue' | 'isFalse' };
export interface AuthorMatch {
  name?: string;
  role?: string;
}
export interface PosterMatch {
  type?: string;
  selected?: boolean;
}

export type ReadStatus = 'UNREAD' | 'IN_PROGRESS' | 'READ';

/** Leaves shared by books and series. */
type CommonLeaf =
  | { field: 'libraryId'; op: Equality<string> }
  | { field: 'deleted'; op: BooleanOp }
  | { field: 'oneShot'; op: BooleanOp }
  | { field: 'title'; op: TextOp }
  | { field: 'releaseDate'; op: DateOp }
  | { field: 'tag'; op: EqualityNullable<string> }
  | { field: 'readStatus'; op: Equality<ReadStatus> }
  | { field: 'author'; op: Equality<AuthorMatch> };

export type BookLeaf =
  | CommonLeaf
  | { field: 'readListId'; op: Equality<string> }
  | { field: 'seriesId'; op: Equality<string> }
  | { field: 'numberSort'; op: Numeric }
  | { field: 'mediaStatus'; op: Equality<string> }
  | { field: 'mediaProfile'; op: Equality<string> }
  | { field: 'poster'; op: Equality<PosterMatch> };

export type SeriesLeaf =
  | CommonLeaf
  | { field: 'collectionId'; op: Equality<string> }
  | { field: 'complete'; op: BooleanOp }
  | { field: 'titleSort'; op: TextOp }
  | { field: 'sharingLabel'; op: EqualityNullable<string> }
  | { field: 'publisher'; op: Equality<string> }
  | { field: 'language'; op: Equality<string> }
  | { field: 'genre'; op: EqualityNullable<string> }
  | { field: 'ageRating'; op: NumericNullable }
  | { field: 'seriesStatus'; op: Equality<string> };

export type Condition<Leaf> = { allOf: Condition<Leaf>[] } | { anyOf: Condition<Leaf>[] } | Leaf;

export interface Search<Leaf> {
  condition: Condition<Leaf> | undefined;
  fullTextSearch: string | undefined;
}

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

function fail(path: string, message: string): never {
  throw new SearchConditionError(`${path}: ${message}`);
}

function operatorOf(op: Json, path: string, allowed: readonly string[]): string {
  const name = op.operator;
  if (typeof name !== 'string' || !allowed.includes(name)) fail(path, `operator must be one of ${allowed.join(', ')}`);
  return name;
}

const stringValue = (op: Json, path: string): string => (typeof op.value === 'string' ? op.value : fail(path, 'value must be a string'));

function equality<T>(op: Json, path: string, value: (op: Json, path: string) => T): Equality<T> {
  return { operator: operatorOf(op, path, ['is', 'isNot']) as 'is' | 'isNot', value: value(op, path) };
}

function equalityNullable<T>(op: Json, path: string, value: (op: Json, path: string) => T): EqualityNullable<T> {
  const name = operatorOf(op, path, ['is', 'isNot', 'isNull', 'isNotNull']);
  return name === 'isNull' || name === 'isNotNull' ? { operator: name } : { operator: name as 'is' | 'isNot', value: value(op, path) };
}

const enumValue =
  (values: readonly string[]) =>
  (op: Json, path: string): string => {
    const value = stringValue(op, path);
    return values.includes(value) ? value : fail(path, `value must be one of ${values.join(', ')}`);
  };

function numeric(op: Json, path: string, integer: boolean, nullable: boolean): NumericNullable {
  const name = operatorOf(op, path, nullable ? ['is', 'isNot', 'greaterThan', 'lessThan', 'isNull', 'isNotNull'] : ['is', 'isNot', 'greaterThan', 'lessThan']);
  if (name === 'isNull' || name === 'isNotNull') return { operator: name };
  const raw = typeof op.value === 'string' && op.value.trim() !== '' ? Number(op.value) : op.value;
  if (typeof raw !== 'number' || !Number.isFinite(raw) || (integer && !Number.isInteger(raw))) fail(path, integer ? 'value must be a whole number' : 'value must be a number');
  return { operator: name as Numeric['operator'], value: raw };
}

/** ISO-8601 durations as Java's Duration writes them (`PT720H`, `P30D`, `PT1H30M`, `-PT5S`); days are 24 hours. */
export function parseDuration(text: string): number | undefined {
  const match = /^([-+]?)P(?:(\d+(?:\.\d+)?)D)?(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$/i.exec(text.trim());
  if (!match || text.trim().replace(/^[-+]?P/i, '').replace(/^T$/i, '') === '') return undefined;
  const [, sign, days, hours, minutes, seconds] = match;
  const ms = (Number(days ?? 0) * 24 * 3600 + Number(hours ?? 0) * 3600 + Number(minutes ?? 0) * 60 + Number(seconds ?? 0)) * 1000;
  return sign === '-' ? -ms : ms;
}

function dateOp(op: Json, path: string): DateOp {
  const name = operatorOf(op, path, ['before', 'after', 'isInTheLast', 'isNotInTheLast', 'isNull', 'isNotNull']);
  if (name === 'isNull' || name === 'isNotNull') return { operator: name };
  if (name === 'before' || name === 'after') {
    const time = typeof op.dateTime === 'string' ? Date.parse(op.dateTime) : Number.NaN;
    if (Number.isNaN(time)) fail(path, 'dateTime must be an ISO-8601 date-time');
    return { operator: name, date: new Date(time).toISOString().slice(0, 10) };
  }
  const durationMs = typeof op.duration === 'string' ? parseDuration(op.duration) : typeof op.duration === 'number' ? op.duration * 1000 : undefined;
  if (durationMs === undefined || !Number.isFinite(durationMs)) fail(path, 'duration must be an ISO-8601 duration such as PT720H');
  return { operator: name as 'isInTheLast' | 'isNotInTheLast', durationMs };
}

function booleanOp(op: Json, path: string): BooleanOp {
  return { operator: operatorOf(op, path, ['isTrue', 'isFalse']) as BooleanOp['operator'] };
}

function textOp(op: Json, path: string): TextOp {
  return { operator: operatorOf(op, path, TEXT_OPERATORS) as TextOperator, value: stringValue(op, path) };
}

function optionalString(value: unknown, path: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  return typeof value === 'string' ? value : fail(path, 'must be a string');
}

function authorMatch(op: Json, path: string): AuthorMatch {
  if (!isObject(op.value)) fail(path, 'value must be an object with name and/or role');
  const name = optionalString(op.value.name, `${path}.value.name`);
  const role = optionalString(op.value.role, `${path}.value.role`);
  return { ...(name !== undefined ? { name } : {}), ...(role !== undefined ? { role } : {}) };
}

function posterMatch(op: Json, path: string): PosterMatch {
  if (!isObject(op.value)) fail(path, 'value must be an object with type and/or selected');
  const type = optionalString(op.value.type, `${path}.value.type`);
  const selected = op.value.selected;
  if (selected !== undefined && selected !== null && typeof selected !== 'boolean') fail(`${path}.value.selected`, 'must be true or false');
  return { ...(type !== undefined ? { type } : {}), ...(typeof selected === 'boolean' ? { selected } : {}) };
}

const READ_STATUSES = ['UNREAD', 'IN_PROGRESS', 'READ'] as const;
const readStatus = enumValue(READ_STATUSES) as (op: Json, path: string) => ReadStatus;

/** Operator readers per field, for books and for series. */
type FieldReader = (op: Json, path: string) => unknown;

const COMMON: Record<string, FieldReader> = {
  libraryId: (op, path) => equality(op, path, stringValue),
  deleted: booleanOp,
  oneShot: booleanOp,
  title: textOp,
  releaseDate: dateOp,
  tag: (op, path) => equalityNullable(op, path, stringValue),
  readStatus: (op, path) => equality(op, path, readStatus),
  author: (op, path) => equality(op, path, authorMatch),
};

const BOOK_FIELDS: Record<string, FieldReader> = {
  ...COMMON,
  readListId: (op, path) => equality(op, path, stringValue),
  seriesId: (op, path) => equality(op, path, stringValue),
  numberSort: (op, path) => numeric(op, path, false, false),
  mediaStatus: (op, path) => equality(op, path, enumValue(['READY', 'UNKNOWN', 'ERROR', 'UNSUPPORTED', 'OUTDATED'])),
  mediaProfile: (op, path) => equality(op, path, enumValue(['DIVINA', 'PDF', 'EPUB'])),
  poster: (op, path) => equality(op, path, posterMatch),
};

const SERIES_FIELDS: Record<string, FieldReader> = {
  ...COMMON,
  collectionId: (op, path) => equality(op, path, stringValue),
  complete: booleanOp,
  titleSort: textOp,
  sharingLabel: (op, path) => equalityNullable(op, path, stringValue),
  publisher: (op, path) => equality(op, path, stringValue),
  language: (op, path) => equality(op, path, stringValue),
  genre: (op, path) => equalityNullable(op, path, stringValue),
  ageRating: (op, path) => numeric(op, path, true, true),
  seriesStatus: (op, path) => equality(op, path, enumValue(['ENDED', 'ONGOING', 'ABANDONED', 'HIATUS'])),
};

/** Nesting deeper than this is refused (a client builds a few levels; a deep body only costs the server). */
const MAX_DEPTH = 32;

function parseCondition<Leaf>(value: unknown, fields: Record<string, FieldReader>, path: string, depth: number): Condition<Leaf> {
  if (depth > MAX_DEPTH) fail(path, `conditions nest deeper than ${MAX_DEPTH} levels`);
  if (!isObject(value)) fail(path, 'a condition must be an object');
  // A `type` key (a class discriminator some clients add) says nothing the other key does not.
  const keys = Object.keys(value).filter((k) => k !== 'type');
  if (keys.length !== 1) fail(path, `a condition has exactly one of allOf, anyOf, ${Object.keys(fields).join(', ')}`);
  const key = keys[0] as string;
  const inner = value[key];
  if (key === 'allOf' || key === 'anyOf') {
    if (!Array.isArray(inner)) fail(`${path}.${key}`, 'must be an array');
    const items = inner.map((item, i) => parseCondition<Leaf>(item, fields, `${path}.${key}[${i}]`, depth + 1));
    return (key === 'allOf' ? { allOf: items } : { anyOf: items }) as Condition<Leaf>;
  }
  const reader = fields[key];
  if (!reader) fail(path, `unknown condition ${key}`);
  if (!isObject(inner)) fail(`${path}.${key}`, 'must be an operator object');
  return { field: key, op: reader(inner, `${path}.${key}`) } as Leaf;
}

function parseSearch<Leaf>(body: unknown, fields: Record<string, FieldReader>): Search<Leaf> {
  if (body === undefined || body === null || body === '') return { condition: undefined, fullTextSearch: undefined };
  if (!isObject(body)) fail('body', 'must be a JSON object');
  const condition = body.condition === undefined || body.condition === null ? undefined : parseCondition<Leaf>(body.condition, fields, 'condition', 0);
  const text = body.fullTextSearch;
  if (text !== undefined && text !== null && typeof text !== 'string') fail('fullTextSearch', 'must be a string');
  const fullTextSearch = typeof text === 'string' && text.trim() !== '' ? text.trim() : undefined;
  return { condition, fullTextSearch };
}

export const parseBookSearch = (body: unknown): Search<BookLeaf> => parseSearch<BookLeaf>(body, BOOK_FIELDS);
export const parseSeriesSearch = (body: unknown): Search<SeriesLeaf> => parseSearch<SeriesLeaf>(body, SERIES_FIELDS);
