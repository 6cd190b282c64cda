// Sessions that end when they should, and KOReader keys kept only as a verifier.
// - users.session_version: every access token carries the version current when it was signed; raising it (password
//   change, sign out everywhere, access removed...) makes every earlier token invalid on its next request.
// - koreader_user: the readable password and its bare MD5 give way to key_hash, a bcrypt hash of the MD5 key KOReader
//   sends, which is all verification needs.
import bcrypt from 'bcryptjs';
import type { Kysely } from 'kysely';

interface LegacyKoreaderRow {
  id: number;
  password_md5: string;
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('users')
    .addColumn('session_version', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();

  await db.schema
    .alterTable('koreader_user')
    .addColumn('key_hash', 'text', (c) => c.notNull().defaultTo(''))
    .execute();
  const legacy = db as unknown as Kysely<{ koreader_user: LegacyKoreaderRow & { key_hash: string } }>;
  const rows = await legacy.selectFrom('koreader_user').select(['id', 'password_md5']).execute();
  for (const row of rows) {
    // Once, at upgrade: a handful of rows (one per user), so the synchronous hash here is acceptable.
    const keyHash = bcrypt.hashSync(row.password_md5.toLowerCase(), 10);
    await legacy.updateTable('koreader_user').set({ key_hash: keyHash }).where('id', '=', row.id).execute();
  }
  await db.schema.alterTable('koreader_user').dropColumn('password').execute();
  await db.schema.alterTable('koreader_user').dropColumn('password_md5').execute();
}
