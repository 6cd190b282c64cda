// Migration 025 on a catalog made before it: KOReader passwords kept readable give way to a hash of the key alone,
// and devices keep syncing with the key they already send.
import Database from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { Migrator } from 'kysely/migration';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignInPolicy } from '../../src/core/auth/login-rate-limit.ts';
import { checkCredentials, md5Hex } from '../../src/core/koreader/accounts.ts';
import { migrationProvider } from '../../src/core/store/migrations/index.ts';
import { openStore } from '../../src/core/store/store.ts';
import { createUser } from '../../src/core/users/users.ts';
import { onPostgres } from '../helpers/engine.ts';

interface LegacyCatalog {
  koreader_user: { username: string; password: string; password_md5: string; sync_enabled: number; booklore_user_id: number | null };
}

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'bindery-migration-025-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

// Upgrades a SQLite file made before 025; no PostgreSQL catalog is that old (PostgreSQL support came after migration 031).
describe.skipIf(onPostgres)('migration 025', () => {
  it('replaces a stored KOReader password and MD5 with a bcrypt hash of the key, and the old key still signs in', async () => {
    const path = join(dir, 'bindery.sqlite');
    const old = new Kysely<LegacyCatalog>({ dialect: new SqliteDialect({ database: new Database(path) }) });
    const migrator = new Migrator({ db: old, provider: migrationProvider, migrationTableName: 'bindery_migration', migrationLockTableName: 'bindery_migration_lock' });
    const { error } = await migrator.migrateTo('024-audit-log');
    expect(error).toBeUndefined();
    await old.insertInto('koreader_user').values({ username: 'kindle', password: 'plain secret', password_md5: md5Hex('plain secret'), sync_enabled: 1, booklore_user_id: null }).execute();
    await old.destroy();

    const store = await openStore(path);
    try {
      const userId = await createUser(store.db, { username: 'reader', password: 'reader-password', name: 'Reader', permissions: { canSyncKoReader: true } });
      await store.db.updateTable('koreader_user').set({ booklore_user_id: userId }).execute();
      const row = (await store.db.selectFrom('koreader_user').selectAll().executeTakeFirstOrThrow()) as Record<string, unknown>;
      expect(row).not.toHaveProperty('password');
      expect(row).not.toHaveProperty('password_md5');
      expect(JSON.stringify(row)).not.toContain(md5Hex('plain secret'));
      expect(row.key_hash).toMatch(/^\$2[aby]\$10\$/);
      expect(await checkCredentials(store.db, new SignInPolicy(store.bookkeeping), '10.0.0.1', 'kindle', md5Hex('plain secret').toUpperCase())).toMatchObject({ username: 'kindle' });
      expect(await checkCredentials(store.db, new SignInPolicy(store.bookkeeping), '10.0.0.1', 'kindle', md5Hex('other'))).toBe('BAD_CREDENTIALS');
      const user = await store.db.selectFrom('users').select('session_version').where('id', '=', userId).executeTakeFirstOrThrow();
      expect(user.session_version).toBe(0);
    } finally {
      await store.close();
    }
  });
});
