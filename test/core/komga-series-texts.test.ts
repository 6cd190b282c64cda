// A Komga series page is written from the SeriesDto text kept with each series' figures (migration 051), the reader's
// counts and the link root put in front. Here every page's JSON (admin, restricted reader, a second user; unknown
// books grouped or not) equals JSON.stringify of the SeriesDtos built from the books, after each write to what the kept
// text shows: the first book's description, publisher, language and age rating; its genres added, renamed, removed;
// tags; titles; books added and removed; and one user's reading progress, which must not show in another's page. A
// reader's counts of a kept series are kept too, until their progress or the series' books change in any process; and
// their counts of the Unknown Series, until their progress or which books are in it change (migration 053).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { allPermissions, PERMISSION_NAMES, type Permissions } from '../../src/core/auth/permissions.ts';
import type { Principal } from '../../src/core/auth/principal.ts';
import { deleteBooks } from '../../src/core/books/book-delete.ts';
import { renameName } from '../../src/core/books/names.ts';
import { loadBookRows } from '../../src/core/komga/catalog.ts';
import { pageRequest, seriesDto, type Json } from '../../src/core/komga/dto.ts';
import { figuresStored, keptDtoTail, summarizePage } from '../../src/core/komga/series-figures.ts';
import { refOf, seriesIndex, summarizeMany, type SeriesRef } from '../../src/core/komga/series.ts';
import { seriesDtoTexts, seriesPage, type KomgaReader } from '../../src/core/komga/views.ts';
import { readingAware } from '../../src/core/store/reading-state.ts';
import { sameGeneration } from '../../src/core/store/snapshot.ts';
import { openStore, type Store } from '../../src/core/store/store.ts';
import { seedBook, seedLibrary, seedSeriesBook } from '../helpers/catalog-seed.ts';

let dir: string;
let store: Store;
let adminId: number;
let otherId: number;
let comics: number;
const book: Record<string, number> = {};
const links = { apiRoot: '/base/komga' };

const admin = (): Principal => ({ userId: adminId, username: 'admin', isDefaultPassword: false, sessionVersion: 0, permissions: allPermissions(), libraryIds: [], restrictions: [] });
const other = (): Principal => ({ ...admin(), userId: otherId, username: 'other' });
const member = (): Principal => ({
  ...admin(),
  username: 'member',
  permissions: Object.fromEntries(PERMISSION_NAMES.map((p) => [p, false])) as Permissions,
  libraryIds: [comics],
  restrictions: [{ type: 'CATEGORY', mode: 'EXCLUDE', value: 'hidden' }],
});
const readers = (): [string, Principal][] => [
  ['admin', admin()],
  ['other user', other()],
  ['restricted member', member()],
];

const idOf = async (table: 'category' | 'tag', name: string): Promise<number> => (await store.db.selectFrom(table).select('id').where('name', '=', name).executeTakeFirstOrThrow()).id;

async function genre(bookId: number, name: string): Promise<void> {
  const id = (await store.db.selectFrom('category').select('id').where('name', '=', name).executeTakeFirst())?.id ?? (await store.db.insertInto('category').values({ name }).returning('id').executeTakeFirstOrThrow()).id;
  await store.db.insertInto('book_metadata_category_mapping').values({ book_id: bookId, category_id: id }).execute();
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bindery-komga-series-texts-'));
  store = await openStore(join(dir, 'catalog.sqlite'));
  adminId = (await store.db.insertInto('users').values({ username: 'admin', password_hash: 'x', name: 'Admin' }).returning('id').executeTakeFirstOrThrow()).id;
  otherId = (await store.db.insertInto('users').values({ username: 'other', password_hash: 'x', name: 'Other' }).returning('id').executeTakeFirstOrThrow()).id;
  comics = await seedLibrary(store.db, dir, 'Comics');
  book.sagaOne = await seedSeriesBook(store.db, comics, 'sagaOne', 'Saga one', { series_name: 'Saga', series_number: 1, description: 'A war.', publisher: 'Image', language: 'en', age_rating: 16 }, ['space']);
  book.sagaTwo = await seedSeriesBook(store.db, comics, 'sagaTwo', 'Saga two', { series_name: 'Saga', series_number: 2, published_date: '2013-03-14' }, ['space', 'war']);
  book.sagaThree = await seedSeriesBook(store.db, comics, 'sagaThree', 'Saga three', { series_name: 'saga', series_number: 3 });
  book.monOne = await seedSeriesBook(store.db, comics, 'monOne', 'Monstress one', { series_name: 'Monstress "Awakening"', series_number: 1, description: 'Ünïcode — and "quotes"\n' });
  book.monHidden = await seedSeriesBook(store.db, comics, 'monHidden', 'Monstress hidden', { series_name: 'Monstress "Awakening"', series_number: 2 });
  book.single = await seedSeriesBook(store.db, comics, 'single', 'Just one', { series_name: 'Oneshot' });
  book.loose = await seedSeriesBook(store.db, comics, 'loose', 'Loose book', {});
  await genre(book.sagaOne, 'Science fiction');
  await genre(book.monHidden, 'hidden');
  await store.db
    .insertInto('user_book_progress')
    .values([
      { user_id: adminId, book_id: book.sagaOne, read_status: 'READ' },
      { user_id: adminId, book_id: book.sagaTwo, read_status: 'READING' },
      { user_id: otherId, book_id: book.monOne, read_status: 'READ' },
    ])
    .execute();
});

