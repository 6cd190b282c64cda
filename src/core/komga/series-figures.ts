// A page of Komga series from figures kept per series (table komga_series_summary, migration 044): how many books,
// first and last added, earliest release, first book, first authors and tags, as summarizeMany works them out over
// every book of the series. A page then reads ~20 rows instead of its series' ~670 books and their ~1,500 names.
//
// The migration's triggers append a row naming the series to komga_series_stale in every transaction that writes what
// the figures come from, whichever process writes; kept figures are valid only for a series with no such row. A page
// reads the rows and log ids of its series, works out those stale or without a row with summarizeMany, and stores them
// as bookkeeping (no change of the catalog's generation, so filling them drops no cache): first the figures, over the
// claim the row had before the books were read (a newer reader's figures are never overwritten by older ones), then
// the log rows it saw, by id, only while the row holds its own claim. A write committed meanwhile has a log row the
// reader never saw: it survives and keeps the series stale. A reader with content restrictions uses the figures only
// for series where nothing is hidden from them; their read and in-progress counts come from their own progress rows,
// in one statement for the page. With the figures is kept the SeriesDto's JSON from after its sort title on (migration
// 051: what is the same for every reader, the first book's fields included), so a page writes each kept series as the
// reader's part in front of that text rather than building and serializing the DTO. A library's Unknown Series has a
// row under the key '' holding only a claim on which books are in it (migration 053 logs the writes that change them):
// a reader's counts of it are kept under that claim.
import { chunks, nextTurn } from '../batches.ts';
import { randomUUID } from 'node:crypto';
import { sql, type SqlBool } from 'kysely';
import { allPermissions } from '../auth/permissions.ts';
import { isAdmin, type Principal } from '../auth/principal.ts';
import { hiddenByExcludedNames, visibleBookFilter } from '../auth/visibility.ts';
import { compiledOnce } from '../store/compiled-once.ts';
import { memosPerOwner } from '../store/snapshot.ts';
import type { SqlValue } from '../store/sql-exec.ts';
import type { KomgaSeriesSummaryTable } from '../store/db-types.ts';
import type { Store } from '../store/store.ts';
import { loadBookRows } from './catalog.ts';
import { seriesDtoTail } from './dto.ts';
import { readStateText, type KomgaReadState } from './read-progress.ts';
import { membersOf, seriesId, seriesKey, summarize, summarizeMany, unknownReadCounts, type ReadCounts, type SeriesRef, type SeriesSummary } from './series.ts';
import { allAside, HAS_SERIES, nocase, remembered } from './sql.ts';

/** Who the kept figures are for: every book counts. */
const EVERY_BOOK: Principal = { userId: 0, username: '', isDefaultPassword: false, sessionVersion: 0, permissions: allPermissions(), libraryIds: [], restrictions: [] };
/** No reader: the kept figures hold no reading state. */
const NO_READER = 0;

/** A row of komga_series_summary as it is read. */
type KeptRow = KomgaSeriesSummaryTable;

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
  const compiled = compiledOnce(principal, `komga-series-hidden:${store.engine}`, [], () =>
    store.db
      .selectFrom('book')
      .innerJoin('book_metadata as m', 'm.book_id', 'book.id')
      .where(sql<SqlBool>`+book.library_id IN (${sql.join(principal.libraryIds)})`)
      .where(sql<SqlBool>`book.deleted = 0 and book.is_physical = 0`)
      .where(HAS_SERIES)
      .where(hiddenByExcludedNames(principal) ?? ((eb) => eb.not(visibleBookFilter(principal, { libraryIndex: false })(eb))))
      .select([sql<number>`book.library_id`.as('l'), sql<string>`m.series_name`.as('name')])
      .distinct()
      .compile(),
  );
  return remembered(store, compiled, async () => new Set((await allAside<{ l: number; name: string }>(store, compiled)).map((r) => hiddenKey(r.l, r.name))));
}

/** The kept SeriesDto text (from after its sort title on) of summaries made from kept rows. */
const dtoTails = new WeakMap<SeriesSummary, string>();

/** The SeriesDto's JSON after seriesDtoLead's part, when the summary comes from kept figures that hold it. */
export function keptDtoTail(summary: SeriesSummary): string | undefined {
  return dtoTails.get(summary);
}

