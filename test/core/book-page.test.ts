// Paged book ids against a reference order computed in JS, for each way book-page.ts may build its query: walking the
// order's index or sorting (a user who sees most or little of the catalog), from book_metadata or, when a book has no
// metadata row, from book LEFT JOIN book_metadata; paging on, jumping and going back (pages resume after an earlier
// page's last row).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPrincipal, type Principal } from '../../src/core/auth/principal.ts';
import { pageOfVisibleBooks } from '../../src/core/books/book-page.ts';
import { openStore, type Store } from '../../src/core/store/store.ts';
import { createUser } from '../../src/core/users/users.ts';
import { seedLibrary } from '../helpers/catalog-seed.ts';
import { onPostgres } from '../helpers/engine.ts';

interface Row {
  id: number;
  library: number;
  title: string | null;
  addedOn: string;
  deleted: boolean;
}

let dir: string;
let store: Store;
const rows: Row[] = [];
const principals: Record<string, Principal> = {};

const TITLES = ['alpha', 'Alpha', 'beta', null, 'ALPHA', 'gamma', 'Beta', 'delta', null, 'epsilon'];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bindery-page-'));
  store = await openStore(join(dir, 'catalog.sqlite'));
  const libraries = [await seedLibrary(store.db, dir, 'big'), await seedLibrary(store.db, dir, 'small'), await seedLibrary(store.db, dir, 'other')];
  // 40 books in the big library, 4 in the small one, 16 in the other; titles repeat with different case.
  for (let i = 0; i < 60; i++) {
    const library = (i < 40 ? libraries[0] : i < 44 ? libraries[1] : libraries[2]) as number;
    const row = { library, title: TITLES[i % TITLES.length] ?? null, addedOn: `2024-01-${String(10 + (i % 7)).padStart(2, '0')}T00:00:00Z`, deleted: i % 13 === 5 };
    const { id } = await store.db.insertInto('book').values({ library_id: library, added_on: row.addedOn, deleted: row.deleted ? 1 : 0 }).returning('id').executeTakeFirstOrThrow();
    await store.db.insertInto('book_metadata').values({ book_id: id, title: row.title }).execute();
    rows.push({ id, ...row });
  }
  const big = libraries[0] as number;
  const small = libraries[1] as number;
  const users = {
    admin: await createUser(store.db, { username: 'admin', password: 'admin-password', name: 'A', permissions: { admin: true } }),
    // Sees most of the catalog: walks the order's index.
    most: await createUser(store.db, { username: 'most', password: 'most-password', name: 'M', permissions: {}, libraryIds: [big, small] }),
    // Sees a small part: SQLite uses the library index and sorts.
    few: await createUser(store.db, { username: 'few', password: 'few-password', name: 'F', permissions: {}, libraryIds: [small] }),
  };
  for (const [name, id] of Object.entries(users)) principals[name] = (await loadPrincipal(store.db, id)) as Principal;
});

afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** SQLite's NOCASE folds ASCII letters only; NULL sorts first ascending. */
function compareTitle(a: string | null, b: string | null): number {
  if (a === b) return 0;
  if (a === null) return -1;
  if (b === null) return 1;
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  return x < y ? -1 : x > y ? 1 : 0;
}

function expected(principal: Principal, sort: string | undefined): number[] {
  const visible = rows.filter((r) => !r.deleted && (principal.permissions.admin || principal.libraryIds.includes(r.library)));
  const descending = sort?.endsWith(',desc') ?? false;
  const sign = descending ? -1 : 1;
  const key = (a: Row, b: Row): number => {
    if (sort?.startsWith('metadata.title')) return compareTitle(a.title, b.title);
    if (sort?.startsWith('addedOn')) return a.addedOn < b.addedOn ? -1 : a.addedOn > b.addedOn ? 1 : 0;
    return 0;
  };
  return visible.sort((a, b) => sign * (key(a, b) || a.id - b.id)).map((r) => r.id);
}

async function allPages(principal: Principal, sort: string | undefined, size: number): Promise<{ ids: number[]; total: number }> {
  const ids: number[] = [];
  let total = 0;
  for (let page = 0; page < 30; page++) {
    const result = await pageOfVisibleBooks(store, principal, { page, size, sort: sort ? [sort] : [] });
    total = result.totalElements;
    ids.push(...result.ids);
  }
  return { ids, total };
}

const SORTS = [undefined, 'id,desc', 'metadata.title,asc', 'metadata.title,desc', 'addedOn,asc', 'addedOn,desc'];

