// The series each book of a page belongs to, as a BookDto names it: the series' id, its title (the first spelling of
// its name among the reader's books) and whether it is a one-shot (one visible book). See series.ts for series.
import type { SqlBool } from 'kysely';
import { sql } from 'kysely';
import type { Principal } from '../auth/principal.ts';
import { compiledOnce } from '../store/compiled-once.ts';
import { memosPerOwner, type CatalogMemo } from '../store/snapshot.ts';
import type { Store } from '../store/store.ts';
import { membersOf, seriesId, seriesKey, seriesNameOf, type BookSeries, type BookSeriesInput } from './series.ts';
import { all, column, HAS_SERIES, listedBooks, nocaseSql, remembered, UNKNOWN_SERIES } from './sql.ts';

type SeriesKind = 'named' | 'unknown' | 'title';

/** A book's series as one principal sees it, per catalog state, by kind and key. */
const SERIES_KEPT = 1024;
const keptByStore = new WeakMap<Store, (principal: Principal) => CatalogMemo<string, BookSeries>>();

function keptSeries(store: Store, principal: Principal): CatalogMemo<string, BookSeries> {
  let ofPrincipal = keptByStore.get(store);
  if (!ofPrincipal) keptByStore.set(store, (ofPrincipal = memosPerOwner<string, BookSeries>(SERIES_KEPT)));
  return ofPrincipal(principal);
}

/**
 * The series of each book, with the visible books of that series counted only as far as `oneshot` needs: the named
 * series of all the books in one grouped statement through the name index (counting every book of each: ~670 a series
 * at 100,000 books); the unknown series and books named like no series stop at their second book. What is worked out
 * is kept per principal until the catalog changes: a client paging through books meets the same series page after
 * page (every page of a series' books, most pages of a library's). The statements are compiled once per principal and
 * shape.
 */
export async function seriesOfBooks(store: Store, principal: Principal, books: readonly BookSeriesInput[], groupUnknown: boolean): Promise<Map<number, BookSeries>> {
  const d = store.dialect;
  const listed = () => listedBooks(store, principal, { perRow: true });
  const wanted = new Map<string, { libraryId: number; name: string; kind: SeriesKind }>();
  const keyOf = new Map<number, string>();
  for (const book of books) {
    const { name, unknown } = seriesNameOf(book, groupUnknown);
    const key = seriesKey(book.libraryId, name);
    keyOf.set(book.id, key);
    if (!wanted.has(key)) wanted.set(key, { libraryId: book.libraryId, name, kind: unknown ? 'unknown' : book.seriesName !== null && book.seriesName.trim() !== '' ? 'named' : 'title' });
  }
  const kept = keptSeries(store, principal);
  // Taken before anything is read: a change committed meanwhile shows as a change next time.
  const generation = store.generation();
  const keptKey = (kind: SeriesKind, key: string): string => `${kind}\u0000${key}`;
  const found = new Map<string, BookSeries>();
  for (const [key, w] of wanted) {
    const series = kept.peekAt(generation, keptKey(w.kind, key));
    if (series) found.set(key, series);
  }
  const worked = new Map<string, BookSeries>();
  // Named series, all of the page's not kept at once through the name index: each one's first spelling and size.
  const named = [...wanted].filter(([key, w]) => w.kind === 'named' && !found.has(key)).map(([, w]) => w.name);
  if (named.length > 0) {
    const statement = compiledOnce(principal, `komga-book-series:named:${named.length}`, named, () => {
      const seriesName = nocaseSql(d, sql.ref('m.series_name'));
      return (
        listed()
          // By name alone (an IN list the index answers); other libraries' series of those names are dropped below.
          .where(sql<SqlBool>`${seriesName} IN (${sql.join(named.map((name) => nocaseSql(d, name)))})`)
          .select([sql<number>`book.library_id`.as('l'), sql<string>`min(m.series_name)`.as('name'), sql<number>`count(*)`.as('n')])
          .groupBy([sql`book.library_id`, seriesName])
          .compile()
      );
    });
    for (const r of await all<{ l: number; name: string; n: number }>(store, statement)) {
      const key = seriesKey(r.l, r.name);
      if (wanted.get(key)?.kind === 'named' && !found.has(key)) worked.set(key, { id: seriesId(r.l, r.name), title: r.name, oneshot: r.n <= 1 });
    }
  }
  // The unknown series (most of a library, maybe) and books named like no series stop at their second book.
  for (const [key, w] of wanted) {
    if (w.kind === 'named' || found.has(key)) continue;
    let ids: number[];
    if (w.kind === 'unknown') {
      const statement = compiledOnce(principal, `komga-book-series:unknown:${w.libraryId}`, [], () =>
        listed().where(membersOf(d, { libraryId: w.libraryId, name: UNKNOWN_SERIES, kind: 'unknown' })).select('book.id').limit(2).compile(),
      );
      ids = await remembered(store, statement, () => column<number>(store, statement));
    } else {
      const statement = compiledOnce(principal, 'komga-book-series:title', [w.libraryId, w.name, 2], () =>
        listed()
          .where(sql<SqlBool>`(+book.library_id = ${w.libraryId} AND NOT ${HAS_SERIES} AND ${nocaseSql(d, sql.ref('m.title'))} = ${nocaseSql(d, w.name)})`)
          .select('book.id')
          .limit(2)
          .compile(),
      );
      ids = await column<number>(store, statement);
    }
    worked.set(key, { id: seriesId(w.libraryId, w.name), title: w.name, oneshot: ids.length <= 1 });
  }
  kept.keepAll(store, generation, [...worked].map(([key, series]) => [keptKey((wanted.get(key) as { kind: SeriesKind }).kind, key), series] as const));
  for (const [key, series] of worked) found.set(key, series);
  const out = new Map<number, BookSeries>();
  for (const [bookId, key] of keyOf) {
    const w = wanted.get(key) as { libraryId: number; name: string };
    out.set(bookId, found.get(key) ?? { id: seriesId(w.libraryId, w.name), title: w.name, oneshot: true });
  }
  return out;
}
