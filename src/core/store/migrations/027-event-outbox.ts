// Live-update events: every process that changes the catalog appends what happened here, in or right after the same
// transaction; every server process tails the table by id and pushes the events to its connected clients. Rows are
// hints with a short life (see src/core/events/outbox.ts for the retention bound), not a durable log.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('event_outbox')
    .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    // Milliseconds since the epoch: retention deletes by age, and latency is measured from it.
    .addColumn('created_at_ms', 'integer', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('event_outbox_created_idx').on('event_outbox').column('created_at_ms').execute();
}
