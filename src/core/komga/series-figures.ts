// A page of Komga series from figures kept per series (table komga_series_summary, migration 044): how many books,
// first and last added, earliest release, first book, first authors and tags, as summarizeMany works them out over
// every book of the series. A page then reads ~20 rows instead of its series' ~670 books and their ~1,500 names.
//
// The migration's triggers mark a series' row stale (moving its version) in every transaction that writes what the
// figures come from, whichever process writes. A page works out the series whose row is stale or missing with
// summarizeMany and stores them as bookkeeping (no change of the catalog's generation, so filling them drops no
// cache), at the version it read before computing: a write landing meanwhile has moved the version, and the figures
// stay stale. A reader with content restrictions uses the figures only for series where nothing is hidden from them;
// their read and in-progress counts come from their own progress rows, in one statement for the page.
import { sql, type SqlBool } from 'kysely';
import { allPermissions } from '../auth/permissions.ts';
import { isAdmin, type Principal } from '../auth/principal.ts';
import { visibleBookFilter } from '../auth/visibility.ts';
import type { SqlValue } from '../store/sql-exec.ts';
import type { Store } from '../store/store.ts';
import { readStateText, type KomgaReadState } from './read-progress.ts';
import { membersOf, seriesId, seriesKey, summarizeMany, type SeriesRef, type SeriesSummary } from './series.ts';
import { allAside, HAS_SERIES, nocase, remembered } from './sql.ts';

/** Who the kept figures are for: every book counts. */
const EVERY_BOOK: Principal = { userId: 0, username: '', isDefaultPassword: false, sessionVersion: 0, permissions: allPermissions(), libraryIds: [], restrictions: [] };
/** No reader: the kept figures hold no reading state. */
const NO_READER = 0;

interface KeptRow {
  library_id: number;
  series_key: string;
  version: number;
  stale: number;
  book_count: number;
  created: string | null;
  modified: string | null;
  release: string | null;
  first_book_id: number | null;
  authors: string;
  tags: string;
}

/**
 * The one series name a ref is found by, when its figures can be kept: a named series of one spelling, with no capital
 * letter outside ASCII (the triggers' lower() and JavaScript's NOCASE fold then agree whatever a PostgreSQL
 * database's character type).
 */
function keptName(ref: SeriesRef): string | undefined {
  const name = ref.lookup && 'names' in ref.lookup && ref.lookup.names.length === 1 ? ref.lookup.names[0] : undefined;
  return name !== undefined && nocase(name) === name.toLowerCase() ? name : undefined;
}

/** Keys of the series holding a book hidden from the reader; case folded further than NOCASE, so it only over-reports. */
const hiddenKey = (libraryId: number, name: string): string => `${libraryId}\u0000${name.toLowerCase()}`;

/** The named series of the reader's libraries holding a book their content restrictions hide: one statement per catalog state. */
function seriesWithHiddenBooks(store: Store, principal: Principal): Promise<Set<string>> {
  const compiled = store.db
    .selectFrom('book')
    .innerJoin('book_metadata as m', 'm.book_id', 'book.id')
    .where(sql<SqlBool>`+book.library_id IN (${sql.join(principal.libraryIds)})`)
    .where(sql<SqlBool>`book.deleted = 0 and book.is_physical = 0`)
    .where(HAS_SERIES)
    .where((eb) => eb.not(visibleBookFilter(principal, { libraryIndex: false })(eb)))
    .select([sql<number>`book.library_id`.as('l'), sql<string>`m.series_name`.as('name')])
    .distinct()
    .compile();
  return remembered(store, compiled, async () => new Set((await allAside<{ l: number; name: string }>(store, compiled)).map((r) => hiddenKey(r.l, r.name))));
}

function fromRow(ref: SeriesRef, row: KeptRow): SeriesSummary {
  return {
    ref,
    count: row.book_count,
    read: 0,
    inProgress: 0,
    created: row.created,
    modified: row.modified,
    release: row.release,
    firstBookId: row.first_book_id ?? undefined,
    authors: JSON.parse(row.authors) as string[],
    tags: JSON.parse(row.tags) as string[],
  };
}

const FIGURES = 'book_count = ?, created = ?, modified = ?, release = ?, first_book_id = ?, authors = ?, tags = ?';
const figuresOf = (s: SeriesSummary): SqlValue[] => [s.count, s.created, s.modified, s.release, s.firstBookId ?? null, JSON.stringify(s.authors), JSON.stringify(s.tags)];

