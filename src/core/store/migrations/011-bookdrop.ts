// One bookdrop row per dropped file: the daemon's watcher, a rescan and the CLI may all find the same new file at
// once, and the unique path lets exactly one of them record it.
import type { Kysely } from 'kysely';
import { sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`delete from bookdrop_file where id not in (select min(id) from bookdrop_file group by file_path)`.execute(db);
  await db.schema.createIndex('bookdrop_file_path_unique').on('bookdrop_file').column('file_path').unique().execute();
}
