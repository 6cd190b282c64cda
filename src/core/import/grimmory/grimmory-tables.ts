// What comes over from Grimmory, stage by stage, and what does not (with why). Every one of Grimmory's 72 tables is in
// exactly one of the two lists (a test holds them to the schema facts).
import type { CopySpec } from '../table-copy.ts';

export interface StageDef {
  name: string;
  tables: CopySpec[];
}

const user = { user_id: 'users' };
const userBook = { user_id: 'users', book_id: 'book' };

/** The tables read in each stage, in order; stage-specific hooks are added by the importer. */
export const STAGE_TABLES: readonly StageDef[] = [
  { name: 'settings', tables: [{ table: 'app_settings', onExisting: 'update' }] },
  {
    name: 'users',
    tables: [
      { table: 'users' },
      { table: 'user_permissions', refs: user },
      { table: 'user_settings', refs: user },
      { table: 'user_content_restriction', refs: user },
      { table: 'opds_user_v2', refs: user },
      { table: 'koreader_user', optionalRefs: { booklore_user_id: 'users' }, exclude: ['password', 'password_md5'] },
      { table: 'kobo_user_settings', refs: user },
      { table: 'email_provider_v2', refs: user, droppedReason: 'Bindery keeps each user’s default provider in user_email_provider_preference' },
      { table: 'email_recipient_v2', refs: user },
      { table: 'user_email_provider_preference', refs: { user_id: 'users', default_provider_id: 'email_provider_v2' } },
      { table: 'oidc_group_mapping' },
      { table: 'audit_log', optionalRefs: user },
    ],
  },
  {
    name: 'libraries',
    tables: [{ table: 'library' }, { table: 'library_path', refs: { library_id: 'library' } }, { table: 'user_library_mapping', refs: { user_id: 'users', library_id: 'library' } }],
  },
  {
    name: 'catalog',
    tables: [
      { table: 'author' },
      { table: 'category' },
      { table: 'tag' },
      { table: 'mood' },
      { table: 'comic_character' },
      { table: 'comic_creator' },
      { table: 'comic_location' },
      { table: 'comic_team' },
      { table: 'book', refs: { library_id: 'library' }, optionalRefs: { library_path_id: 'library_path' }, droppedReason: 'read status is kept per user (user_book_progress, imported); Bindery tracks metadata writes itself' },
      { table: 'book_file', refs: { book_id: 'book' }, droppedReason: 'a generated column; Bindery derives it' },
      { table: 'book_metadata', refs: { book_id: 'book' }, exclude: ['search_text'], droppedReason: 'Bindery computes search embeddings itself' },
      { table: 'book_metadata_author_mapping', refs: { book_id: 'book', author_id: 'author' } },
      { table: 'book_metadata_category_mapping', refs: { book_id: 'book', category_id: 'category' } },
      { table: 'book_metadata_mood_mapping', refs: { book_id: 'book', mood_id: 'mood' } },
      { table: 'book_metadata_tag_mapping', refs: { book_id: 'book', tag_id: 'tag' } },
      { table: 'comic_metadata', refs: { book_id: 'book' } },
      { table: 'comic_metadata_character_mapping', refs: { book_id: 'book', character_id: 'comic_character' } },
      { table: 'comic_metadata_creator_mapping', refs: { book_id: 'book', creator_id: 'comic_creator' } },
      { table: 'comic_metadata_location_mapping', refs: { book_id: 'book', location_id: 'comic_location' } },
      { table: 'comic_metadata_team_mapping', refs: { book_id: 'book', team_id: 'comic_team' } },
      { table: 'public_book_review', refs: { book_id: 'book' } },
    ],
  },
  {
    name: 'shelves',
    tables: [{ table: 'shelf', refs: user }, { table: 'book_shelf_mapping', refs: { book_id: 'book', shelf_id: 'shelf' } }, { table: 'magic_shelf', refs: user }],
  },
  {
    name: 'reading',
    tables: [
      { table: 'user_book_progress', refs: userBook },
      { table: 'user_book_file_progress', refs: { user_id: 'users', book_file_id: 'book_file' } },
      { table: 'book_marks', refs: userBook, droppedReason: 'an optimistic-lock counter; Bindery keeps its own' },
      { table: 'annotations', refs: userBook, droppedReason: 'an optimistic-lock counter; Bindery keeps its own' },
      { table: 'book_notes', refs: userBook },
      { table: 'book_notes_v2', refs: userBook, droppedReason: 'an optimistic-lock counter; Bindery keeps its own' },
      { table: 'pdf_annotations', refs: userBook, droppedReason: 'an optimistic-lock counter; Bindery keeps its own' },
      { table: 'reading_sessions', refs: userBook },
      { table: 'ebook_viewer_preference', refs: userBook },
      { table: 'epub_viewer_preference', refs: userBook, exclude: ['custom_font_id'] },
      { table: 'pdf_viewer_preference', refs: userBook },
      { table: 'new_pdf_viewer_preference', refs: userBook },
      { table: 'cbx_viewer_preference', refs: userBook },
    ],
  },
  {
    name: 'devices',
    tables: [
      { table: 'kobo_library_snapshot', refs: user },
      { table: 'kobo_library_snapshot_book', refs: { snapshot_id: 'kobo_library_snapshot', book_id: 'book' } },
      { table: 'kobo_removed_books_tracking', refs: { snapshot_id: 'kobo_library_snapshot', user_id: 'users' } },
      { table: 'kobo_reading_state', optionalRefs: user, exclude: ['entitlement_id'] },
    ],
  },
];

/** Tables left behind, with the reason the report gives. */
export const NOT_IMPORTED: Readonly<Record<string, string>> = {
  flyway_schema_history: 'Grimmory’s own schema bookkeeping',
  app_migration: 'Grimmory’s own data-migration bookkeeping',
  jwt_secret: 'Bindery signs its own sessions: everyone signs in to the web UI and the app once more',
  refresh_token: 'Bindery signs its own sessions: everyone signs in to the web UI and the app once more',
  oidc_session: 'single sign-on sessions start afresh with Bindery',
  bookdrop_file: 'files waiting in Grimmory’s bookdrop are not in a library yet: put them in Bindery’s bookdrop folder',
  metadata_fetch_jobs: 'metadata fetch jobs are transient; start them again in Bindery if needed',
  metadata_fetch_proposals: 'unreviewed metadata proposals are transient; fetch them again in Bindery if needed',
  tasks: 'Grimmory’s task history',
  task_cron_configuration: 'Bindery keeps its own task schedules (see docs/tasks.md)',
  book_award: 'Bindery has no place for book awards yet',
  custom_font: 'uploaded font files are not read from Grimmory’s data folder; upload them again',
  kobo_span_map: 'Bindery computes Kobo span maps itself from the book files',
  email_provider: 'legacy table; Grimmory moved its rows to email_provider_v2, which is imported',
  email_recipient: 'legacy table; Grimmory moved its rows to email_recipient_v2, which is imported',
  opds_user: 'legacy table; Grimmory moved its rows to opds_user_v2, which is imported',
};