/**
 * Stores figures worked out from the books, each at the version its row had before they were read (no row: only if
 * none has appeared since); a series left without books loses its row. Gives up on a busy catalog: whoever asks next
 * works them out again. Answers how many were stored.
 */
async function keep(store: Store, computed: readonly { libraryId: number; key: string; summary: SeriesSummary; row: Pick<KeptRow, 'version'> | undefined }[]): Promise<number> {
  let stored = 0;
  for (const { libraryId, key, summary, row } of computed) {
    const at = [libraryId, key, row?.version ?? 0];
    const where = 'WHERE library_id = ? AND series_key = ? AND version = ?';
    const done =
      row && summary.count === 0
        ? await store.bookkeeping.tryRun(`DELETE FROM komga_series_summary ${where}`, at)
        : row
          ? await store.bookkeeping.tryRun(`UPDATE komga_series_summary SET stale = 0, ${FIGURES} ${where}`, [...figuresOf(summary), ...at])
          : await store.bookkeeping.tryRun(
              `INSERT INTO komga_series_summary (library_id, series_key, version, stale, book_count, created, modified, release, first_book_id, authors, tags)
               VALUES (?, ?, 0, 0, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (library_id, series_key) DO NOTHING`,
              [libraryId, key, ...figuresOf(summary)],
            );
    if (!done) break;
    stored++;
  }
  return stored;
}

const storingByStore = new WeakMap<Store, Promise<void>>();

function track(store: Store, storing: Promise<unknown>): void {
  storingByStore.set(store, Promise.all([storingByStore.get(store), storing]).then(() => undefined));
}

/** Resolves once the figures worked out so far are stored (or given up), the background filling included: for tests and benchmarks. */
export async function figuresStored(store: Store): Promise<void> {
  for (let pending = storingByStore.get(store); pending; ) {
    await pending;
    const next = storingByStore.get(store);
    if (next === pending) return;
    pending = next;
  }
}

/** Series worked out per batch of the background filling (about a page's worth of books each). */
const FILL_BATCH = 40;
const filling = new WeakSet<Store>();

/**
 * Works out the figures of every stale series in the background, a batch at a time, letting requests in between: a
 * catalog just migrated (every series stale) or just scanned has them all kept soon after its first series page.
 * Stops when nothing is left, or when a batch stores nothing (a busy catalog, or writes moving every row meanwhile).
 */
export function fillStale(store: Store, signal?: AbortSignal): Promise<void> {
  if (filling.has(store)) return storingByStore.get(store) ?? Promise.resolve();
  filling.add(store);
  const d = store.dialect;
  const run = async (): Promise<void> => {
    try {
      for (;;) {
        await new Promise((resolve) => setImmediate(resolve));
        if (signal?.aborted) return;
        const rows = (await store.exec.all(`SELECT library_id, series_key, version FROM komga_series_summary WHERE stale = 1 LIMIT ${FILL_BATCH}`)) as unknown as Pick<KeptRow, 'library_id' | 'series_key' | 'version'>[];
        if (rows.length === 0) return;
        // The key is a spelling of the series' name (it folds to itself).
        const refs = rows.map((r): SeriesRef => {
          const libraryId = Number(r.library_id);
          return { id: seriesId(libraryId, r.series_key), libraryId, name: r.series_key, members: membersOf(d, { libraryId, name: r.series_key, kind: 'named' }), bounded: true, lookup: { names: [r.series_key] } };
        });
        const computed = await summarizeMany(store, EVERY_BOOK, refs, NO_READER);
        const stored = await keep(
          store,
          rows.map((r, i) => ({ libraryId: Number(r.library_id), key: r.series_key, summary: computed[i] as SeriesSummary, row: r })),
        );
        if (stored === 0) return;
      }
    } finally {
      filling.delete(store);
    }
  };
  const running = run().catch(() => undefined);
  track(store, running);
  return running;
}

