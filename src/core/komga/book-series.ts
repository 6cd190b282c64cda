// The series each book of a page belongs to, as a BookDto names it: the series' id, its title (the first spelling of
// its name among the reader's books) and whether it is a one-shot (one visible book). See series.ts for series.
import type { SqlBool } from 'kysely';
import { sql } from 'kysely';
import type { Principal } from '../auth/principal.ts';
import { compiledOnce } from '../store/compiled-once.ts';
import type { Store } from '../store/store.ts';
import { membersOf, seriesId, seriesKey, seriesNameOf, type BookSeries, type BookSeriesInput } from './series.ts';
import { all, column, HAS_SERIES, listedBooks, nocaseSql, remembered, UNKNOWN_SERIES } from './sql.ts';

/**
 * The series of each book, with the visible books of that series counted only as far as `oneshot` needs: the named
 * series of all the books in one grouped statement through the name index; the unknown series stops at its second
 * book (and is the same for every page of its library: kept until the catalog changes). The statements are compiled
 * once per principal and shape.
 */
export async function seriesOfBooks(store: Store, principal: Principal, books: readonly BookSeriesInput[], groupUnknown: boolean): Promise<Map<number, BookSeries>> {
  const d = store.dialect;
  const listed = () => listedBooks(store, principal, { perRow: true });
  const wanted = new Map<string, { libraryId: number; name: string; kind: 'named' | 'unknown' | 'title' }>();
  const keyOf = new Map<number, string>();
  for (const book of books) {
    const { name, unknown } = seriesNameOf(book, groupUnknown);
    const key = seriesKey(book.libraryId, name);
    keyOf.set(book.id, key);
    if (!wanted.has(key)) wanted.set(key, { libraryId: book.libraryId, name, kind: unknown ? 'unknown' : book.seriesName !== null && book.seriesName.trim() !== '' ? 'named' : 'title' });
  }
  const found = new Map<string, BookSeries>();
  // Named series, all of the page's at once through the name index: each one's first spelling and size.
  const named = [...wanted.values()].filter((w) => w.kind === 'named').map((w) => w.name);
  if (named.length > 0) {
    const seriesName = nocaseSql(d, sql.ref('m.series_name'));
    const statement = compiledOnce(principal, `komga-book-series:named:${named.length}`, named, () =>
      listed()
        // By name alone (an IN list the index answers); other libraries' series of those names are dropped below.
        .where(sql<SqlBool>`${seriesName} IN (${sql.join(named.map((name) => nocaseSql(d, name)))})`)
        .select([sql<number>`book.library_id`.as('l'), sql<string>`min(m.series_name)`.as('name'), sql<number>`count(*)`.as('n')])
        .groupBy([sql`book.library_id`, seriesName])
        .compile(),
    );
    for (const r of await all<{ l: number; name: string; n: number }>(store, statement)) {
      const key = seriesKey(r.l, r.name);
      if (wanted.get(key)?.kind === 'named') found.set(key, { id: seriesId(r.l, r.name), title: r.name, oneshot: r.n <= 1 });
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
    found.set(key, { id: seriesId(w.libraryId, w.name), title: w.name, oneshot: ids.length <= 1 });
  }
  const out = new Map<number, BookSeries>();
  for (const [bookId, key] of keyOf) {
    const w = wanted.get(key) as { libraryId: number; name: string };
    out.set(bookId, found.get(key) ?? { id: seriesId(w.libraryId, w.name), title: w.name, oneshot: true });
  }
  return out;
}
