// A small Grimmory database written the way Grimmory stores its data (JSON columns as text, enums as strings, tinyint
// booleans, UTC timestamps), with book files and Grimmory's images on disk: every kind of row the importer reads.
import bcrypt from 'bcryptjs';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type mysql from 'mysql2/promise';
import { jpeg, opfDocument, writeEpub } from './epub-fixtures.ts';

export const GRIMMORY_PASSWORD = 'grimmory-pass-1';
export const KOBO_TOKEN = 'e7d1a4b2-kobo-device-token';
export const SCHEMA_SQL = join(import.meta.dirname, '..', 'fixtures', 'grimmory', 'schema.sql');

/** Spring's BCryptPasswordEncoder writes `$2a$`; the algorithm is the one bcryptjs runs as `$2b$`. */
function springBcrypt(password: string): string {
  return bcrypt.hashSync(password, 10).replace(/^\$2b\$/, '$2a$');
}

export async function createGrimmorySchema(c: mysql.Connection): Promise<void> {
  await c.query(readFileSync(SCHEMA_SQL, 'utf8'));
}

type Row = Record<string, unknown>;
async function insert(c: mysql.Connection, table: string, rows: Row[]): Promise<void> {
  for (const row of rows) await c.query(`insert into \`${table}\` set ?`, [row]);
}

export interface SeededFiles {
  /** Where the library's books are here; Grimmory saw it as /books. */
  booksDir: string;
  grimmoryData: string;
}

