// Komga "series" over Bindery's catalog, in SQL: the books of one library that share a series name (compared as SQLite's
// NOCASE does), plus, per `komga_group_unknown`, one "Unknown Series" per library for books without a series or one
// series per such book. A series id is `<libraryId>-<slug>` (Grimmory's form). The list of a reader's series is
// computed once per catalog state; a page of series or of a series' books reads only those books. See docs/komga.md.
import type { RawBuilder, SqlBool } from 'kysely';
import { sql } from 'kysely';
import type { Principal } from '../auth/principal.ts';
import { canSeeLibrary } from '../auth/visibility.ts';
import type { Store } from '../store/store.ts';
import { readStateSql, type KomgaReadState } from './read-progress.ts';
import {
  all,
  andAll,
  BOOK_NAME,
  column,
  compareNocase,
  HAS_SERIES,
  listedBooks,
  nocase,
  remembered,
  SERIES_ORDER,
  seriesNameSql,
  UNKNOWN_SERIES,
} from './sql.ts';

type Cond = RawBuilder<SqlBool>;

/**
 * The lower-cased name with every run of characters that are not letters or digits turned into `-`. Grimmory keeps
 * only `a-z0-9`, which makes every non-Latin name the same slug; Bindery keeps letters and digits of any script.
 */
export function seriesSlug(name: string): string {
  const slug = name.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '-');
  return slug === '' ? '-' : slug;
}

export function seriesId(libraryId: number, name: string): string {
  return `${libraryId}-${seriesSlug(name)}`;
}

/** Identifies a series within the catalog: its library and its name as NOCASE compares it. */
export function seriesKey(libraryId: number, name: string): string {
  return `${libraryId}\u0000${nocase(name)}`;
}

const UNKNOWN_KEY = nocase(UNKNOWN_SERIES);

/** One series as listed: named (books with that series name), the library's unknown series, or books without a series sharing a name. */
export interface SeriesHead {
  key: string;
  libraryId: number;
  name: string;
  count: number;
  kind: 'named' | 'unknown' | 'books';
  /** The books, for `books` series (made of books without a series, when they are not grouped). */
  bookIds?: number[];
}

/** The SQL condition selecting a series' books (over `book` and `m`; visibility is applied separately). */
export function membersOf(head: Pick<SeriesHead, 'libraryId' | 'name' | 'kind' | 'bookIds'>, extraNames: readonly string[] = []): Cond {
  const inLibrary = sql<SqlBool>`+book.library_id = ${head.libraryId}`;
  if (head.kind === 'books') return sql<SqlBool>`book.id IN (${sql.join(head.bookIds ?? [])})`;
  if (head.kind === 'unknown') return sql<SqlBool>`(${inLibrary} AND (NOT ${HAS_SERIES} OR m.series_name = ${UNKNOWN_SERIES} COLLATE NOCASE))`;
  const names = [head.name, ...extraNames];
  return sql<SqlBool>`(${inLibrary} AND (${sql.join(
    names.map((n) => sql`m.series_name = ${n} COLLATE NOCASE`),
    sql` OR `,
  )}))`;
}

interface NamedRow {
  l: number;
  name: string;
  n: number;
}

/** By name as NOCASE orders it (the key holds the folded name), then the name itself, then library. */
function headOrder(a: SeriesHead, b: SeriesHead): number {
  const x = a.key.slice(a.key.indexOf('\u0000') + 1);
  const y = b.key.slice(b.key.indexOf('\u0000') + 1);
  if (x !== y) return x < y ? -1 : 1;
  return (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) || a.libraryId - b.libraryId;
}

export interface SeriesIndex {
  /** Sorted by name (NOCASE), then library. */
  heads: SeriesHead[];
  byKey: Map<string, SeriesHead>;
  byId: Map<string, SeriesHead[]>;
}

/**
 * Every series the principal can see, sorted by name. Named series are grouped through the series-name index; with
 * unknown books grouped, each library's "Unknown Series" is the library's visible books less its named ones, so the
 * books without a series are never read one by one.
 */
