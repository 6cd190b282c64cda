// OPDS entries, Komga book rows and the app's book summaries are kept per book under its version (migration 054, src/core/books/book-versions.ts).
// After every kind of write to what they show (metadata, authors, categories, tags and moods and their names, book files, the date added, the
// library's format priority, a move to another library, a book deleted and its id given to another, a write from a
// second connection, a write that rolled back), what is kept equals what a catalog connection that keeps nothing builds. A trigger missing leaves the entry as it was kept, which the comparison right after the write catches.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bookSummaries } from '../../src/core/app/book-summary.ts';
import { KeptByVersion } from '../../src/core/books/book-versions.ts';
import { loadBookRows } from '../../src/core/komga/catalog.ts';
import { bookEntries } from '../../src/core/opds/entries.ts';
import { ATOM_TEXT, keptText, OPDS2_TEXT, type BookEntry } from '../../src/core/opds/feed.ts';
import { openStore, type Store } from '../../src/core/store/store.ts';
import { seedBook, seedLibrary } from '../helpers/catalog-seed.ts';

const NOW = '2026-11-29T00:00:00.000Z';
let dir: string;
let path: string;
let store: Store;
let reader: number;
let other: number;
let ids: number[];
let library: number;
let second: number;

const freshEntries = (userId = reader, now = NOW): Promise<unknown> => fresh((catalog) => bookEntries(catalog, ids, userId, now));

/** What a catalog connection that keeps nothing reads. */
async function fresh<T>(read: (catalog: Store) => Promise<T>): Promise<T> {
  const catalog = await openStore(path);
  try {
    return await read(catalog);
  } finally {
    await catalog.close();
  }
}

const freshKomgaRows = (): Promise<unknown> => fresh((catalog) => loadBookRows(catalog, ids));
const freshSummaries = (): Promise<unknown> => fresh((catalog) => bookSummaries(catalog, reader, ids));

/** The kept entries after a write equal what a connection keeping nothing builds. */
async function expectCurrent(userId = reader): Promise<void> {
  expect(await bookEntries(store, ids, userId, NOW)).toEqual(await freshEntries(userId));
}

async function categoryOn(bookId: number, name: string): Promise<number> {
  const id = (await store.db.selectFrom('category').select('id').where('name', '=', name).executeTakeFirst())?.id ?? (await store.db.insertInto('category').values({ name }).returning('id').executeTakeFirstOrThrow()).id;
  await store.db.insertInto('book_metadata_category_mapping').values({ book_id: bookId, category_id: id }).execute();
  return id;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bindery-opds-kept-'));
  path = join(dir, 'catalog.sqlite');
  store = await openStore(path);
  reader = (await store.db.insertInto('users').values({ username: 'reader', password_hash: 'x', name: 'Reader' }).returning('id').executeTakeFirstOrThrow()).id;
  other = (await store.db.insertInto('users').values({ username: 'other', password_hash: 'x', name: 'Other' }).returning('id').executeTakeFirstOrThrow()).id;
  library = await seedLibrary(store.db, dir, 'Books');
  second = await seedLibrary(store.db, dir, 'More');
  ids = [];
  for (const [i, types] of [['EPUB', 'PDF'], ['CBX'], ['EPUB'], ['AUDIOBOOK'], ['PDF', 'EPUB']].entries()) {
    const { bookId } = await seedBook(store.db, library, { title: `Book ${i}`, types, authors: [`Writer ${i}`, 'Shared Writer'] });
    await store.db.updateTable('book').set({ added_on: `2025-0${i + 1}-01T00:00:00.000Z` }).where('id', '=', bookId).execute();
    ids.push(bookId);
  }
  await store.db.updateTable('book_file').set({ page_count: 24 }).where('book_id', '=', ids[1] as number).execute();
  await categoryOn(ids[0] as number, 'Fiction');
  // Out of id order, as a page sorted by title may be.
  ids.reverse();
});

afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('OPDS entries, Komga book rows and app book summaries kept under each book version', () => {
  it('keeps what it built: the second page reads only the versions', async () => {
    const first = await bookEntries(store, ids, reader, NOW);
    expect(first).toEqual(await freshEntries());
    const again = await bookEntries(store, ids, reader, NOW);
    // The same objects for books without a page stream: nothing was built again.
    expect(again.filter((e) => e.stream === undefined).every((e) => first.includes(e))).toBe(true);
    const rows = await loadBookRows(store, ids);
    expect(rows).toEqual(await freshKomgaRows());
    expect((await loadBookRows(store, ids)).every((row, i) => row === rows[i])).toBe(true);
    expect(await bookSummaries(store, reader, ids)).toEqual(await freshSummaries());
  });

  it('builds again after each kind of write to what an entry shows', async () => {
    const [b0, b1, b2, b3, b4] = [...ids].reverse() as [number, number, number, number, number];
    await bookEntries(store, ids, reader, NOW);
    await loadBookRows(store, ids);
    await bookSummaries(store, reader, ids);
    const writes: [string, () => Promise<unknown>][] = [
      ['title', () => store.db.updateTable('book_metadata').set({ title: 'Renamed' }).where('book_id', '=', b0).execute()],
      ['series', () => store.db.updateTable('book_metadata').set({ series_name: 'Saga', series_number: 2 }).where('book_id', '=', b2).execute()],
      ['author renamed', () => store.db.updateTable('author').set({ name: 'Shared Writer, Jr.' }).where('name', '=', 'Shared Writer').execute()],
      ['author added', async () => {
        const author = (await store.db.selectFrom('author').select('id').where('name', '=', 'Writer 4').executeTakeFirstOrThrow()).id;
        await store.db.insertInto('book_metadata_author_mapping').values({ book_id: b3, author_id: author, sort_order: 5 }).execute();
      }],
      ['author removed', () => store.db.deleteFrom('book_metadata_author_mapping').where('book_id', '=', b4).where('sort_order', '=', 0).execute()],
      ['category added', () => categoryOn(b3, 'Poetry')],
      ['category renamed', () => store.db.updateTable('category').set({ name: 'Fiction, general' }).where('name', '=', 'Fiction').execute()],
      ['tag added', async () => {
        const tag = (await store.db.insertInto('tag').values({ name: 'Cozy' }).returning('id').executeTakeFirstOrThrow()).id;
        await store.db.insertInto('book_metadata_tag_mapping').values({ book_id: b1, tag_id: tag }).execute();
      }],
      ['mood added', async () => {
        const mood = (await store.db.insertInto('mood').values({ name: 'Dark' }).returning('id').executeTakeFirstOrThrow()).id;
        await store.db.insertInto('book_metadata_mood_mapping').values({ book_id: b2, mood_id: mood }).execute();
      }],
      ['mood renamed', () => store.db.updateTable('mood').set({ name: 'Gloomy' }).where('name', '=', 'Dark').execute()],
      ['metadata locked', () => store.db.updateTable('book_metadata').set({ title_locked: 1 }).where('book_id', '=', b3).execute()],
      ['made physical', () => store.db.updateTable('book').set({ is_physical: 1 }).where('id', '=', b1).execute()],
      ['match score', () => store.db.updateTable('book').set({ metadata_match_score: 88 }).where('id', '=', b2).execute()],
      ['tag renamed', () => store.db.updateTable('tag').set({ name: 'Cosy' }).where('name', '=', 'Cozy').execute()],
      ['category removed', () => store.db.deleteFrom('book_metadata_category_mapping').where('book_id', '=', b0).execute()],
      ['file renamed', () => store.db.updateTable('book_file').set({ file_name: 'other-name.epub' }).where('book_id', '=', b2).execute()],
      ['file hash', () => store.db.updateTable('book_file').set({ current_hash: 'abc123' }).where('book_id', '=', b4).execute()],
      ['comic pages counted', () => store.db.updateTable('book_file').set({ page_count: 30 }).where('book_id', '=', b1).execute()],
      ['file added', async () => {
        const pathId = (await store.db.selectFrom('library_path').select('id').where('library_id', '=', library).executeTakeFirstOrThrow()).id;
        await store.db.insertInto('book_file').values({ book_id: b2, library_path_id: pathId, file_sub_path: '', file_name: 'extra.pdf', book_type: 'PDF', file_size_kb: 1 }).execute();
      }],
      ['file removed', () => store.db.deleteFrom('book_file').where('file_name', '=', 'extra.pdf').execute()],
      ['date added', () => store.db.updateTable('book').set({ added_on: '2024-12-24T10:00:00.000Z' }).where('id', '=', b4).execute()],
      ['format priority', () => store.db.updateTable('library').set({ format_priority: 'PDF,EPUB' }).where('id', '=', library).execute()],
      ['moved to another library', () => store.db.updateTable('book').set({ library_id: second }).where('id', '=', b0).execute()],
      ['cover', () => store.db.updateTable('book_metadata').set({ cover_updated_on: '2026-01-01T00:00:00.000Z' }).where('book_id', '=', b3).execute()],
    ];
    for (const [what, write] of writes) {
      await write();
      expect(await bookEntries(store, ids, reader, NOW), what).toEqual(await freshEntries());
      expect(await loadBookRows(store, ids), `Komga: ${what}`).toEqual(await freshKomgaRows());
      expect(await bookSummaries(store, reader, ids), `app: ${what}`).toEqual(await freshSummaries());
    }
  });

  it('sees a write from another connection (another process)', async () => {
    await bookEntries(store, ids, reader, NOW);
    await loadBookRows(store, ids);
    await bookSummaries(store, reader, ids);
    const writer = await openStore(path);
    try {
      await writer.db.updateTable('book_metadata').set({ publisher: 'Elsewhere Press' }).where('book_id', '=', ids[0] as number).execute();
    } finally {
      await writer.close();
    }
    const entries = await bookEntries(store, ids, reader, NOW);
    expect(entries[0]?.publisher).toBe('Elsewhere Press');
    expect(entries).toEqual(await freshEntries());
    expect((await loadBookRows(store, ids))[0]?.publisher).toBe('Elsewhere Press');
    expect((await bookSummaries(store, reader, ids))[0]?.publisher).toBe('Elsewhere Press');
  });

  it('never shows a deleted book for the book that takes its id', async () => {
    const last = ids[0] as number;
    await bookEntries(store, ids, reader, NOW);
    const pathId = (await store.db.selectFrom('library_path').select('id').where('library_id', '=', library).executeTakeFirstOrThrow()).id;
    await store.db.deleteFrom('book').where('id', '=', last).execute();
    await store.db.insertInto('book').values({ id: last, library_id: library, library_path_id: pathId, added_on: '2025-06-01T00:00:00.000Z' }).execute();
    await store.db.insertInto('book_metadata').values({ book_id: last, title: 'A new book' }).execute();
    await store.db.insertInto('book_file').values({ book_id: last, library_path_id: pathId, file_sub_path: '', file_name: 'new.epub', book_type: 'EPUB', file_size_kb: 1 }).execute();
    const entries = await bookEntries(store, ids, reader, NOW);
    expect(entries[0]?.title).toBe('A new book');
    expect(entries).toEqual(await freshEntries());
  });

  it('keeps nothing read inside a write of its own that then rolled back', async () => {
    const bookId = ids[1] as number;
    await bookEntries(store, ids, reader, NOW);
    await expect(
      store.write(async () => {
        await store.exec.run('UPDATE book_metadata SET title = ? WHERE book_id = ?', ['Never committed', bookId]);
        await bookEntries(store, ids, reader, NOW);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    // A committed write moves the version to the number the rolled-back one had.
    await store.db.updateTable('book_metadata').set({ title: 'Committed' }).where('book_id', '=', bookId).execute();
    const entries = await bookEntries(store, ids, reader, NOW);
    expect(entries[1]?.title).toBe('Committed');
    expect(entries).toEqual(await freshEntries());
  });

  it('adds each reader their own last comic page, and the time of the page to a book without a date added', async () => {
    const comic = [...ids].reverse()[1] as number;
    const fileId = (await store.db.selectFrom('book_file').select('id').where('book_id', '=', comic).executeTakeFirstOrThrow()).id;
    await store.db.insertInto('user_book_file_progress').values({ user_id: reader, book_file_id: fileId, position_data: '7', progress_percent: 20, last_read_time: '2026-02-01T00:00:00.000Z' }).execute();
    const mine = (await bookEntries(store, ids, reader, NOW)).find((e) => e.bookId === comic);
    const theirs = (await bookEntries(store, ids, other, NOW)).find((e) => e.bookId === comic);
    expect(mine?.stream).toMatchObject({ fileId, lastRead: 7, lastReadUpdate: '2026-02-01T00:00:00.000Z' });
    expect(theirs?.stream?.lastRead).toBeUndefined();
    await expectCurrent(other);

    // Stored by another tool, unreadable.
    await store.db.updateTable('book').set({ added_on: 'someday' }).where('id', '=', comic).execute();
    const later = '2026-11-30T00:00:00.000Z';
    await bookEntries(store, ids, reader, NOW);
    expect((await bookEntries(store, ids, reader, later)).find((e) => e.bookId === comic)?.updated).toBe(later);
  });
});

describe('KeptByVersion', () => {
  it('answers only under the version a value was kept at, and drops the least recently used beyond its limit', () => {
    const kept = new KeptByVersion<string>(8);
    for (let id = 1; id <= 8; id++) kept.set(id, 1, `book ${id}`);
    expect(kept.get(3, 1)).toBe('book 3');
    expect(kept.get(3, 2)).toBeUndefined();
    // Book 1 used again: books 2, 4 and 5 are now the least recently used.
    expect(kept.get(1, 1)).toBe('book 1');
    kept.set(9, 1, 'book 9');
    expect(kept.size).toBeLessThanOrEqual(8);
    expect([2, 4, 5].map((id) => kept.get(id, 1))).toEqual([undefined, undefined, undefined]);
    expect([1, 3, 9].map((id) => kept.get(id, 1))).toEqual(['book 1', 'book 3', 'book 9']);
    // Kept again under a new version, a value replaces the old one.
    kept.set(9, 2, 'book 9, edited');
    expect(kept.get(9, 1)).toBeUndefined();
    expect(kept.get(9, 2)).toBe('book 9, edited');
  });
});

describe('keptText', () => {
  it('keeps an entry\'s text per format and catalog root, out of sight of copies, comparisons and JSON', () => {
    const entry = { type: 'book', bookId: 7, title: 'Seven', updated: NOW, authors: [], categories: [], files: [], audiobook: false } as unknown as BookEntry;
    let writes = 0;
    const write = (): string => `<entry>${String(++writes)}</entry>`;
    expect(keptText(entry, ATOM_TEXT, '/api/v1/opds', write)).toBe('<entry>1</entry>');
    expect(keptText(entry, ATOM_TEXT, '/api/v1/opds', write)).toBe('<entry>1</entry>');
    expect(keptText(entry, OPDS2_TEXT, '/api/v2/opds', write)).toBe('<entry>2</entry>');
    expect(keptText(entry, ATOM_TEXT, '/base/api/v1/opds', write)).toBe('<entry>3</entry>');
    // A comic's copy with the reader's page stream is written for itself.
    const copy = { ...entry, stream: { fileId: 1, count: 20 } };
    expect(keptText(copy, ATOM_TEXT, '/base/api/v1/opds', write)).toBe('<entry>4</entry>');
    expect({ ...entry }).toEqual(entry);
    expect(JSON.stringify(entry)).not.toContain('<entry>');
  });
});
