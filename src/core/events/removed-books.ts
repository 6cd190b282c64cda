// Books about to leave the catalog, read before they go: their removal event still has to say who could see them.
import type { Transaction } from 'kysely';
import type { DB } from '../store/db-types.ts';
import type { Db } from '../store/store.ts';
import type { RemovedBook } from './live-events.ts';

export async function removedBooks(db: Db | Transaction<DB>, ids: readonly number[]): Promise<RemovedBook[]> {
  const out: RemovedBook[] = [];
  for (let i = 0; i < ids.length; i += 500) {
    const rows = await db
      .selectFrom('book')
      .leftJoin('book_metadata', 'book_metadata.book_id', 'book.id')
      .select(['book.id', 'book.library_id', 'book_metadata.series_name', 'book_metadata.title'])
      .where('book.id', 'in', ids.slice(i, i + 500))
      .execute();
    for (const r of rows) out.push({ id: r.id, libraryId: r.library_id, seriesName: r.series_name ?? null, title: r.title ?? null });
  }
  return out;
}
