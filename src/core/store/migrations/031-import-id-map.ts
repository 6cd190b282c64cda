// Imports from other servers remember which row each source row became, so running an import again changes nothing
// and a later run only adds what is new. `source_version` holds what the source says about the row's age (calibre's
// last_modified), for imports that pick up changes.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('import_id_map')
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('source_id', 'text', (c) => c.notNull())
    .addColumn('target_id', 'text', (c) => c.notNull())
    .addColumn('source_version', 'text')
    .addPrimaryKeyConstraint('import_id_map_pk', ['source', 'kind', 'source_id'])
    .execute();
}
