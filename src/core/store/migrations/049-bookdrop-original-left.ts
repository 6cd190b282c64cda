// A bookdrop import that recorded its book but could not remove the original from the bookdrop: the row stays,
// imported, with the reason, so that no recovery takes it for an interrupted import and offers the file again.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('bookdrop_file').addColumn('original_left', 'text').execute();
}