describe('pageOfVisibleBooks', () => {
  // First in the file, so that nothing has read the catalog's columns yet: inside a snapshot every read must go through
  // it (on SQLite the snapshot holds the connection, and a read beside it would wait for ever).
  it('pages inside the caller\'s snapshot', async () => {
    const admin = principals.admin as Principal;
    const inside = await store.read((scope) => pageOfVisibleBooks(store, admin, { page: 0, size: 5, sort: ['metadata.title,desc'] }, scope));
    expect(inside).toEqual(await pageOfVisibleBooks(store, admin, { page: 0, size: 5, sort: ['metadata.title,desc'] }));
    expect(inside.ids).toEqual(expected(admin, 'metadata.title,desc').slice(0, 5));
  });

  for (const who of ['admin', 'most', 'few']) {
    for (const sort of SORTS) {
      it(`pages ${who}'s books in the order of ${sort ?? 'id'}`, async () => {
        const principal = principals[who] as Principal;
        const want = expected(principal, sort === 'id,desc' ? undefined : sort);
        if (sort === 'id,desc') want.reverse();
        expect(await allPages(principal, sort, 7)).toEqual({ ids: want, total: want.length });
        // Pages resume after the row an earlier page ended on: jumps, other sizes and going back give the same rows.
        for (const [page, size] of [[3, 5], [1, 7], [2, 4], [0, 3], [5, 6], [2, 11], [4, 9]] as const) {
          const result = await pageOfVisibleBooks(store, principal, { page, size, sort: sort ? [sort] : [] });
          expect(result.ids, `page ${page} of ${size}`).toEqual(want.slice(page * size, page * size + size));
        }
      });
    }
  }

  it('still orders by metadata when a book has no metadata row, as if its fields were null', async () => {
    const library = rows[0]?.library as number;
    const { id } = await store.db.insertInto('book').values({ library_id: library, added_on: '2024-01-01T00:00:00Z' }).returning('id').executeTakeFirstOrThrow();
    rows.push({ id, library, title: null, addedOn: '2024-01-01T00:00:00Z', deleted: false });
    try {
      for (const sort of ['metadata.title,asc', 'metadata.title,desc']) {
        const want = expected(principals.admin as Principal, sort);
        expect((await allPages(principals.admin as Principal, sort, 9)).ids).toEqual(want);
      }
      expect((await allPages(principals.admin as Principal, 'metadata.title,asc', 9)).ids[0]).toBe(rows.find((r) => r.title === null && !r.deleted)?.id);
    } finally {
      await store.db.deleteFrom('book').where('id', '=', id).execute();
      rows.pop();
    }
  });

  // On PostgreSQL a write commits beside an open snapshot (on SQLite it waits for the snapshot to end), and this process
  // counts its own commit at once: what the snapshot read must not be kept as the state after that write.
  it.runIf(onPostgres)('keeps nothing a snapshot read as the state after a write committed while it was open', async () => {
    const admin = principals.admin as Principal;
    const before = await pageOfVisibleBooks(store, admin, { page: 0, size: 5, sort: ['metadata.title,asc'] });
    const library = rows[0]?.library as number;
    let added = 0;
    const inside = await store.read(async (scope) => {
      await scope.exec.get('SELECT count(*) AS n FROM book');
      added = (await store.write(({ db }) => db.insertInto('book').values({ library_id: library, added_on: '2024-01-01T00:00:00Z' }).returning('id').executeTakeFirstOrThrow())).id;
      return pageOfVisibleBooks(store, admin, { page: 0, size: 5, sort: ['metadata.title,asc'] }, scope);
    });
    rows.push({ id: added, library, title: null, addedOn: '2024-01-01T00:00:00Z', deleted: false });
    try {
      expect(inside).toEqual(before);
      const after = await pageOfVisibleBooks(store, admin, { page: 0, size: 5, sort: ['metadata.title,asc'] });
      expect(after.totalElements).toBe(before.totalElements + 1);
      expect(after.ids).toEqual(expected(admin, 'metadata.title,asc').slice(0, 5));
    } finally {
      await store.db.deleteFrom('book').where('id', '=', added).execute();
      rows.pop();
    }
  });

  it('answers a page past the end with no books and the total', async () => {
    const result = await pageOfVisibleBooks(store, principals.admin as Principal, { page: Number.MAX_SAFE_INTEGER, size: 100, sort: ['metadata.title'] });
    expect(result).toEqual({ ids: [], totalElements: expected(principals.admin as Principal, undefined).length });
  });
});
