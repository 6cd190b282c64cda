// OIDC sign-in: sessions at the provider (for back-channel logout and the end-session URL), group → permission
// mappings, the one-time `state` values handed to clients, and the logout tokens already processed (replay refusal).
import type { Kysely } from 'kysely';
import { sql } from 'kysely';

const now = sql`(strftime('%Y-%m-%dT%H:%M:%fZ','now'))`;

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('oidc_session')
    .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('oidc_subject', 'text', (c) => c.notNull())
    .addColumn('oidc_issuer', 'text', (c) => c.notNull())
    .addColumn('oidc_session_id', 'text')
    .addColumn('id_token_hint', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull().defaultTo(now))
    .addColumn('last_refreshed_at', 'text')
    .addColumn('revoked', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('oidc_session_user_idx').on('oidc_session').column('user_id').execute();
  await db.schema.createIndex('oidc_session_sid_idx').on('oidc_session').column('oidc_session_id').execute();
  await db.schema.createIndex('oidc_session_sub_iss_idx').on('oidc_session').columns(['oidc_subject', 'oidc_issuer', 'revoked']).execute();

  await db.schema
    .createTable('oidc_group_mapping')
    .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
    .addColumn('oidc_group_claim', 'text', (c) => c.notNull().unique())
    .addColumn('is_admin', 'integer', (c) => c.notNull().defaultTo(0))
    // JSON arrays: entity-style permission names, library ids.
    .addColumn('permissions', 'text')
    .addColumn('library_ids', 'text')
    .addColumn('description', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull().defaultTo(now))
    .addColumn('updated_at', 'text', (c) => c.notNull().defaultTo(now))
    .execute();

  // Only a hash of each state is kept: a copy of the catalog cannot complete someone's sign-in.
  await db.schema
    .createTable('oidc_auth_state')
    .addColumn('state_hash', 'text', (c) => c.primaryKey())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('oidc_auth_state_expiry_idx').on('oidc_auth_state').column('expires_at').execute();

  await db.schema
    .createTable('oidc_logout_jti')
    .addColumn('jti', 'text', (c) => c.primaryKey())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();
}