export function seriesIndex(store: Store, principal: Principal, groupUnknown: boolean): SeriesIndex {
  // Grouped by name alone, the series-name index hands the groups over in order; only names found in several
  // libraries are counted again per library.
  const namedBooks = () => listedBooks(store, principal).where(sql<SqlBool>`m.series_name COLLATE NOCASE > ''`).where(HAS_SERIES);
  const named = namedBooks()
    .select([sql<number>`min(book.library_id)`.as('l'), sql<number>`max(book.library_id)`.as('l2'), sql<string>`min(m.series_name)`.as('name'), sql<number>`count(*)`.as('n')])
    .groupBy(sql`m.series_name COLLATE NOCASE`)
    .compile();
  return remembered(store, { sql: `${named.sql} -- ${groupUnknown ? 'grouped' : 'single'}`, parameters: named.parameters }, () => {
    const heads: SeriesHead[] = [];
    const byName = all<NamedRow & { l2: number }>(store, named);
    const spread = byName.filter((r) => r.l !== r.l2).map((r) => r.name);
    const namedRows: NamedRow[] = byName.filter((r) => r.l === r.l2);
    if (spread.length > 0) {
      namedRows.push(
        ...all<NamedRow>(
          store,
          namedBooks()
            .where(sql<SqlBool>`m.series_name COLLATE NOCASE IN (${sql.join(spread)})`)
            .select([sql<number>`book.library_id`.as('l'), sql<string>`min(m.series_name)`.as('name'), sql<number>`count(*)`.as('n')])
            .groupBy([sql`m.series_name COLLATE NOCASE`, sql`book.library_id`])
            .compile(),
        ),
      );
    }
    if (groupUnknown) {
      const totals = all<{ l: number; n: number }>(
        store,
        listedBooks(store, principal, { metadata: false }).select([sql<number>`book.library_id`.as('l'), sql<number>`count(*)`.as('n')]).groupBy('book.library_id').compile(),
      );
      const unknown = new Map(totals.map((t) => [t.l, t.n]));
      for (const r of namedRows) {
        if (nocase(r.name) === UNKNOWN_KEY) continue;
        unknown.set(r.l, (unknown.get(r.l) ?? 0) - r.n);
        heads.push({ key: seriesKey(r.l, r.name), libraryId: r.l, name: r.name, count: r.n, kind: 'named' });
      }
      for (const [l, n] of unknown) if (n > 0) heads.push({ key: seriesKey(l, UNKNOWN_SERIES), libraryId: l, name: UNKNOWN_SERIES, count: n, kind: 'unknown' });
    } else {
      for (const r of namedRows) heads.push({ key: seriesKey(r.l, r.name), libraryId: r.l, name: r.name, count: r.n, kind: 'named' });
      const singles = all<{ id: number; l: number; name: string }>(
        store,
        listedBooks(store, principal)
          .where(sql<SqlBool>`NOT ${HAS_SERIES}`)
          .select([sql<number>`book.id`.as('id'), sql<number>`book.library_id`.as('l'), BOOK_NAME.as('name')])
          .orderBy('book.id')
          .compile(),
      );
      const byKey = new Map(heads.map((h) => [h.key, h]));
      for (const s of singles) {
        const key = seriesKey(s.l, s.name);
        const head = byKey.get(key);
        if (head?.kind === 'books') {
          head.count += 1;
          head.bookIds?.push(s.id);
        } else if (!head) {
          const created: SeriesHead = { key, libraryId: s.l, name: s.name, count: 1, kind: 'books', bookIds: [s.id] };
          byKey.set(key, created);
          heads.push(created);
        }
        // A book named like a series of its library stays out of it (Grimmory lists both under one id as well).
      }
    }
    heads.sort(headOrder);
    const byKey = new Map(heads.map((h) => [h.key, h]));
    const byId = new Map<string, SeriesHead[]>();
    for (const h of heads) {
      const id = seriesId(h.libraryId, h.name);
      byId.set(id, [...(byId.get(id) ?? []), h]);
    }
    return { heads, byKey, byId };
  });
}

