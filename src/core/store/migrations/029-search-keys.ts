// Searches compare keys (src/core/text/search-key.ts: no case, no accents, one Unicode form), stored so SQL can test
// them directly: book_metadata.search_text is rewritten as a key, and the series name and author name get theirs.
import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import { bookSearchText, searchKey, searchKeyOf } from '../../text/search-key.ts';
import { dialectOf } from '../dialect.ts';

const SEPARATOR = '\u001f';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('book_metadata').addColumn('series_key', 'text').execute();
  await db.schema.alterTable('author').addColumn('name_key', 'text').execute();
  // Series are listed by walking this index in name order; with the key beside the name, a series search tests it
  // there instead of reading every book's row (the index replaces 009's on the name alone).
  await db.schema.dropIndex('book_metadata_series_nocase_idx').ifExists().execute();
  await db.schema.createIndex('book_metadata_series_nocase_key_idx').on('book_metadata').expression(sql`series_name collate nocase, series_key`).execute();

  const authors = await sql<{ id: number; name: string }>`select id, name from author`.execute(db);
  for (const a of authors.rows) await sql`update author set name_key = ${searchKey(a.name)} where id = ${a.id}`.execute(db);

  const books = await sql<{ book_id: number; title: string | null; subtitle: string | null; series_name: string | null; isbn_13: string | null; isbn_10: string | null; authors: string | null }>`
    select m.book_id, m.title, m.subtitle, m.series_name, m.isbn_13, m.isbn_10,
           (select ${sql.raw(dialectOf(db).groupConcat('a.name', `'${SEPARATOR}'`))} from book_metadata_author_mapping x join author a on a.id = x.author_id where x.book_id = m.book_id) as authors
      from book_metadata m`.execute(db);
  for (const b of books.rows) {
    const text = bookSearchText({ title: b.title, subtitle: b.subtitle, authors: b.authors ? b.authors.split(SEPARATOR) : [], seriesName: b.series_name, isbn13: b.isbn_13, isbn10: b.isbn_10 });
    await sql`update book_metadata set search_text = ${text}, series_key = ${searchKeyOf(b.series_name)} where book_id = ${b.book_id}`.execute(db);
  }
}