afterAll(async () => {
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

const refsOf = async (principal: Principal, grouped: boolean): Promise<SeriesRef[]> => (await seriesIndex(store, principal, grouped)).heads.map((h) => refOf(store.dialect, h));

/** JSON.stringify of each SeriesDto built from the books, as the page did before the texts were kept. */
async function builtFromBooks(principal: Principal, refs: readonly SeriesRef[]): Promise<string[]> {
  const summaries = await summarizeMany(store, principal, refs, principal.userId);
  const firsts = new Map((await loadBookRows(store, summaries.flatMap((s) => (s.firstBookId === undefined ? [] : [s.firstBookId])), { files: false, authors: false })).map((r) => [r.id, r]));
  return summaries.map((s) => JSON.stringify(seriesDto(s, s.firstBookId === undefined ? undefined : firsts.get(s.firstBookId), links)));
}

/** How many series of the admin's page are answered from kept texts. */
async function keptTexts(): Promise<number> {
  return (await summarizePage(store, admin(), await refsOf(admin(), true), adminId)).filter((s) => keptDtoTail(s) !== undefined).length;
}

/** Every reader's every series, from the kept texts (as they are now, then once stored again), equals the built JSON. */
async function textsMatch(when: string): Promise<void> {
  for (let pass = 0; pass < 2; pass++) {
    for (const [label, principal] of readers()) {
      for (const grouped of [true, false]) {
        const refs = await refsOf(principal, grouped);
        const reader: KomgaReader = { store, principal, groupUnknown: grouped, links };
        expect(await seriesDtoTexts(reader, refs), `${when}: ${label}, grouped ${grouped}, pass ${pass}`).toEqual(await builtFromBooks(principal, refs));
      }
    }
    await figuresStored(store);
  }
}

describe('Komga series pages from kept SeriesDto texts', () => {
  it('write each series as JSON.stringify of its SeriesDto, for every reader', async () => {
    await textsMatch('first pages');
    // Saga, Monstress and Oneshot: named series of plain names, kept with their texts.
    expect(await keptTexts()).toBe(3);
  });

  it('write the page envelope as the objects did', async () => {
    await figuresStored(store);
    const reader: KomgaReader = { store, principal: admin(), groupUnknown: true, links };
    for (const query of [{}, { size: '2', page: '1' }, { unpaged: 'true' }, { sort: 'booksCount,desc' }, { page: '7' }]) {
      const text = (await seriesPage(reader, query)).text;
      const page = JSON.parse(text) as { content: Json[]; numberOfElements: number; empty: boolean; totalElements: number };
      expect(page.numberOfElements).toBe(page.content.length);
      expect(page.empty).toBe(page.content.length === 0);
      // Key order and every byte as the envelope object serializes (content first).
      expect(text).toBe(JSON.stringify(page));
      expect(text.startsWith('{"content":[')).toBe(true);
    }
    expect(pageRequest({ size: '2' }).size).toBe(2);
  });

  it('stay right through writes to what the kept text shows', async () => {
    const writes: [string, () => Promise<unknown>][] = [
      ["the first book's description edited", () => store.db.updateTable('book_metadata').set({ description: 'A war, and a child.' }).where('book_id', '=', book.sagaOne as number).execute()],
      ["the first book's publisher edited", () => store.db.updateTable('book_metadata').set({ publisher: 'Image Comics' }).where('book_id', '=', book.sagaOne as number).execute()],
      ["the first book's language edited", () => store.db.updateTable('book_metadata').set({ language: 'fr' }).where('book_id', '=', book.sagaOne as number).execute()],
      ["the first book's age rating edited", () => store.db.updateTable('book_metadata').set({ age_rating: 18 }).where('book_id', '=', book.sagaOne as number).execute()],
      ['a genre added to the first book', () => genre(book.sagaOne as number, 'Drama')],
      ['a genre renamed', async () => renameName(store.exec, 'category', await idOf('category', 'Science fiction'), 'Space opera')],
      [
        'a genre merged into another',
        async () => {
          const epic = (await store.db.insertInto('category').values({ name: 'Epic' }).returning('id').executeTakeFirstOrThrow()).id;
          await store.db
            .updateTable('book_metadata_category_mapping')
            .set({ category_id: epic })
            .where('category_id', '=', await idOf('category', 'Drama'))
            .execute();
        },
      ],
      [
        'a genre taken off the first book',
        async () =>
          store.db
            .deleteFrom('book_metadata_category_mapping')
            .where('book_id', '=', book.sagaOne as number)
            .where('category_id', '=', await idOf('category', 'Epic'))
            .execute(),
      ],
      ['a tag of the first book renamed', async () => renameName(store.exec, 'tag', await idOf('tag', 'space'), 'outer space')],
      ['a title edited', () => store.db.updateTable('book_metadata').set({ title: 'Saga, the first' }).where('book_id', '=', book.sagaOne as number).execute()],
      ['the series name respelled', () => store.db.updateTable('book_metadata').set({ series_name: 'SAGA' }).where('book_id', '=', book.sagaThree as number).execute()],
      ['a book added that comes first', async () => (book.sagaZero = await seedSeriesBook(store.db, comics, 'sagaZero', 'Saga zero', { series_name: 'Saga', series_number: 0, description: 'Before.' }))],
      ['a book added to the one-book series', async () => (book.singleTwo = await seedSeriesBook(store.db, comics, 'singleTwo', 'Just two', { series_name: 'Oneshot', series_number: 2 }))],
      ['the new first book deleted', () => deleteBooks(store.db, join(dir, 'covers'), [book.sagaZero as number])],
      ['a book marked deleted', () => store.db.updateTable('book').set({ deleted: 1 }).where('id', '=', book.singleTwo as number).execute()],
      ['the hidden book shown', () => store.db.deleteFrom('book_metadata_category_mapping').where('book_id', '=', book.monHidden as number).execute()],
      ["the other user's progress", () => store.db.insertInto('user_book_progress').values({ user_id: otherId, book_id: book.sagaThree as number, read_status: 'READING' }).execute()],
      ["the admin's progress changed", () => store.db.updateTable('user_book_progress').set({ read_status: 'READ' }).where('user_id', '=', adminId).where('book_id', '=', book.sagaTwo as number).execute()],
    ];
    for (const [what, write] of writes) {
      await write();
      await textsMatch(what);
    }
    expect(await keptTexts()).toBe(3);
  });

  it("show each reader their own reading, never another's", async () => {
    await figuresStored(store);
    const counts = async (principal: Principal): Promise<Record<string, [number, number, number]>> => {
      const texts = await seriesDtoTexts({ store, principal, groupUnknown: true, links }, await refsOf(principal, true));
      return Object.fromEntries(
        texts.map((t) => {
          const dto = JSON.parse(t) as { name: string; booksReadCount: number; booksInProgressCount: number; booksUnreadCount: number };
          return [dto.name.toLowerCase(), [dto.booksReadCount, dto.booksInProgressCount, dto.booksUnreadCount]];
        }),
      );
    };
    const mine = await counts(admin());
    const theirs = await counts(other());
    // The admin read Saga one and two; the other user read Monstress one and is reading Saga three.
    expect(mine.saga).toEqual([2, 0, 1]);
    expect(theirs.saga).toEqual([0, 1, 2]);
    expect(mine['monstress "awakening"']).toEqual([0, 0, 2]);
    expect(theirs['monstress "awakening"']).toEqual([1, 0, 1]);
    expect(await keptTexts()).toBe(3);
  });

  it("keep a reader's counts of the kept series until their progress or the series' books change, whichever process writes", async () => {
    await figuresStored(store);
    /** The statements counting the admin's progress in kept series that one page of theirs runs. */
    const countingStatements = async (): Promise<number> => {
      const all = vi.spyOn(store.exec, 'all');
      try {
        await seriesDtoTexts({ store, principal: admin(), groupUnknown: true, links }, await refsOf(admin(), true));
        return all.mock.calls.filter(([statement]) => statement.includes('CROSS JOIN book b')).length;
      } finally {
        all.mockRestore();
      }
    };
    await countingStatements();
    expect(await countingStatements()).toBe(0);

    const elsewhere = await openStore(join(dir, 'catalog.sqlite'));
    try {
      const writes: [string, () => Promise<unknown>][] = [
        ["the admin's progress reported by another process", async () => elsewhere.readingState.exec.run('INSERT INTO user_book_progress (user_id, book_id, read_status) VALUES (?, ?, ?)', [adminId, book.monOne as number, 'READ'])],
        ["the admin's progress moved by another process's catalog statement", () => elsewhere.db.updateTable('user_book_progress').set({ read_status: 'UNREAD' }).where('user_id', '=', adminId).where('book_id', '=', book.sagaOne as number).execute()],
        ['a read book taken out of its series by another process', () => elsewhere.db.updateTable('book_metadata').set({ series_name: 'Oneshot' }).where('book_id', '=', book.sagaTwo as number).execute()],
        ['a read book marked deleted by another process', () => elsewhere.db.updateTable('book').set({ deleted: 1 }).where('id', '=', book.monOne as number).execute()],
      ];
      for (const [what, write] of writes) {
        const before = readingAware(store).generation();
        await write();
        await vi.waitFor(() => expect(sameGeneration(readingAware(store).generation(), before)).toBe(false));
        await textsMatch(what);
        // Kept again once worked out.
        expect(await countingStatements(), what).toBe(0);
      }
      // The other user's progress moves nothing of the admin's counts that a page shows.
      await elsewhere.readingState.exec.run('INSERT INTO user_book_progress (user_id, book_id, read_status) VALUES (?, ?, ?)', [otherId, book.sagaOne as number, 'READ']);
      await textsMatch("the other user's progress, from another process");
    } finally {
      await elsewhere.close();
    }
  });

  it("keep a reader's counts of the Unknown Series until their progress or which books are in it change, whichever process writes", async () => {
    await store.db.insertInto('user_book_progress').values({ user_id: adminId, book_id: book.loose as number, read_status: 'READ' }).execute();
    await store.db.updateTable('user_book_progress').set({ read_status: 'READ' }).where('user_id', '=', adminId).where('book_id', '=', book.sagaOne as number).execute();
    await figuresStored(store);
    const unknownCounts = async (): Promise<{ read: number; counted: number }> => {
      const aside = vi.spyOn(store, 'readAside');
      try {
        const texts = await seriesDtoTexts({ store, principal: admin(), groupUnknown: true, links }, await refsOf(admin(), true));
        const dto = texts.map((t) => JSON.parse(t) as { name: string; booksReadCount: number }).find((d) => d.name === 'Unknown Series');
        // No Unknown Series once no book is in it.
        return { read: dto?.booksReadCount ?? 0, counted: aside.mock.calls.filter(([statement]) => statement.includes('user_book_progress')).length };
      } finally {
        aside.mockRestore();
      }
    };
    expect((await unknownCounts()).read).toBe(1);
    expect(await unknownCounts()).toEqual({ read: 1, counted: 0 });

    const elsewhere = await openStore(join(dir, 'catalog.sqlite'));
    const seen = async (what: string, write: () => Promise<unknown>): Promise<{ read: number; counted: number }> => {
      const before = store.generation();
      await write();
      await vi.waitFor(() => expect(sameGeneration(store.generation(), before)).toBe(false));
      const counts = await unknownCounts();
      await textsMatch(what);
      return counts;
    };
    const unknownMember = async (): Promise<number> => {
      const { bookId } = await seedBook(elsewhere.db, comics, { title: 'Another loose one', types: ['CBX'] });
      await elsewhere.db.insertInto('user_book_progress').values({ user_id: adminId, book_id: bookId, read_status: 'READ' }).execute();
      return bookId;
    };
    try {
      // Kept through writes that leave the Unknown Series' books as they are.
      expect(await seen('a named series book renamed', () => elsewhere.db.updateTable('book_metadata').set({ title: 'Saga one, renamed' }).where('book_id', '=', book.sagaOne as number).execute())).toEqual({ read: 1, counted: 0 });
      expect(await seen('the loose book renamed', () => elsewhere.db.updateTable('book_metadata').set({ title: 'Loose, renamed' }).where('book_id', '=', book.loose as number).execute())).toEqual({ read: 1, counted: 0 });
      expect(await seen('a named book moved to another named series', () => elsewhere.db.updateTable('book_metadata').set({ series_name: 'Oneshot' }).where('book_id', '=', book.sagaThree as number).execute())).toEqual({
        read: 1,
        counted: 0,
      });
      // Counted again after each write that moves a book into or out of it.
      const another = await seedLibrary(elsewhere.db, dir, 'Elsewhere');
      let added = 0;
      let named = 0;
      const changes: [string, () => Promise<unknown>, number][] = [
        ['the loose book given a series', () => elsewhere.db.updateTable('book_metadata').set({ series_name: 'Saga' }).where('book_id', '=', book.loose as number).execute(), 0],
        ['its series cleared', () => elsewhere.db.updateTable('book_metadata').set({ series_name: '  ' }).where('book_id', '=', book.loose as number).execute(), 1],
        ['a read book of a named series put in "unknown series"', () => elsewhere.db.updateTable('book_metadata').set({ series_name: 'unknown series' }).where('book_id', '=', book.sagaOne as number).execute(), 2],
        ['the loose book marked deleted', () => elsewhere.db.updateTable('book').set({ deleted: 1 }).where('id', '=', book.loose as number).execute(), 1],
        ['the loose book restored', () => elsewhere.db.updateTable('book').set({ deleted: 0 }).where('id', '=', book.loose as number).execute(), 2],
        ['a book of "unknown series" left without a series (still in it)', () => elsewhere.db.updateTable('book_metadata').set({ series_name: null }).where('book_id', '=', book.sagaOne as number).execute(), 2],
        ['a book without a series added and read', async () => (added = await unknownMember()), 3],
        ['the loose book made physical', () => elsewhere.db.updateTable('book').set({ is_physical: 1 }).where('id', '=', book.loose as number).execute(), 2],
        ['the added book moved to another library', () => elsewhere.db.updateTable('book').set({ library_id: another }).where('id', '=', added).execute(), 1],
        ['the added book moved back', () => elsewhere.db.updateTable('book').set({ library_id: comics }).where('id', '=', added).execute(), 2],
        ['a read book given a series', () => elsewhere.db.updateTable('book_metadata').set({ series_name: 'Saga' }).where('book_id', '=', book.sagaOne as number).execute(), 1],
        [
          'a read book of a named series added',
          async () => {
            named = await unknownMember();
            await elsewhere.db.updateTable('book_metadata').set({ series_name: 'Saga' }).where('book_id', '=', named).execute();
          },
          1,
        ],
        ['its metadata removed', () => elsewhere.db.deleteFrom('book_metadata').where('book_id', '=', named).execute(), 2],
        ['its metadata added again, with a series', () => elsewhere.db.insertInto('book_metadata').values({ book_id: named, title: 'Back', series_name: 'Saga' }).execute(), 1],
        ['a read book without a series deleted', () => deleteBooks(elsewhere.db, join(dir, 'covers'), [added]), 0],
      ];
      for (const [what, write, read] of changes) {
        const counts = await seen(what, write);
        expect(counts.read, what).toBe(read);
        expect(await unknownCounts(), `${what}, then kept`).toEqual({ read, counted: 0 });
      }
      // A catalog that cannot store the claim (a full or read-only disk): the page is still answered, counted as before.
      const refused = vi.spyOn(store.bookkeeping, 'tryRun').mockRejectedValue(new Error('disk full'));
      try {
        expect((await seen('a read book without a series added, on a full disk', unknownMember)).read).toBe(1);
      } finally {
        refused.mockRestore();
      }
    } finally {
      await elsewhere.close();
    }
  });
});
