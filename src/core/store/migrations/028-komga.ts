// Komga clients: the Readium locator an EPUB reader last sent (`PUT …/progression`), kept beside the user's Bindery
// progress so the reader reopens at the exact spot (the progress itself goes to user_book_progress, where every other
// client reads it); and the sessions of clients that sign in once and then send a cookie (Komelia).
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('komga_progression')
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('book_id', 'integer', (c) => c.notNull().references('book.id').onDelete('cascade'))
    .addColumn('locator', 'text', (c) => c.notNull())
    .addColumn('device_id', 'text', (c) => c.notNull())
    .addColumn('device_name', 'text', (c) => c.notNull())
    // When the client says the position was reached, and when the server stored it.
    .addColumn('modified', 'text', (c) => c.notNull())
    .addColumn('recorded_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('komga_progression_pk', ['user_id', 'book_id'])
    .execute();
  await db.schema
    .createTable('komga_session')
    // SHA-256 of the cookie's token: the table alone signs nobody in.
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('opds_user_id', 'integer', (c) => c.notNull().references('opds_user_v2.id').onDelete('cascade'))
    // SHA-256 of the account's password hash when the session began: a new password ends the session.
    .addColumn('password_fingerprint', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('komga_session_account_idx').on('komga_session').columns(['opds_user_id', 'expires_at']).execute();
}
