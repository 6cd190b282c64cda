// Keeping a book's stored search keys (book_metadata.search_text and series_key, see core/text/search-key.ts) in step
// with its metadata: every write of a title, subtitle, author, series or ISBN ends here or computes the same keys.
import { bookSearchText, searchKeyOf } from '../text/search-key.ts';
import type { SqlExec } from '../store/sql-exec.ts';

/** The keys from what is stored for each book (after its metadata changed). */
export async function refreshSearchText(exec: SqlExec, bookIds: readonly number[]): Promise<void> {
  for (const bookId of bookIds) {
    const row = await exec.get('select title, subtitle, series_name, isbn_13, isbn_10 from book_metadata where book_id = ?', [bookId]);
    if (!row) continue;
    const authors = await exec.all('select a.name from book_metadata_author_mapping m join author a on a.id = m.author_id where m.book_id = ? order by m.sort_order', [bookId]);
    const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);
    const searchText = bookSearchText({ title: text(row.title), subtitle: text(row.subtitle), authors: authors.map((a) => a.name as string), seriesName: text(row.series_name), isbn13: text(row.isbn_13), isbn10: text(row.isbn_10) });
    await exec.run('update book_metadata set search_text = ?, series_key = ? where book_id = ?', [searchText, searchKeyOf(text(row.series_name)), bookId]);
  }
}
