// Figures of each named series of a library, kept for Komga's series pages (src/core/komga/series-figures.ts): how many
// books, first and last added, earliest release, first book, first authors and tags. A row is filled by the read path
// when a page needs it. Triggers on every table those figures come from append a row naming each series a write
// touches to komga_series_stale, in the writing transaction, on both engines and whichever process writes; a series'
// figures are valid only while no such row exists for it. The triggers only ever insert new rows (no unique key, no
// update): a writer takes no lock another writer could wait on, so writers of several series in different orders
// cannot deadlock on PostgreSQL. The reader deletes exactly the rows it saw before computing, by id, once its figures
// are stored; a row committed meanwhile survives and keeps the series stale.
import { sql, type Kysely } from 'kysely';
import { engineOf } from '../engine.ts';

/**
 * Marks stale the series named by the rows of `from … where` (a library id and a series name per row, blank names left
 * out): one new row each in the append-only log. The key is the name as lower() folds it: ASCII letters only on both
 * engines (SQLite without ICU; PostgreSQL catalogs use the C character type), as JavaScript's `nocase`.
 */
export function touch(from: string, where: string, library = 'b.library_id', name = 'm.series_name'): string {
  return `INSERT INTO komga_series_stale (library_id, series_key)
    SELECT DISTINCT ${library}, lower(${name}) FROM ${from} WHERE ${where} AND trim(coalesce(${name}, '')) <> ''`;
}

/** The series of a book (by id expression) as it is now. */
export const seriesOfBook = (bookId: string, extra = ''): string => touch('book b JOIN book_metadata m ON m.book_id = b.id', `b.id = ${bookId}${extra}`);

export interface TriggerSpec {
  table: string;
  /** Part of the trigger's name. */
  event: string;
  /** `AFTER INSERT`, `AFTER UPDATE OF a, b`, `BEFORE DELETE` … */
  when: string;
  statements: string[];
}

const UNTITLED = " AND trim(coalesce(m.title, '')) = ''";

