// A series' books as a page of a series list summarizes them (Komga's series, and the series of a book): found
// through the series name and read from one index alone (number, title, release date), without a visit to each
// book's wide metadata row; beside 029's index on the name and search key, which series searches walk. And the
// genres, tags and moods by folded name: a reader's content restrictions name them (`lower(name) in (…)`), which
// otherwise reads every name of the table for each statement.
import type { Kysely } from 'kysely';
import { sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('book_metadata_series_members_idx').on('book_metadata').expression(sql`series_name collate nocase, series_number, title, published_date`).execute();
  for (const table of ['category', 'tag', 'mood']) await db.schema.createIndex(`${table}_name_lower_idx`).on(table).expression(sql`lower(name)`).execute();
}
