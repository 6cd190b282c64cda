// The app's book list in the date, title and series orders resumes each page after the row the previous page ended
// on, and the other orders page through a list sorted once (src/core/app/book-query.ts): every way of paging through
// them must give exactly the rows ORDER BY … LIMIT/OFFSET gives.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPrincipal, type Principal } from '../../src/core/auth/principal.ts';
import { appOrder, pageOfAppBooks, queryConditions } from '../../src/core/app/book-query.ts';
import { openStore, type Store } from '../../src/core/store/store.ts';
import { createUser } from '../../src/core/users/users.ts';
import { seedBook, seedLibrary } from '../helpers/catalog-seed.ts';
import { makeTempDir, type TempDir } from '../helpers/temp-dir.ts';

let temp: TempDir;
let store: Store;
let admin: Principal;
let reader: Principal;
let libraries: number[];
const BOOKS = 37;

beforeAll(async () => {
  temp = makeTempDir('bindery-app-pages-');
  store = await openStore(temp.file('catalog.sqlite'));
  const main = await seedLibrary(store.db, temp.dir, 'main');
  const other = await seedLibrary(store.db, temp.dir, 'other');
  libraries = [main, other];
  for (let i = 0; i < BOOKS; i++) {
    // Titles that differ only in case, and repeated ones; a series for some books (names differing in case), none
    // for the others: runs of equal values in the title and series orders, and NULLs.
    const { bookId } = await seedBook(store.db, i % 4 === 0 ? other : main, { title: i % 3 === 0 ? `book ${i % 7}` : `Book ${i % 11}` });
    const series = i % 5 === 0 ? null : ['Alpha', 'alpha', 'Beta', 'gamma'][i % 4];
    await store.db.updateTable('book_metadata').set({ series_name: series, page_count: i % 6 === 0 ? null : (i * 37) % 13 }).where('book_id', '=', bookId).execute();
    // Runs of books added at the same instant: ties the id must order.
    await store.db.updateTable('book').set({ added_on: `2024-01-${String(10 + Math.floor(i / 5)).padStart(2, '0')}T08:00:00Z` }).where('id', '=', bookId).execute();
  }
  admin = (await loadPrincipal(store.db, await createUser(store.db, { username: 'admin', password: 'admin-password', name: 'Admin', permissions: { admin: true } })))!;
  reader = (await loadPrincipal(store.db, await createUser(store.db, { username: 'reader', password: 'reader-password', name: 'Reader', permissions: {}, libraryIds: [main] })))!;
});

afterAll(async () => {
  await store.close();
  temp.remove();
});

async function expected(principal: Principal, descending: boolean): Promise<number[]> {
  const dir = descending ? 'DESC' : 'ASC';
  const libraries = principal.permissions.admin ? '' : `AND library_id IN (${principal.libraryIds.join(',')})`;
  const rows = (await store.exec.all(`SELECT id FROM book WHERE deleted = 0 ${libraries} ORDER BY added_on ${dir}, id ${dir}`, [])) as { id: number }[];
  return rows.map((r) => r.id);
}

describe('app book pages in the date order', () => {
  it('keeps the pages of one caller\'s lists apart when they differ only in a value (two libraries, taking turns)', async () => {
    const order = appOrder('addedOn', 'desc');
    const walks = new Map<number, number[]>(libraries.map((id) => [id, []]));
    // The same statements with other values: each page of one library resumes where that library's last page ended.
    for (let offset = 0; offset < BOOKS; offset += 3) {
      for (const libraryId of libraries) {
        const conditions = await queryConditions(store, admin, { libraryId });
        walks.get(libraryId)!.push(...(await pageOfAppBooks(store, admin, conditions, order, { offset, limit: 3 })).ids);
      }
    }
    for (const libraryId of libraries) {
      const rows = (await store.exec.all('SELECT id FROM book WHERE deleted = 0 AND library_id = ? ORDER BY added_on DESC, id DESC', [libraryId])) as { id: number }[];
      expect(rows.length).toBeGreaterThan(3);
      expect(walks.get(libraryId), `library ${libraryId}`).toEqual(rows.map((r) => r.id));
    }
  });

  for (const descending of [true, false]) {
    it(`pages on, jumps and goes back to the same rows as OFFSET (${descending ? 'newest' : 'oldest'} first)`, async () => {
      for (const principal of [admin, reader]) {
        const all = await expected(principal, descending);
        const order = appOrder('addedOn', descending ? 'desc' : 'asc');
        const page = (offset: number, limit: number) => pageOfAppBooks(store, principal, [], order, { offset, limit });
        const walked: number[] = [];
        for (let offset = 0; offset < all.length; offset += 6) walked.push(...(await page(offset, 6)).ids);
        expect(walked).toEqual(all);
        // After the walk, from points kept at other offsets, and with other sizes.
        for (const [offset, limit] of [[13, 5], [7, 6], [30, 50], [0, 3], [24, 6], [18, 1]] as const) {
          expect((await page(offset, limit)).ids, `offset ${offset}, limit ${limit}`).toEqual(all.slice(offset, offset + limit));
        }
        expect((await page(0, 6)).total).toBe(all.length);
      }
    });
  }

  it('starts over when the catalog changes between pages', async () => {
    const order = appOrder(undefined, undefined);
    const first = await pageOfAppBooks(store, admin, [], order, { offset: 0, limit: 10 });
    await store.db.updateTable('book').set({ added_on: '2030-01-01T00:00:00Z' }).where('id', '=', first.ids[9]!).execute();
    const all = await expected(admin, true);
    expect((await pageOfAppBooks(store, admin, [], order, { offset: 10, limit: 10 })).ids).toEqual(all.slice(10, 20));
  });
});