/** A series found by id: one head, or several whose names differ only in punctuation (same slug), merged. */
export interface SeriesRef {
  id: string;
  libraryId: number;
  name: string;
  members: Cond;
  /** Found through the series-name index or by book ids (not the whole unknown series): read per row. */
  bounded: boolean;
}

export function refOf(head: SeriesHead): SeriesRef {
  return { id: seriesId(head.libraryId, head.name), libraryId: head.libraryId, name: head.name, members: membersOf(head), bounded: head.kind !== 'unknown' };
}

/** The visible books of a series (per-row restriction tests when the series is found through an index). */
const booksOf = (store: Store, principal: Principal, ref: SeriesRef) => listedBooks(store, principal, { perRow: ref.bounded }).where(ref.members);

/**
 * Series names that may have this slug, read from the name index alone: when the slug starts with ASCII letters or
 * digits, the names that start with them (case aside); otherwise every name.
 */
function namesLike(slug: string): Cond {
  const run = /^[a-z0-9]+/.exec(slug)?.[0];
  const prefix = run !== undefined && (run.length === slug.length || slug[run.length] === '-') ? run : undefined;
  return prefix === undefined
    ? sql<SqlBool>`m.series_name COLLATE NOCASE > ''`
    : sql<SqlBool>`m.series_name COLLATE NOCASE >= ${prefix} AND m.series_name COLLATE NOCASE < ${`${prefix}\u{10FFFF}`}`;
}

/**
 * The series with this id that the principal can see. With unknown books grouped, its name is looked up in the
 * series-name index (the slug with spaces for dashes, else the names the slug's first word starts), so opening a series
 * lists no other series; when such a name is found, names differing from it only in punctuation are not looked for.
 * Otherwise the reader's series list answers.
 */
export function findSeries(store: Store, principal: Principal, id: string, groupUnknown: boolean): SeriesRef | undefined {
  const dash = id.indexOf('-');
  if (dash <= 0 || !/^\d{1,15}$/.test(id.slice(0, dash))) return undefined;
  const libraryId = Number(id.slice(0, dash));
  const slug = id.slice(dash + 1);
  if (!canSeeLibrary(principal, libraryId)) return undefined;
  if (!groupUnknown) {
    const heads = seriesIndex(store, principal, false).byId.get(id);
    if (!heads || heads.length === 0) return undefined;
    return {
      id,
      libraryId,
      name: heads[0]?.name as string,
      members: heads.length === 1 ? membersOf(heads[0] as SeriesHead) : sql<SqlBool>`(${sql.join(heads.map((h) => membersOf(h)), sql` OR `)})`,
      bounded: heads.every((h) => h.kind !== 'unknown'),
    };
  }
  // The usual name first: the slug's dashes as spaces ("series-500" → "series 500"), one probe of the name index.
  const guess = column<string>(
    store,
    store.db.selectFrom('book_metadata as m').where(sql<SqlBool>`m.series_name = ${slug.replace(/-/g, ' ')} COLLATE NOCASE`).select('m.series_name').distinct().compile(),
  ).filter((n) => seriesSlug(n) === slug && nocase(n) !== UNKNOWN_KEY);
  const names =
    guess.length > 0
      ? guess
      : column<string>(store, store.db.selectFrom('book_metadata as m').where(namesLike(slug)).select('m.series_name').distinct().compile()).filter(
          (n) => n.trim() !== '' && seriesSlug(n) === slug && nocase(n) !== UNKNOWN_KEY,
        );
  names.sort((a, b) => compareNocase(a, b) || (a < b ? -1 : 1));
  const conditions: Cond[] = [];
  let name: string | undefined;
  if (names.length > 0) {
    name = names[0] as string;
    conditions.push(membersOf({ libraryId, name, kind: 'named' }, names.slice(1)));
  }
  const unknown = slug === seriesSlug(UNKNOWN_SERIES);
  if (unknown) {
    name ??= UNKNOWN_SERIES;
    conditions.push(membersOf({ libraryId, name: UNKNOWN_SERIES, kind: 'unknown' }));
  }
  if (name === undefined) return undefined;
  const members = conditions.length === 1 ? (conditions[0] as Cond) : sql<SqlBool>`(${sql.join(conditions, sql` OR `)})`;
  const ref: SeriesRef = { id, libraryId, name, members, bounded: !unknown };
  const any = column<number>(store, booksOf(store, principal, ref).select('book.id').limit(1).compile());
  return any.length === 0 ? undefined : ref;
}

