// Which books are in a library's Unknown Series (Komga, with unknown books grouped: no series name, a blank one, or
// "Unknown Series") changes rarely, while the catalog around it changes all the time. Here every write that moves a
// book into or out of it (a book moved, deleted or restored, made physical; its metadata added or removed; its series
// name set or cleared) appends a row with the key '' for the book's library to migration 044's append-only log, on
// both engines and whichever process writes. A kept claim on that key (src/core/komga/series-figures.ts) then tells a
// reader whether what they counted of their progress in the Unknown Series still holds, however much else changed.
import type { Kysely } from 'kysely';
import { createTriggers, type TriggerSpec } from './044-komga-series-summary.ts';

/** Whether a series name puts its book in the Unknown Series (NULL included; lower() folds ASCII letters as NOCASE does). */
const unknownName = (name: string): string => `(trim(coalesce(${name}, '')) = '' OR lower(${name}) = 'unknown series')`;

/** The book (by id expression) has no metadata saying it is in a named series. */
const inUnknown = (bookId: string): string => `NOT EXISTS (SELECT 1 FROM book_metadata m WHERE m.book_id = ${bookId} AND NOT ${unknownName('m.series_name')})`;

const log = (select: string): string => `INSERT INTO komga_series_stale (library_id, series_key) ${select}`;

const TRIGGERS: TriggerSpec[] = [
  {
    table: 'book',
    event: 'unknown_update',
    when: 'AFTER UPDATE OF library_id, deleted, is_physical',
    statements: [
      log(
        `SELECT NEW.library_id, '' WHERE ${inUnknown('NEW.id')} AND (NEW.library_id IS DISTINCT FROM OLD.library_id OR NEW.deleted IS DISTINCT FROM OLD.deleted OR NEW.is_physical IS DISTINCT FROM OLD.is_physical)`,
      ),
      log(`SELECT OLD.library_id, '' WHERE ${inUnknown('NEW.id')} AND NEW.library_id IS DISTINCT FROM OLD.library_id`),
    ],
  },
  { table: 'book', event: 'unknown_delete', when: 'BEFORE DELETE', statements: [log(`SELECT OLD.library_id, '' WHERE ${inUnknown('OLD.id')}`)] },
  // A book without metadata is in the Unknown Series: metadata naming a series takes it out, and removing it puts it back.
  { table: 'book_metadata', event: 'unknown_insert', when: 'AFTER INSERT', statements: [log(`SELECT b.library_id, '' FROM book b WHERE b.id = NEW.book_id AND NOT ${unknownName('NEW.series_name')}`)] },
  {
    table: 'book_metadata',
    event: 'unknown_update',
    when: 'AFTER UPDATE OF book_id, series_name',
    statements: [
      log(
        `SELECT b.library_id, '' FROM book b WHERE b.id IN (OLD.book_id, NEW.book_id) AND (OLD.book_id <> NEW.book_id OR ${unknownName('OLD.series_name')} <> ${unknownName('NEW.series_name')})`,
      ),
    ],
  },
  { table: 'book_metadata', event: 'unknown_delete', when: 'AFTER DELETE', statements: [log(`SELECT b.library_id, '' FROM book b WHERE b.id = OLD.book_id AND NOT ${unknownName('OLD.series_name')}`)] },
];

export async function up(db: Kysely<unknown>): Promise<void> {
  // No claim is kept yet: the first Unknown Series page counts and claims.
  await createTriggers(db, TRIGGERS);
}
