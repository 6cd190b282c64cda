// The move journal: one row per file, folder or sidecar a move batch relocates, so that a crash at any point can be
// resumed or rolled back on the next start (see src/core/moves/).
import type { Kysely } from 'kysely';
import { sql } from 'kysely';

const now = sql`(strftime('%Y-%m-%dT%H:%M:%fZ','now'))`;

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('move_journal')
    .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
    .addColumn('batch_id', 'text', (c) => c.notNull())
    // JSON {host, boot, pid} of the process running the batch; recovery leaves batches of live processes alone.
    .addColumn('owner', 'text', (c) => c.notNull())
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('book_id', 'integer', (c) => c.notNull())
    // Null for sidecar files, which the catalog does not know.
    .addColumn('book_file_id', 'integer')
    .addColumn('kind', 'text', (c) => c.notNull()) // file | folder | sidecar
    .addColumn('from_path', 'text', (c) => c.notNull())
    .addColumn('to_path', 'text', (c) => c.notNull())
    .addColumn('temp_path', 'text', (c) => c.notNull())
    .addColumn('from_root', 'text', (c) => c.notNull())
    .addColumn('to_root', 'text', (c) => c.notNull())
    // Where the catalog points once the move is done.
    .addColumn('to_library_id', 'integer', (c) => c.notNull())
    .addColumn('to_book_library_path_id', 'integer', (c) => c.notNull())
    .addColumn('to_library_path_id', 'integer', (c) => c.notNull())
    .addColumn('to_sub_path', 'text', (c) => c.notNull())
    .addColumn('to_file_name', 'text', (c) => c.notNull())
    // Identity of the source (and of the verified copy), so recovery only ever touches what this move created.
    .addColumn('src_dev', 'text')
    .addColumn('src_ino', 'text')
    .addColumn('temp_dev', 'text')
    .addColumn('temp_ino', 'text')
    .addColumn('size_bytes', 'integer')
    .addColumn('method', 'text') // rename | copy, once known
    .addColumn('state', 'text', (c) => c.notNull().defaultTo('planned')) // planned | copied | committed | done | rolling_back | rolled_back
    .addColumn('error', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull().defaultTo(now))
    .addColumn('updated_at', 'text', (c) => c.notNull().defaultTo(now))
    .addColumn('closed_at', 'text')
    .execute();
  await db.schema.createIndex('move_journal_open_idx').on('move_journal').columns(['closed_at', 'batch_id', 'book_id']).execute();
}
