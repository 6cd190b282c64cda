// Reading state (how far each user got in each book, read or unread, reading sessions, device positions) moves every
// few seconds while someone reads: a phone, a Kobo or KOReader reports progress as pages turn. It is written through
// Store.readingState and has a generation of its own, so that the catalog's generation, and every list, count and
// index kept under it, stays put (its statements are marked as such: write-kinds.ts). What shows or filters by reading
// state is kept under both (`readingAware`).
import type { Generation, GenerationSource } from './snapshot.ts';

/**
 * The tables reading state lives in. A statement through Store.readingState may write only these; a cached value
 * whose SQL reads one of them must be kept under the reading generation too (`sourceForSql`).
 */
export const READING_STATE_TABLES = ['user_book_progress', 'user_book_file_progress', 'kobo_reading_state', 'komga_progression', 'koreader_document_progress', 'reading_sessions'] as const;

const READING_STATE_TABLE = new RegExp(`\\b(${READING_STATE_TABLES.join('|')})\\b`, 'i');

/** Whether SQL text reads (or writes) a reading-state table. */
export function touchesReadingState(sql: string): boolean {
  return READING_STATE_TABLE.test(sql);
}

/** What a store offers for the reading generation. */
export interface ReadingStateSource extends GenerationSource {
  readingState: { generation(): Generation };
}

/**
 * A source whose generation moves with the catalog AND with reading state: for values that show or filter by
 * progress or read status. `reader`: a snapshot's generations (ReadScope), when the value is read inside one.
 */
export function readingAware(store: ReadingStateSource, reader?: { snapshotGeneration?: Generation; snapshotReadingGeneration?: Generation }): GenerationSource {
  const catalog = reader?.snapshotGeneration;
  const reading = reader?.snapshotReadingGeneration;
  if (catalog && reading) return { generation: () => ({ ...catalog, reading }), writeInFlight: () => store.writeInFlight() };
  return {
    generation: () => ({ ...store.generation(), reading: store.readingState.generation() }),
    writeInFlight: () => store.writeInFlight(),
  };
}

/** The source to keep the result of `sql` under: reading-aware when it reads a reading-state table. */
export function sourceForSql(store: ReadingStateSource, sql: string): GenerationSource {
  return touchesReadingState(sql) ? readingAware(store) : store;
}