const TRIGGERS: TriggerSpec[] = [
  // A book's membership (library, deleted, physical) and date added; before a delete, while its metadata is still there.
  {
    table: 'book',
    event: 'update',
    when: 'AFTER UPDATE OF library_id, added_on, deleted, is_physical',
    statements: [seriesOfBook('NEW.id'), touch('book_metadata m', 'm.book_id = OLD.id', 'OLD.library_id')],
  },
  { table: 'book', event: 'delete', when: 'BEFORE DELETE', statements: [touch('book_metadata m', 'm.book_id = OLD.id', 'OLD.library_id')] },
  // The series name itself, the number and title that pick the first book, the published date that gives the release.
  { table: 'book_metadata', event: 'insert', when: 'AFTER INSERT', statements: [seriesOfBook('NEW.book_id')] },
  {
    table: 'book_metadata',
    event: 'update',
    when: 'AFTER UPDATE OF book_id, series_name, series_number, published_date, title',
    statements: [seriesOfBook('NEW.book_id'), touch('book b', 'b.id = OLD.book_id', 'b.library_id', 'OLD.series_name')],
  },
  { table: 'book_metadata', event: 'delete', when: 'AFTER DELETE', statements: [touch('book b', 'b.id = OLD.book_id', 'b.library_id', 'OLD.series_name')] },
  // A book without a title is named by its first book file.
  { table: 'book_file', event: 'insert', when: 'AFTER INSERT', statements: [seriesOfBook('NEW.book_id', UNTITLED)] },
  { table: 'book_file', event: 'update', when: 'AFTER UPDATE OF book_id, file_name, is_book', statements: [seriesOfBook('NEW.book_id', UNTITLED), seriesOfBook('OLD.book_id', UNTITLED)] },
  { table: 'book_file', event: 'delete', when: 'AFTER DELETE', statements: [seriesOfBook('OLD.book_id', UNTITLED)] },
];
for (const [table, mapping, key] of [
  ['author', 'book_metadata_author_mapping', 'author_id'],
  ['tag', 'book_metadata_tag_mapping', 'tag_id'],
] as const) {
  TRIGGERS.push(
    { table: mapping, event: 'insert', when: 'AFTER INSERT', statements: [seriesOfBook('NEW.book_id')] },
    { table: mapping, event: 'update', when: `AFTER UPDATE OF book_id, ${key}`, statements: [seriesOfBook('NEW.book_id'), seriesOfBook('OLD.book_id')] },
    { table: mapping, event: 'delete', when: 'AFTER DELETE', statements: [seriesOfBook('OLD.book_id')] },
    // A rename shows in every series with a book of that name.
    {
      table,
      event: 'rename',
      when: 'AFTER UPDATE OF name',
      statements: [touch(`${mapping} x JOIN book b ON b.id = x.book_id JOIN book_metadata m ON m.book_id = x.book_id`, `x.${key} = NEW.id`)],
    },
  );
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('komga_series_summary')
    .addColumn('library_id', 'integer', (c) => c.notNull())
    // lower(series name): ASCII letters folded.
    .addColumn('series_key', 'text', (c) => c.notNull())
    // Set anew (a random id) by every reader that stores the row: a reader stores only over the claim it read before
    // computing, and deletes the log rows it saw only while the row still holds its own claim.
    .addColumn('claim', 'text', (c) => c.notNull())
    .addColumn('book_count', 'integer', (c) => c.notNull())
    .addColumn('created', 'text')
    .addColumn('modified', 'text')
    .addColumn('release', 'text')
    .addColumn('first_book_id', 'integer')
    // JSON arrays of names, in the order a SeriesDto lists them.
    .addColumn('authors', 'text', (c) => c.notNull())
    .addColumn('tags', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('komga_series_summary_pk', ['library_id', 'series_key'])
    .execute();
  // Append-only: written by the triggers, rows deleted by readers that stored figures newer than them.
  await db.schema
    .createTable('komga_series_stale')
    .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
    .addColumn('library_id', 'integer', (c) => c.notNull())
    .addColumn('series_key', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('komga_series_stale_series_idx').on('komga_series_stale').columns(['library_id', 'series_key']).execute();
  // Every series there is now, stale (and without a row, which is stale as well): the filler in series-figures.ts
  // finds them in the log and works them out in the background.
  await sql.raw(touch('book b JOIN book_metadata m ON m.book_id = b.id', '1 = 1')).execute(db);
  await createTriggers(db, TRIGGERS);
}

const triggerName = (prefix: string, t: TriggerSpec): string => `${prefix}_${t.table}_${t.event}`;

/** The plpgsql function a trigger runs on PostgreSQL (created, or replaced by a later migration). */
export function postgresTriggerFunction(prefix: string, t: TriggerSpec): string {
  return `CREATE OR REPLACE FUNCTION ${triggerName(prefix, t)}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN ${t.statements.join('; ')}; RETURN ${t.when.startsWith('BEFORE') ? 'OLD' : 'NULL'}; END $$`;
}

/** Creates each trigger (named `<prefix>_<table>_<event>`): a plpgsql function and its trigger on PostgreSQL. */
export async function createTriggers(db: Kysely<unknown>, triggers: readonly TriggerSpec[], prefix = 'komga_series'): Promise<void> {
  const postgres = engineOf(db) === 'postgres';
  for (const t of triggers) {
    const name = triggerName(prefix, t);
    if (postgres) {
      await sql.raw(postgresTriggerFunction(prefix, t)).execute(db);
      await sql.raw(`CREATE TRIGGER ${name} ${t.when} ON ${t.table} FOR EACH ROW EXECUTE FUNCTION ${name}()`).execute(db);
    } else {
      await sql.raw(`CREATE TRIGGER ${name} ${t.when} ON ${t.table} FOR EACH ROW BEGIN ${t.statements.join('; ')}; END`).execute(db);
    }
  }
}
