// Each Kobo library snapshot names the snapshot its session was compared with (the device's reference when it began),
// so the snapshots a device no longer needs can be found once it starts its next session: until then a device that
// lost the answer to a session's last page retries it against the same reference. Added beside Grimmory's columns;
// snapshots written before have none and are dropped as before.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('kobo_library_snapshot').addColumn('previous_snapshot_id', 'text').execute();
  await db.schema.createIndex('kobo_library_snapshot_previous_idx').on('kobo_library_snapshot').columns(['previous_snapshot_id']).execute();
}