function fromRow(ref: SeriesRef, row: KeptRow): SeriesSummary {
  let authors: string[] | undefined;
  let tags: string[] | undefined;
  const summary: SeriesSummary = {
    ref,
    count: row.book_count,
    read: 0,
    inProgress: 0,
    created: row.created,
    modified: row.modified,
    release: row.release,
    firstBookId: row.first_book_id ?? undefined,
    // Parsed when asked for: a page answered from the kept text never does.
    get authors() {
      return (authors ??= JSON.parse(row.authors) as string[]);
    },
    set authors(value) {
      authors = value;
    },
    get tags() {
      return (tags ??= JSON.parse(row.tags) as string[]);
    },
    set tags(value) {
      tags = value;
    },
  };
  if (row.dto_tail !== null) dtoTails.set(summary, row.dto_tail);
  return summary;
}

/** What a reader saw of a series before reading its books: its kept row, if any, and the ids of its log rows. */
export interface KeptState {
  row: KeptRow | undefined;
  logIds: number[];
  /** The log held a row for the series when its kept row was read (its log ids may have been read after). */
  logged: boolean;
}

const stateKey = (libraryId: number, key: string): string => `${libraryId}\u0000${key}`;

/**
 * The kept rows and log ids of the given series keys of libraries, by stateKey: read BEFORE their books are. The rows
 * come with whether the log names them, in one statement; log ids are read only for the series it does name or that
 * have no row (a page from kept figures: one statement).
 */
export async function keptStates(store: Store, series: readonly { libraryId: number; key: string }[]): Promise<Map<string, KeptState>> {
  const states = new Map<string, KeptState>(series.map((s) => [stateKey(s.libraryId, s.key), { row: undefined, logIds: [], logged: true }]));
  const d = store.dialect;
  // Per library (a page's series are nearly always of one): the primary key and the log's index then find each row.
  for (const libraryId of new Set(series.map((s) => s.libraryId))) {
    const keys = [...new Set(series.filter((s) => s.libraryId === libraryId).map((s) => s.key))];
    const rows = (await store.exec.all(
      `SELECT s.*, CASE WHEN EXISTS (SELECT 1 FROM komga_series_stale l WHERE l.library_id = s.library_id AND l.series_key = s.series_key) THEN 1 ELSE 0 END AS logged
       FROM komga_series_summary s WHERE s.library_id = ? AND s.series_key IN (${d.jsonValues('text')})`,
      [libraryId, JSON.stringify(keys)],
    )) as unknown as (KeptRow & { logged: number })[];
    for (const { logged, ...row } of rows) {
      const state = states.get(stateKey(libraryId, row.series_key));
      if (!state) continue;
      state.row = row;
      state.logged = Number(logged) === 1;
    }
    const unsure = keys.filter((key) => states.get(stateKey(libraryId, key))?.logged);
    if (unsure.length === 0) continue;
    const logIds = (await store.exec.all(`SELECT id, series_key FROM komga_series_stale WHERE library_id = ? AND series_key IN (${d.jsonValues('text')})`, [
      libraryId,
      JSON.stringify(unsure),
    ])) as { id: number; series_key: string }[];
    for (const r of logIds) states.get(stateKey(libraryId, r.series_key))?.logIds.push(Number(r.id));
  }
  return states;
}

/**
 * Kept figures that may be used: a row with its SeriesDto text, and no log row saying a write touched the series since
 * (none when the row was read: one read later may already miss rows a reader storing newer figures deleted).
 */
const fresh = (state: KeptState | undefined): KeptRow | undefined => (state && !state.logged && state.logIds.length === 0 && state.row?.dto_tail != null ? state.row : undefined);

const FIGURES = ['book_count', 'created', 'modified', 'release', 'first_book_id', 'authors', 'tags', 'dto_tail'];
const figuresOf = (s: SeriesSummary, tail: string): SqlValue[] => [s.count, s.created, s.modified, s.release, s.firstBookId ?? null, JSON.stringify(s.authors), JSON.stringify(s.tags), tail];

export interface Computed {
  libraryId: number;
  key: string;
  summary: SeriesSummary;
  /** keptStates' answer for the series, read before the books the summary comes from. */
  state: KeptState;
}

