// Komga "series" over Bindery's catalog, in SQL: the books of one library that share a series name (compared as SQLite's
// NOCASE does), plus, per `komga_group_unknown`, one "Unknown Series" per library for books without a series or one
// series per such book. A series id is `<libraryId>-<slug>` (Grimmory's form). The list of a reader's series is
// computed once per catalog state; a page of series or of a series' books reads only those books. See docs/komga.md.
import type { RawBuilder, SqlBool } from 'kysely';
import { sql } from 'kysely';
import type { Principal } from '../auth/principal.ts';
import { canSeeLibrary, visibleBookFilter } from '../auth/visibility.ts';
import { compiledOnce } from '../store/compiled-once.ts';
import type { Store } from '../store/store.ts';
import { readStateSql, readStateText, type KomgaReadState } from './read-progress.ts';
import type { SqlDialect } from '../store/dialect.ts';
import {
  all,
  allAside,
  andAll,
  bookNameSql,
  column,
  compareNocase,
  countListedByLibrary,
  firstAside,
  HAS_SERIES,
  listedBooks,
  nocase,
  nocaseSql,
  PER_ROW_ROWS,
  remembered,
  seriesOrderSql,
  seriesNameSql,
  sortedNocase,
  startsWithShape,
  UNKNOWN_SERIES,
} from './sql.ts';

type Cond = RawBuilder<SqlBool>;

/**
 * The lower-cased name with every run of characters that are not letters or digits turned into `-`. Grimmory keeps
 * only `a-z0-9`, which makes every non-Latin name the same slug; Bindery keeps letters and digits of any script.
 */
export function seriesSlug(name: string): string {
  const lower = name.toLowerCase();
  // ASCII names (most) take the quicker expression; both give the same slug for them.
  // eslint-disable-next-line no-control-regex
  const slug = /^[\u0000-\u007f]*$/.test(lower) ? lower.replace(/[^a-z0-9]+/g, '-') : lower.replace(/[^\p{L}\p{N}]+/gu, '-');
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
  /** The name with ASCII letters folded (the order of the list). */
  folded: string;
  libraryId: number;
  name: string;
  count: number;
  kind: 'named' | 'unknown' | 'books';
  /** The books, for `books` series (made of books without a series, when they are not grouped). */
  bookIds?: number[];
  /** When its first and last visible book was added (not known for the unknown series: see unknownAggregates). */
  created?: string;
  modified?: string;
}

/** The SQL condition selecting a series' books (over `book` and `m`; visibility is applied separately). */
export function membersOf(d: SqlDialect, head: Pick<SeriesHead, 'libraryId' | 'name' | 'kind' | 'bookIds'>, extraNames: readonly string[] = []): Cond {
  const inLibrary = sql<SqlBool>`+book.library_id = ${head.libraryId}`;
  const series = nocaseSql(d, sql.ref('m.series_name'));
  if (head.kind === 'books') return sql<SqlBool>`book.id IN (${sql.join(head.bookIds ?? [])})`;
  if (head.kind === 'unknown') return sql<SqlBool>`(${inLibrary} AND (NOT ${HAS_SERIES} OR ${series} = ${nocaseSql(d, UNKNOWN_SERIES)}))`;
  const names = [head.name, ...extraNames];
  return sql<SqlBool>`(${inLibrary} AND (${sql.join(
    names.map((n) => sql`${series} = ${nocaseSql(d, n)}`),
    sql` OR `,
  )}))`;
}

interface NamedRow {
  l: number;
  name: string;
  n: number;
  created: string;
  modified: string;
}

function head(libraryId: number, name: string, count: number, kind: SeriesHead['kind']): SeriesHead {
  const folded = nocase(name);
  return { key: `${libraryId}\u0000${folded}`, folded, libraryId, name, count, kind };
}

/** By name as NOCASE orders it (the key holds the folded name), then the name itself, then library. */
function headOrder(a: SeriesHead, b: SeriesHead): number {
  if (a.folded !== b.folded) return a.folded < b.folded ? -1 : 1;
  return (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) || a.libraryId - b.libraryId;
}

