// The catalog: libraries, books and their files, full metadata with lock flags, people and users.
import type { CreateTableBuilder, Kysely } from 'kysely';
import { sql } from 'kysely';

type Table = CreateTableBuilder<string, string>;
type ColumnKind = 'text' | 'integer' | 'real';

/** Adds nullable columns in bulk; `*_locked` style flags get NOT NULL DEFAULT 0. */
function columns(table: Table, specs: [string, ColumnKind][]): Table {
  return specs.reduce((t, [name, kind]) => t.addColumn(name, kind), table);
}

function flags(table: Table, names: string[]): Table {
  return names.reduce((t, name) => t.addColumn(name, 'integer', (c) => c.notNull().defaultTo(0)), table);
}

function withId(table: Table): Table {
  return table.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
}

const now = sql`(strftime('%Y-%m-%dT%H:%M:%fZ','now'))`;

/** Every metadata field that carries a `<field>_locked` flag in book_metadata. */
export const BOOK_METADATA_LOCKS = [
  'title', 'subtitle', 'publisher', 'published_date', 'description', 'isbn_13', 'isbn_10', 'page_count', 'thumbnail',
  'language', 'cover', 'rating', 'review_count', 'series_name', 'series_number', 'series_total', 'amazon_rating',
  'amazon_review_count', 'goodreads_rating', 'goodreads_review_count', 'asin', 'hardcover_rating', 'hardcover_review_count',
  'goodreads_id', 'hardcover_id', 'google_id', 'comicvine_id', 'reviews', 'moods', 'tags', 'authors', 'categories',
  'hardcover_book_id', 'lubimyczytac_id', 'lubimyczytac_rating', 'ranobedb_id', 'ranobedb_rating', 'audible_id',
  'audible_rating', 'audible_review_count', 'audiobook_cover', 'narrator', 'abridged', 'age_rating', 'content_rating',
  'douban_id', 'douban_rating', 'douban_review_count', 'external_url',
] as const;

export const COMIC_METADATA_LOCKS = [
  'issue_number', 'volume_name', 'volume_number', 'story_arc', 'story_arc_number', 'alternate_series', 'alternate_issue',
  'imprint', 'format', 'black_and_white', 'manga', 'reading_direction', 'web_link', 'notes', 'creators', 'pencillers',
  'inkers', 'colorists', 'letterers', 'cover_artists', 'editors', 'characters', 'teams', 'locations',
] as const;

export const USER_PERMISSION_COLUMNS = [
  'permission_upload', 'permission_download', 'permission_edit_metadata', 'permission_manipulate_library',
  'permission_admin', 'permission_email_book', 'permission_delete_book', 'permission_sync_koreader',
  'permission_sync_kobo', 'permission_access_opds', 'permission_manage_metadata_config', 'permission_access_bookdrop',
  'permission_access_library_stats', 'permission_access_user_stats', 'permission_access_task_manager',
  'permission_manage_global_preferences', 'permission_manage_icons', 'permission_demo_user',
  'permission_bulk_auto_fetch_metadata', 'permission_bulk_custom_fetch_metadata', 'permission_bulk_edit_metadata',
  'permission_bulk_regenerate_cover', 'permission_move_organize_files', 'permission_bulk_lock_unlock_metadata',
  'permission_bulk_reset_booklore_read_progress', 'permission_bulk_reset_koreader_read_progress',
  'permission_bulk_reset_book_read_status', 'permission_manage_fonts',
] as const;

async function nameTable(db: Kysely<unknown>, name: string): Promise<void> {
  await withId(db.schema.createTable(name))
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .execute();
}