/** The reader's read and in-progress books of the kept series, from their progress rows, in one statement. */
async function readerStates(store: Store, userId: number, summaries: readonly SeriesSummary[], keys: ReadonlyMap<string, number>): Promise<void> {
  const d = store.dialect;
  const folded = [...new Set(summaries.map((s) => nocase(keptName(s.ref) as string)))];
  const rows = (await store.exec.all(
    // CROSS JOIN: SQLite keeps the series' books (through the series-name index) as the outer loop and probes the
    // reader's progress row of each, rather than reading every progress row of a reader who has thousands.
    `SELECT b.library_id AS l, m.series_name AS series, ${readStateText(d, 'p')} AS state, count(*) AS n
     FROM book_metadata m CROSS JOIN user_book_progress p CROSS JOIN book b
     WHERE ${d.nocase('m.series_name')} IN (${d.jsonValues('text')}) AND p.user_id = ? AND p.book_id = m.book_id AND b.id = m.book_id AND b.deleted = 0 AND b.is_physical = 0
     GROUP BY 1, 2, 3`,
    [JSON.stringify(folded), userId],
  )) as { l: number; series: string; state: KomgaReadState; n: number }[];
  for (const r of rows) {
    const i = keys.get(seriesKey(r.l, r.series));
    const summary = i === undefined ? undefined : summaries[i];
    if (!summary) continue;
    if (r.state === 'READ') summary.read += Number(r.n);
    else if (r.state === 'IN_PROGRESS') summary.inProgress += Number(r.n);
  }
}

/** summarizeMany's answer for a page of series, from the kept figures where they may be used. */
export async function summarizePage(store: Store, principal: Principal, refs: readonly SeriesRef[], userId: number): Promise<SeriesSummary[]> {
  const restricted = !isAdmin(principal) && principal.restrictions.length > 0 && principal.libraryIds.length > 0 && refs.some((ref) => keptName(ref) !== undefined);
  const hidden = restricted ? await seriesWithHiddenBooks(store, principal) : undefined;
  const kept: number[] = [];
  const rest: number[] = [];
  refs.forEach((ref, i) => {
    const name = keptName(ref);
    (name !== undefined && !hidden?.has(hiddenKey(ref.libraryId, name)) ? kept : rest).push(i);
  });
  const out: SeriesSummary[] = new Array<SeriesSummary>(refs.length);
  if (kept.length > 0) {
    const folded = kept.map((i) => nocase(keptName(refs[i] as SeriesRef) as string));
    // Per library (a page's series are nearly always of one): the primary key then finds each row.
    const rows: KeptRow[] = [];
    for (const libraryId of new Set(kept.map((i) => (refs[i] as SeriesRef).libraryId))) {
      const keys = [...new Set(folded.filter((_, j) => (refs[kept[j] as number] as SeriesRef).libraryId === libraryId))];
      rows.push(...((await store.exec.all(`SELECT * FROM komga_series_summary WHERE library_id = ? AND series_key IN (${store.dialect.jsonValues('text')})`, [libraryId, JSON.stringify(keys)])) as unknown as KeptRow[]));
    }
    const byKey = new Map(rows.map((r) => [`${Number(r.library_id)}\u0000${r.series_key}`, r]));
    const missing: { i: number; key: string; row: KeptRow | undefined }[] = [];
    kept.forEach((i, j) => {
      const ref = refs[i] as SeriesRef;
      const key = folded[j] as string;
      const row = byKey.get(`${ref.libraryId}\u0000${key}`);
      if (row && Number(row.stale) === 0) out[i] = fromRow(ref, row);
      else missing.push({ i, key, row });
    });
    if (missing.length > 0) {
      const computed = await summarizeMany(store, EVERY_BOOK, missing.map((m) => refs[m.i] as SeriesRef), NO_READER);
      computed.forEach((summary, j) => (out[(missing[j] as { i: number }).i] = summary));
      // Not awaited: the page does not wait for the figures to be stored, nor for the other stale series to be worked out.
      track(
        store,
        keep(
          store,
          missing.map((m, j) => ({ libraryId: (refs[m.i] as SeriesRef).libraryId, key: m.key, summary: computed[j] as SeriesSummary, row: m.row })),
        )
          .then(() => void fillStale(store))
          .catch(() => undefined),
      );
    }
    const keptSummaries = kept.map((i) => out[i] as SeriesSummary);
    await readerStates(store, userId, keptSummaries, new Map(kept.map((i, j) => [seriesKey((refs[i] as SeriesRef).libraryId, keptName(refs[i] as SeriesRef) as string), j])));
  }
  if (rest.length > 0) (await summarizeMany(store, principal, rest.map((i) => refs[i] as SeriesRef), userId)).forEach((s, j) => (out[rest[j] as number] = s));
  return out;
}
