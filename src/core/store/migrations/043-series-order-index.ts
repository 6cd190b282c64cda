// The app's book list in series order (`sort=seriesName`): series name folded, then book id, walked along one index
// so that a page reads only its own rows, including the run of books without a series (most of a real library),
// which is ordered by id alone. 029's index on the name and search key orders a run by the key instead.
import type { Kysely } from 'kysely';
import { sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('book_metadata_series_order_idx').on('book_metadata').expression(sql`series_name collate nocase, book_id`).execute();
}
