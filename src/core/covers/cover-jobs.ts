// Cover work over many books (regenerate all, bulk regenerate, bulk custom covers, bulk upload): which books it
// applies to, and running it one book at a time so one bad file costs only its own cover.
import type { Principal } from '../auth/principal.ts';
import { visibleBookFilter } from '../auth/visibility.ts';
import type { Db } from '../store/store.ts';

export interface CoverSelection {
  /** Only these books (others are ignored); all books when absent. */
  bookIds?: readonly number[];
  /** Only books that have no cover yet. */
  missingOnly?: boolean;
  /** Only books with a book file to take the cover from. */
  withFile?: boolean;
}

/** Books the principal may see whose (book) cover is not locked, narrowed by the selection; ascending ids. */
export async function coverJobBooks(db: Db, principal: Principal, selection: CoverSelection): Promise<number[]> {
  if (selection.bookIds && selection.bookIds.length === 0) return [];
  let query = db
    .selectFrom('book')
    .leftJoin('book_metadata as m', 'm.book_id', 'book.id')
    .select('book.id')
    .where('book.deleted', '=', 0)
    .where(visibleBookFilter(principal))
    .where((eb) => eb.or([eb('m.cover_locked', 'is', null), eb('m.cover_locked', '=', 0)]))
    .where((eb) => eb.or([eb('m.all_fields_locked', 'is', null), eb('m.all_fields_locked', '=', 0)]))
    .orderBy('book.id');
  if (selection.missingOnly) query = query.where('book.book_cover_hash', 'is', null);
  if (selection.withFile) {
    query = query.where((eb) =>
      eb.exists(eb.selectFrom('book_file as f').select('f.id').whereRef('f.book_id', '=', 'book.id').where('f.is_book', '=', 1).where('f.missing_at', 'is', null)),
    );
  }
  const ids = new Set(selection.bookIds ?? []);
  const rows = await query.execute();
  return rows.map((r) => r.id).filter((id) => !selection.bookIds || ids.has(id));
}

export interface CoverJobResult {
  done: number;
  failed: { bookId: number; reason: string }[];
}

/** Runs `work` for each book in turn; a failure is recorded and the next book goes on. */
export async function runCoverJob(bookIds: readonly number[], work: (bookId: number) => Promise<void>): Promise<CoverJobResult> {
  const result: CoverJobResult = { done: 0, failed: [] };
  for (const bookId of bookIds) {
    try {
      await work(bookId);
      result.done++;
    } catch (error) {
      result.failed.push({ bookId, reason: error instanceof Error ? error.message : String(error) });
    }
  }
  return result;
}
