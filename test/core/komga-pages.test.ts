// Pages as a Komga client asks for them. A page of series (summarizeMany: a few statements for the whole page) gives
// each series the summary it has on its own (summarize): counts, the reader's states, the first book in series order,
// release date, authors and tags, for a reader who sees every book and one whose restriction hides some, grouped or
// not. Pages of books by id, asked one after the other, start after the end of the page before: the same books as
// OFFSET would give, also when the catalog changes between two pages.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allPermissions, PERMISSION_NAMES, type Permissions } from '../../src/core/auth/permissions.ts';
import type { Principal } from '../../src/core/auth/principal.ts';
import { bookOrder, pageOfBooks } from '../../src/core/komga/catalog.ts';
import { bookConditions } from '../../src/core/komga/filters.ts';
import { findSeries, refOf, seriesBookIds, seriesIndex, summarize, summarizeMany, type SeriesRef } from '../../src/core/komga/series.ts';
import { openStore, type Store } from '../../src/core/store/store.ts';
import { seedLibrary, seedSeriesBook } from '../helpers/catalog-seed.ts';

let dir: string;
let store: Store;
let userId: number;
let libraryId: number;
const book: Record<string, number> = {};

const admin = (): Principal => ({ userId, username: 'admin', isDefaultPassword: false, sessionVersion: 0, permissions: allPermissions(), libraryIds: [], restrictions: [] });
const member = (): Principal => ({
  ...admin(),
  permissions: Object.fromEntries(PERMISSION_NAMES.map((p) => [p, false])) as Permissions,
  libraryIds: [libraryId],
  restrictions: [{ type: 'CATEGORY', mode: 'EXCLUDE', value: 'hidden' }],
});

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bindery-komga-series-page-'));
  store = await openStore(join(dir, 'catalog.sqlite'));
  userId = (await store.db.insertInto('users').values({ username: 'admin', password_hash: 'x', name: 'Admin' }).returning('id').executeTakeFirstOrThrow()).id;
  libraryId = await seedLibrary(store.db, dir, 'Comics');
  const add = async (key: string, title: string, meta: Record<string, unknown>, tags: string[] = []): Promise<void> => {
    book[key] = await seedSeriesBook(store.db, libraryId, key, title, meta, tags);
  };
  // Atlas: two books share number 2 (the name decides, case aside), the hidden one has number 1, one has no number and
  // no title (its file names it), release dates of every shape.
  await add('atlasB', 'b volume', { series_name: 'Atlas', series_number: 2, published_date: '2015-06-01T00:00:00' }, ['Maps']);
  await add('atlasA', 'A volume', { series_name: 'atlas', series_number: 2, published_date: 'unknown' }, ['Maps', 'Zoo']);
  await add('atlasHidden', 'Hidden volume', { series_name: 'ATLAS', series_number: 1, published_date: '1999' }, ['secret']);
  await add('atlasUntitled', '', { series_name: 'Atlas', series_number: null, published_date: null });
  // Binder: no numbers at all, the names order it; one book only the admin reads.
  await add('binderZ', 'Zeta', { series_name: 'Binder' });
  await add('binderE', 'eta', { series_name: 'Binder', published_date: '2001-01' });
  // Books without a series, two sharing a title (one series of two when unknown books are not grouped).
  await add('looseA', 'Loose', {}, ['Maps']);
  await add('looseB', 'loose', { published_date: '1980' });
  await add('single', 'Single', {});
  const hidden = (await store.db.insertInto('category').values({ name: 'Hidden' }).returning('id').executeTakeFirstOrThrow()).id;
  await store.db.insertInto('book_metadata_category_mapping').values({ book_id: book.atlasHidden as number, category_id: hidden }).execute();
  await store.db
    .insertInto('user_book_progress')
    .values([
      { user_id: userId, book_id: book.atlasB as number, read_status: 'READ' },
      { user_id: userId, book_id: book.atlasHidden as number, read_status: 'READ' },
      { user_id: userId, book_id: book.atlasA as number, cbx_progress: 3, cbx_progress_percent: 20 },
      { user_id: userId, book_id: book.binderE as number, read_status: 'READING' },
      { user_id: userId, book_id: book.looseB as number, read_status: 'READ' },
    ])
    .execute();
});

