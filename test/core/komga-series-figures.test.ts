// A page of series summarized from the figures kept per series (summarizePage) equals one summarized from the books
// (summarizeMany) after every kind of write to what the figures come from: books added, moved to another library,
// deleted (flag and row), made physical; metadata edits (series name, number, title, published date); book files
// that name a book without a title; authors and tags renamed, merged, added, removed; a library removed; a write from a
// second connection to the catalog (another process). For an admin and for a reader whose restriction hides a book.
// A trigger missing leaves the kept figures as they were, which the comparison right after the write catches.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allPermissions, PERMISSION_NAMES, type Permissions } from '../../src/core/auth/permissions.ts';
import type { Principal } from '../../src/core/auth/principal.ts';
import { updateAuthor, deleteAuthors } from '../../src/core/authors/author-edit.ts';
import { deleteBooks } from '../../src/core/books/book-delete.ts';
import { renameName } from '../../src/core/books/names.ts';
import { compactStaleLog, figuresStored, keep, keptStates, summarizePage } from '../../src/core/komga/series-figures.ts';
import { refOf, seriesIndex, summarizeMany, type SeriesRef } from '../../src/core/komga/series.ts';
import { removeLibrary } from '../../src/core/libraries/libraries.ts';
import { openStore, type Store } from '../../src/core/store/store.ts';
import { seedLibrary, seedSeriesBook } from '../helpers/catalog-seed.ts';
import { onPostgres } from '../helpers/engine.ts';

let dir: string;
let store: Store;
let userId: number;
let comics: number;
let manga: number;
const book: Record<string, number> = {};

const admin = (): Principal => ({ userId, username: 'admin', isDefaultPassword: false, sessionVersion: 0, permissions: allPermissions(), libraryIds: [], restrictions: [] });
const member = (): Principal => ({
  ...admin(),
  permissions: Object.fromEntries(PERMISSION_NAMES.map((p) => [p, false])) as Permissions,
  libraryIds: [comics, manga],
  restrictions: [{ type: 'CATEGORY', mode: 'EXCLUDE', value: 'hidden' }],
});

const idOf = async (table: 'author' | 'tag', name: string): Promise<number> => (await store.db.selectFrom(table).select('id').where('name', '=', name).executeTakeFirstOrThrow()).id;

async function add(key: string, libraryId: number, title: string, meta: Record<string, unknown>, tags: string[] = []): Promise<void> {
  book[key] = await seedSeriesBook(store.db, libraryId, key, title, meta, tags);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bindery-komga-series-figures-'));
  store = await openStore(join(dir, 'catalog.sqlite'));
  userId = (await store.db.insertInto('users').values({ username: 'admin', password_hash: 'x', name: 'Admin' }).returning('id').executeTakeFirstOrThrow()).id;
  comics = await seedLibrary(store.db, dir, 'Comics');
  manga = await seedLibrary(store.db, dir, 'Manga');
  await add('atlasB', comics, 'b volume', { series_name: 'Atlas', series_number: 2, published_date: '2015-06-01T00:00:00' }, ['Maps']);
  await add('atlasA', comics, 'A volume', { series_name: 'atlas', series_number: 2, published_date: 'unknown' }, ['Maps', 'Zoo']);
  await add('atlasHidden', comics, 'Hidden volume', { series_name: 'ATLAS', series_number: 1, published_date: '1999' }, ['secret']);
  // No title: its book file names it, and it ties with atlasC on number 3.
  await add('atlasUntitled', comics, '', { series_name: 'Atlas', series_number: 3 });
  await add('atlasC', comics, 'm volume', { series_name: 'Atlas', series_number: 3 });
  await add('binderZ', comics, 'Zeta', { series_name: 'Binder' });
  await add('binderE', comics, 'eta', { series_name: 'Binder', published_date: '2001-01' }, ['Maps']);
  await add('mangaOne', manga, 'One', { series_name: 'Binder', series_number: 1 });
  await add('loose', comics, 'Loose', {});
  // A capital outside ASCII: summarized from its books (lower() may fold it where NOCASE does not).
  await add('elan', comics, 'Élan one', { series_name: 'Élan' });
  const hidden = (await store.db.insertInto('category').values({ name: 'Hidden' }).returning('id').executeTakeFirstOrThrow()).id;
  await store.db.insertInto('book_metadata_category_mapping').values({ book_id: book.atlasHidden as number, category_id: hidden }).execute();
  await store.db
    .insertInto('user_book_progress')
    .values([
      { user_id: userId, book_id: book.atlasB as number, read_status: 'READ' },
      { user_id: userId, book_id: book.atlasHidden as number, read_status: 'READ' },
      { user_id: userId, book_id: book.atlasA as number, cbx_progress: 3, cbx_progress_percent: 20 },
      { user_id: userId, book_id: book.binderE as number, read_status: 'READING' },
      { user_id: userId, book_id: book.mangaOne as number, read_status: 'READ' },
    ])
    .execute();
});

