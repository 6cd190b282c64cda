// Leases: which server process (replica or worker) runs each singleton job (the scheduler, the bookdrop watcher, move
// recovery, outbox pruning). One row per lease names its holder; how a holder's death is noticed depends on the engine
// (see src/core/store/leases.ts).
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('lease')
    .addColumn('name', 'text', (c) => c.primaryKey().notNull())
    // The instance name shown to people (BINDERY_INSTANCE_NAME, or host:pid).
    .addColumn('holder', 'text', (c) => c.notNull())
    // Unique per process start: two processes given the same instance name still hold apart.
    .addColumn('holder_token', 'text', (c) => c.notNull())
    .addColumn('host', 'text', (c) => c.notNull())
    .addColumn('boot', 'text', (c) => c.notNull())
    .addColumn('pid', 'integer', (c) => c.notNull())
    .addColumn('acquired_at', 'text', (c) => c.notNull())
    .execute();
}
