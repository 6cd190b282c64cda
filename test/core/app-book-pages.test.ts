// The app's book list in the date order resumes each page after the row the previous page ended on
// (src/core/app/book-query.ts): every way of paging through it must give exactly the rows ORDER BY … LIMIT/OFFSET gives.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPrincipal, type Principal } from '../../src/core/auth/principal.ts';
import { appOrder, pageOfAppBooks } from '../../src/core/app/book-query.ts';
import { openStore, type Store } from '../../src/core/store/store.ts';
import { createUser } from '../../src/core/users/users.ts';
import { seedBook, seedLibrary } from '../helpers/catalog-seed.ts';
import { makeTempDir, type TempDir } from '../helpers/temp-dir.ts';

let temp: TempDir;
let store: Store;
let admin: Principal;
let reader: Principal;
const BOOKS = 37;

beforeAll(async () => {
  temp = makeTempDir('bindery-app-pages-');
  store = await openStore(temp.file('catalog.sqlite'));
  const main = await seedLibrary(store.db, temp.dir, 'main');
  const other = await seedLibrary(store.db, temp.dir, 'other');
  for (let i = 0; i < BOOKS; i++) {
    const { bookId } = await seedBook(store.db, i % 4 === 0 ? other : main, { title: `Book ${i}` });
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