export async function seedGrimmory(c: mysql.Connection, root: string): Promise<SeededFiles> {
  const booksDir = join(root, 'books');
  const grimmoryData = join(root, 'grimmory-data');
  mkdirSync(join(booksDir, 'Le Guin'), { recursive: true });
  mkdirSync(join(booksDir, 'comics'), { recursive: true });
  await writeEpub(join(booksDir, 'Le Guin', 'Left Hand.epub'), { opf: opfDocument({ metadata: '<dc:title>The Left Hand of Darkness</dc:title>', manifest: '' }) });
  writeFileSync(join(booksDir, 'omens.pdf'), '%PDF-1.4\n%fake pdf for the importer, which only looks at the file\n');
  writeFileSync(join(booksDir, 'comics', 'saga-1.cbz'), 'PK\u0005\u0006'.padEnd(22, '\0'));
  mkdirSync(join(grimmoryData, 'images', '10'), { recursive: true });
  writeFileSync(join(grimmoryData, 'images', '10', 'cover.jpg'), await jpeg(100, 150));
  writeFileSync(join(grimmoryData, 'images', '10', 'thumbnail.jpg'), await jpeg(25, 35));
  mkdirSync(join(grimmoryData, 'author-images', '1'), { recursive: true });
  writeFileSync(join(grimmoryData, 'author-images', '1', 'photo.jpg'), await jpeg(100, 150, '#393'));

  await insert(c, 'flyway_schema_history', [
    { installed_rank: 1, version: '1', description: 'Init', type: 'SQL', script: 'V1__Init.sql', checksum: 1, installed_by: 'grimmory', installed_on: '2024-01-01 00:00:00', execution_time: 10, success: 1 },
    { installed_rank: 2, version: '143', description: 'Add book conversion permission', type: 'SQL', script: 'V143.sql', checksum: 2, installed_by: 'grimmory', installed_on: '2025-06-01 00:00:00', execution_time: 5, success: 1 },
    { installed_rank: 3, version: '144', description: 'Migrate entity icons to lucide', type: 'SQL', script: 'V144.sql', checksum: 3, installed_by: 'grimmory', installed_on: '2025-07-01 00:00:00', execution_time: 5, success: 1 },
  ]);
  await insert(c, 'app_settings', [
    { name: 'komga_api_enabled', val: 'true' },
    { name: 'cover_image_resolution', val: '250x350' },
    { name: 'kobo_settings', val: JSON.stringify({ convertToKepub: true, conversionLimitInMb: 50, conversionImageCompressionPercentage: 85, convertCbxToEpub: false, conversionLimitInMbForCbx: 100, forceEnableHyphenation: false }) },
    { name: 'grimmlink_experimental_flag', val: 'on' },
  ]);
  await insert(c, 'users', [
    { id: 1, username: 'admin', password_hash: springBcrypt(GRIMMORY_PASSWORD), is_default_password: 0, name: 'Admin', email: 'admin@example.org', book_preferences: '{"perBookSetting":{"pdf":"Individual"}}', created_at: '2024-01-02 03:04:05', provisioning_method: 'LOCAL', locale: 'en', theme: 'grimmory', theme_sync_enabled: 1, ui_font: 'default' },
    { id: 2, username: 'reader', password_hash: springBcrypt('reader-pass-2'), is_default_password: 1, name: 'Reader', created_at: '2024-02-03 04:05:06', provisioning_method: 'LOCAL', locale: 'de', theme: 'grimmory', theme_sync_enabled: 0, ui_font: 'default' },
  ]);
  await insert(c, 'user_permissions', [
    { user_id: 1, permission_admin: 1, permission_upload: 1, permission_download: 1, permission_sync_kobo: 1, permission_sync_koreader: 1, permission_access_opds: 1 },
    { user_id: 2, permission_download: 1, permission_email_book: 0 },
  ]);
  await insert(c, 'user_settings', [{ user_id: 1, setting_key: 'sidebarLibrarySorting', setting_value: '{"field":"name","order":"asc"}', created_at: '2024-01-02 03:04:05', updated_at: '2024-01-02 03:04:05' }]);
  await insert(c, 'user_content_restriction', [{ user_id: 2, restriction_type: 'CATEGORY', mode: 'EXCLUDE', value: 'Horror', created_at: '2024-03-01 00:00:00' }]);
  await insert(c, 'opds_user_v2', [{ user_id: 1, username: 'opds-admin', password_hash: springBcrypt('opds-pass-3'), sort_order: 'TITLE_ASC', created_at: '2024-01-05 00:00:00', updated_at: '2024-01-05 00:00:00' }]);
  await insert(c, 'koreader_user', [{ username: 'kosync', password: 'kopass', password_md5: 'deccf30c2e1653081b566743a5fc23b2', sync_enabled: 1, booklore_user_id: 1, sync_with_booklore_reader: 1 }]);
  await insert(c, 'kobo_user_settings', [{ user_id: 1, token: KOBO_TOKEN, sync_enabled: 1, progress_mark_as_reading_threshold: 2, progress_mark_as_finished_threshold: 98, auto_add_to_shelf: 1, two_way_progress_sync: 1 }]);
  await insert(c, 'email_provider_v2', [{ id: 1, user_id: 1, name: 'Mail', host: 'smtp.example.org', port: 587, username: 'me', password: 'secret', from_address: 'me@example.org', auth: 1, start_tls: 1, is_default: 1, shared: 1, created_at: '2024-01-01 00:00:00' }]);
  await insert(c, 'email_recipient_v2', [{ user_id: 1, email: 'kindle@example.org', name: 'Kindle', is_default: 1, created_at: '2024-01-01 00:00:00' }]);
  await insert(c, 'user_email_provider_preference', [{ user_id: 1, default_provider_id: 1 }]);
  await insert(c, 'jwt_secret', [{ secret: 'grimmory-signing-secret' }]);
  await insert(c, 'audit_log', [{ user_id: 1, username: 'admin', action: 'LOGIN_SUCCESS', description: 'signed in', ip_address: '10.0.0.2', created_at: '2024-05-01 09:00:00' }]);

  await insert(c, 'library', [{ id: 1, name: 'Books', icon: 'book', icon_type: 'LUCIDE', watch: 0, organization_mode: 'BOOK_PER_FILE', metadata_source: 'EMBEDDED', format_priority: '["EPUB","PDF"]' }]);
  await insert(c, 'library_path', [{ id: 1, path: '/books', library_id: 1 }]);
  await insert(c, 'user_library_mapping', [{ user_id: 1, library_id: 1 }, { user_id: 2, library_id: 1 }]);

  await insert(c, 'author', [{ id: 1, name: 'Ursula K. Le Guin', description: 'American author', name_locked: 1 }, { id: 2, name: 'Terry Pratchett' }]);
  await insert(c, 'category', [{ id: 1, name: 'Science Fiction' }]);
  await insert(c, 'tag', [{ id: 1, name: 'favourite' }]);
  await insert(c, 'mood', [{ id: 1, name: 'reflective' }]);
  await insert(c, 'comic_creator', [{ id: 1, name: 'Fiona Staples' }]);
  await insert(c, 'comic_character', [{ id: 1, name: 'Alana' }]);
  await insert(c, 'comic_team', [{ id: 1, name: 'The Will' }]);
  await insert(c, 'comic_location', [{ id: 1, name: 'Wreath' }]);
  await insert(c, 'book', [
    { id: 10, library_id: 1, library_path_id: 1, added_on: '2024-01-10 10:00:00', read_status: 'UNREAD', book_cover_hash: 'BL-ABCDEFGHIJKLM', scanned_on: '2024-01-10 10:00:00' },
    { id: 11, library_id: 1, library_path_id: 1, added_on: '2024-01-11 10:00:00' },
    { id: 12, library_id: 1, library_path_id: 1, added_on: '2024-01-12 10:00:00' },
    { id: 13, library_id: 1, library_path_id: 1, added_on: '2024-01-13 10:00:00' },
    { id: 14, library_id: 1, library_path_id: null, is_physical: 1, added_on: '2024-01-14 10:00:00' },
  ]);
  await insert(c, 'book_file', [
    { id: 100, book_id: 10, file_name: 'Left Hand.epub', file_sub_path: 'Le Guin', file_size_kb: 3, initial_hash: 'aaaa0000aaaa0000aaaa0000aaaa0000', current_hash: 'aaaa0000aaaa0000aaaa0000aaaa0000', is_book: 1, book_type: 'EPUB' },
    { id: 101, book_id: 11, file_name: 'omens.pdf', file_sub_path: '', is_book: 1, book_type: 'PDF', initial_hash: 'bbbb', current_hash: 'bbbb' },
    { id: 102, book_id: 12, file_name: 'gone.epub', file_sub_path: 'lost', is_book: 1, book_type: 'EPUB' },
    { id: 103, book_id: 13, file_name: 'saga-1.cbz', file_sub_path: 'comics', is_book: 1, book_type: 'CBX', archive_type: 'ZIP' },
  ]);
  await insert(c, 'book_metadata', [
    { book_id: 10, title: 'The Left Hand of Darkness', publisher: 'Ace', published_date: '1969-03-01', isbn_13: '9780441478125', language: 'en', series_name: 'Hainish Cycle', series_number: 4, title_locked: 1, cover_locked: 1, goodreads_id: '18423', search_text: 'grimmory own text', description: '<p>Winter.</p>' },
    { book_id: 11, title: 'Good Omens', published_date: '1990-05-01', all_fields_locked: 0 },
    { book_id: 12, title: 'A Lost Book' },
    { book_id: 13, title: 'Saga, Volume One', age_rating: 16, content_rating: 'MATURE' },
    { book_id: 14, title: 'A Paper Book' },
  ]);
  await insert(c, 'book_metadata_author_mapping', [{ book_id: 10, author_id: 1, sort_order: 0 }, { book_id: 11, author_id: 2, sort_order: 0 }, { book_id: 12, author_id: 2, sort_order: 0 }]);
  await insert(c, 'book_metadata_category_mapping', [{ book_id: 10, category_id: 1 }]);
  await insert(c, 'book_metadata_tag_mapping', [{ book_id: 10, tag_id: 1 }]);
  await insert(c, 'book_metadata_mood_mapping', [{ book_id: 10, mood_id: 1 }]);
  await insert(c, 'comic_metadata', [{ book_id: 13, issue_number: '1', volume_name: 'Saga', manga: 0, reading_direction: 'ltr', issue_number_locked: 1 }]);
  await insert(c, 'comic_metadata_creator_mapping', [{ book_id: 13, creator_id: 1, role: 'ARTIST' }]);
  await insert(c, 'comic_metadata_character_mapping', [{ book_id: 13, character_id: 1 }]);
  await insert(c, 'comic_metadata_team_mapping', [{ book_id: 13, team_id: 1 }]);
  await insert(c, 'comic_metadata_location_mapping', [{ book_id: 13, location_id: 1 }]);
  await insert(c, 'book_award', [{ book_id: 10, name: 'Hugo Award', awarded_at: '1970-06-01 00:00:00', category: 'Novel', designation: 'WINNER' }]);

  await insert(c, 'shelf', [{ id: 1, user_id: 1, name: 'Favourites', icon: 'heart', icon_type: 'LUCIDE', is_public: 1 }, { id: 2, user_id: 1, name: 'Kobo', icon: 'tablet', icon_type: 'LUCIDE', is_public: 0 }]);
  await insert(c, 'book_shelf_mapping', [{ book_id: 10, shelf_id: 1 }, { book_id: 12, shelf_id: 1 }, { book_id: 10, shelf_id: 2 }]);
  await insert(c, 'magic_shelf', [
    { user_id: 1, name: 'In Books', icon: 'sparkles', icon_type: 'LUCIDE', is_public: 0, filter_json: JSON.stringify({ type: 'group', join: 'and', rules: [{ field: 'library', operator: 'equals', value: 1 }, { field: 'shelf', operator: 'includes_any', value: ['1'] }] }) },
  ]);

  await insert(c, 'user_book_progress', [
    { user_id: 1, book_id: 10, last_read_time: '2024-05-01 10:00:00', epub_progress: 'epubcfi(/6/4!/4/2/1:0)', epub_progress_percent: 45.5, read_status: 'READING', read_status_modified_time: '2024-05-01 10:00:00', koreader_progress: '/body/DocFragment[3]/body/p[2]/text().0', koreader_progress_percent: 0.455, koreader_device: 'Kindle', koreader_device_id: 'DEV1', koreader_last_sync_time: '2024-05-01 09:59:00', kobo_progress_percent: 44, kobo_location: 'kobo.3.1', kobo_location_type: 'KoboSpan', kobo_location_source: 'OEBPS/ch3.xhtml', personal_rating: 8, epub_progress_href: 'OEBPS/ch3.xhtml' },
    { user_id: 1, book_id: 11, pdf_progress: 120, pdf_progress_percent: 100, read_status: 'READ', date_finished: '2024-01-02 03:04:05' },
    { user_id: 1, book_id: 12, read_status: 'READ' },
  ]);
  await insert(c, 'user_book_file_progress', [{ user_id: 1, book_file_id: 100, position_data: 'epubcfi(/6/4!/4/2/1:0)', position_href: 'OEBPS/ch3.xhtml', progress_percent: 45.5, last_read_time: '2024-05-01 10:00:00' }]);
  await insert(c, 'book_marks', [{ user_id: 1, book_id: 10, cfi: 'epubcfi(/6/2!/4/1:0)', title: 'Start', created_at: '2024-04-01 08:00:00', updated_at: '2024-04-01 08:00:00', version: 1 }]);
  await insert(c, 'annotations', [
    { user_id: 1, book_id: 10, cfi: 'epubcfi(/6/4!/4/2,/1:0,/1:20)', text: 'Light is the left hand of darkness', color: '#FFFF00', style: 'highlight', note: 'the title', chapter_title: 'Chapter 3', version: 2, created_at: '2024-04-02 08:00:00', updated_at: '2024-04-03 08:00:00' },
    { user_id: 1, book_id: 12, cfi: 'epubcfi(/6/2!/4/1:0)', text: 'on a missing book', created_at: '2024-04-02 08:00:00', updated_at: '2024-04-02 08:00:00' },
  ]);
  await insert(c, 'book_notes', [{ user_id: 1, book_id: 10, title: 'Old note', content: 'Kept from Booklore', created_at: '2023-12-01 00:00:00', updated_at: '2023-12-01 00:00:00' }]);
  await insert(c, 'book_notes_v2', [{ user_id: 1, book_id: 10, cfi: 'epubcfi(/6/6!/4/2/1:0)', selected_text: 'Gethen', note_content: 'Winter planet', color: '#00FF00', chapter_title: 'Chapter 1', created_at: '2024-04-04 08:00:00', updated_at: '2024-04-04 08:00:00' }]);
  await insert(c, 'pdf_annotations', [{ user_id: 1, book_id: 11, data: JSON.stringify({ annotations: [{ page: 3, type: 'highlight', rects: [[10, 10, 50, 20]] }] }), version: 1, created_at: '2024-04-05 08:00:00', updated_at: '2024-04-05 08:00:00' }]);
  await insert(c, 'reading_sessions', [{ user_id: 1, book_id: 10, book_type: 'EPUB', start_time: '2024-05-01 09:00:00', end_time: '2024-05-01 10:00:00', duration_seconds: 3600, start_progress: 40, end_progress: 45.5, progress_delta: 5.5, start_location: 'epubcfi(/6/4!/4/1:0)', end_location: 'epubcfi(/6/4!/4/2/1:0)', created_at: '2024-05-01 10:00:00', duration_formatted: '1h 0m' }]);
  await insert(c, 'ebook_viewer_preference', [{ user_id: 1, book_id: 10, font_family: 'serif', font_size: 18, hyphenate: 1, is_dark: 0, justify: 1, line_height: 1.4, theme: 'sepia', flow: 'paginated' }]);
  await insert(c, 'epub_viewer_preference', [{ user_id: 1, book_id: 10, theme: 'dark', font: 'Georgia', font_size: 120, flow: 'scrolled', letter_spacing: 0.5, line_height: 1.5, spread: 'none' }]);
  await insert(c, 'pdf_viewer_preference', [{ user_id: 1, book_id: 11, zoom: 'page-fit', spread: 'odd', is_dark_theme: 0 }]);
  await insert(c, 'new_pdf_viewer_preference', [{ user_id: 1, book_id: 11, spread: 'ODD', view_mode: 'SINGLE', fit_mode: 'FIT_WIDTH', scroll_mode: 'VERTICAL', background_color: 'GRAY' }]);
  await insert(c, 'cbx_viewer_preference', [{ user_id: 1, book_id: 13, spread: 'ODD', view_mode: 'TWO_PAGE', fit_mode: 'FIT_PAGE', scroll_mode: 'PAGINATED', background_color: 'BLACK' }]);

  await insert(c, 'kobo_library_snapshot', [{ id: '3f1c9a8e-0d1b-4c6e-9a57-5b1f1e2d3c4b', user_id: 1, created_date: '2024-05-02 00:00:00' }]);
  await insert(c, 'kobo_library_snapshot_book', [{ snapshot_id: '3f1c9a8e-0d1b-4c6e-9a57-5b1f1e2d3c4b', book_id: 10, synced: 1, file_hash: 'aaaa0000aaaa0000aaaa0000aaaa0000', metadata_updated_at: '2024-05-01 00:00:00' }]);
  await insert(c, 'kobo_removed_books_tracking', [{ snapshot_id: '3f1c9a8e-0d1b-4c6e-9a57-5b1f1e2d3c4b', user_id: 1, book_id_synced: 99 }]);
  await insert(c, 'kobo_reading_state', [
    { entitlement_id: '10', user_id: 1, created: '2024-05-01T09:00:00Z', last_modified: '2024-05-01T10:00:00Z', priority_timestamp: '2024-05-01T10:00:00Z', current_bookmark_json: JSON.stringify({ ProgressPercent: 44, Location: { Value: 'kobo.3.1', Type: 'KoboSpan', Source: 'OEBPS/ch3.xhtml' } }), statistics_json: JSON.stringify({ SpentReadingMinutes: 60 }), status_info_json: JSON.stringify({ Status: 'Reading' }) },
  ]);
  return { booksDir, grimmoryData };
}
