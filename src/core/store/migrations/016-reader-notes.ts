// What readers keep while reading: bookmarks, highlights (annotations), notes (the old free-form kind and the newer
// anchored kind), the PDF reader's annotation layer, reading sessions for statistics, and custom reader fonts.
import type { CreateTableBuilder, Kysely } from 'kysely';
import { sql } from 'kysely';

const now = sql`(strftime('%Y-%m-%dT%H:%M:%fZ','now'))`;

/** Owner and book, both removed with what they own; timestamps kept as ISO-8601 UTC text. */
function owned<T extends string>(table: CreateTableBuilder<T, never>): CreateTableBuilder<T, never> {
  return table
    .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('book_id', 'integer', (c) => c.notNull().references('book.id').onDelete('cascade'));
}

const stamped = <T extends string>(table: CreateTableBuilder<T, never>): CreateTableBuilder<T, never> =>
  table.addColumn('created_at', 'text', (c) => c.notNull().defaultTo(now)).addColumn('updated_at', 'text', (c) => c.notNull().defaultTo(now));

export async function up(db: Kysely<unknown>): Promise<void> {
  await stamped(
    owned(db.schema.createTable('book_marks'))
      .addColumn('cfi', 'text')
      .addColumn('position_ms', 'integer')
      .addColumn('track_index', 'integer')
      .addColumn('page_number', 'integer')
      .addColumn('title', 'text')
      .addColumn('color', 'text')
      .addColumn('notes', 'text')
      .addColumn('priority', 'integer'),
  ).execute();
  await db.schema.createIndex('book_marks_user_book_idx').on('book_marks').columns(['user_id', 'book_id']).execute();

  await stamped(
    owned(db.schema.createTable('annotations'))
      .addColumn('cfi', 'text', (c) => c.notNull())
      .addColumn('text', 'text', (c) => c.notNull())
      .addColumn('color', 'text')
      .addColumn('style', 'text')
      .addColumn('note', 'text')
      .addColumn('chapter_title', 'text'),
  ).execute();
  await db.schema.createIndex('annotations_user_book_idx').on('annotations').columns(['user_id', 'book_id', 'cfi']).execute();

  await stamped(owned(db.schema.createTable('book_notes')).addColumn('title', 'text').addColumn('content', 'text', (c) => c.notNull())).execute();
  await db.schema.createIndex('book_notes_user_book_idx').on('book_notes').columns(['user_id', 'book_id']).execute();

  await stamped(
    owned(db.schema.createTable('book_notes_v2'))
      .addColumn('cfi', 'text', (c) => c.notNull())
      .addColumn('selected_text', 'text')
      .addColumn('note_content', 'text', (c) => c.notNull())
      .addColumn('color', 'text')
      .addColumn('chapter_title', 'text'),
  ).execute();
  await db.schema.createIndex('book_notes_v2_user_book_idx').on('book_notes_v2').columns(['user_id', 'book_id']).execute();

  await stamped(owned(db.schema.createTable('pdf_annotations')).addColumn('data', 'text', (c) => c.notNull())).execute();
  await db.schema.createIndex('pdf_annotations_user_book_unique').unique().on('pdf_annotations').columns(['user_id', 'book_id']).execute();

  await owned(db.schema.createTable('reading_sessions'))
    .addColumn('book_type', 'text')
    .addColumn('start_time', 'text', (c) => c.notNull())
    .addColumn('end_time', 'text', (c) => c.notNull())
    .addColumn('duration_seconds', 'integer', (c) => c.notNull())
    .addColumn('duration_formatted', 'text')
    .addColumn('start_progress', 'real')
    .addColumn('end_progress', 'real')
    .addColumn('progress_delta', 'real')
    .addColumn('start_location', 'text')
    .addColumn('end_location', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull().defaultTo(now))
    .execute();
  await db.schema.createIndex('reading_sessions_user_start_idx').on('reading_sessions').columns(['user_id', 'start_time']).execute();
  await db.schema.createIndex('reading_sessions_book_idx').on('reading_sessions').columns(['book_id', 'user_id', 'start_time']).execute();

  await db.schema
    .createTable('custom_font')
    .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('font_name', 'text', (c) => c.notNull())
    .addColumn('file_name', 'text', (c) => c.notNull())
    .addColumn('original_file_name', 'text', (c) => c.notNull())
    .addColumn('format', 'text', (c) => c.notNull())
    .addColumn('file_size', 'integer', (c) => c.notNull())
    .addColumn('uploaded_at', 'text', (c) => c.notNull().defaultTo(now))
    .execute();
}