/** The series (by key) that have a visible book meeting the condition. */
export function seriesKeysWhere(store: Store, principal: Principal, groupUnknown: boolean, condition: Cond): Map<string, { libraryId: number; name: string }> {
  const rows = all<{ l: number; name: string }>(
    store,
    listedBooks(store, principal).where(condition).select([sql<number>`book.library_id`.as('l'), seriesNameSql(groupUnknown).as('name')]).distinct().compile(),
  );
  const out = new Map<string, { libraryId: number; name: string }>();
  for (const r of rows) {
    const key = seriesKey(r.l, r.name);
    const seen = out.get(key);
    if (!seen || r.name < seen.name) out.set(key, { libraryId: r.l, name: r.name });
  }
  return out;
}

/** Per series key, how many of its visible books the user has read and is reading. */
export function seriesReadCounts(store: Store, principal: Principal, groupUnknown: boolean, userId: number): Map<string, { read: number; inProgress: number }> {
  const rows = all<{ l: number; name: string; state: KomgaReadState; n: number }>(
    store,
    listedBooks(store, principal)
      .innerJoin('user_book_progress as p', (join) => join.onRef('p.book_id', '=', 'book.id').on('p.user_id', '=', userId))
      .select([sql<number>`book.library_id`.as('l'), seriesNameSql(groupUnknown).as('name'), readStateSql('p').as('state'), sql<number>`count(*)`.as('n')])
      .groupBy([sql`book.library_id`, sql`${seriesNameSql(groupUnknown)} COLLATE NOCASE`, readStateSql('p')])
      .compile(),
  );
  const out = new Map<string, { read: number; inProgress: number }>();
  for (const r of rows) {
    const key = seriesKey(r.l, r.name);
    const counts = out.get(key) ?? { read: 0, inProgress: 0 };
    if (r.state === 'READ') counts.read += r.n;
    else if (r.state === 'IN_PROGRESS') counts.inProgress += r.n;
    out.set(key, counts);
  }
  return out;
}

/** What a SeriesDto shows besides its name: counts, dates, the first book, and what the books have in common. */
export interface SeriesSummary {
  ref: SeriesRef;
  count: number;
  read: number;
  inProgress: number;
  created: string | null;
  modified: string | null;
  /** Earliest release date (`yyyy` or `yyyy-MM-dd`…). */
  release: string | null;
  firstBookId: number | undefined;
  authors: string[];
  tags: string[];
}

/** How many authors and tags a series lists at most (an "Unknown Series" may hold most of a catalog). */
export const AGGREGATE_LIMIT = 50;

export function summarize(store: Store, principal: Principal, ref: SeriesRef, userId: number): SeriesSummary {
  const books = () => booksOf(store, principal, ref);
  const [agg] = all<{ n: number; created: string | null; modified: string | null; release: string | null }>(
    store,
    books()
      .select([
        sql<number>`count(*)`.as('n'),
        sql<string>`min(book.added_on)`.as('created'),
        sql<string>`max(book.added_on)`.as('modified'),
        sql<string>`min(CASE WHEN m.published_date GLOB '[0-9][0-9][0-9][0-9]*' THEN substr(m.published_date, 1, 10) END)`.as('release'),
      ])
      .compile(),
  );
  const [first] = column<number>(store, books().select('book.id').orderBy(SERIES_ORDER).limit(1).compile());
  const names = (mapping: string, table: string, key: string): string[] =>
    column<string>(
      store,
      store.db
        .selectFrom(sql.table(mapping).as('x'))
        .innerJoin(sql.table(table).as('t'), (join) => join.on(sql<SqlBool>`t.id = ${sql.ref(`x.${key}`)}`))
        .where(sql<SqlBool>`x.book_id IN (${books().select('book.id')})`)
        .select(sql<string>`t.name`.as('name'))
        .groupBy(sql`t.id`)
        .orderBy(sql`t.name COLLATE NOCASE`)
        .limit(AGGREGATE_LIMIT)
        .compile(),
    );
  const states = all<{ state: KomgaReadState; n: number }>(
    store,
    books()
      .innerJoin('user_book_progress as p', (join) => join.onRef('p.book_id', '=', 'book.id').on('p.user_id', '=', userId))
      .select([readStateSql('p').as('state'), sql<number>`count(*)`.as('n')])
      .groupBy(sql`1`)
      .compile(),
  );
  return {
    ref,
    count: agg?.n ?? 0,
    read: states.find((s) => s.state === 'READ')?.n ?? 0,
    inProgress: states.find((s) => s.state === 'IN_PROGRESS')?.n ?? 0,
    created: agg?.created ?? null,
    modified: agg?.modified ?? null,
    release: agg?.release ?? null,
    firstBookId: first,
    authors: names('book_metadata_author_mapping', 'author', 'author_id'),
    tags: names('book_metadata_tag_mapping', 'tag', 'tag_id'),
  };
}