/**
 * Stores figures worked out from the books, each over the claim its row had before they were read (no row: only if
 * none has appeared since), in the order of their keys; then deletes the log rows each reader saw, of the rows still
 * holding this call's claim. Gives up on a busy catalog: whoever asks next works them out again. Answers how many
 * were stored.
 */
export async function keep(store: Store, computed: readonly Computed[]): Promise<number> {
  const claim = randomUUID();
  const sorted = [...computed].sort((a, b) => a.libraryId - b.libraryId || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  // The first books' rows, read after the log rows were (as the books were): a write to them since has a log row of its own.
  const firsts = new Map(
    (await loadBookRows(store, sorted.flatMap((c) => (c.summary.firstBookId === undefined ? [] : [c.summary.firstBookId])), { files: false, authors: false })).map((r) => [r.id, r]),
  );
  let stored = 0;
  for (const { libraryId, key, summary, state } of sorted) {
    const figures = figuresOf(summary, seriesDtoTail(summary, summary.firstBookId === undefined ? undefined : firsts.get(summary.firstBookId)));
    const done = state.row
      ? await store.bookkeeping.tryRun(`UPDATE komga_series_summary SET claim = ?, ${FIGURES.map((f) => `${f} = ?`).join(', ')} WHERE library_id = ? AND series_key = ? AND claim = ?`, [
          claim,
          ...figures,
          libraryId,
          key,
          state.row.claim,
        ])
      : await store.bookkeeping.tryRun(
          `INSERT INTO komga_series_summary (library_id, series_key, claim, ${FIGURES.join(', ')}) VALUES (${['?', '?', '?', ...FIGURES.map(() => '?')].join(', ')}) ON CONFLICT (library_id, series_key) DO NOTHING`,
          [libraryId, key, claim, ...figures],
        );
    if (!done) break;
    stored++;
  }
  await forgetSeen(
    store,
    sorted.slice(0, stored).flatMap((c) => c.state.logIds),
    claim,
  );
  return stored;
}

/**
 * Deletes the log rows a reader saw, of the series whose row holds `claim` (the one it stored): a reader that stored
 * over it since read the books later, so its figures hold these writes too, and deletes what it saw itself; a log row
 * left behind only means working out again.
 */
async function forgetSeen(store: Store, seen: readonly number[], claim: string): Promise<void> {
  await inChunks(seen, (ids) =>
    store.bookkeeping.tryRun(
      `DELETE FROM komga_series_stale WHERE id IN (${store.dialect.jsonValues('integer')})
       AND EXISTS (SELECT 1 FROM komga_series_summary s WHERE s.library_id = komga_series_stale.library_id AND s.series_key = komga_series_stale.series_key AND s.claim = ?)`,
      [ids, claim],
    ),
  );
}

/**
 * Log rows per statement that deletes them. A catalog just scanned or written in bulk logs a row or two per book
 * (~200,000 at 100,000 books), and a statement over all of them held the daemon's thread for ~100–300 ms: with this many
 * it takes a few ms, and requests are answered between two.
 */
const LOG_CHUNK = 4_000;

/**
 * Runs a statement over each chunk of `ids` (given as a JSON array), in order, letting the event loop turn between two;
 * stops at the first that does not run (a busy catalog). Answers how many ids the statements that ran were given.
 */
async function inChunks(ids: readonly number[], run: (chunk: string) => Promise<boolean>): Promise<number> {
  let done = 0;
  for (const chunk of chunks(ids, LOG_CHUNK)) {
    if (done > 0) await nextTurn();
    if (!(await run(JSON.stringify(chunk)))) break;
    done += chunk.length;
  }
  return done;
}

/**
 * The key under which migration 053 logs the writes that move books into or out of a library's Unknown Series. Its
 * row in komga_series_summary holds only a claim (no figures: it never counts as fresh figures).
 */
const UNKNOWN_MEMBERS = '';

/** The claim of the library's Unknown Series members, when no write logged since changed them. */
const freshClaim = (state: KeptState | undefined): string | undefined => (state?.row && !state.logged && state.logIds.length === 0 ? state.row.claim : undefined);

/**
 * Stores a new claim on the Unknown Series' members over the one the reader saw, and deletes the log rows it saw: what
 * is counted from now on holds their writes. Answers the claim, or undefined on a busy catalog.
 */
async function claimUnknown(store: Store, libraryId: number, state: KeptState): Promise<string | undefined> {
  const claim = randomUUID();
  const done = state.row
    ? await store.bookkeeping.tryRun('UPDATE komga_series_summary SET claim = ? WHERE library_id = ? AND series_key = ? AND claim = ?', [claim, libraryId, UNKNOWN_MEMBERS, state.row.claim])
    : await store.bookkeeping.tryRun(
        `INSERT INTO komga_series_summary (library_id, series_key, claim, book_count, authors, tags) VALUES (?, ?, ?, 0, '[]', '[]') ON CONFLICT (library_id, series_key) DO NOTHING`,
        [libraryId, UNKNOWN_MEMBERS, claim],
      );
  if (!done) return undefined;
  // Another reader's claim stored meanwhile leaves this one unused: what is kept under it is never found.
  await forgetSeen(store, state.logIds, claim);
  return claim;
}

/**
 * A reader's read and in-progress books of a library's Unknown Series, kept while its members' claim holds and the
 * reading state is unchanged: counting them reads every progress row of the reader (~25 ms for 10,000 rows), and the
 * catalog changes far more often than which books are in it. Read after the claim was (or was stored): whatever a
 * write the claim does not cover did, the next page sees its log row. Undefined when the claim cannot be stored.
 */
async function keptUnknownCounts(store: Store, principal: Principal, ref: SeriesRef, userId: number, state: KeptState): Promise<ReadCounts | undefined> {
  // A catalog that cannot take the claim (a read-only or full disk) is counted as before: the page is still answered.
  const claim = freshClaim(state) ?? (await claimUnknown(store, ref.libraryId, state).catch(() => undefined));
  if (claim === undefined) return undefined;
  const reading = { generation: () => store.readingState.generation(), writeInFlight: () => store.writeInFlight() };
  return countsUnderClaim(store).getAsync(reading, claimedKey(userId, stateKey(ref.libraryId, UNKNOWN_MEMBERS), claim), () => unknownReadCounts(store, principal, ref, userId));
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
        await nextTurn();
        if (signal?.aborted) return;
        let series = ((await store.exec.all(`SELECT library_id, series_key FROM komga_series_stale GROUP BY library_id, series_key LIMIT ${FILL_BATCH}`)) as { library_id: number; series_key: string }[]).map(
          (r) => ({ libraryId: Number(r.library_id), key: r.series_key }),
        );
        if (series.length === 0) return;
        const states = await keptStates(store, series);
        await nextTurn();
        // The Unknown Series' members: a new claim keeps the log short; the next page counts under it.
        const claimed = (await Promise.all(series.filter((s) => s.key === UNKNOWN_MEMBERS).map((s) => claimUnknown(store, s.libraryId, states.get(stateKey(s.libraryId, s.key)) as KeptState)))).filter(Boolean).length;
        series = series.filter((s) => s.key !== UNKNOWN_MEMBERS);
        // The key is a spelling of the series' name (it folds to itself).
        const refs = series.map(({ libraryId, key }): SeriesRef => ({ id: seriesId(libraryId, key), libraryId, name: key, members: membersOf(d, { libraryId, name: key, kind: 'named' }), bounded: true, lookup: { names: [key] } }));
        const computed = refs.length === 0 ? [] : await summarizeMany(store, EVERY_BOOK, refs, NO_READER);
        await nextTurn();
        const stored = await keep(
          store,
          series.map((s, i) => ({ ...s, summary: computed[i] as SeriesSummary, state: states.get(stateKey(s.libraryId, s.key)) as KeptState })),
        );
        if (stored + claimed === 0) return;
      }
    } finally {
      filling.delete(store);
    }
  };
  const running = run().catch(() => undefined);
  track(store, running);
  return running;
}

