// Komga's series pages keep each series' SeriesDto as JSON beside its figures (src/core/komga/series-figures.ts): the
// part that is the same for every reader, from after its sort title on (the first book's description, publisher,
// language, age rating, genres and tags, and the figures' authors, tags and release date). A page is then the kept
// texts with each reader's counts and the links put in front. What that text shows of the first book is marked stale
// here as the figures are (migration 044): edits of those metadata fields, genres added, removed, merged or renamed.
// Every kept series is marked stale once, so the daemon's filler works the texts out.
import { sql, type Kysely } from 'kysely';
import { createTriggers, seriesOfBook, touch, type TriggerSpec } from './044-komga-series-summary.ts';

const TRIGGERS: TriggerSpec[] = [
  { table: 'book_metadata', event: 'shown', when: 'AFTER UPDATE OF description, publisher, language, age_rating', statements: [seriesOfBook('NEW.book_id')] },
  { table: 'book_metadata_category_mapping', event: 'insert', when: 'AFTER INSERT', statements: [seriesOfBook('NEW.book_id')] },
  { table: 'book_metadata_category_mapping', event: 'update', when: 'AFTER UPDATE OF book_id, category_id', statements: [seriesOfBook('NEW.book_id'), seriesOfBook('OLD.book_id')] },
  { table: 'book_metadata_category_mapping', event: 'delete', when: 'AFTER DELETE', statements: [seriesOfBook('OLD.book_id')] },
  {
    table: 'category',
    event: 'rename',
    when: 'AFTER UPDATE OF name',
    statements: [touch('book_metadata_category_mapping x JOIN book b ON b.id = x.book_id JOIN book_metadata m ON m.book_id = x.book_id', 'x.category_id = NEW.id')],
  },
];

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('komga_series_summary').addColumn('dto_tail', 'text').execute();
  await sql.raw('INSERT INTO komga_series_stale (library_id, series_key) SELECT library_id, series_key FROM komga_series_summary').execute(db);
  await createTriggers(db, TRIGGERS);
}