afterAll(async () => {
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

const refsOf = async (principal: Principal, grouped: boolean): Promise<SeriesRef[]> => (await seriesIndex(store, principal, grouped)).heads.map((h) => refOf(store.dialect, h));

describe('a page of series', () => {
  it('summarizes each series as it is summarized on its own', async () => {
    for (const principal of [admin(), member()]) {
      for (const grouped of [true, false]) {
        const refs = await refsOf(principal, grouped);
        const page = await summarizeMany(store, principal, refs, userId);
        for (const [i, ref] of refs.entries()) expect(page[i], `${ref.id} (grouped: ${grouped})`).toEqual(await summarize(store, principal, ref, userId));
      }
    }
  });

  it('counts, orders and dates what the reader may see', async () => {
    const summaries = async (principal: Principal, grouped: boolean) =>
      new Map((await summarizeMany(store, principal, await refsOf(principal, grouped), userId)).map((s) => [s.ref.name.toLowerCase(), s]));
    const all = await summaries(admin(), false);
    expect(all.get('atlas')).toMatchObject({ count: 4, read: 2, inProgress: 1, release: '1999', firstBookId: book.atlasHidden });
    expect(all.get('atlas')?.tags).toEqual(['Maps', 'secret', 'Zoo']);
    expect(all.get('atlas')?.authors).toEqual(['atlasA writer', 'atlasB writer', 'atlasHidden writer', 'atlasUntitled writer', 'shared writer']);
    expect(all.get('binder')).toMatchObject({ count: 2, read: 0, inProgress: 1, release: '2001-01', firstBookId: book.binderE });
    expect(all.get('loose')).toMatchObject({ count: 2, read: 1, inProgress: 0, release: '1980', firstBookId: book.looseA, tags: ['Maps'] });
    const seen = await summaries(member(), false);
    // The hidden book is not counted, read, dated, first, or a source of tags and authors.
    expect(seen.get('atlas')).toMatchObject({ count: 3, read: 1, inProgress: 1, release: '2015-06-01', firstBookId: book.atlasA });
    expect(seen.get('atlas')?.tags).toEqual(['Maps', 'Zoo']);
    expect(seen.get('atlas')?.authors).not.toContain('atlasHidden writer');
  });

  it('leaves a hidden book out of the Unknown Series: first by title, oldest and newest added, on a page of its books or all of them', async () => {
    const hiddenLoose = await seedSeriesBook(store.db, libraryId, 'hiddenLoose', 'Aardvark', {});
    const hidden = (await store.db.selectFrom('category').select('id').where('name', '=', 'Hidden').executeTakeFirstOrThrow()).id;
    await store.db.insertInto('book_metadata_category_mapping').values({ book_id: hiddenLoose, category_id: hidden }).execute();
    // The Unknown Series is dated by the first and last visible books added to its library.
    const added = await store.db.selectFrom('book').select(['added_on']).where('library_id', '=', libraryId).where('id', 'not in', [book.atlasHidden as number, hiddenLoose]).orderBy('added_on').execute();
    try {
      const unknownOf = async (principal: Principal): Promise<SeriesRef> => (await refsOf(principal, true)).find((r) => r.name === 'Unknown Series') as SeriesRef;
      // Older than every book, then newer than every book: neither date may come from it.
      for (const addedOn of ['1990-01-01T00:00:00Z', '2999-01-01T00:00:00Z']) {
        await store.db.updateTable('book').set({ added_on: addedOn }).where('id', '=', hiddenLoose).execute();
        const everyBook = await summarize(store, admin(), await unknownOf(admin()), userId);
        expect(everyBook).toMatchObject({ count: 4, firstBookId: hiddenLoose });
        const ref = await unknownOf(member());
        const seen = await summarize(store, member(), ref, userId);
        expect(seen).toMatchObject({ count: 3, firstBookId: book.looseA, created: added[0]?.added_on, modified: added.at(-1)?.added_on });
        expect(seen.authors).not.toContain('hiddenLoose writer');
        const [onPage] = await summarizeMany(store, member(), [ref], userId);
        expect(onPage).toEqual(seen);
        const firstPage = await seriesBookIds(store, member(), ref, [], { offset: 0, limit: 2 });
        const all = await seriesBookIds(store, member(), ref, [], 'all');
        expect(firstPage).toEqual({ ids: all.ids.slice(0, 2), total: 3 });
        expect(all.ids).not.toContain(hiddenLoose);
        expect(all.ids).toHaveLength(3);
      }
    } finally {
      await store.db.deleteFrom('book').where('id', '=', hiddenLoose).execute();
    }
  });

  it('summarizes a series found by id as the page does', async () => {
    const ref = (await findSeries(store, member(), `${libraryId}-atlas`, true)) as SeriesRef;
    const [fromPage] = await summarizeMany(store, member(), [ref], userId);
    expect(fromPage).toEqual(await summarize(store, member(), ref, userId));
    expect(fromPage?.firstBookId).toBe(book.atlasA);
  });
});

describe('pages of books by id', () => {
  const size = 20;
  beforeAll(async () => {
    // Enough books for pages deep enough to start after the page before (past the first 400 books), some hidden.
    const path = await store.db.selectFrom('library_path').select('id').where('library_id', '=', libraryId).executeTakeFirstOrThrow();
    const ids = (await store.db.insertInto('book').values(Array.from({ length: 480 }, () => ({ library_id: libraryId, library_path_id: path.id }))).returning('id').execute()).map((r) => r.id);
    await store.db.insertInto('book_metadata').values(ids.map((id, i) => ({ book_id: id, title: `Filler ${i}` }))).execute();
    const hidden = (await store.db.selectFrom('category').select('id').where('name', '=', 'Hidden').executeTakeFirstOrThrow()).id;
    await store.db.insertInto('book_metadata_category_mapping').values(ids.filter((_, i) => i % 7 === 3).map((id) => ({ book_id: id, category_id: hidden }))).execute();
  });

  const byOffset = async (principal: Principal, query: Record<string, unknown>, page: number): Promise<{ ids: number[]; total: number }> =>
    pageOfBooks(store, principal, bookConditions(store.dialect, query, userId), { sql: bookOrder(store.dialect, undefined).sql }, { offset: page * size, limit: size });
  const inOrder = async (principal: Principal, query: Record<string, unknown>, page: number): Promise<{ ids: number[]; total: number }> =>
    pageOfBooks(store, principal, bookConditions(store.dialect, query, userId), bookOrder(store.dialect, query.sort), { offset: page * size, limit: size });

  it('gives the books OFFSET gives, page after page, out of order, and after a change between two pages', async () => {
    const pages = [...Array.from({ length: 26 }, (_, i) => i), 22, 24, 23, 21];
    for (const principal of [admin(), member()]) {
      for (const query of [{}, { search: 'filler' }, { read_status: 'UNREAD' }]) {
        for (const page of pages) expect(await inOrder(principal, query, page), `page ${page} of ${JSON.stringify(query)}`).toEqual(await byOffset(principal, query, page));
        // The total (for a restricted reader, every book of their libraries less those the restriction hides) counts the books listed.
        const listed = await pageOfBooks(store, principal, bookConditions(store.dialect, query, userId), bookOrder(store.dialect, undefined), 'all');
        expect((await inOrder(principal, query, 0)).total, `total of ${JSON.stringify(query)}`).toBe(listed.ids.length);
      }
    }
    expect(bookOrder(store.dialect, undefined).byId).toBe(true);
    expect(bookOrder(store.dialect, 'id,desc').byId).toBe(false);
    expect(bookOrder(store.dialect, 'metadata.title,asc').byId).toBe(false);
    // The end of page 21 is known; a book of it goes away: page 22 starts one book earlier than it did.
    const before = await inOrder(admin(), {}, 22);
    const gone = (await inOrder(admin(), {}, 21)).ids[0] as number;
    await store.db.updateTable('book').set({ deleted: 1 }).where('id', '=', gone).execute();
    try {
      const after = await inOrder(admin(), {}, 22);
      expect(after).toEqual(await byOffset(admin(), {}, 22));
      expect(after.ids[0]).not.toBe(before.ids[0]);
      expect(after.total).toBe(before.total - 1);
    } finally {
      await store.db.updateTable('book').set({ deleted: 0 }).where('id', '=', gone).execute();
    }
  });
});