afterAll(async () => {
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

const refsOf = async (principal: Principal, grouped: boolean): Promise<SeriesRef[]> => (await seriesIndex(store, principal, grouped)).heads.map((h) => refOf(store.dialect, h));

/** Series whose kept figures may be used: a row, and no log row of a write since (the row under the key '' holds only the Unknown Series' claim). */
const keptRows = async (): Promise<number> =>
  Number(
    (
      await store.exec.get(
        "SELECT count(*) AS n FROM komga_series_summary s WHERE s.series_key <> '' AND NOT EXISTS (SELECT 1 FROM komga_series_stale l WHERE l.library_id = s.library_id AND l.series_key = s.series_key)",
      )
    )?.n,
  );
const logRows = async (): Promise<number> => Number((await store.exec.get('SELECT count(*) AS n FROM komga_series_stale'))?.n);

/** Every page (both readers, both ways of listing books without a series) from the kept figures equals one from the books: as they are kept now, then once stored again. */
async function pagesMatch(when: string): Promise<void> {
  for (let pass = 0; pass < 2; pass++) {
    for (const principal of [admin(), member()]) {
      for (const grouped of [true, false]) {
        const refs = await refsOf(principal, grouped);
        expect(await summarizePage(store, principal, refs, userId), `${when}: ${principal.username === 'admin' && principal.restrictions.length === 0 ? 'admin' : 'member'}, grouped ${grouped}, pass ${pass}`).toEqual(
          await summarizeMany(store, principal, refs, userId),
        );
      }
    }
    await figuresStored(store);
  }
}

describe('a page of series from kept figures', () => {
  it('is the page summarized from the books, and keeps figures for the named series', async () => {
    await pagesMatch('first page');
    // Atlas, Binder and Élan (kept, not used) in Comics, Binder in Manga.
    expect(await keptRows()).toBe(4);
    const names = (await summarizePage(store, admin(), await refsOf(admin(), true), userId)).map((s) => [s.ref.name, s.count, s.read, s.firstBookId]);
    expect(names).toContainEqual(['ATLAS', 5, 2, book.atlasHidden]);
  });

  it('works out every stale series in the background once a page met one', async () => {
    // As migration 044 leaves a catalog it upgrades: a log row for every series, and no figures.
    await store.exec.run('INSERT INTO komga_series_stale (library_id, series_key) SELECT library_id, series_key FROM komga_series_summary');
    await store.exec.run('DELETE FROM komga_series_summary');
    const [first] = await refsOf(admin(), true);
    await summarizePage(store, admin(), [first as SeriesRef], userId);
    await figuresStored(store);
    expect(await logRows()).toBe(0);
    expect(await keptRows()).toBe(4);
  });

  it('uses the figures for a restricted reader only where nothing is hidden from them', async () => {
    const [atlas] = (await refsOf(member(), true)).filter((r) => r.name.toLowerCase() === 'atlas');
    const [summary] = await summarizePage(store, member(), [atlas as SeriesRef], userId);
    expect(summary).toMatchObject({ count: 4, read: 1, inProgress: 1, firstBookId: book.atlasA });
    expect(summary?.tags).toEqual(['Maps', 'Zoo']);
  });

  it('stays right through every kind of write', async () => {
    const writes: [string, () => Promise<unknown>][] = [
      ['an author renamed', async () => updateAuthor(store.db, await idOf('author', 'atlasA writer'), { name: 'Aardvark writer' })],
      ['a tag renamed', async () => renameName(store.exec, 'tag', await idOf('tag', 'Zoo'), 'Aquarium')],
      ['a tag added to a book', async () => store.db.insertInto('book_metadata_tag_mapping').values({ book_id: book.binderZ as number, tag_id: await idOf('tag', 'Aquarium') }).execute()],
      ['a tag taken off a book', async () => store.db.deleteFrom('book_metadata_tag_mapping').where('book_id', '=', book.binderE as number).execute()],
      [
        'two authors merged',
        async () =>
          store.db
            .updateTable('book_metadata_author_mapping')
            .set({ author_id: await idOf('author', 'binderZ writer') })
            .where('author_id', '=', await idOf('author', 'binderE writer'))
            .execute(),
      ],
      ['an author deleted', async () => deleteAuthors(store.db, join(dir, 'images'), [await idOf('author', 'binderZ writer')])],
      ['a series number edited', () => store.db.updateTable('book_metadata').set({ series_number: 0.5 }).where('book_id', '=', book.atlasC as number).execute()],
      ['a published date edited', () => store.db.updateTable('book_metadata').set({ published_date: '1850-02-03' }).where('book_id', '=', book.binderZ as number).execute()],
      ['a title edited', () => store.db.updateTable('book_metadata').set({ title: 'aa volume' }).where('book_id', '=', book.atlasB as number).execute()],
      ['a book file naming a book without a title', () => store.db.updateTable('book_file').set({ file_name: 'zzz.cbz' }).where('book_id', '=', book.atlasUntitled as number).execute()],
      ['a series number tie for the untitled book', () => store.db.updateTable('book_metadata').set({ series_number: 0.5 }).where('book_id', '=', book.atlasUntitled as number).execute()],
      ['its book file renamed again', () => store.db.updateTable('book_file').set({ file_name: '0 first.cbz' }).where('book_id', '=', book.atlasUntitled as number).execute()],
      [
        'a book without a title added (scan)',
        async () => {
          const path = await store.db.selectFrom('library_path').select('id').where('library_id', '=', comics).executeTakeFirstOrThrow();
          book.untitledNew = (await store.db.insertInto('book').values({ library_id: comics, library_path_id: path.id }).returning('id').executeTakeFirstOrThrow()).id;
          await store.db.insertInto('book_metadata').values({ book_id: book.untitledNew, series_name: 'Atlas', series_number: 0.5 }).execute();
        },
      ],
      [
        'its first book file added, which names it first in its series',
        async () => {
          const path = await store.db.selectFrom('library_path').select('id').where('library_id', '=', comics).executeTakeFirstOrThrow();
          await store.db.insertInto('book_file').values({ book_id: book.untitledNew as number, library_path_id: path.id, file_sub_path: '', file_name: '- first.cbz', book_type: 'CBX' }).execute();
        },
      ],
      ['its book file removed', () => store.db.deleteFrom('book_file').where('book_id', '=', book.untitledNew as number).execute()],
      ['an author added to a book', async () => store.db.insertInto('book_metadata_author_mapping').values({ book_id: book.binderE as number, author_id: await idOf('author', 'Aardvark writer') }).execute()],
      [
        'a tag merged into another',
        async () =>
          store.db
            .updateTable('book_metadata_tag_mapping')
            .set({ tag_id: await idOf('tag', 'secret') })
            .where('book_id', '=', book.binderZ as number)
            .where('tag_id', '=', await idOf('tag', 'Aquarium'))
            .execute(),
      ],
      ["a book's metadata removed", () => store.db.deleteFrom('book_metadata').where('book_id', '=', book.untitledNew as number).execute()],
      ['a book moved to another series', () => store.db.updateTable('book_metadata').set({ series_name: 'Binder' }).where('book_id', '=', book.atlasA as number).execute()],
      ['a book moved to another library', () => store.db.updateTable('book').set({ library_id: manga }).where('id', '=', book.binderZ as number).execute()],
      ['a book added (scan)', () => add('binderNew', comics, 'New one', { series_name: 'binder', series_number: -1, published_date: '1700' }, ['Fresh'])],
      ['a book marked deleted', () => store.db.updateTable('book').set({ deleted: 1 }).where('id', '=', book.binderNew as number).execute()],
      ['a book made physical', () => store.db.updateTable('book').set({ is_physical: 1 }).where('id', '=', book.atlasC as number).execute()],
      ['a book deleted', () => deleteBooks(store.db, join(dir, 'covers'), [book.atlasB as number])],
      ['a book taken out of every series', () => store.db.updateTable('book_metadata').set({ series_name: null }).where('book_id', '=', book.mangaOne as number).execute()],
      ['a book given a series', () => store.db.updateTable('book_metadata').set({ series_name: 'Atlas' }).where('book_id', '=', book.loose as number).execute()],
      [
        'a write from another connection',
        async () => {
          const other = await openStore(join(dir, 'catalog.sqlite'));
          try {
            await other.db.updateTable('book_metadata').set({ published_date: '1600' }).where('book_id', '=', book.atlasUntitled as number).execute();
          } finally {
            await other.close();
          }
        },
      ],
      ['the hidden book shown', () => store.db.deleteFrom('book_metadata_category_mapping').where('book_id', '=', book.atlasHidden as number).execute()],
      ['a library removed', () => removeLibrary(store.db, manga)],
    ];
    for (const [what, write] of writes) {
      await write();
      await pagesMatch(what);
    }
  });

  it('leaves a series stale when a write is committed while a reader works it out', async () => {
    await pagesMatch('before');
    const [atlas] = (await refsOf(admin(), true)).filter((r) => r.name.toLowerCase() === 'atlas');
    const series = { libraryId: comics, key: 'atlas' };
    // A write the reader will see: the series is stale when it starts.
    await store.db.updateTable('book_metadata').set({ title: 'a retitled volume' }).where('book_id', '=', book.atlasHidden as number).execute();
    // The reader: the series' row and log rows, then its books, as a page does.
    const states = await keptStates(store, [series]);
    const [before] = await summarizeMany(store, admin(), [atlas as SeriesRef], 0);
    // Meanwhile a write lands (another connection, as another replica or the CLI would).
    const other = await openStore(join(dir, 'catalog.sqlite'));
    try {
      await other.db.updateTable('book_metadata').set({ published_date: '1500' }).where('book_id', '=', book.atlasUntitled as number).execute();
    } finally {
      await other.close();
    }
    const state = states.get(`${comics}\u0000atlas`);
    expect(state?.logIds.length).toBeGreaterThan(0);
    expect(await keep(store, [{ ...series, summary: before as NonNullable<typeof before>, state: state as NonNullable<typeof state> }])).toBe(1);
    // Stored, yet still stale: the write's log row was not among those the reader saw.
    const after = await keptStates(store, [series]);
    expect(after.get(`${comics}\u0000atlas`)?.logIds.length).toBeGreaterThan(0);
    const [summary] = await summarizePage(store, admin(), [atlas as SeriesRef], userId);
    expect(summary?.release).toBe('1500');
    await pagesMatch('after');
  });

  it('never lets a reader that read the books earlier overwrite newer figures', async () => {
    await pagesMatch('before');
    const series = { libraryId: comics, key: 'atlas' };
    const [atlas] = (await refsOf(admin(), true)).filter((r) => r.name.toLowerCase() === 'atlas');
    const work = async (): Promise<Parameters<typeof keep>[1][number]> => {
      const state = (await keptStates(store, [series])).get(`${comics}\u0000atlas`);
      const [summary] = await summarizeMany(store, admin(), [atlas as SeriesRef], 0);
      return { ...series, summary: summary as NonNullable<typeof summary>, state: state as NonNullable<typeof state> };
    };
    await store.db.updateTable('book_metadata').set({ published_date: '1400' }).where('book_id', '=', book.atlasUntitled as number).execute();
    const older = await work();
    await store.db.updateTable('book_metadata').set({ published_date: '1300' }).where('book_id', '=', book.atlasUntitled as number).execute();
    const newer = await work();
    await keep(store, [newer]);
    await keep(store, [older]);
    expect(await logRows()).toBe(0);
    const [summary] = await summarizePage(store, admin(), [atlas as SeriesRef], userId);
    expect(summary?.release).toBe('1300');
    await pagesMatch('after');
  });

  it('shrinks the log to a row per series, forgetting no write a reader has not seen', async () => {
    await pagesMatch('before');
    const atlasBook = book.atlasHidden as number;
    for (const title of ['one', 'two', 'three']) await store.db.updateTable('book_metadata').set({ title }).where('book_id', '=', atlasBook).execute();
    await store.db.updateTable('book_metadata').set({ title: 'four' }).where('book_id', '=', book.binderE as number).execute();
    await store.db.updateTable('book_metadata').set({ title: 'five' }).where('book_id', '=', book.binderE as number).execute();
    const series = [
      { libraryId: comics, key: 'atlas' },
      { libraryId: comics, key: 'binder' },
    ];
    // A reader that read the log before the compaction.
    const states = await keptStates(store, series);
    const [atlas] = (await refsOf(admin(), true)).filter((r) => r.name.toLowerCase() === 'atlas');
    const [before] = await summarizeMany(store, admin(), [atlas as SeriesRef], 0);
    // A metadata edit logs the series it is in and the one it was in: two rows each.
    expect(await compactStaleLog(store)).toBe(10);
    expect(await logRows()).toBe(2);
    // It stores and deletes the rows it saw: the compaction's row, which stands for them, stays.
    const state = states.get(`${comics}\u0000atlas`);
    await keep(store, [{ ...series[0], summary: before as NonNullable<typeof before>, state: state as NonNullable<typeof state> } as Parameters<typeof keep>[1][number]]);
    expect(await logRows()).toBe(2);
    await pagesMatch('after');
    expect(await logRows()).toBe(0);
  });

  it('works through a log of thousands of rows in statements of a few thousand, the event loop turning between them', async () => {
    await pagesMatch('before');
    // As a bulk write leaves it: thousands of rows for one series, a few for another (more than two statements' worth).
    const rows = [...Array.from({ length: 9_000 }, () => ({ library_id: comics, series_key: 'atlas' })), ...Array.from({ length: 30 }, () => ({ library_id: comics, series_key: 'binder' }))];
    for (let i = 0; i < rows.length; i += 1_000) await store.db.insertInto('komga_series_stale').values(rows.slice(i, i + 1_000)).execute();
    const turns = (): { count: () => number; stop: () => void } => {
      let count = 0;
      let stopped = false;
      const turn = (): void => {
        if (stopped) return;
        count++;
        setImmediate(turn);
      };
      setImmediate(turn);
      return { count: () => count, stop: () => (stopped = true) };
    };
    const compacting = turns();
    expect(await compactStaleLog(store)).toBe(9_030);
    compacting.stop();
    // Three statements delete atlas' rows, one binder's: requests get in between each.
    expect(compacting.count()).toBeGreaterThanOrEqual(4);
    expect(await logRows()).toBe(2);

    // A reader forgets the rows it saw, thousands of them, in as many statements.
    for (let i = 0; i < 9_000; i += 1_000) await store.db.insertInto('komga_series_stale').values(rows.slice(i, i + 1_000)).execute();
    const series = { libraryId: comics, key: 'atlas' };
    const state = (await keptStates(store, [series])).get(`${comics}\u0000atlas`);
    expect(state?.logIds).toHaveLength(9_001);
    const [atlas] = (await refsOf(admin(), true)).filter((r) => r.name.toLowerCase() === 'atlas');
    const [summary] = await summarizeMany(store, admin(), [atlas as SeriesRef], 0);
    const forgetting = turns();
    expect(await keep(store, [{ ...series, summary: summary as NonNullable<typeof summary>, state: state as NonNullable<typeof state> }])).toBe(1);
    forgetting.stop();
    expect(forgetting.count()).toBeGreaterThanOrEqual(2);
    // Binder's row stays: nobody worked it out.
    expect(await logRows()).toBe(1);
    await pagesMatch('after');
    expect(await logRows()).toBe(0);
  });

  it('shows a renamed author at once', async () => {
    await pagesMatch('before');
    const [atlas] = (await refsOf(admin(), true)).filter((r) => r.name.toLowerCase() === 'atlas');
    await updateAuthor(store.db, await idOf('author', 'atlasHidden writer'), { name: 'A renamed writer' });
    const [summary] = await summarizePage(store, admin(), [atlas as SeriesRef], userId);
    expect(summary?.authors).toContain('A renamed writer');
    expect(summary?.authors).not.toContain('atlasHidden writer');
  });
});

// Two writers (two replicas scanning, a scan beside a bulk edit) touching books of the same series in opposite orders
// must both commit: the triggers take no lock another writer can wait on. On SQLite writes take turns.
describe.runIf(onPostgres)('writers of several series at once', () => {
  it('both commit when they write books of two series in opposite orders', async () => {
    await add('orderA1', comics, 'A one', { series_name: 'Order A' });
    await add('orderA2', comics, 'A two', { series_name: 'Order A' });
    await add('orderB1', comics, 'B one', { series_name: 'Order B' });
    await add('orderB2', comics, 'B two', { series_name: 'Order B' });
    await pagesMatch('before the two writers');
    const barrier = (): { reached: () => void; passed: Promise<void> } => {
      let reached = (): void => undefined;
      const passed = new Promise<void>((resolve) => (reached = resolve));
      return { reached, passed };
    };
    const firstDone = [barrier(), barrier()];
    const writer = (index: 0 | 1, first: number, second: number): Promise<void> =>
      store.write(async ({ db }) => {
        await db.updateTable('book_metadata').set({ title: `first of writer ${index}` }).where('book_id', '=', first).execute();
        firstDone[index]?.reached();
        await firstDone[1 - index]?.passed;
        await db.updateTable('book_metadata').set({ title: `second of writer ${index}` }).where('book_id', '=', second).execute();
      });
    const results = await Promise.allSettled([writer(0, book.orderA1 as number, book.orderB1 as number), writer(1, book.orderB2 as number, book.orderA2 as number)]);
    expect(results.map((r) => (r.status === 'rejected' ? String(r.reason) : 'committed'))).toEqual(['committed', 'committed']);
    await pagesMatch('after the two writers');
  });
});
