// What a Komga page of books keeps between requests: its statements compiled once per principal (compiled-once.ts),
// the size of a library's unknown series until the catalog changes, and page ids read with content restrictions tested
// book by book. Every kept piece must give what a fresh one would once the book, its series, its authors, its
// categories or the reader's restrictions change.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { principalFor, type Principal } from '../../src/core/auth/principal.ts';
import { seriesOfBooks } from '../../src/core/komga/book-series.ts';
import { bookName, bookOrder, loadBookRows, pageOfBooks } from '../../src/core/komga/catalog.ts';
import { compiledOnce } from '../../src/core/store/compiled-once.ts';
import type { SqlExec } from '../../src/core/store/sql-exec.ts';
import { openStore, type Store } from '../../src/core/store/store.ts';
import { seedBook, seedLibrary } from '../helpers/catalog-seed.ts';

let dir: string;
let store: Store;
let readerId: number;
let libraryId: number;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bindery-komga-book-series-'));
  store = await openStore(join(dir, 'catalog.sqlite'));
  libraryId = await seedLibrary(store.db, dir, 'Books');
  readerId = (await store.db.insertInto('users').values({ username: 'reader', password_hash: 'x', name: 'Reader' }).returning('id').executeTakeFirstOrThrow()).id;
  await store.db.insertInto('user_library_mapping').values({ user_id: readerId, library_id: libraryId }).execute();
  // On PostgreSQL the generation is new at every call until the store listens for other processes' changes.
  await vi.waitFor(() => expect(store.generation()).toEqual(store.generation()));
});

