// Sending books by e-mail: SMTP providers (a user's own, or shared by an admin with everyone), recipients per user,
// and each user's choice of default provider.
import type { Kysely } from 'kysely';
import { sql } from 'kysely';

const now = sql`(strftime('%Y-%m-%dT%H:%M:%fZ','now'))`;

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('email_provider_v2')
    .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('host', 'text', (c) => c.notNull())
    .addColumn('port', 'integer', (c) => c.notNull())
    .addColumn('username', 'text')
    // Needed in clear to sign in to the SMTP server; never sent back over the API.
    .addColumn('password', 'text')
    .addColumn('from_address', 'text')
    .addColumn('auth', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('start_tls', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('shared', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull().defaultTo(now))
    .execute();
  await db.schema.createIndex('email_provider_v2_user_idx').on('email_provider_v2').column('user_id').execute();

  await db.schema
    .createTable('email_recipient_v2')
    .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('is_default', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull().defaultTo(now))
    .addUniqueConstraint('email_recipient_v2_user_email_unique', ['user_id', 'email'])
    .execute();

  await db.schema
    .createTable('user_email_provider_preference')
    .addColumn('user_id', 'integer', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('default_provider_id', 'integer', (c) => c.notNull().references('email_provider_v2.id').onDelete('cascade'))
    .execute();
}
