// A catalog for the mobile-app API tests: two scanned libraries of real EPUBs and a PDF, plus seeded books (fillers for
// paging, an audiobook, a paper book, a deleted one), metadata to filter on, and users with and without the libraries.
import { mkdirSync, writeFileSync } from 'node:fs';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { createLibrary } from '../../src/core/libraries/libraries.ts';
import { scanLibrary } from '../../src/core/scan/scanner.ts';
import { seedBook } from './catalog-seed.ts';
import { startTestDaemon, type TestDaemon } from './daemon.ts';
import { makeTempLibrary, writeSimpleEpub, type TempLibrary } from './library-fixtures.ts';
import { buildPdf } from './pdf-fixtures.ts';

export interface AppCatalog {
  d: TestDaemon;
  lib: TempLibrary;
  main: number;
  other: number;
  /** Book ids by title. */
  books: Record<string, number>;
  fillers: number[];
  admin: { id: number; token: string };
  /** The main library, no OPDS right. */
  reader: { id: number; token: string };
  /** The main library and canAccessOpds. */
  opdsReader: { id: number; token: string };
  /** No library at all. */
  outsider: { id: number; token: string };
  get(token: string, url: string): Promise<LightMyRequestResponse>;
  send(token: string, method: InjectOptions['method'], url: string, payload?: unknown): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

export const FILLER_COUNT = 55;

async function link(d: TestDaemon, bookId: number, mapping: 'book_metadata_category_mapping' | 'book_metadata_tag_mapping' | 'book_metadata_mood_mapping', table: 'category' | 'tag' | 'mood', name: string): Promise<void> {
  const existing = await d.store.db.selectFrom(table).select('id').where('name', '=', name).executeTakeFirst();
  const id = existing?.id ?? (await d.store.db.insertInto(table).values({ name }).returning('id').executeTakeFirstOrThrow()).id;
  const column = table === 'category' ? 'category_id' : table === 'tag' ? 'tag_id' : 'mood_id';
  await d.store.db.insertInto(mapping).values({ book_id: bookId, [column]: id } as never).execute();
}

export async function buildAppCatalog(): Promise<AppCatalog> {
  const d = await startTestDaemon();
  const lib = makeTempLibrary();
  mkdirSync(lib.path('main'), { recursive: true });
  mkdirSync(lib.path('other'), { recursive: true });
  await writeSimpleEpub(lib.path('main', 'Dune.epub'), { title: 'Dune', authors: ['Frank Herbert'], series: 'Dune', seriesIndex: 1, cover: '#a63' });
  await writeSimpleEpub(lib.path('main', 'Dune Messiah.epub'), { title: 'Dune Messiah', authors: ['Frank Herbert'], series: 'Dune', seriesIndex: 2 });
  await writeSimpleEpub(lib.path('main', 'Foundation.epub'), { title: 'Foundation', authors: ['Isaac Asimov'], language: 'fr' });
  writeFileSync(lib.path('main', 'Manual.pdf'), await buildPdf({ title: 'Field Manual', author: 'Ann Engineer', pages: 3 }));
  await writeSimpleEpub(lib.path('other', 'Secret.epub'), { title: 'Secret Diary', authors: ['Hidden Hand'], series: 'Hidden Series', seriesIndex: 1 });
  const admin = await (async () => {
    const token = await d.setupAdmin();
    const row = await d.store.db.selectFrom('users').select('id').where('username', '=', 'admin').executeTakeFirstOrThrow();
    return { id: row.id, token };
  })();
  const main = await createLibrary(d.store.db, { name: 'Main', paths: [lib.path('main')] });
  const other = await createLibrary(d.store.db, { name: 'Other', paths: [lib.path('other')] });
  for (const library of [main, other]) await scanLibrary(d.store, library, { coversRoot: d.ctx.paths.covers, workers: 0 });

  const books: Record<string, number> = {};
  for (const row of await d.store.db.selectFrom('book_metadata').select(['book_id', 'title']).execute()) books[row.title ?? ''] = row.book_id;

  const fillers: number[] = [];
  for (let i = 1; i <= FILLER_COUNT; i++) {
    const { bookId } = await seedBook(d.store.db, main.id, { title: `Filler ${String(i).padStart(2, '0')}`, authors: ['Filler Author'] });
    fillers.push(bookId);
  }
  books.Spoken = (await seedBook(d.store.db, main.id, { title: 'Spoken', types: ['AUDIOBOOK'], authors: ['Voice Person'] })).bookId;
  const paper = await d.store.db.insertInto('book').values({ library_id: main.id, is_physical: 1 }).returning('id').executeTakeFirstOrThrow();
  await d.store.db.insertInto('book_metadata').values({ book_id: paper.id, title: 'Paper Only', search_text: 'paper only' }).execute();
  books['Paper Only'] = paper.id;
  const empty = await d.store.db.insertInto('book').values({ library_id: main.id }).returning('id').executeTakeFirstOrThrow();
  await d.store.db.insertInto('book_metadata').values({ book_id: empty.id, title: 'No Files', search_text: 'no files' }).execute();
  books['No Files'] = empty.id;
  books.Gone = (await seedBook(d.store.db, main.id, { title: 'Gone' })).bookId;
  await d.store.db.updateTable('book').set({ deleted: 1 }).where('id', '=', books.Gone).execute();
  // Fillers were added long ago; the scanned books are recent.
  await d.store.db.updateTable('book').set({ added_on: '2020-01-01T00:00:00.000Z' }).where('id', 'in', fillers).execute();

  await d.store.db
    .updateTable('book_metadata')
    .set({ publisher: 'Chilton', page_count: 412, goodreads_rating: 4.3, goodreads_review_count: 1200, amazon_rating: 4.6, published_date: '1965-08-01', age_rating: 13, narrator: null, content_rating: 'TEEN' })
    .where('book_id', '=', books.Dune as number)
    .execute();
  await d.store.db.updateTable('book_metadata').set({ publisher: 'Putnam', page_count: 256, published_date: '1969-10-15', amazon_rating: 3.2 }).where('book_id', '=', books['Dune Messiah'] as number).execute();
  await d.store.db.updateTable('book_metadata').set({ narrator: 'Scott Brick', page_count: 40 }).where('book_id', '=', books.Spoken).execute();
  await d.store.db.updateTable('book_metadata').set({ page_count: 320 }).where('book_id', '=', books.Foundation as number).execute();
  await d.store.db.updateTable('book_metadata').set({ page_count: 3 }).where('book_id', '=', books['Field Manual'] as number).execute();
  await link(d, books.Dune as number, 'book_metadata_category_mapping', 'category', 'Science Fiction');
  await link(d, books.Foundation as number, 'book_metadata_category_mapping', 'category', 'Science Fiction');
  await link(d, books.Foundation as number, 'book_metadata_category_mapping', 'category', 'Classics');
  await link(d, books.Dune as number, 'book_metadata_tag_mapping', 'tag', 'desert');
  await link(d, books.Dune as number, 'book_metadata_mood_mapping', 'mood', 'epic');

  const reader = await d.createUser('reader', { canDownload: true }, [main.id]);
  const opdsReader = await d.createUser('opdsreader', { canAccessOpds: true, canUpload: true }, [main.id]);
  const outsider = await d.createUser('outsider', { canAccessOpds: true }, []);

  const send = (token: string, method: InjectOptions['method'], url: string, payload?: unknown) =>
    d.inject({ method, url, headers: { authorization: `Bearer ${token}` }, ...(payload === undefined ? {} : { payload: payload as InjectOptions['payload'] }) });
  return {
    d,
    lib,
    main: main.id,
    other: other.id,
    books,
    fillers,
    admin,
    reader,
    opdsReader,
    outsider,
    get: (token, url) => send(token, 'GET', url),
    send,
    close: async () => {
      await d.close();
      lib.cleanup();
    },
  };
}
