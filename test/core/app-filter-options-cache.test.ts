// How long the app's filter options are kept: until the catalog changes, and for a scope of tens of thousands of
// books up to 30 seconds even then. Decided by the books in the scope, never by how long counting took (which made the
// answer depend on how busy the machine was).
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { appFilterOptions, KEPT_AFTER_CHANGE_BOOKS, STALE_MS } from '../../src/core/app/filter-options.ts';
import { loadPrincipal, type Principal } from '../../src/core/auth/principal.ts';
import { openStore, type Store } from '../../src/core/store/store.ts';
import { createUser } from '../../src/core/users/users.ts';
import { seedBook, seedLibrary } from '../helpers/catalog-seed.ts';
import { makeTempDir, type TempDir } from '../helpers/temp-dir.ts';

let temp: TempDir;
let store: Store;
let admin: Principal;
let library: number;

beforeEach(async () => {
  temp = makeTempDir('bindery-filter-options-');
  store = await openStore(temp.file('catalog.sqlite'));
  library = await seedLibrary(store.db, temp.dir, 'main');
  await seedBook(store.db, library, { title: 'Dune', authors: ['Frank Herbert'] });
  admin = (await loadPrincipal(store.db, await createUser(store.db, { username: 'admin', password: 'admin-password', name: 'Admin', permissions: { admin: true } })))!;
});

afterEach(async () => {
  vi.restoreAllMocks();
  await store.close();
  temp.remove();
});

const authors = async (): Promise<string[]> => (await appFilterOptions(store, admin, {})).authors.map((a) => a.name).sort();

/** Physical books (listed without a file), each with its metadata row, added in two statements. */
async function addPhysicalBooks(count: number): Promise<void> {
  const path = await store.db.selectFrom('library_path').select('id').where('library_id', '=', library).executeTakeFirstOrThrow();
  const before = Number((await store.exec.get('SELECT coalesce(max(id), 0) AS m FROM book'))!.m);
  await store.write(async ({ exec }) => {
    await exec.run(
      'WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < CAST(? AS integer)) INSERT INTO book (library_id, library_path_id, is_physical) SELECT CAST(? AS integer), CAST(? AS integer), 1 FROM n',
      [count, library, path.id],
    );
    await exec.run("INSERT INTO book_metadata (book_id, title) SELECT id, 'Filler' FROM book WHERE id > CAST(? AS integer)", [before]);
  });
}

describe('app filter options, kept', () => {
  it('on a small catalog are counted again after every change, however slow counting was', async () => {
    expect(await authors()).toEqual(['Frank Herbert']);
    // Every clock reading a second later than the last: each count looks as if it took seconds (a loaded machine).
    let clock = performance.now();
    vi.spyOn(performance, 'now').mockImplementation(() => (clock += 1000));
    expect(await authors()).toEqual(['Frank Herbert']);
    await seedBook(store.db, library, { title: 'Emma', authors: ['Jane Austen'] });
    expect(await authors()).toEqual(['Frank Herbert', 'Jane Austen']);
  });

  it(`for a scope of ${KEPT_AFTER_CHANGE_BOOKS.toLocaleString('en')} books are kept ${STALE_MS / 1000} s after a change, then counted again`, async () => {
    await addPhysicalBooks(KEPT_AFTER_CHANGE_BOOKS);
    let now = Date.now();
    vi.spyOn(Date, 'now').mockImplementation(() => now);
    expect(await authors()).toEqual(['Frank Herbert']);
    await seedBook(store.db, library, { title: 'Emma', authors: ['Jane Austen'] });
    now += STALE_MS - 1000;
    expect(await authors()).toEqual(['Frank Herbert']);
    now += 2000;
    expect(await authors()).toEqual(['Frank Herbert', 'Jane Austen']);
  });

  it('are counted once for callers asking at the same time', async () => {
    // One state of the catalog throughout (on PostgreSQL, news of the set-up's writes may still be arriving).
    vi.spyOn(store, 'generation').mockReturnValue(store.generation());
    const all = vi.spyOn(store.exec, 'all');
    const counts = (): number => all.mock.calls.filter(([text]) => String(text).includes(' as materialized ')).length;
    const answers = await Promise.all([1, 2, 3, 4].map(() => appFilterOptions(store, admin, {})));
    expect(answers.every((a) => JSON.stringify(a) === JSON.stringify(answers[0]))).toBe(true);
    expect(counts()).toBe(1);
    await authors();
    expect(counts()).toBe(1);
  });

  it('for a scope one book short of that are counted again right after a change', async () => {
    await addPhysicalBooks(KEPT_AFTER_CHANGE_BOOKS - 2);
    expect((await appFilterOptions(store, admin, {})).shelfStatuses).toEqual([{ name: 'unshelved', count: KEPT_AFTER_CHANGE_BOOKS - 1 }]);
    await seedBook(store.db, library, { title: 'Emma', authors: ['Jane Austen'] });
    expect(await authors()).toEqual(['Frank Herbert', 'Jane Austen']);
  });
});