/** Series compacted per statement pair. */
const COMPACT_BATCH = 200;

/**
 * Shrinks the log to one row per stale series, for a catalog whose series pages nobody reads (the Komga API off): each
 * series with several rows gets one new row, then the rows seen before it are deleted by id. The new row was committed
 * after every row it replaces, and a reader deletes it only having read it, so before reading the books of those
 * writes: no write is forgotten. A log row committed meanwhile is not among those deleted. Answers the rows deleted.
 */
export async function compactStaleLog(store: Store, signal?: AbortSignal): Promise<number> {
  const d = store.dialect;
  let deleted = 0;
  for (let after = -1; !signal?.aborted; ) {
    const series = (await store.exec.all(
      `SELECT library_id, series_key, min(id) AS first FROM komga_series_stale GROUP BY library_id, series_key HAVING count(*) > 1 AND min(id) > ? ORDER BY min(id) LIMIT ${COMPACT_BATCH}`,
      [after],
    )) as { library_id: number; series_key: string; first: number }[];
    if (series.length === 0) break;
    await nextTurn();
    const states = await keptStates(
      store,
      series.map((r) => ({ libraryId: Number(r.library_id), key: r.series_key })),
    );
    await nextTurn();
    // One new row for each series some of whose rows were read, committed before any of them is deleted. (If a reader
    // deleted them meanwhile, the new row only means that series is worked out once more.)
    const logIdsOf = (r: { library_id: number; series_key: string }): number[] => states.get(stateKey(Number(r.library_id), r.series_key))?.logIds ?? [];
    const logged = series.filter((r) => logIdsOf(r).length > 0);
    if (logged.length > 0) {
      const added = await store.bookkeeping.tryRun(
        `INSERT INTO komga_series_stale (library_id, series_key) VALUES ${logged.map(() => '(?, ?)').join(', ')}`,
        logged.flatMap((r) => [Number(r.library_id), r.series_key]),
      );
      if (!added) break;
      await nextTurn();
      const seen = logged.flatMap(logIdsOf);
      const gone = await inChunks(seen, (ids) => store.bookkeeping.tryRun(`DELETE FROM komga_series_stale WHERE id IN (${d.jsonValues('integer')})`, [ids]));
      deleted += gone;
      if (gone < seen.length) break;
    }
    // The series not compacted yet all start after this batch's; those just compacted start after it again.
    after = Math.max(...series.map((r) => Number(r.first)));
    await nextTurn();
  }
  return deleted;
}