async function mappingTable(db: Kysely<unknown>, name: string, owner: string, ownerKey: string, target: string, column: string): Promise<void> {
  await db.schema
    .createTable(name)
    .addColumn('book_id', 'integer', (c) => c.notNull().references(`${owner}.${ownerKey}`).onDelete('cascade'))
    .addColumn(column, 'integer', (c) => c.notNull().references(`${target}.id`).onDelete('cascade'))
    .addPrimaryKeyConstraint(`${name}_pk`, ['book_id', column])
    .execute();
  await db.schema.createIndex(`${name}_${column}_idx`).on(name).column(column).execute();
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await withId(db.schema.createTable('library'))
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('sort', 'text')
    .addColumn('icon', 'text')
    .addColumn('icon_type', 'text')
    .addColumn('watch', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('file_naming_pattern', 'text')
    .addColumn('format_priority', 'text')
    .addColumn('allowed_formats', 'text')
    .addColumn('organization_mode', 'text', (c) => c.notNull().defaultTo('BOOK_PER_FILE'))
    .addColumn('metadata_source', 'text', (c) => c.notNull().defaultTo('EMBEDDED'))
    .addColumn('created_at', 'text', (c) => c.notNull().defaultTo(now))
    .addColumn('last_scanned_at', 'text')
    .execute();

  await withId(db.schema.createTable('library_path'))
    .addColumn('library_id', 'integer', (c) => c.notNull().references('library.id').onDelete('cascade'))
    .addColumn('path', 'text', (c) => c.notNull())
    .addUniqueConstraint('library_path_unique', ['library_id', 'path'])
    .execute();

  await withId(db.schema.createTable('book'))
    .addColumn('library_id', 'integer', (c) => c.notNull().references('library.id').onDelete('cascade'))
    .addColumn('library_path_id', 'integer', (c) => c.references('library_path.id').onDelete('set null'))
    .addColumn('added_on', 'text', (c) => c.notNull().defaultTo(now))
    .addColumn('scanned_on', 'text')
    .addColumn('metadata_updated_at', 'text')
    .addColumn('metadata_match_score', 'real')
    .addColumn('similar_books_json', 'text')
    .addColumn('deleted', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('deleted_at', 'text')
    .addColumn('missing_at', 'text')
    .addColumn('is_physical', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('book_cover_hash', 'text')
    .addColumn('audiobook_cover_hash', 'text')
    .execute();
  await db.schema.createIndex('book_library_idx').on('book').column('library_id').execute();

  await withId(db.schema.createTable('book_file'))
    .addColumn('book_id', 'integer', (c) => c.notNull().references('book.id').onDelete('cascade'))
    .addColumn('library_path_id', 'integer', (c) => c.references('library_path.id').onDelete('set null'))
    .addColumn('file_sub_path', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('file_name', 'text', (c) => c.notNull())
    .addColumn('size_bytes', 'integer')
    .addColumn('file_size_kb', 'integer')
    .addColumn('mtime_ms', 'integer')
    .addColumn('initial_hash', 'text')
    .addColumn('current_hash', 'text')
    .addColumn('content_hash', 'text')
    .addColumn('description', 'text')
    .addColumn('added_on', 'text', (c) => c.notNull().defaultTo(now))
    .addColumn('is_book', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('book_type', 'text')
    .addColumn('archive_type', 'text')
    .addColumn('is_folder_based', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('is_fixed_layout', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('page_count', 'integer')
    .addColumn('duration_seconds', 'integer')
    .addColumn('bitrate', 'integer')
    .addColumn('sample_rate', 'integer')
    .addColumn('channels', 'integer')
    .addColumn('codec', 'text')
    .addColumn('chapter_count', 'integer')
    .addColumn('chapters_json', 'text')
    .addColumn('missing_at', 'text')
    .execute();
  await db.schema.createIndex('book_file_book_idx').on('book_file').column('book_id').execute();
  await db.schema.createIndex('book_file_location_idx').on('book_file').columns(['library_path_id', 'file_sub_path', 'file_name']).unique().execute();
  await db.schema.createIndex('book_file_current_hash_idx').on('book_file').column('current_hash').execute();
  await db.schema.createIndex('book_file_content_hash_idx').on('book_file').column('content_hash').execute();

  let metadata: Table = db.schema
    .createTable('book_metadata')
    .addColumn('book_id', 'integer', (c) => c.primaryKey().references('book.id').onDelete('cascade'));
  metadata = columns(metadata, [
    ['title', 'text'], ['subtitle', 'text'], ['publisher', 'text'], ['published_date', 'text'], ['description', 'text'],
    ['isbn_13', 'text'], ['isbn_10', 'text'], ['page_count', 'integer'], ['thumbnail', 'text'], ['language', 'text'],
    ['rating', 'real'], ['review_count', 'integer'], ['cover', 'text'], ['cover_updated_on', 'text'],
    ['audiobook_cover_updated_on', 'text'], ['series_name', 'text'], ['series_number', 'real'], ['series_total', 'integer'],
    ['amazon_rating', 'real'], ['amazon_review_count', 'integer'], ['goodreads_rating', 'real'], ['goodreads_review_count', 'integer'],
    ['asin', 'text'], ['hardcover_rating', 'real'], ['hardcover_review_count', 'integer'], ['goodreads_id', 'text'],
    ['hardcover_id', 'text'], ['hardcover_book_id', 'text'], ['google_id', 'text'], ['comicvine_id', 'text'],
    ['lubimyczytac_id', 'text'], ['lubimyczytac_rating', 'real'], ['ranobedb_id', 'text'], ['ranobedb_rating', 'real'],
    ['audible_id', 'text'], ['audible_rating', 'real'], ['audible_review_count', 'integer'], ['douban_id', 'text'],
    ['douban_rating', 'real'], ['douban_review_count', 'integer'], ['external_url', 'text'], ['narrator', 'text'],
    ['abridged', 'integer'], ['age_rating', 'integer'], ['content_rating', 'text'], ['identifiers_json', 'text'],
    ['search_text', 'text'],
  ]);
  metadata = flags(metadata, ['all_fields_locked', ...BOOK_METADATA_LOCKS.map((f) => `${f}_locked`)]);
  await metadata.execute();

  await withId(db.schema.createTable('author'))
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('description', 'text')
    .addColumn('asin', 'text')
    .addColumn('name_locked', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('description_locked', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('asin_locked', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('photo_locked', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createTable('book_metadata_author_mapping')
    .addColumn('book_id', 'integer', (c) => c.notNull().references('book_metadata.book_id').onDelete('cascade'))
    .addColumn('author_id', 'integer', (c) => c.notNull().references('author.id').onDelete('cascade'))
    .addColumn('sort_order', 'integer', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('book_author_pk', ['book_id', 'author_id'])
    .execute();
  await db.schema.createIndex('book_author_author_idx').on('book_metadata_author_mapping').column('author_id').execute();

  for (const [table, mapping, column] of [
    ['category', 'book_metadata_category_mapping', 'category_id'],
    ['tag', 'book_metadata_tag_mapping', 'tag_id'],
    ['mood', 'book_metadata_mood_mapping', 'mood_id'],
  ] as const) {
    await nameTable(db, table);
    await mappingTable(db, mapping, 'book_metadata', 'book_id', table, column);
  }

  let comic: Table = db.schema
    .createTable('comic_metadata')
    .addColumn('book_id', 'integer', (c) => c.primaryKey().references('book_metadata.book_id').onDelete('cascade'));
  comic = columns(comic, [
    ['issue_number', 'text'], ['volume_name', 'text'], ['volume_number', 'integer'], ['story_arc', 'text'],
    ['story_arc_number', 'integer'], ['alternate_series', 'text'], ['alternate_issue', 'text'], ['imprint', 'text'],
    ['format', 'text'], ['black_and_white', 'integer'], ['manga', 'integer'], ['reading_direction', 'text'],
    ['web_link', 'text'], ['notes', 'text'],
  ]);
  comic = flags(comic, COMIC_METADATA_LOCKS.map((f) => `${f}_locked`));
  await comic.execute();

  for (const [table, mapping, column] of [
    ['comic_character', 'comic_metadata_character_mapping', 'character_id'],
    ['comic_team', 'comic_metadata_team_mapping', 'team_id'],
    ['comic_location', 'comic_metadata_location_mapping', 'location_id'],
  ] as const) {
    await nameTable(db, table);
    await mappingTable(db, mapping, 'comic_metadata', 'book_id', table, column);
  }
  await nameTable(db, 'comic_creator');
  await withId(db.schema.createTable('comic_metadata_creator_mapping'))
    .addColumn('book_id', 'integer', (c) => c.notNull().references('comic_metadata.book_id').onDelete('cascade'))
    .addColumn('creator_id', 'integer', (c) => c.notNull().references('comic_creator.id').onDelete('cascade'))
    .addColumn('role', 'text', (c) => c.notNull())
    .addUniqueConstraint('comic_creator_role_unique', ['book_id', 'creator_id', 'role'])
    .execute();

  await withId(db.schema.createTable('users'))
    .addColumn('username', 'text', (c) => c.notNull().unique())
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('is_default_password', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('email', 'text', (c) => c.unique())
    .addColumn('book_preferences', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull().defaultTo(now))
    .addColumn('provisioning_method', 'text')
    .addColumn('oidc_subject', 'text')
    .addColumn('oidc_issuer', 'text')
    .addColumn('avatar_url', 'text')
    .addColumn('locale', 'text', (c) => c.notNull().defaultTo('en'))
    .addColumn('theme', 'text', (c) => c.notNull().defaultTo('grimmory'))
    .addColumn('theme_accent', 'text')
    .addColumn('theme_sync_enabled', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('ui_font', 'text', (c) => c.notNull().defaultTo('default'))
    .addUniqueConstraint('users_oidc_unique', ['oidc_issuer', 'oidc_subject'])
    .execute();

  let permissions: Table = withId(db.schema.createTable('user_permissions'))
    .addColumn('user_id', 'integer', (c) => c.notNull().unique().references('users.id').onDelete('cascade'));
  permissions = USER_PERMISSION_COLUMNS.reduce(
    (t, name) => t.addColumn(name, 'integer', (c) => c.notNull().defaultTo(name === 'permission_email_book' ? 1 : 0)),
    permissions,
  );
  await permissions.execute();

  await withId(db.schema.createTable('user_settings'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('setting_key', 'text', (c) => c.notNull())
    .addColumn('setting_value', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull().defaultTo(now))
    .addColumn('updated_at', 'text', (c) => c.notNull().defaultTo(now))
    .addUniqueConstraint('user_settings_unique', ['user_id', 'setting_key'])
    .execute();

  await db.schema
    .createTable('user_library_mapping')
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('library_id', 'integer', (c) => c.notNull().references('library.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('user_library_pk', ['user_id', 'library_id'])
    .execute();

  let progress: Table = withId(db.schema.createTable('user_book_progress'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('book_id', 'integer', (c) => c.notNull().references('book.id').onDelete('cascade'));
  progress = columns(progress, [
    ['last_read_time', 'text'], ['pdf_progress', 'integer'], ['pdf_progress_percent', 'real'], ['epub_progress', 'text'],
    ['epub_progress_href', 'text'], ['epub_progress_percent', 'real'], ['cbx_progress', 'integer'], ['cbx_progress_percent', 'real'],
    ['read_status', 'text'], ['read_status_modified_time', 'text'], ['date_finished', 'text'], ['koreader_progress', 'text'],
    ['koreader_progress_percent', 'real'], ['koreader_device', 'text'], ['koreader_device_id', 'text'],
    ['koreader_last_sync_time', 'text'], ['kobo_progress_percent', 'real'], ['kobo_location', 'text'],
    ['kobo_location_type', 'text'], ['kobo_location_source', 'text'], ['kobo_progress_received_time', 'text'],
    ['kobo_progress_sent_time', 'text'], ['kobo_status_sent_time', 'text'], ['personal_rating', 'integer'],
  ]);
  await progress.addUniqueConstraint('user_book_progress_unique', ['user_id', 'book_id']).execute();
  await db.schema.createIndex('user_book_progress_book_idx').on('user_book_progress').column('book_id').execute();

  await withId(db.schema.createTable('user_book_file_progress'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('book_file_id', 'integer', (c) => c.notNull().references('book_file.id').onDelete('cascade'))
    .addColumn('position_data', 'text')
    .addColumn('position_href', 'text')
    .addColumn('progress_percent', 'real')
    .addColumn('last_read_time', 'text')
    .addColumn('tts_position_cfi', 'text')
    .addColumn('content_source_progress_percent', 'real')
    .addUniqueConstraint('user_book_file_progress_unique', ['user_id', 'book_file_id'])
    .execute();

  await withId(db.schema.createTable('shelf'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('sort', 'text')
    .addColumn('icon', 'text')
    .addColumn('icon_type', 'text')
    .addColumn('is_public', 'integer', (c) => c.notNull().defaultTo(0))
    .addUniqueConstraint('shelf_user_name_unique', ['user_id', 'name'])
    .execute();
  await db.schema
    .createTable('book_shelf_mapping')
    .addColumn('book_id', 'integer', (c) => c.notNull().references('book.id').onDelete('cascade'))
    .addColumn('shelf_id', 'integer', (c) => c.notNull().references('shelf.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('book_shelf_pk', ['book_id', 'shelf_id'])
    .execute();
  await db.schema.createIndex('book_shelf_shelf_idx').on('book_shelf_mapping').column('shelf_id').execute();

  await withId(db.schema.createTable('app_settings'))
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('val', 'text')
    .execute();

  await withId(db.schema.createTable('scan_failure'))
    .addColumn('library_path_id', 'integer', (c) => c.notNull().references('library_path.id').onDelete('cascade'))
    .addColumn('file_sub_path', 'text', (c) => c.notNull())
    .addColumn('file_name', 'text', (c) => c.notNull())
    .addColumn('size_bytes', 'integer')
    .addColumn('mtime_ms', 'integer')
    .addColumn('code', 'text', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('failed_at', 'text', (c) => c.notNull().defaultTo(now))
    .addUniqueConstraint('scan_failure_location_unique', ['library_path_id', 'file_sub_path', 'file_name'])
    .execute();

  for (const [name, value] of [
    ['cover_image_resolution', '250x350'],
    ['auto_book_search', 'false'],
    ['komga_group_unknown', 'true'],
    ['komga_api_enabled', 'false'],
  ]) {
    await sql`insert into app_settings (name, val) values (${name}, ${value})`.execute(db);
  }
}
