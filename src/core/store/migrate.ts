// Forward-only migrations, applied in one transaction per run on either engine.
import type { Kysely } from 'kysely';
import { Migrator } from 'kysely/migration';
import type { DB } from './db-types.ts';
import { redactedLocation } from './engine.ts';
import { migrationProvider } from './migrations/index.ts';
import { StoreError } from './store.ts';

/** Applies pending migrations; on failure the previous schema stays as it was and `db` is destroyed. */
export async function migrate(db: Kysely<DB>, location: string): Promise<void> {
  const migrator = new Migrator({ db, provider: migrationProvider, migrationTableName: 'bindery_migration', migrationLockTableName: 'bindery_migration_lock' });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    await db.destroy();
    throw new StoreError(`migration ${failed} failed on ${redactedLocation(location)}; the catalog was left unchanged: ${(error as Error).message}`, { cause: error });
  }
}
