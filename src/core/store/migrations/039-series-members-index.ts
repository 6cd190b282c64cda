// A series' books as a page of a series list summarizes them (Komga's series, and the series of a book): found
// through the series name and read from this index alone (number, title, release date), without a visit to each
// book's wide metadata row. Beside 029's index on the name and search key, which series searches walk.
import type { Kysely } from 'kysely';
import { sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('book_metadata_series_members_idx').on('book_metadata').expression(sql`series_name collate nocase, series_number, title, published_date`).execute();
}
