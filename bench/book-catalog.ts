// Fills a catalog with N synthetic books (seconds for 100k), for list benchmarks, on either engine: multi-row inserts
// with ids chosen here, all in one write transaction of the Store.
import { syncIdSequences } from '../src/core/store/id-sequences.ts';
import type { SqlExec, SqlValue } from '../src/core/store/sql-exec.ts';
import type { Store } from '../src/core/store/store.ts';

export interface SyntheticCatalog {
  libraryId: number;
  bookIds: { first: number; last: number };
}

const WORDS = ['river', 'night', 'glass', 'empire', 'garden', 'shadow', 'winter', 'storm', 'silver', 'harbor', 'iron', 'letters', 'crown', 'machine', 'orchard', 'lantern'];

function phrase(i: number, words: number): string {
  const out: string[] = [];
  let x = i * 2654435761;
  for (let w = 0; w < words; w++) {
    x = (x * 1103515245 + 12345) >>> 0;
    out.push(WORDS[x % WORDS.length] as string);
  }
  return out.join(' ');
}

/** Bound parameters per statement: well under both engines' limits (SQLite 32,766, PostgreSQL 65,535). */
const PARAMETERS_PER_STATEMENT = 8000;

const BOOKS_PER_FLUSH = 2000;

/** Rows of one table, written a few thousand values per INSERT when flushed. */
class BatchInsert {
  private readonly exec: SqlExec;
  private readonly head: string;
  private readonly tuple: string;
  private readonly rowsPerStatement: number;
  private rows: SqlValue[][] = [];

  constructor(exec: SqlExec, table: string, columns: readonly string[]) {
    this.exec = exec;
    this.head = `INSERT INTO ${table} (${columns.join(', ')}) VALUES `;
    this.tuple = `(${columns.map(() => '?').join(', ')})`;
    this.rowsPerStatement = Math.floor(PARAMETERS_PER_STATEMENT / columns.length);
  }

  add(...row: SqlValue[]): void {
    this.rows.push(row);
  }

  /** Writes the rows added so far. */
  async flush(): Promise<void> {
    const rows = this.rows;
    this.rows = [];
    for (let start = 0; start < rows.length; start += this.rowsPerStatement) {
      const slice = rows.slice(start, start + this.rowsPerStatement);
      await this.exec.run(this.head + slice.map(() => this.tuple).join(', '), slice.flat());
    }
  }
}

async function nextId(exec: SqlExec, table: string): Promise<number> {
  const row = await exec.get(`SELECT coalesce(max(id), 0) AS id FROM ${table}`);
  return Number(row?.id ?? 0) + 1;
}

async function insertReturningId(exec: SqlExec, sql: string, params: SqlValue[]): Promise<number> {
  return Number((await exec.get(`${sql} RETURNING id`, params))?.id);
}

/**
 * Writes `books` books into a catalog that has none, in one new library rooted at `root` (the files do not exist):
 * metadata with a long description, one or two of 20,000 authors, two of 300 categories, one of 500 tags, an EPUB file
 * each and a PDF for one book in ten. With `userId`, that user has progress on one book in ten and a shelf with one
 * book in twenty.
 */
