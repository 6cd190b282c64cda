// Pages deep in the app's book list (2,000 rows and more before them) are slices of the whole list sorted once and
// read aside (src/core/app/book-query.ts), in the orders that otherwise resume from kept points too: the rows must be
// exactly those ORDER BY … LIMIT/OFFSET gives, before and after a change.
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
const BOOKS = 2_130;

beforeAll(async () => {
  temp = makeTempDir('bindery-app-deep-pages-');
  store = await openStore(temp.file('catalog.sqlite'));
  const main = await seedLibrary(store.db, temp.dir, 'main');
  await store.write(async ({ db }) => {
    for (let i = 0; i < BOOKS; i++) {
      const { bookId } = await seedBook(db, main, { title: `Book ${i % 97}` });
      // Runs of books added at the same instant: ties the id must order.
      await db.updateTable('book').set({ added_on: `2024-01-01T08:${String(Math.floor(i / 60) % 60).padStart(2, '0')}:00Z` }).where('id', '=', bookId).execute();
    }
  });
  admin = (await loadPrincipal(store.db, await createUser(store.db, { username: 'admin', password: 'admin-password', name: 'Admin', permissions: { admin: true } })))!;
}, 120_000);

afterAll(async () => {
  await store.close();
  temp.remove();
});

const expected = async (descending: boolean): Promise<number[]> => {
  const dir = descending ? 'DESC' : 'ASC';
  return ((await store.exec.all(`SELECT id FROM book WHERE deleted = 0 ORDER BY added_on ${dir}, id ${dir}`)) as { id: number }[]).map((r) => r.id);
};

describe('app book pages deep in the list', () => {
  for (const descending of [true, false]) {
    it(`give the rows OFFSET gives, around the depth where they become slices (${descending ? 'newest' : 'oldest'} first)`, async () => {
      const order = appOrder('addedOn', descending ? 'desc' : 'asc');
      const page = (offset: number, limit: number) => pageOfAppBooks(store, admin, [], order, { offset, limit });
      let all = await expected(descending);
      for (const [offset, limit] of [[2_100, 50], [1_990, 20], [1_950, 50], [2_000, 50], [2_120, 50], [0, 5]] as const) {
        expect((await page(offset, limit)).ids, `offset ${offset}, limit ${limit}`).toEqual(all.slice(offset, offset + limit));
      }
      await store.db.updateTable('book').set({ added_on: descending ? '2020-01-01T00:00:00Z' : '2030-01-01T00:00:00Z' }).where('id', '=', all[0]!).execute();
      all = await expected(descending);
      expect((await page(2_080, 50)).ids).toEqual(all.slice(2_080, 2_130));
      expect((await page(2_080, 50)).total).toBe(BOOKS);
    });
  }
});
