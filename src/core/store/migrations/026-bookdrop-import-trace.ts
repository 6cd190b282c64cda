// A bookdrop import killed part-way must be recognisable by the next recovery: the claimed row says which process
// runs the import, where its partial copy is, and which name it is giving the file in the library.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('bookdrop_file').addColumn('import_owner', 'text').execute();
  await db.schema.alterTable('bookdrop_file').addColumn('import_partial_path', 'text').execute();
  await db.schema.alterTable('bookdrop_file').addColumn('import_target_path', 'text').execute();
}
