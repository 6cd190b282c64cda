// Reading statistics read a user's whole session history (100,000 sessions should answer in well under 100 ms).
// Two covering indexes let them do it from the index alone, in the order they need: by start time for days, hours
// and weekdays, and by book (then start) for per-book sums, page-turner scores and completion races, which then
// stream through their GROUP BY without sorting.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('reading_sessions_user_time_cover_idx')
    .on('reading_sessions')
    .columns(['user_id', 'start_time', 'book_type', 'book_id', 'duration_seconds'])
    .execute();
  await db.schema
    .createIndex('reading_sessions_user_book_cover_idx')
    .on('reading_sessions')
    .columns(['user_id', 'book_id', 'start_time', 'book_type', 'duration_seconds', 'end_time', 'end_progress'])
    .execute();
}