/** How many progress rows the reader has, remembered until reading state changes. */
function progressRows(store: Store, userId: number): Promise<number> {
  const compiled = { sql: 'SELECT count(*) AS n FROM user_book_progress WHERE user_id = ?', parameters: [userId] };
  return remembered(store, compiled, async () => Number((await store.exec.get(compiled.sql, [userId]))?.n ?? 0));
}

/**
 * Per store: a reader's counts of a series (a kept named one, or a library's Unknown Series) by reader, series and the
 * claim of its row, kept under the reading state's generation. The catalog's side is the claim: a write to the series'
 * books logs it stale, and whoever works it out again stores a new claim (random, shared by the series stored
 * together), so counts under an old one are never found again.
 */
const countsUnderClaim = memosPerOwner<string, ReadCounts>(20_000);
const claimedKey = (userId: number, series: string, claim: string): string => `${userId}\u0000${series}\u0000${claim}`;

/**
 * The reader's read and in-progress books of the kept series: those whose kept row is fresh (`claims[i]`) from what
 * was counted under its claim, while the reader's progress is unchanged; the others from their progress rows, in one
 * statement. `keys[i]`: the series key of summaries[i].
 */
async function readerStates(store: Store, userId: number, summaries: readonly SeriesSummary[], keys: readonly string[], claims: readonly (string | undefined)[]): Promise<void> {
  const d = store.dialect;
  const memo = countsUnderClaim(store);
  // Taken before the statement: progress written meanwhile shows as a change next time.
  const generation = store.readingState.generation();
  const asked: number[] = [];
  summaries.forEach((summary, i) => {
    const claim = claims[i];
    const known = claim === undefined ? undefined : memo.peekAt(generation, claimedKey(userId, keys[i] as string, claim));
    if (known !== undefined) {
      summary.read = known.read;
      summary.inProgress = known.inProgress;
    } else asked.push(i);
  });
  if (asked.length === 0) return;
  const byKey = new Map(asked.map((i) => [keys[i] as string, i]));
  const folded = [...new Set(asked.map((i) => nocase(keptName((summaries[i] as SeriesSummary).ref) as string)))];
  // CROSS JOIN fixes SQLite's loop order. Usually the series' books (through the series-name index) are the outer
  // loop, each probing the reader's progress row, rather than every progress row of a reader who has thousands; a
  // reader with fewer progress rows than the series have books (a new one: none) drives it from their rows instead.
  const books = asked.reduce((n, i) => n + (summaries[i] as SeriesSummary).count, 0);
  const from = (await progressRows(store, userId)) < books ? 'user_book_progress p CROSS JOIN book_metadata m' : 'book_metadata m CROSS JOIN user_book_progress p';
  const rows = (await store.exec.all(
    `SELECT b.library_id AS l, m.series_name AS series, ${readStateText(d, 'p')} AS state, count(*) AS n
     FROM ${from} CROSS JOIN book b
     WHERE ${d.nocase('m.series_name')} IN (${d.jsonValues('text')}) AND p.user_id = ? AND p.book_id = m.book_id AND b.id = m.book_id AND b.deleted = 0 AND b.is_physical = 0
     GROUP BY 1, 2, 3`,
    [JSON.stringify(folded), userId],
  )) as { l: number; series: string; state: KomgaReadState; n: number }[];
  for (const r of rows) {
    const i = byKey.get(seriesKey(r.l, r.series));
    const summary = i === undefined ? undefined : summaries[i];
    if (!summary) continue;
    if (r.state === 'READ') summary.read += Number(r.n);
    else if (r.state === 'IN_PROGRESS') summary.inProgress += Number(r.n);
  }
  memo.keepAll(
    store,
    generation,
    asked.flatMap((i) => {
      const claim = claims[i];
      const summary = summaries[i] as SeriesSummary;
      return claim === undefined ? [] : [[claimedKey(userId, keys[i] as string, claim), { read: summary.read, inProgress: summary.inProgress }] as const];
    }),
  );
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
  // A library's Unknown Series (the one series not found through an index): its reader's counts are kept under a claim
  // on its members, for readers who see every book of their libraries.
  const unknown = isAdmin(principal) || principal.restrictions.length === 0 ? rest.filter((i) => !(refs[i] as SeriesRef).bounded) : [];
  const folded = kept.map((i) => nocase(keptName(refs[i] as SeriesRef) as string));
  const states =
    kept.length + unknown.length === 0
      ? new Map<string, KeptState>()
      : await keptStates(store, [
          ...kept.map((i, j) => ({ libraryId: (refs[i] as SeriesRef).libraryId, key: folded[j] as string })),
          ...unknown.map((i) => ({ libraryId: (refs[i] as SeriesRef).libraryId, key: UNKNOWN_MEMBERS })),
        ]);
  if (kept.length > 0) {
    const missing: { i: number; key: string; state: KeptState }[] = [];
    const claims: (string | undefined)[] = [];
    kept.forEach((i, j) => {
      const ref = refs[i] as SeriesRef;
      const key = folded[j] as string;
      const state = states.get(stateKey(ref.libraryId, key)) as KeptState;
      const row = fresh(state);
      claims.push(row?.claim);
      if (row) out[i] = fromRow(ref, row);
      else missing.push({ i, key, state });
    });
    if (missing.length > 0) {
      const computed = await summarizeMany(store, EVERY_BOOK, missing.map((m) => refs[m.i] as SeriesRef), NO_READER);
      computed.forEach((summary, j) => (out[(missing[j] as { i: number }).i] = summary));
      // Not awaited: the page does not wait for the figures to be stored, nor for the other stale series to be worked out.
      track(
        store,
        keep(
          store,
          missing.map((m, j) => ({ libraryId: (refs[m.i] as SeriesRef).libraryId, key: m.key, summary: computed[j] as SeriesSummary, state: m.state })),
        )
          .then(() => void fillStale(store))
          .catch(() => undefined),
      );
    }
    const keptSummaries = kept.map((i) => out[i] as SeriesSummary);
    await readerStates(
      store,
      userId,
      keptSummaries,
      kept.map((i) => seriesKey((refs[i] as SeriesRef).libraryId, keptName(refs[i] as SeriesRef) as string)),
      claims,
    );
  }
  for (const i of unknown) {
    const ref = refs[i] as SeriesRef;
    const counts = await keptUnknownCounts(store, principal, ref, userId, states.get(stateKey(ref.libraryId, UNKNOWN_MEMBERS)) as KeptState);
    out[i] = await summarize(store, principal, ref, userId, counts);
  }
  const others = rest.filter((i) => !unknown.includes(i));
  if (others.length > 0) (await summarizeMany(store, principal, others.map((i) => refs[i] as SeriesRef), userId)).forEach((s, j) => (out[others[j] as number] = s));
  return out;
}
