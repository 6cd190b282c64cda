// Per-book reader preferences (one table per reader kind, as in Grimmory), magic shelves and the bookdrop queue.
import type { CreateTableBuilder, Kysely } from 'kysely';
import { sql } from 'kysely';

const now = sql`(strftime('%Y-%m-%dT%H:%M:%fZ','now'))`;

type Column = [name: string, kind: 'text' | 'integer' | 'real'];
type Table = CreateTableBuilder<string, string>;

/** A `(user, book)`-keyed preference table; rows go away with their user or book. */
async function preferenceTable(db: Kysely<unknown>, name: string, columns: Column[], extra?: (t: Table) => Table): Promise<void> {
  let table: Table = db.schema
    .createTable(name)
    .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('book_id', 'integer', (c) => c.notNull().references('book.id').onDelete('cascade'));
  for (const [column, kind] of columns) table = table.addColumn(column, kind);
  if (extra) table = extra(table);
  await table.addUniqueConstraint(`${name}_user_book_unique`, ['user_id', 'book_id']).execute();
  await db.schema.createIndex(`${name}_book_idx`).on(name).column('book_id').execute();
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await preferenceTable(db, 'ebook_viewer_preference', [
    ['font_family', 'text'], ['font_size', 'integer'], ['gap', 'real'], ['hyphenate', 'integer'], ['is_dark', 'integer'],
    ['justify', 'integer'], ['line_height', 'real'], ['max_block_size', 'integer'], ['max_column_count', 'integer'],
    ['max_inline_size', 'integer'], ['theme', 'text'], ['flow', 'text'],
  ]);
  // Legacy EPUB reader preferences: kept so data carried over from Grimmory has a home.
  await preferenceTable(
    db,
    'epub_viewer_preference',
    [['theme', 'text'], ['font', 'text'], ['font_size', 'integer'], ['flow', 'text'], ['letter_spacing', 'real'], ['line_height', 'real'], ['custom_font_id', 'integer']],
    (t) => t.addColumn('spread', 'text', (c) => c.defaultTo('double')),
  );
  await preferenceTable(db, 'pdf_viewer_preference', [['zoom', 'text'], ['spread', 'text']], (t) => t.addColumn('is_dark_theme', 'integer', (c) => c.defaultTo(1)));
  const pagedColumns: Column[] = [['spread', 'text'], ['view_mode', 'text'], ['fit_mode', 'text'], ['scroll_mode', 'text'], ['background_color', 'text']];
  await preferenceTable(db, 'new_pdf_viewer_preference', pagedColumns);
  await preferenceTable(db, 'cbx_viewer_preference', pagedColumns);

  await db.schema
    .createTable('magic_shelf')
    .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('icon', 'text')
    .addColumn('icon_type', 'text')
    .addColumn('filter_json', 'text', (c) => c.notNull())
    .addColumn('is_public', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.defaultTo(now))
    .addColumn('updated_at', 'text', (c) => c.defaultTo(now))
    .addUniqueConstraint('magic_shelf_user_name_unique', ['user_id', 'name'])
    .execute();

  await db.schema
    .createTable('bookdrop_file')
    .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
    .addColumn('file_path', 'text', (c) => c.notNull())
    .addColumn('file_name', 'text', (c) => c.notNull())
    .addColumn('file_size', 'integer')
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('PENDING_REVIEW'))
    .addColumn('original_metadata', 'text')
    .addColumn('fetched_metadata', 'text')
    .addColumn('created_at', 'text', (c) => c.defaultTo(now))
    .addColumn('updated_at', 'text', (c) => c.defaultTo(now))
    .execute();
  await db.schema.createIndex('bookdrop_file_status_idx').on('bookdrop_file').column('status').execute();
}