/** The series' visible books matching the extra conditions, in series order: a page of ids and the total. */
export function seriesBookIds(store: Store, principal: Principal, ref: SeriesRef, conditions: Cond[], page: { offset: number; limit: number } | 'all'): { ids: number[]; total: number } {
  const base = booksOf(store, principal, ref).where(andAll(conditions));
  const ids = column<number>(store, (page === 'all' ? base.select('book.id').orderBy(SERIES_ORDER) : base.select('book.id').orderBy(SERIES_ORDER).limit(page.limit).offset(page.offset)).compile());
  if (page === 'all') return { ids, total: ids.length };
  const counted = base.select(sql<number>`count(*)`.as('n')).compile();
  return { ids, total: remembered(store, counted, () => column<number>(store, counted)[0] ?? 0) };
}

/** The series of a book, as BookDto names it. */
export interface BookSeries {
  id: string;
  title: string;
  oneshot: boolean;
}

export interface BookSeriesInput {
  id: number;
  libraryId: number;
  seriesName: string | null;
  name: string;
}

/**
 * The series of each book, with the visible books of that series counted only as far as `oneshot` needs (a named
 * series through its index; the unknown series stops at its second book).
 */
export function seriesOfBooks(store: Store, principal: Principal, books: readonly BookSeriesInput[], groupUnknown: boolean): Map<number, BookSeries> {
  const out = new Map<number, BookSeries>();
  const byKey = new Map<string, BookSeries>();
  for (const book of books) {
    const hasSeries = book.seriesName !== null && book.seriesName.trim() !== '';
    const unknown = (!hasSeries && groupUnknown) || (hasSeries && groupUnknown && nocase(book.seriesName as string) === UNKNOWN_KEY);
    const name = unknown ? UNKNOWN_SERIES : hasSeries ? (book.seriesName as string) : book.name;
    const key = seriesKey(book.libraryId, name);
    let series = byKey.get(key);
    if (!series) {
      let condition: Cond;
      let canonical = name;
      if (unknown) condition = membersOf({ libraryId: book.libraryId, name: UNKNOWN_SERIES, kind: 'unknown' });
      else if (hasSeries) {
        condition = membersOf({ libraryId: book.libraryId, name, kind: 'named' });
        const [first] = column<string>(store, listedBooks(store, principal, { perRow: true }).where(condition).select(sql<string>`min(m.series_name)`.as('name')).compile());
        canonical = first ?? name;
      } else condition = sql<SqlBool>`(+book.library_id = ${book.libraryId} AND NOT ${HAS_SERIES} AND m.title = ${name} COLLATE NOCASE)`;
      const found = column<number>(store, listedBooks(store, principal, { perRow: true }).where(condition).select('book.id').limit(2).compile());
      series = { id: seriesId(book.libraryId, canonical), title: canonical, oneshot: found.length <= 1 };
      byKey.set(key, series);
    }
    out.set(book.id, series);
  }
  return out;
}
