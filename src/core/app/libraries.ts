// AppLibrarySummary: the libraries the caller may open (admins: all), with the books in each they may see.
import { sql } from 'kysely';
import { type Principal } from '../auth/principal.ts';
import { canSeeLibrary, visibleBookFilter } from '../auth/visibility.ts';
import { listLibraries } from '../libraries/libraries.ts';
import type { Db } from '../store/store.ts';
import { put, type Json } from './book-summary.ts';

export async function appLibraries(db: Db, principal: Principal): Promise<Json[]> {
  const libraries = (await listLibraries(db)).filter((l) => canSeeLibrary(principal, l.id));
  const counts = await db
    .selectFrom('book')
    .select(['book.library_id', sql<number>`count(*)`.as('n')])
    .where('book.deleted', '=', 0)
    .where(visibleBookFilter(principal))
    .groupBy('book.library_id')
    .execute();
  const byLibrary = new Map(counts.map((r) => [r.library_id, Number(r.n)]));
  return libraries.map((l) =>
    put(
      {},
      {
        id: l.id,
        name: l.name,
        icon: l.icon,
        bookCount: byLibrary.get(l.id) ?? 0,
        allowedFormats: l.allowedFormats ?? undefined,
        paths: l.paths.map((p) => ({ id: p.id, path: p.path })),
      },
    ),
  );
}
