// Accounts: signing secret, refresh tokens, content restrictions.
import type { Kysely } from 'kysely';
import { sql } from 'kysely';

const now = sql`(strftime('%Y-%m-%dT%H:%M:%fZ','now'))`;

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('jwt_secret')
    .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull().defaultTo(now))
    .execute();

  await db.schema
    .createTable('refresh_token')
    .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('token', 'text', (c) => c.notNull().unique())
    .addColumn('expiry_date', 'text', (c) => c.notNull())
    .addColumn('revoked', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('revocation_date', 'text')
    .execute();
  await db.schema.createIndex('refresh_token_user_idx').on('refresh_token').column('user_id').execute();

  await db.schema
    .createTable('user_content_restriction')
    .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('restriction_type', 'text', (c) => c.notNull())
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull().defaultTo(now))
    .addUniqueConstraint('user_content_restriction_unique', ['user_id', 'restriction_type', 'value'])
    .execute();
}