afterAll(async () => {
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A change of the catalog, seen by the store's generation before it returns. */
async function change(work: (exec: SqlExec) => Promise<void> | void): Promise<void> {
  const before = store.generation();
  await store.write(async ({ exec }) => {
    await work(exec);
  });
  await vi.waitFor(() => expect(store.generation()).not.toEqual(before));
}

async function addBook(title: string, seriesName: string | null): Promise<number> {
  const { bookId } = await seedBook(store.db, libraryId, { title, authors: [`${title} writer`] });
  await change((exec) => exec.run('UPDATE book_metadata SET series_name = ? WHERE book_id = ?', [seriesName, bookId]));
  return bookId;
}

/** The series of these books as a BookDto names them (grouped unknown books). */
async function seriesOf(principal: Principal, ids: number[]): Promise<Record<number, { id: string; title: string; oneshot: boolean }>> {
  const rows = await loadBookRows(store, ids);
  const found = await seriesOfBooks(store, principal, rows.map((r) => ({ id: r.id, libraryId: r.libraryId, seriesName: r.seriesName, name: bookName(r) })), true);
  return Object.fromEntries(found);
}

async function firstPage(principal: Principal, size = 2, page = 0): Promise<{ ids: number[]; total: number }> {
  return pageOfBooks(store, principal, [], bookOrder(store.dialect, undefined), { offset: page * size, limit: size });
}

describe('compiledOnce', () => {
  it('compiles a shape once per owner and binds the values each call gives', () => {
    const owner = {};
    let builds = 0;
    const build = (value: number) => () => (builds++, { sql: 'SELECT ? AS a, ? AS b', parameters: ['fixed', value] });
    expect(compiledOnce(owner, 'shape', [1], build(1))).toEqual({ sql: 'SELECT ? AS a, ? AS b', parameters: ['fixed', 1] });
    expect(compiledOnce(owner, 'shape', [2], build(2))).toEqual({ sql: 'SELECT ? AS a, ? AS b', parameters: ['fixed', 2] });
    expect(builds).toBe(1);
    // Another owner (a principal reloaded after a change) compiles its own.
    compiledOnce({}, 'shape', [3], build(3));
    expect(builds).toBe(2);
  });

  it('refuses a statement whose last parameters are not the values given', () => {
    expect(() => compiledOnce({}, 'shape', [5], () => ({ sql: 'SELECT ?, ?', parameters: [5, 'x'] }))).toThrow(/does not end with/);
  });
});

describe('a page of books, kept pieces', () => {
  it('names each book series and one-shots as they are now, with the principal and its statements kept', async () => {
    const first = await addBook('First', 'Saga');
    const loose = await addBook('Loose', null);
    const fresh = (await principalFor(store, readerId)) as Principal;
    expect(await seriesOf(fresh, [first, loose])).toEqual({
      [first]: { id: `${libraryId}-saga`, title: 'Saga', oneshot: true },
      [loose]: { id: `${libraryId}-unknown-series`, title: 'Unknown Series', oneshot: true },
    });
    // The same principal object asked again after each change (its statements stay compiled; the results may not).
    const second = await addBook('Second', 'saga');
    const otherLoose = await addBook('Other loose', '');
    expect(await seriesOf(fresh, [first, loose, second])).toEqual({
      [first]: { id: `${libraryId}-saga`, title: 'Saga', oneshot: false },
      [loose]: { id: `${libraryId}-unknown-series`, title: 'Unknown Series', oneshot: false },
      [second]: { id: `${libraryId}-saga`, title: 'Saga', oneshot: false },
    });
    // A new first spelling of the series renames it for every book of it.
    await change((exec) => exec.run('UPDATE book_metadata SET series_name = ? WHERE book_id = ?', ['SAGA', second]));
    expect((await seriesOf(fresh, [first]))[first]?.title).toBe('SAGA');
    // The book leaves the series: both are one-shots again, and the unknown series keeps its two books.
    await change((exec) => exec.run('UPDATE book_metadata SET series_name = ? WHERE book_id = ?', ['Elsewhere', second]));
    expect(await seriesOf(fresh, [first, second, otherLoose])).toEqual({
      [first]: { id: `${libraryId}-saga`, title: 'Saga', oneshot: true },
      [second]: { id: `${libraryId}-elsewhere`, title: 'Elsewhere', oneshot: true },
      [otherLoose]: { id: `${libraryId}-unknown-series`, title: 'Unknown Series', oneshot: false },
    });
    // A deleted book no longer counts in its series.
    await change((exec) => exec.run('UPDATE book SET deleted = 1 WHERE id = ?', [otherLoose]));
    expect((await seriesOf(fresh, [loose]))[loose]?.oneshot).toBe(true);
  });

  it('follows a new restriction and a book newly in its category, per book on the page and in the series counts', async () => {
    const a = await addBook('Alpha', 'Duo');
    const b = await addBook('Beta', 'Duo');
    const c = await addBook('Gamma', null);
    const before = (await principalFor(store, readerId)) as Principal;
    const all = (await pageOfBooks(store, before, [], bookOrder(store.dialect, undefined), 'all')).ids;
    expect(all).toEqual(expect.arrayContaining([a, b, c]));
    // The reader hides a category no book has yet: a new principal, every book still listed.
    await change((exec) => exec.run("INSERT INTO user_content_restriction (user_id, restriction_type, mode, value) VALUES (?, 'CATEGORY', 'EXCLUDE', 'Hidden')", [readerId]));
    const restricted = (await principalFor(store, readerId)) as Principal;
    expect(restricted).not.toBe(before);
    expect(restricted.restrictions).toHaveLength(1);
    const paged = async (principal: Principal, size: number): Promise<number[]> => {
      const ids: number[] = [];
      for (let page = 0; ; page++) {
        const { ids: some } = await firstPage(principal, size, page);
        if (some.length === 0) return ids;
        ids.push(...some);
      }
    };
    expect(await paged(restricted, 2)).toEqual(all);
    expect((await seriesOf(restricted, [a]))[a]?.oneshot).toBe(false);
    // Book b joins the hidden category: gone from every page and from its series' count, for the same principal
    // object and for the one loaded after the change.
    await change(async (exec) => {
      await exec.run("INSERT INTO category (name) VALUES ('Hidden')");
      const category = (await exec.get("SELECT id FROM category WHERE name = 'Hidden'")) as { id: number };
      await exec.run('INSERT INTO book_metadata_category_mapping (book_id, category_id) VALUES (?, ?)', [b, category.id]);
    });
    const expected = all.filter((id) => id !== b);
    for (const principal of [restricted, (await principalFor(store, readerId)) as Principal]) {
      expect(await paged(principal, 2)).toEqual(expected);
      expect(await paged(principal, 3)).toEqual(expected);
      expect((await firstPage(principal, 50)).total).toBe(expected.length);
      expect((await seriesOf(principal, [a]))[a]).toEqual({ id: `${libraryId}-duo`, title: 'Duo', oneshot: true });
    }
    // The restriction removed: the book is back.
    await change((exec) => exec.run('DELETE FROM user_content_restriction WHERE user_id = ?', [readerId]));
    const lifted = (await principalFor(store, readerId)) as Principal;
    expect(await paged(lifted, 2)).toEqual(all);
    expect((await seriesOf(lifted, [a]))[a]?.oneshot).toBe(false);
  });

  it('keeps the series worked out for the catalog as it is, and works them out again after another connection writes', async () => {
    const a = await addBook('Kept one', 'Pair');
    const b = await addBook('Kept two', 'Pair');
    const principal = (await principalFor(store, readerId)) as Principal;
    const inputs = (await loadBookRows(store, [a, b])).map((r) => ({ id: r.id, libraryId: r.libraryId, seriesName: r.seriesName, name: bookName(r) }));
    const ask = async () => Object.fromEntries(await seriesOfBooks(store, principal, inputs, true));
    expect((await ask())[a]).toEqual({ id: `${libraryId}-pair`, title: 'Pair', oneshot: false });
    // Asked again on the same catalog: nothing read.
    const reads = vi.spyOn(store.exec, 'all');
    try {
      expect((await ask())[b]).toEqual({ id: `${libraryId}-pair`, title: 'Pair', oneshot: false });
      expect(reads).not.toHaveBeenCalled();
    } finally {
      reads.mockRestore();
    }
    // Another connection (a CLI job, another replica) gives the series a new first spelling, then takes a book out.
    const other = await openStore(join(dir, 'catalog.sqlite'));
    try {
      const elsewhere = async (statement: string, values: unknown[]): Promise<void> => {
        const before = store.generation();
        await other.write(async ({ exec }) => {
          await exec.run(statement, values as never[]);
        });
        await vi.waitFor(() => expect(store.generation()).not.toEqual(before));
      };
      await elsewhere('UPDATE book_metadata SET series_name = ? WHERE book_id = ?', ['PAIR', b]);
      expect((await ask())[a]).toEqual({ id: `${libraryId}-pair`, title: 'PAIR', oneshot: false });
      await elsewhere('UPDATE book SET deleted = 1 WHERE id = ?', [b]);
      expect((await ask())[a]).toEqual({ id: `${libraryId}-pair`, title: 'Pair', oneshot: true });
    } finally {
      await other.close();
    }
  });

  it('shows an author change on the page rows of the same principal', async () => {
    const id = await addBook('Authored', null);
    const principal = (await principalFor(store, readerId)) as Principal;
    expect((await loadBookRows(store, [id]))[0]?.authors).toEqual(['Authored writer']);
    await change(async (exec) => {
      await exec.run("INSERT INTO author (name) VALUES ('New writer')");
      const author = (await exec.get("SELECT id FROM author WHERE name = 'New writer'")) as { id: number };
      await exec.run('UPDATE book_metadata_author_mapping SET author_id = ? WHERE book_id = ?', [author.id, id]);
    });
    const { ids } = await pageOfBooks(store, principal, [], bookOrder(store.dialect, undefined), 'all');
    expect(ids).toContain(id);
    expect((await loadBookRows(store, [id]))[0]?.authors).toEqual(['New writer']);
  });
});
