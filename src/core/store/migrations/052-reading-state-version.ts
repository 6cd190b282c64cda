// SQLite tells another connection only that something was committed (data_version), not what: a process that sees
// another's commit cannot tell a catalog edit from a progress report, so its reading generation moved with every
// commit of the CLI, a scan or another daemon, and dropped what was kept of each reader's progress. Here one counter
// row moves with every write to a reading-state table, in the writing transaction, whichever process writes; a
// connection reads it again when another connection committed or it wrote itself (snapshot.ts sqliteReadingGeneration). PostgreSQL already tells reading
// state apart (its own NOTIFY channel), so nothing is added there.
import { sql, type Kysely } from 'kysely';
import { engineOf } from '../engine.ts';

/** The reading-state tables as of this migration (reading-state.ts READING_STATE_TABLES; a later table adds its own triggers). */
const TABLES = ['user_book_progress', 'user_book_file_progress', 'kobo_reading_state', 'komga_progression', 'koreader_document_progress', 'reading_sessions'];

export async function up(db: Kysely<unknown>): Promise<void> {
  if (engineOf(db) !== 'sqlite') return;
  await db.schema
    .createTable('reading_state_version')
    .addColumn('id', 'integer', (c) => c.primaryKey().check(sql`id = 1`))
    .addColumn('version', 'integer', (c) => c.notNull())
    .execute();
  await sql`INSERT INTO reading_state_version (id, version) VALUES (1, 0)`.execute(db);
  for (const table of TABLES) {
    for (const event of ['insert', 'update', 'delete']) {
      await sql
        .raw(`CREATE TRIGGER reading_state_version_${table}_${event} AFTER ${event.toUpperCase()} ON ${table} FOR EACH ROW BEGIN UPDATE reading_state_version SET version = version + 1; END`)
        .execute(db);
    }
  }
}