export async function fillCatalog(store: Store, books: number, root: string, userId?: number): Promise<SyntheticCatalog> {
  const now = new Date().toISOString();
  return store.write(async ({ db, exec }) => {
    const libraryId = await insertReturningId(exec, "INSERT INTO library (name, organization_mode) VALUES ('Synthetic', 'BOOK_PER_FILE')", []);
    const pathId = await insertReturningId(exec, 'INSERT INTO library_path (library_id, path) VALUES (?, ?)', [libraryId, root]);
    const named = async (table: string, count: number, name: (n: number) => string): Promise<number> => {
      const first = await nextId(exec, table);
      const rows = new BatchInsert(exec, table, ['id', 'name']);
      for (let n = 0; n < count; n++) rows.add(first + n, name(n));
      await rows.flush();
      return first;
    };
    const firstAuthor = await named('author', 20000, (a) => `Author ${a} ${phrase(a, 1)}`);
    const firstCategory = await named('category', 300, (c) => `Category ${c}`);
    const firstTag = await named('tag', 500, (t) => `tag-${t}`);

    const book = new BatchInsert(exec, 'book', ['id', 'library_id', 'library_path_id', 'added_on', 'scanned_on', 'metadata_updated_at', 'book_cover_hash']);
    const meta = new BatchInsert(exec, 'book_metadata', [
      'book_id', 'title', 'subtitle', 'publisher', 'published_date', 'description', 'isbn_13', 'language', 'page_count', 'series_name', 'series_number', 'cover_updated_on', 'search_text',
    ]);
    const writes = new BatchInsert(exec, 'book_metadata_author_mapping', ['book_id', 'author_id', 'sort_order']);
    const inCategory = new BatchInsert(exec, 'book_metadata_category_mapping', ['book_id', 'category_id']);
    const tagged = new BatchInsert(exec, 'book_metadata_tag_mapping', ['book_id', 'tag_id']);
    const file = new BatchInsert(exec, 'book_file', [
      'book_id', 'library_path_id', 'file_sub_path', 'file_name', 'size_bytes', 'file_size_kb', 'mtime_ms', 'current_hash', 'initial_hash', 'added_on', 'is_book', 'book_type',
    ]);
    const first = await nextId(exec, 'book');
    const last = first + books - 1;
    for (let i = 0; i < books; i++) {
      const id = first + i;
      book.add(id, libraryId, pathId, now, now, now, `BL-${String(i).padStart(13, '0')}`);
      const title = `${phrase(i, 3)} ${i}`;
      const series = i % 3 === 0 ? `Series ${i % 997}` : null;
      meta.add(id, title, i % 4 === 0 ? phrase(i + 7, 4) : null, `Publisher ${i % 150}`, `19${50 + (i % 50)}-01-01`, `${phrase(i, 40)}.`, `978${String(i).padStart(10, '0')}`, 'en', 100 + (i % 700), series, series ? (i % 12) + 1 : null, now, title.toLowerCase());
      writes.add(id, firstAuthor + (i % 20000), 0);
      if (i % 5 === 0) writes.add(id, firstAuthor + ((i + 10000) % 20000), 1);
      inCategory.add(id, firstCategory + (i % 300));
      inCategory.add(id, firstCategory + ((i + 150) % 300));
      tagged.add(id, firstTag + (i % 500));
      const sub = `${phrase(i % 5000, 1)}/${i}`;
      file.add(id, pathId, sub, `${title}.epub`, 400_000 + i, 390 + (i % 1000), Date.now(), 'a'.repeat(32), 'a'.repeat(32), now, 1, 'EPUB');
      if (i % 10 === 0) file.add(id, pathId, sub, `${title}.pdf`, 900_000 + i, 880, Date.now(), 'b'.repeat(32), 'b'.repeat(32), now, 1, 'PDF');
      // Books first: the other tables refer to them.
      if ((i + 1) % BOOKS_PER_FLUSH === 0 || i === books - 1) for (const rows of [book, meta, writes, inCategory, tagged, file]) await rows.flush();
    }
    if (userId !== undefined) {
      const progress = new BatchInsert(exec, 'user_book_progress', ['user_id', 'book_id', 'last_read_time', 'epub_progress_percent', 'epub_progress', 'read_status']);
      for (let i = 0; i < books; i += 10) progress.add(userId, first + i, now, (i % 100) + 0.37, 'epubcfi(/6/4!/4/2)', i % 20 === 0 ? 'READ' : 'READING');
      await progress.flush();
      const shelf = await insertReturningId(exec, "INSERT INTO shelf (user_id, name) VALUES (?, 'Synthetic shelf')", [userId]);
      const onShelf = new BatchInsert(exec, 'book_shelf_mapping', ['book_id', 'shelf_id']);
      for (let i = 0; i < books; i += 20) onShelf.add(first + i, shelf);
      await onShelf.flush();
    }
    await syncIdSequences(db);
    return { libraryId, bookIds: { first, last } };
  });
}