export interface SeriesIndex {
  /** Sorted by name (NOCASE), then library. */
  heads: SeriesHead[];
  byKey: Map<string, SeriesHead>;
  /** Heads by series id (several when names differ only in punctuation); made on first use. */
  byId: () => Map<string, SeriesHead[]>;
}

/**
 * Every series the principal can see, sorted by name. Named series are grouped through the series-name index; with
 * unknown books grouped, each library's "Unknown Series" is the library's visible books less its named ones, so the
 * books without a series are never read one by one.
 */
const NAMED_COLUMNS = [
  sql<string>`min(m.series_name)`.as('name'),
  sql<number>`count(*)`.as('n'),
  sql<string>`min(book.added_on)`.as('created'),
  sql<string>`max(book.added_on)`.as('modified'),
];

export function seriesIndex(store: Store, principal: Principal, groupUnknown: boolean): Promise<SeriesIndex> {
  // Grouped by name alone, the series-name index hands the groups over in order; only names found in several
  // libraries are counted again per library.
  const d = store.dialect;
  // Built only when compiled: a page finds the statement compiled and the index remembered.
  const seriesName = () => nocaseSql(d, sql.ref('m.series_name'));
  const namedBooks = () => listedBooks(store, principal).where(sql<SqlBool>`${seriesName()} > ''`).where(HAS_SERIES);
  // Compiled once per principal: building the statement with the visibility filter costs more than the rest of a page.
  const named = compiledOnce(principal, `komga-series-index:${store.engine}`, [], () =>
    namedBooks()
      .select([sql<number>`min(book.library_id)`.as('l'), sql<number>`max(book.library_id)`.as('l2'), ...NAMED_COLUMNS])
      .groupBy(seriesName())
      .compile(),
  );
  return remembered(store, { sql: `${named.sql} -- ${groupUnknown ? 'grouped' : 'single'}`, parameters: named.parameters }, async () => {
    const heads: SeriesHead[] = [];
    const byName = await allAside<NamedRow & { l2: number }>(store, named);
    const spread = byName.filter((r) => r.l !== r.l2).map((r) => r.name);
    const namedRows: NamedRow[] = byName.filter((r) => r.l === r.l2);
    if (spread.length > 0) {
      namedRows.push(
        ...(await all<NamedRow>(
          store,
          namedBooks()
            .where(sql<SqlBool>`${seriesName()} IN (${sql.join(spread.map((n) => nocaseSql(d, n)))})`)
            .select([sql<number>`book.library_id`.as('l'), ...NAMED_COLUMNS])
            .groupBy([seriesName(), sql`book.library_id`])
            .compile(),
        )),
      );
    }
    if (groupUnknown) {
      const totals = await allAside<{ l: number; n: number }>(store, countListedByLibrary(store, principal));
      const unknown = new Map(totals.map((t) => [t.l, t.n]));
      for (const r of namedRows) {
        if (nocase(r.name) === UNKNOWN_KEY) continue;
        unknown.set(r.l, (unknown.get(r.l) ?? 0) - r.n);
        heads.push({ ...head(r.l, r.name, r.n, 'named'), created: r.created, modified: r.modified });
      }
      for (const [l, n] of unknown) if (n > 0) heads.push(head(l, UNKNOWN_SERIES, n, 'unknown'));
    } else {
      for (const r of namedRows) heads.push({ ...head(r.l, r.name, r.n, 'named'), created: r.created, modified: r.modified });
      const singles = await allAside<{ id: number; l: number; name: string; added: string }>(
        store,
        listedBooks(store, principal)
          .where(sql<SqlBool>`NOT ${HAS_SERIES}`)
          .select([sql<number>`book.id`.as('id'), sql<number>`book.library_id`.as('l'), bookNameSql(d).as('name'), sql<string>`book.added_on`.as('added')])
          .orderBy('book.id')
          .compile(),
      );
      const byKey = new Map(heads.map((h) => [h.key, h]));
      for (const s of singles) {
        const key = seriesKey(s.l, s.name);
        const found = byKey.get(key);
        if (found?.kind === 'books') {
          found.count += 1;
          found.bookIds?.push(s.id);
          if (s.added < (found.created ?? s.added)) found.created = s.added;
          if (s.added > (found.modified ?? s.added)) found.modified = s.added;
        } else if (!found) {
          const created: SeriesHead = { ...head(s.l, s.name, 1, 'books'), bookIds: [s.id], created: s.added, modified: s.added };
          byKey.set(key, created);
          heads.push(created);
        }
        // A book named like a series of its library stays out of it (Grimmory lists both under one id as well).
      }
    }
    heads.sort(headOrder);
    const byKey = new Map(heads.map((h) => [h.key, h]));
    let ids: Map<string, SeriesHead[]> | undefined;
    const byId = (): Map<string, SeriesHead[]> => {
      if (ids) return ids;
      ids = new Map();
      for (const h of heads) {
        const id = seriesId(h.libraryId, h.name);
        const list = ids.get(id);
        if (list) list.push(h);
        else ids.set(id, [h]);
      }
      return ids;
    };
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
  /** What finds its books through an index: its names (any letter case) or its book ids. */
  lookup?: { names: string[] } | { ids: number[] };
}

/** A head's series ref; its members' SQL is built when first asked for (a page from kept figures never reads the books). */
class HeadRef implements SeriesRef {
  readonly id: string;
  readonly libraryId: number;
  readonly name: string;
  readonly bounded: boolean;
  readonly lookup?: { names: string[] } | { ids: number[] };
  private readonly dialect: SqlDialect;
  private readonly head: SeriesHead;
  private built: Cond | undefined;

  constructor(d: SqlDialect, head: SeriesHead) {
    this.id = seriesId(head.libraryId, head.name);
    this.libraryId = head.libraryId;
    this.name = head.name;
    this.bounded = head.kind !== 'unknown';
    if (head.kind === 'named') this.lookup = { names: [head.name] };
    else if (head.kind === 'books') this.lookup = { ids: head.bookIds ?? [] };
    this.dialect = d;
    this.head = head;
  }

  get members(): Cond {
    return (this.built ??= membersOf(this.dialect, this.head));
  }
}

export function refOf(d: SqlDialect, head: SeriesHead): SeriesRef {
  return new HeadRef(d, head);
}

/** The visible books of a series (per-row restriction tests when the series is found through an index). */
const booksOf = (store: Store, principal: Principal, ref: SeriesRef) => listedBooks(store, principal, { perRow: ref.bounded }).where(ref.members);

/**
 * Series names that may have this slug, read from the name index alone: when the slug starts with ASCII letters or
 * digits, the names that start with them (case aside); otherwise every name.
 */
function namesLike(d: SqlDialect, slug: string): Cond {
  const run = /^[a-z0-9]+/.exec(slug)?.[0];
  const prefix = run !== undefined && (run.length === slug.length || slug[run.length] === '-') ? run : undefined;
  const name = nocaseSql(d, sql.ref('m.series_name'));
  // The prefix is lower case already: compared as it is, on both engines.
  return prefix === undefined ? sql<SqlBool>`${name} > ''` : sql<SqlBool>`${name} >= ${prefix} AND ${name} < ${`${prefix}\u{10FFFF}`}`;
}

/**
 * The series with this id that the principal can see. With unknown books grouped, its name is looked up in the
 * series-name index (the slug with spaces for dashes, else the names the slug's first word starts), so opening a series
 * lists no other series; when such a name is found, names differing from it only in punctuation are not looked for.
 * Otherwise the reader's series list answers.
 */
export async function findSeries(store: Store, principal: Principal, id: string, groupUnknown: boolean): Promise<SeriesRef | undefined> {
  const d = store.dialect;
  const dash = id.indexOf('-');
  if (dash <= 0 || !/^\d{1,15}$/.test(id.slice(0, dash))) return undefined;
  const libraryId = Number(id.slice(0, dash));
  const slug = id.slice(dash + 1);
  if (!canSeeLibrary(principal, libraryId)) return undefined;
  if (!groupUnknown) {
    const heads = (await seriesIndex(store, principal, false)).byId().get(id);
    if (!heads || heads.length === 0) return undefined;
    return {
      id,
      libraryId,
      name: heads[0]?.name as string,
      members: heads.length === 1 ? membersOf(d, heads[0] as SeriesHead) : sql<SqlBool>`(${sql.join(heads.map((h) => membersOf(d, h)), sql` OR `)})`,
      bounded: heads.every((h) => h.kind !== 'unknown'),
    };
  }
  // The usual name first: the slug's dashes as spaces ("series-500" → "series 500"), one probe of the name index.
  const guess = (
    await column<string>(
      store,
      store.db
        .selectFrom('book_metadata as m')
        .where(sql<SqlBool>`${nocaseSql(d, sql.ref('m.series_name'))} = ${nocaseSql(d, slug.replace(/-/g, ' '))}`)
        .select('m.series_name')
        .distinct()
        .compile(),
    )
  ).filter((n) => seriesSlug(n) === slug && nocase(n) !== UNKNOWN_KEY);
  const names =
    guess.length > 0
      ? guess
      : (await column<string>(store, store.db.selectFrom('book_metadata as m').where(namesLike(d, slug)).select('m.series_name').distinct().compile())).filter(
          (n) => n.trim() !== '' && seriesSlug(n) === slug && nocase(n) !== UNKNOWN_KEY,
        );
  names.sort((a, b) => compareNocase(a, b) || (a < b ? -1 : 1));
  const conditions: Cond[] = [];
  let name: string | undefined;
  if (names.length > 0) {
    name = names[0] as string;
    conditions.push(membersOf(d, { libraryId, name, kind: 'named' }, names.slice(1)));
  }
  const unknown = slug === seriesSlug(UNKNOWN_SERIES);
  if (unknown) {
    name ??= UNKNOWN_SERIES;
    conditions.push(membersOf(d, { libraryId, name: UNKNOWN_SERIES, kind: 'unknown' }));
  }
  if (name === undefined) return undefined;
  const members = conditions.length === 1 ? (conditions[0] as Cond) : sql<SqlBool>`(${sql.join(conditions, sql` OR `)})`;
  const ref: SeriesRef = { id, libraryId, name, members, bounded: !unknown, ...(unknown ? {} : { lookup: { names } }) };
  const any = await column<number>(store, booksOf(store, principal, ref).select('book.id').limit(1).compile());
  return any.length === 0 ? undefined : ref;
}

/** The series (by key) that have a visible book meeting the condition. */
export function seriesKeysWhere(store: Store, principal: Principal, groupUnknown: boolean, condition: Cond): Promise<Map<string, { libraryId: number; name: string }>> {
  const compiled = listedBooks(store, principal).where(condition).select([sql<number>`book.library_id`.as('l'), seriesNameSql(store.dialect, groupUnknown).as('name')]).distinct().compile();
  // Remembered: a collection's series (a magic shelf is evaluated over the whole catalog) are asked for on every listing.
  return remembered(store, compiled, async () => {
    const out = new Map<string, { libraryId: number; name: string }>();
    for (const r of await all<{ l: number; name: string }>(store, compiled)) {
      const key = seriesKey(r.l, r.name);
      const seen = out.get(key);
      if (!seen || r.name < seen.name) out.set(key, { libraryId: r.l, name: r.name });
    }
    return out;
  });
}

/** Per series key, how many of its visible books the user has read and is reading. */
export async function seriesReadCounts(store: Store, principal: Principal, groupUnknown: boolean, userId: number): Promise<Map<string, { read: number; inProgress: number }>> {
  const d = store.dialect;
  // Any name of the group stands for it: the key folds the case.
  const rows = await all<{ l: number; name: string; state: KomgaReadState; n: number }>(
    store,
    listedBooks(store, principal)
      .innerJoin('user_book_progress as p', (join) => join.onRef('p.book_id', '=', 'book.id').on('p.user_id', '=', userId))
      .select([sql<number>`book.library_id`.as('l'), sql<string>`min(${seriesNameSql(d, groupUnknown)})`.as('name'), readStateSql(d, 'p').as('state'), sql<number>`count(*)`.as('n')])
      .groupBy([sql`book.library_id`, nocaseSql(d, seriesNameSql(d, groupUnknown)), readStateSql(d, 'p')])
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

/**
 * The reader's state of each book, looked up per book (a series' books are few; driven from the reader's progress
 * rows, SQLite would read all of them).
 */
const stateOf = (d: SqlDialect, userId: number): RawBuilder<KomgaReadState> =>
  sql<KomgaReadState>`coalesce((SELECT ${readStateSql(d, 'p')} FROM user_book_progress p WHERE p.user_id = ${userId} AND p.book_id = book.id), 'UNREAD')`;

/** How many authors and tags a series lists at most (an "Unknown Series" may hold most of a catalog). */
export const AGGREGATE_LIMIT = 50;

/** Books of the unknown series in name order: their titles through the title index (they have no numbers to sort by). */
const unknownOrder = (d: SqlDialect) => sql`${nocaseSql(d, sql.ref('m.title'))} ASC NULLS FIRST, book.id`;

/**
 * A series' visible book ids in its order: by number through the name index, or, for the unknown series, by walking
 * the title index (so a page of it reads a page of books, not all of them; books without metadata are left out).
 */
function orderedIds(store: Store, principal: Principal, ref: SeriesRef, conditions: Cond[], walks: number | 'all') {
  if (ref.bounded) return booksOf(store, principal, ref).where(andAll(conditions)).select('book.id').orderBy(seriesOrderSql(store.dialect));
  // CROSS JOIN: SQLite keeps the metadata as the outer loop, so it can walk the title index for the order.
  return store.db
    .selectFrom('book_metadata as m')
    .crossJoin('book')
    .where(sql<SqlBool>`book.id = m.book_id`)
    // A walk that stops after a few books (the first one, an early page) tests the restrictions on those books alone.
    .where(visibleBookFilter(principal, { libraryIndex: false, perRow: walks !== 'all' && walks <= PER_ROW_ROWS }))
    .where(sql<SqlBool>`book.deleted = 0 and book.is_physical = 0`)
    .where(ref.members)
    .where(andAll(conditions))
    .select('book.id')
    .orderBy(unknownOrder(store.dialect));
}

type StateCount = { state: KomgaReadState; n: number };

/** A reader's read and in-progress books of a series. */
export interface ReadCounts {
  read: number;
  inProgress: number;
}

const readCounts = (states: readonly StateCount[]): ReadCounts => ({
  read: Number(states.find((s) => s.state === 'READ')?.n ?? 0),
  inProgress: Number(states.find((s) => s.state === 'IN_PROGRESS')?.n ?? 0),
});

/**
 * The unknown series may hold most books: its states are read from the reader's progress rows instead, one probe of
 * the book and its metadata per row (~25 ms for a reader with 10,000 of them at 100,000 books).
 */
function unknownStatesCounted(store: Store, principal: Principal, ref: SeriesRef, userId: number) {
  return booksOf(store, principal, ref)
    .innerJoin('user_book_progress as p', (join) => join.onRef('p.book_id', '=', 'book.id').on('p.user_id', '=', userId))
    .select([readStateSql(store.dialect, 'p').as('state'), sql<number>`count(*)`.as('n')])
    .groupBy(sql`1`)
    .compile();
}

/** The reader's counts of an unknown series as the catalog is now, read aside (not remembered: see series-figures.ts). */
export async function unknownReadCounts(store: Store, principal: Principal, ref: SeriesRef, userId: number): Promise<ReadCounts> {
  return readCounts(await allAside<StateCount>(store, unknownStatesCounted(store, principal, ref, userId)));
}

/** `known`: the reader's counts of an unknown series, when the caller has them (series-figures.ts keeps them). */
export async function summarize(store: Store, principal: Principal, ref: SeriesRef, userId: number, known?: ReadCounts): Promise<SeriesSummary> {
  const d = store.dialect;
  const books = () => booksOf(store, principal, ref);
  let reading = known;
  if (reading === undefined) {
    // The unknown series' counts: aside, and remembered until the catalog or reading state changes.
    const counted = ref.bounded ? books().select([stateOf(d, userId).as('state'), sql<number>`count(*)`.as('n')]).groupBy(sql`1`).compile() : unknownStatesCounted(store, principal, ref, userId);
    reading = readCounts(ref.bounded ? await all<StateCount>(store, counted) : await remembered(store, counted, () => allAside<StateCount>(store, counted)));
  }
  const [first] = await column<number>(store, orderedIds(store, principal, ref, [], 1).limit(1).compile());
  if (!ref.bounded) return { ref, firstBookId: first, ...reading, ...(await unknownAggregates(store, principal, ref)) };
  const [agg] = await all<{ n: number; created: string | null; modified: string | null; release: string | null }>(
    store,
    books()
      .select([
        sql<number>`count(*)`.as('n'),
        sql<string>`min(book.added_on)`.as('created'),
        sql<string>`max(book.added_on)`.as('modified'),
        sql<string>`min(CASE WHEN ${sql.raw(startsWithShape('m.published_date', 'dddd'))} THEN substr(m.published_date, 1, 10) END)`.as('release'),
      ])
      .compile(),
  );
  const names = (mapping: string, table: string, key: string): Promise<string[]> =>
    column<string>(
      store,
      store.db
        .selectFrom(sql.table(mapping).as('x'))
        .innerJoin(sql.table(table).as('t'), (join) => join.on(sql<SqlBool>`t.id = ${sql.ref(`x.${key}`)}`))
        .where(sql<SqlBool>`x.book_id IN ${books().select('book.id')}`)
        .select(sql<string>`t.name`.as('name'))
        .groupBy(sql`t.id`)
        .orderBy(nocaseSql(d, sql.ref('t.name')))
        .orderBy(sql`t.name`)
        .orderBy(sql`t.id`)
        .limit(AGGREGATE_LIMIT)
        .compile(),
    );
  return {
    ref,
    count: agg?.n ?? 0,
    ...reading,
    created: agg?.created ?? null,
    modified: agg?.modified ?? null,
    release: agg?.release ?? null,
    firstBookId: first,
    authors: await names('book_metadata_author_mapping', 'author', 'author_id'),
    tags: await names('book_metadata_tag_mapping', 'tag', 'tag_id'),
  };
}

/** The release date a book gives its series: its published date when that starts with a year (`yyyy…`), cut to a day. */
function releaseOf(published: string | null): string | null {
  return published !== null && /^[0-9]{4}/.test(published) ? published.slice(0, 10) : null;
}

/** Whether book `a` comes before book `b` in series order: by number (none last), then name as NOCASE orders it, then id. */
function comesFirst(a: { id: number; number: number | null; name: string }, b: { id: number; number: number | null; name: string }): boolean {
  if (a.number !== b.number) return b.number === null || (a.number !== null && a.number < b.number);
  const x = nocase(a.name);
  const y = nocase(b.name);
  return x !== y ? x < y : a.id < b.id;
}

/**
 * Summaries of several series at once (a page of a series list): the books of every series found through an index
 * are read in one statement (and their authors and tags in one each) and told apart here; the unknown series are read
 * one by one. Small statements matter: SQLite prepares a statement again for the values bound to it.
 */
export async function summarizeMany(store: Store, principal: Principal, refs: readonly SeriesRef[], userId: number): Promise<SeriesSummary[]> {
  const d = store.dialect;
  const out: SeriesSummary[] = [];
  for (const ref of refs) out.push(ref.lookup ? emptySummary(ref) : await summarize(store, principal, ref, userId));
  const byKey = new Map<string, number>();
  const byBook = new Map<number, number>();
  const names: string[] = [];
  const ids: number[] = [];
  refs.forEach((ref, i) => {
    if (!ref.lookup) return;
    if ('names' in ref.lookup) {
      for (const name of ref.lookup.names) byKey.set(seriesKey(ref.libraryId, name), i);
      names.push(...ref.lookup.names);
    } else {
      for (const id of ref.lookup.ids) byBook.set(id, i);
      ids.push(...ref.lookup.ids);
    }
  });
  const lookups: Cond[] = [];
  if (names.length > 0) lookups.push(sql<SqlBool>`${nocaseSql(d, sql.ref('m.series_name'))} IN (${sql.join(names.map((n) => nocaseSql(d, n)))})`);
  if (ids.length > 0) lookups.push(sql<SqlBool>`book.id IN (${sql.join(ids)})`);
  if (lookups.length === 0) return out;
  const rows = await all<{ id: number; l: number; series: string | null; added: string; published: string | null; number: number | null; name: string }>(
    store,
    listedBooks(store, principal, { perRow: true })
      .where(lookups.length === 1 ? (lookups[0] as Cond) : sql<SqlBool>`(${sql.join(lookups, sql` OR `)})`)
      .select([
        sql<number>`book.id`.as('id'),
        sql<number>`book.library_id`.as('l'),
        sql<string>`m.series_name`.as('series'),
        sql<string>`book.added_on`.as('added'),
        sql<string>`m.published_date`.as('published'),
        sql<number>`m.series_number`.as('number'),
        bookNameSql(d).as('name'),
      ])
      .compile(),
  );
  // The reader's states from their progress rows of these books, in one statement (not a subquery per book).
  const states = new Map<number, KomgaReadState>();
  for (const r of await store.exec.all(`SELECT p.book_id AS id, ${readStateText(d, 'p')} AS state FROM user_book_progress p WHERE p.user_id = ? AND p.book_id IN (${d.jsonValues('integer')})`, [
    userId,
    JSON.stringify(rows.map((r) => r.id)),
  ]))
    states.set(Number(r.id), r.state as KomgaReadState);
  const owner = new Map<number, number>();
  const firsts = new Map<number, (typeof rows)[number]>();
  // A page's books share a few series names: each is folded once.
  const keys = new Map<string, string>();
  const keyOf = (l: number, series: string): string => {
    const raw = `${l}\u0000${series}`;
    let key = keys.get(raw);
    if (key === undefined) keys.set(raw, (key = seriesKey(l, series)));
    return key;
  };
  for (const r of rows) {
    const k = byBook.get(r.id) ?? (r.series !== null ? byKey.get(keyOf(r.l, r.series)) : undefined);
    const summary = k === undefined ? undefined : out[k];
    if (k === undefined || !summary) continue;
    owner.set(r.id, k);
    summary.count += 1;
    if (summary.created === null || r.added < summary.created) summary.created = r.added;
    if (summary.modified === null || r.added > summary.modified) summary.modified = r.added;
    const release = releaseOf(r.published);
    if (release !== null && (summary.release === null || release < summary.release)) summary.release = release;
    const state = states.get(r.id);
    if (state === 'READ') summary.read += 1;
    if (state === 'IN_PROGRESS') summary.inProgress += 1;
    const first = firsts.get(k);
    if (!first || comesFirst(r, first)) firsts.set(k, r);
  }
  for (const [k, first] of firsts) (out[k] as SeriesSummary).firstBookId = first.id;
  const memberIds = JSON.stringify([...owner.keys()]);
  for (const [table, mapping, key, field] of [
    ['author', 'book_metadata_author_mapping', 'author_id', 'authors'],
    ['tag', 'book_metadata_tag_mapping', 'tag_id', 'tags'],
  ] as const) {
    const named = (await store.exec.all(`SELECT x.book_id AS id, t.name FROM ${mapping} x JOIN ${table} t ON t.id = x.${key} WHERE x.book_id IN (${d.jsonValues('integer')})`, [memberIds])) as {
      id: number;
      name: string;
    }[];
    const seen = new Map<number, Set<string>>();
    for (const r of named) {
      const k = owner.get(r.id) as number;
      seen.set(k, (seen.get(k) ?? new Set()).add(r.name));
    }
    for (const [k, set] of seen) (out[k] as SeriesSummary)[field] = sortedNocase(set).slice(0, AGGREGATE_LIMIT);
  }
  return out;
}

function emptySummary(ref: SeriesRef): SeriesSummary {
  return { ref, count: 0, read: 0, inProgress: 0, created: null, modified: null, release: null, firstBookId: undefined, authors: [], tags: [] };
}

/** When the first and the last visible book of a library was added (walking the newest-first index from both ends). */
export async function libraryDates(store: Store, principal: Principal, libraryId: number): Promise<{ created: string | undefined; modified: string | undefined }> {
  // Each walk stops at its first visible book: the restrictions are tested on the books it reads.
  const inLibrary = () => listedBooks(store, principal, { metadata: false, perRow: true }).where(sql<SqlBool>`+book.library_id = ${libraryId}`).select('book.added_on');
  const [created] = await column<string>(store, inLibrary().orderBy('book.added_on').limit(1).compile());
  const [modified] = await column<string>(store, inLibrary().orderBy('book.added_on', 'desc').limit(1).compile());
  return { created, modified };
}

/**
 * The unknown series holds most of a catalog without series, so its aggregates are read without going through all of
 * its books: the count from the reader's series list, the dates of the library's first and last added visible books,
 * no release date, and the first authors and tags by name that have a book in it (their name indexes walked in order).
 */
async function unknownAggregates(store: Store, principal: Principal, ref: SeriesRef): Promise<Pick<SeriesSummary, 'count' | 'created' | 'modified' | 'release' | 'authors' | 'tags'>> {
  const head = (await seriesIndex(store, principal, true)).byKey.get(seriesKey(ref.libraryId, UNKNOWN_SERIES));
  const { created, modified } = await libraryDates(store, principal, ref.libraryId);
  const names = (table: 'author' | 'tag', mapping: string, key: string): Promise<string[]> =>
    column<string>(
      store,
      store.db
        .selectFrom(sql.table(table).as('t'))
        .select(sql<string>`t.name`.as('name'))
        .where(
          sql<SqlBool>`exists ${listedBooks(store, principal, { perRow: true })
            .innerJoin(sql.table(mapping).as('x'), (join) => join.on(sql<SqlBool>`x.book_id = book.id`))
            .where(sql<SqlBool>`${sql.ref(`x.${key}`)} = t.id`)
            .where(ref.members)
            .select(sql`1`.as('one'))}`,
        )
        .orderBy(sql`t.name`)
        .limit(AGGREGATE_LIMIT)
        .compile(),
    );
  return {
    count: head?.count ?? 0,
    created: created ?? null,
    modified: modified ?? null,
    release: null,
    authors: await names('author', 'book_metadata_author_mapping', 'author_id'),
    tags: await names('tag', 'book_metadata_tag_mapping', 'tag_id'),
  };
}

/** The series' visible books matching the extra conditions, in series order: a page of ids and the total. */
export async function seriesBookIds(
  store: Store,
  principal: Principal,
  ref: SeriesRef,
  conditions: Cond[],
  page: { offset: number; limit: number } | 'all',
): Promise<{ ids: number[]; total: number }> {
  const base = booksOf(store, principal, ref).where(andAll(conditions));
  const ordered = orderedIds(store, principal, ref, conditions, page === 'all' ? 'all' : page.offset + page.limit);
  const ids = await column<number>(store, (page === 'all' ? ordered : ordered.limit(page.limit).offset(page.offset)).compile());
  if (page === 'all') return { ids, total: ids.length };
  const counted = base.select(sql<number>`count(*)`.as('n')).compile();
  return { ids, total: await remembered(store, counted, async () => Number((await firstAside<number>(store, counted)) ?? 0)) };
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

/** The name of the series a book is listed under, and whether that is its library's unknown series. */
export function seriesNameOf(book: Omit<BookSeriesInput, 'id'>, groupUnknown: boolean): { name: string; unknown: boolean } {
  const hasSeries = book.seriesName !== null && book.seriesName.trim() !== '';
  const unknown = (!hasSeries && groupUnknown) || (hasSeries && groupUnknown && nocase(book.seriesName as string) === UNKNOWN_KEY);
  return { name: unknown ? UNKNOWN_SERIES : hasSeries ? (book.seriesName as string) : book.name, unknown };
}
