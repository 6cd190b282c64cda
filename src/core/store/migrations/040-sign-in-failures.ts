// Failed sign-in attempts, shared by every process that serves the catalog (replicas behind a load balancer count
// together). One row per counted key: a client address, or an account name within a channel, each in its own scope so
// a flood of made-up names cannot crowd out the addresses. A row is a fixed window opened by the first failure; rows
// whose window has ended are pruned by the writers (src/core/auth/failure-windows.ts). Not catalog content: written
// without announcing a change, so a failed sign-in does not empty any cache.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('sign_in_failure')
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('failures', 'integer', (c) => c.notNull())
    // Milliseconds since the epoch at which the window closes; it never moves while the window is open.
    .addColumn('expires_at_ms', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('sign_in_failure_pk', ['scope', 'key'])
    .execute();
  await db.schema.createIndex('sign_in_failure_expiry_idx').on('sign_in_failure').columns(['scope', 'expires_at_ms']).execute();
}
