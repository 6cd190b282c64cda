// The benchmarks' synthetic catalog (bench/book-catalog.ts) is written through the Store, so the same code fills a
// SQLite file and a PostgreSQL database (this file runs on both engines with the rest of the suite).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fillCatalog } from '../../bench/book-catalog.ts';
import { openStore, type Store } from '../../src/core/store/store.ts';
import { createUser } from '../../src/core/users/users.ts';

let dir: string;
let store: Store;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bindery-synthetic-'));
  store = await openStore(join(dir, 'bindery.sqlite'));
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const count = async (table: string): Promise<number> => Number((await store.exec.get(`SELECT count(*) AS n FROM ${table}`))?.n);

describe('the synthetic benchmark catalog', () => {
  it('writes books, metadata, people, files, progress and a shelf, and new rows take the next ids', async () => {
    const userId = await createUser(store.db, { username: 'admin', password: 'admin-password', name: 'Admin', permissions: { admin: true } });
    // More books than one statement's worth of rows, so the batches split (8,000 parameters per statement).
    const catalog = await fillCatalog(store, 2100, join(dir, 'library'), userId);
    expect(catalog.bookIds.last - catalog.bookIds.first).toBe(2099);
    expect(await count('book')).toBe(2100);
    expect(await count('book_metadata')).toBe(2100);
    expect(await count('book_file')).toBe(2100 + 210);
    expect(await count('book_metadata_author_mapping')).toBe(2100 + 420);
    expect(await count('book_metadata_category_mapping')).toBe(4200);
    expect(await count('book_metadata_tag_mapping')).toBe(2100);
    expect(await count('author')).toBe(20000);
    expect(await count('user_book_progress')).toBe(210);
    expect(await count('book_shelf_mapping')).toBe(105);
    const book = await store.db
      .selectFrom('book_metadata')
      .innerJoin('book', 'book.id', 'book_metadata.book_id')
      .select(['book.library_id', 'book_metadata.title', 'book_metadata.series_name', 'book_metadata.page_count'])
      .where('book.id', '=', catalog.bookIds.first + 3)
      .executeTakeFirstOrThrow();
    expect(book).toEqual({ library_id: catalog.libraryId, title: expect.stringMatching(/ 3$/), series_name: 'Series 3', page_count: 103 });

    // Rows inserted afterwards without an id take the next ones (PostgreSQL's identity sequences were moved on).
    const added = await store.db
      .insertInto('book')
      .values({ library_id: catalog.libraryId, added_on: new Date().toISOString() })
      .returning('id')
      .executeTakeFirstOrThrow();
    expect(added.id).toBe(catalog.bookIds.last + 1);
    const author = await store.db.insertInto('author').values({ name: 'Someone new' }).returning('id').executeTakeFirstOrThrow();
    expect(author.id).toBe(20001);
  });
});
