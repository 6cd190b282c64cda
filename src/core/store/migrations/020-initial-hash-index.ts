// KOReader names a document by the partial MD5 of the file it holds. After Bindery writes metadata into a book file
// the file's hash changes, but a device still holding the old copy names it by the hash it was first scanned with.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('book_file_initial_hash_idx').on('book_file').column('initial_hash').execute();
}