/** The rows of the order by `expression` (then id), as ORDER BY without paging gives them. */
async function expectedBy(principal: Principal, expression: string, descending: boolean): Promise<number[]> {
  const dir = descending ? 'DESC NULLS LAST' : 'ASC NULLS FIRST';
  const libraries = principal.permissions.admin ? '' : `AND book.library_id IN (${principal.libraryIds.join(',')})`;
  const rows = (await store.exec.all(`SELECT book.id FROM book JOIN book_metadata m ON m.book_id = book.id WHERE book.deleted = 0 ${libraries} ORDER BY ${expression} ${dir}, book.id ${dir}`, [])) as { id: number }[];
  return rows.map((r) => r.id);
}

describe('app book pages in the title, series and other orders', () => {
  const orders = [
    ['title', () => store.dialect.nocase('m.title')],
    ['seriesName', () => store.dialect.nocase('m.series_name')],
    ['series', () => store.dialect.nocase('m.series_name')],
    ['pageCount', () => 'm.page_count'],
  ] as const;
  for (const [sort, expression] of orders) {
    for (const descending of [false, true]) {
      it(`pages on, jumps and goes back to the same rows as OFFSET (${sort} ${descending ? 'desc' : 'asc'})`, async () => {
        for (const principal of [admin, reader]) {
          const all = await expectedBy(principal, expression(), descending);
          const order = appOrder(sort, descending ? 'desc' : 'asc');
          const page = (offset: number, limit: number) => pageOfAppBooks(store, principal, [], order, { offset, limit });
          const walked: number[] = [];
          for (let offset = 0; offset < all.length; offset += 4) walked.push(...(await page(offset, 4)).ids);
          expect(walked).toEqual(all);
          for (const [offset, limit] of [[13, 5], [7, 6], [30, 50], [0, 3], [24, 6], [18, 1], [5, 20], [36, 4]] as const) {
            expect((await page(offset, limit)).ids, `offset ${offset}, limit ${limit}`).toEqual(all.slice(offset, offset + limit));
          }
        }
      });
    }
  }

  it('a jump past the kept points reads the same rows as a walk (series, ascending, NULLs first)', async () => {
    const all = await expectedBy(admin, store.dialect.nocase('m.series_name'), false);
    const order = appOrder('seriesName', 'asc');
    expect((await pageOfAppBooks(store, admin, [], order, { offset: 2, limit: 2 })).ids).toEqual(all.slice(2, 4));
    // From the point at 4 (inside the NULL run): the rest of the run, then the named series.
    expect((await pageOfAppBooks(store, admin, [], order, { offset: 6, limit: 9 })).ids).toEqual(all.slice(6, 15));
    expect((await pageOfAppBooks(store, admin, [], order, { offset: 20, limit: 3 })).ids).toEqual(all.slice(20, 23));
  });

  it('sorts again after the catalog changed (an order without an index)', async () => {
    const order = appOrder('pageCount', 'desc');
    const first = await pageOfAppBooks(store, admin, [], order, { offset: 0, limit: 5 });
    await store.db.updateTable('book_metadata').set({ page_count: 999 }).where('book_id', '=', first.ids[4]!).execute();
    const all = await expectedBy(admin, 'm.page_count', true);
    expect((await pageOfAppBooks(store, admin, [], order, { offset: 0, limit: 5 })).ids).toEqual(all.slice(0, 5));
    expect((await pageOfAppBooks(store, admin, [], order, { offset: 5, limit: 5 })).ids).toEqual(all.slice(5, 10));
  });

  it('keeps a list sorted by reading state per reader (two admins see the same books, each in their own order)', async () => {
    const other = (await loadPrincipal(store.db, await createUser(store.db, { username: 'admin2', password: 'admin2-password', name: 'Admin 2', permissions: { admin: true } })))!;
    const ids = await expected(admin, false);
    // The first admin read the books in id order, the second in the reverse order.
    for (const [i, id] of ids.entries()) {
      await store.db.insertInto('user_book_progress').values({ user_id: admin.userId, book_id: id, last_read_time: `2025-01-01T00:00:${String(i).padStart(2, '0')}Z` }).execute();
      await store.db.insertInto('user_book_progress').values({ user_id: other.userId, book_id: id, last_read_time: `2025-01-01T00:00:${String(ids.length - i).padStart(2, '0')}Z` }).execute();
    }
    const order = appOrder('lastReadTime', 'desc');
    expect((await pageOfAppBooks(store, admin, [], order, { offset: 0, limit: 5 })).ids).toEqual([...ids].reverse().slice(0, 5));
    expect((await pageOfAppBooks(store, other, [], order, { offset: 0, limit: 5 })).ids).toEqual(ids.slice(0, 5));
    expect((await pageOfAppBooks(store, admin, [], order, { offset: 5, limit: 5 })).ids).toEqual([...ids].reverse().slice(5, 10));
  });
});
