// The mobile app's browsing routes over a real catalog: authors, series, libraries, filter options, shelves and magic
// shelves, the notebook (entries addressed by id and kind) and the current user; shapes field by field against
// schemas.md, paging and orders, visibility, and bad input in the error shape.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAnchoredNote } from '../../src/core/annotations/anchored-notes.ts';
import { createAnnotation } from '../../src/core/annotations/annotations.ts';
import { createBookmark } from '../../src/core/annotations/bookmarks.ts';
import { buildAppCatalog, FILLER_COUNT, type AppCatalog } from '../helpers/app-catalog.ts';

type Obj = Record<string, unknown>;

let c: AppCatalog;

beforeAll(async () => {
  c = await buildAppCatalog();
}, 120_000);
afterAll(async () => {
  await c?.close();
});

const json = async (token: string, url: string, status = 200): Promise<Obj> => {
  const res = await c.get(token, url);
  expect(res.statusCode, `${url}: ${res.body.slice(0, 300)}`).toBe(status);
  return res.json() as Obj;
};
const authorId = async (name: string): Promise<number> => (await c.d.store.db.selectFrom('author').select('id').where('name', '=', name).executeTakeFirstOrThrow()).id;
const LOCAL_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}$/;

describe('authors', () => {
  it('lists authors with visible books, by name, 30 to a page, in the app envelope', async () => {
    const body = await json(c.reader.token, '/api/v1/app/authors');
    expect(body).toEqual({
      content: [
        { id: await authorId('Ann Engineer'), name: 'Ann Engineer', bookCount: 1, hasPhoto: false },
        { id: await authorId('Filler Author'), name: 'Filler Author', bookCount: FILLER_COUNT, hasPhoto: false },
        { id: await authorId('Frank Herbert'), name: 'Frank Herbert', bookCount: 2, hasPhoto: false },
        { id: await authorId('Isaac Asimov'), name: 'Isaac Asimov', bookCount: 1, hasPhoto: false },
        { id: await authorId('Voice Person'), name: 'Voice Person', bookCount: 1, hasPhoto: false },
      ],
      page: 0,
      size: 30,
      totalElements: 5,
      totalPages: 1,
      hasNext: false,
      hasPrevious: false,
    });
    const admin = await json(c.admin.token, '/api/v1/app/authors?sort=bookCount&dir=desc&size=2');
    expect(admin).toMatchObject({ size: 2, totalElements: 6, totalPages: 3, hasNext: true });
    expect((admin.content as Obj[]).map((a) => a.name)).toEqual(['Filler Author', 'Frank Herbert']);
    expect(((await json(c.admin.token, '/api/v1/app/authors?sort=name&dir=desc&size=1')).content as Obj[])[0]).toMatchObject({ name: 'Voice Person' });
    expect(((await json(c.reader.token, '/api/v1/app/authors?search=HERB')).content as Obj[]).map((a) => a.name)).toEqual(['Frank Herbert']);
    expect(await json(c.reader.token, '/api/v1/app/authors?hasPhoto=true')).toMatchObject({ content: [], totalElements: 0 });
    expect(await json(c.reader.token, '/api/v1/app/authors?hasPhoto=false')).toMatchObject({ totalElements: 5 });
    expect(await json(c.reader.token, '/api/v1/app/authors?size=999')).toMatchObject({ size: 50 });
    expect(await json(c.outsider.token, '/api/v1/app/authors')).toMatchObject({ content: [], totalElements: 0 });
    expect(await json(c.reader.token, `/api/v1/app/authors?libraryId=${c.other}`, 403)).toMatchObject({ message: `Access denied to library ${c.other}` });
    expect(((await json(c.admin.token, `/api/v1/app/authors?libraryId=${c.other}`)).content as Obj[]).map((a) => a.name)).toEqual(['Hidden Hand']);
    expect(await json(c.reader.token, '/api/v1/app/authors?hasPhoto=maybe', 400)).toMatchObject({ message: 'Validation error' });
  });

  it('sends AppAuthorDetail, and 404 for unknown authors and for those only in libraries the caller lacks', async () => {
    const id = await authorId('Frank Herbert');
    await c.d.store.db.updateTable('author').set({ description: 'Wrote Dune.', asin: 'B000APF21M' }).where('id', '=', id).execute();
    expect(await json(c.reader.token, `/api/v1/app/authors/${id}`)).toEqual({ id, name: 'Frank Herbert', description: 'Wrote Dune.', asin: 'B000APF21M', bookCount: 2, hasPhoto: false });
    const hidden = await authorId('Hidden Hand');
    expect(await json(c.reader.token, `/api/v1/app/authors/${hidden}`, 404)).toEqual({ status: 404, message: `Author not found with ID: ${hidden}`, timestamp: expect.any(String) });
    expect(await json(c.admin.token, `/api/v1/app/authors/${hidden}`)).toMatchObject({ name: 'Hidden Hand', bookCount: 1 });
    expect(await json(c.reader.token, '/api/v1/app/authors/999999', 404)).toMatchObject({ message: 'Author not found with ID: 999999' });
  });
});

describe('series', () => {
  it('lists the series of visible books with counts, authors and cover books', async () => {
    await c.d.store.db.updateTable('book_metadata').set({ series_total: 6 }).where('book_id', '=', c.books.Dune as number).execute();
    const body = await json(c.reader.token, '/api/v1/app/series');
    expect(body).toMatchObject({ page: 0, size: 20, totalElements: 1, totalPages: 1, hasNext: false, hasPrevious: false });
    const [dune] = body.content as Obj[];
    const covers = await c.d.store.db.selectFrom('book_metadata').select(['book_id', 'cover_updated_on']).where('book_id', 'in', [c.books.Dune as number, c.books['Dune Messiah'] as number]).execute();
    const cover = (id: number): Obj => {
      const at = covers.find((r) => r.book_id === id)?.cover_updated_on;
      return at ? { coverUpdatedOn: at } : {};
    };
    expect(dune).toEqual({
      seriesName: 'Dune',
      bookCount: 2,
      seriesTotal: 6,
      authors: ['Frank Herbert'],
      booksRead: 0,
      latestAddedOn: expect.any(String),
      coverBooks: [
        { bookId: c.books.Dune, seriesNumber: 1, primaryFileType: 'EPUB', ...cover(c.books.Dune as number) },
        { bookId: c.books['Dune Messiah'], seriesNumber: 2, primaryFileType: 'EPUB', ...cover(c.books['Dune Messiah'] as number) },
      ],
    });
    const all = await json(c.admin.token, '/api/v1/app/series?sort=name&dir=asc');
    expect((all.content as Obj[]).map((s) => s.seriesName)).toEqual(['Dune', 'Hidden Series']);
    expect(((await json(c.admin.token, '/api/v1/app/series?search=hidden')).content as Obj[]).map((s) => s.seriesName)).toEqual(['Hidden Series']);
    expect(await json(c.reader.token, `/api/v1/app/series?libraryId=${c.other}`, 403)).toMatchObject({ status: 403 });
  });

  it('counts the caller’s read books and keeps only series in progress when asked', async () => {
    expect(await json(c.opdsReader.token, '/api/v1/app/series?status=in-progress')).toMatchObject({ content: [], totalElements: 0 });
    await c.send(c.opdsReader.token, 'PUT', `/api/v1/app/books/${c.books.Dune}/status`, { status: 'READ' });
    await c.send(c.opdsReader.token, 'PUT', `/api/v1/app/books/${c.books['Dune Messiah']}/progress`, { epubProgress: { cfi: 'x', percentage: 30 } });
    const inProgress = await json(c.opdsReader.token, '/api/v1/app/series?status=IN-PROGRESS');
    expect(inProgress).toMatchObject({ totalElements: 1 });
    expect((inProgress.content as Obj[])[0]).toMatchObject({ seriesName: 'Dune', booksRead: 1 });
    expect(((await json(c.reader.token, '/api/v1/app/series')).content as Obj[])[0]).toMatchObject({ booksRead: 0 });
  });

  it('pages a series’ books by number, case ignored in the name', async () => {
    const body = await json(c.reader.token, '/api/v1/app/series/dune/books');
    expect(body).toMatchObject({ page: 0, size: 20, totalElements: 2 });
    expect((body.content as Obj[]).map((b) => b.title)).toEqual(['Dune', 'Dune Messiah']);
    expect(((await json(c.reader.token, '/api/v1/app/series/Dune/books?sort=seriesNumber&dir=desc')).content as Obj[]).map((b) => b.title)).toEqual(['Dune Messiah', 'Dune']);
    expect(((await json(c.reader.token, '/api/v1/app/series/Dune/books?sort=title&dir=asc&size=1&page=1')).content as Obj[]).map((b) => b.title)).toEqual(['Dune Messiah']);
    expect(await json(c.reader.token, '/api/v1/app/series/Hidden%20Series/books')).toMatchObject({ content: [], totalElements: 0 });
    expect(await json(c.admin.token, '/api/v1/app/series/Hidden%20Series/books')).toMatchObject({ totalElements: 1 });
    // A name with a slash arrives whole.
    expect(await json(c.reader.token, '/api/v1/app/series/Du%2Fne/books')).toMatchObject({ totalElements: 0 });
  });
});

describe('libraries and the current user', () => {
  it('lists the libraries the caller may open with their visible books and paths', async () => {
    const [main] = (await c.get(c.reader.token, '/api/v1/app/libraries')).json() as Obj[];
    const path = await c.d.store.db.selectFrom('library_path').select(['id', 'path']).where('library_id', '=', c.main).executeTakeFirstOrThrow();
    expect((await c.get(c.reader.token, '/api/v1/app/libraries')).json()).toHaveLength(1);
    // Every book of the library that is not deleted, the file-less one included.
    expect(main).toEqual({ id: c.main, name: 'Main', bookCount: 4 + FILLER_COUNT + 3, paths: [{ id: path.id, path: path.path }] });
    const all = (await c.get(c.admin.token, '/api/v1/app/libraries')).json() as Obj[];
    expect(all.map((l) => [l.name, l.bookCount])).toEqual([['Main', 4 + FILLER_COUNT + 3], ['Other', 1]]);
    expect((await c.get(c.outsider.token, '/api/v1/app/libraries')).json()).toEqual([]);
  });

  it('sends AppUserInfo with the upload limit setting', async () => {
    expect((await c.get(c.opdsReader.token, '/api/v1/app/users/me')).json()).toEqual({ admin: false, canUpload: true, canDownload: false, canAccessBookdrop: false, maxFileUploadSizeMb: 100 });
    await c.d.store.db.insertInto('app_settings').values({ name: 'max_file_upload_size_in_mb', val: '250' }).onConflict((oc) => oc.column('name').doUpdateSet({ val: '250' })).execute();
    expect((await c.get(c.admin.token, '/api/v1/app/users/me')).json()).toEqual({ admin: true, canUpload: true, canDownload: true, canAccessBookdrop: true, maxFileUploadSizeMb: 250 });
  });
});

describe('filter options', () => {
  const FILTER_KEYS = [
    'ageRatings', 'amazonRatings', 'audibleRatings', 'authors', 'categories', 'comicCharacters', 'comicCreators', 'comicLocations', 'comicTeams',
    'contentRatings', 'fileSizes', 'fileTypes', 'goodreadsRatings', 'hardcoverRatings', 'languages', 'libraries', 'lubimyczytacRatings',
    'matchScores', 'moods', 'narrators', 'pageCounts', 'personalRatings', 'publishedYears', 'publishers', 'ranobedbRatings', 'readStatuses',
    'series', 'shelfStatuses', 'shelves', 'tags',
  ];

  it('counts every filter value over the caller’s books', async () => {
    const body = await json(c.reader.token, '/api/v1/app/filter-options');
    expect(Object.keys(body).sort()).toEqual(FILTER_KEYS);
    expect(body.authors).toEqual([
      { name: 'Filler Author', count: FILLER_COUNT },
      { name: 'Frank Herbert', count: 2 },
      { name: 'Ann Engineer', count: 1 },
      { name: 'Isaac Asimov', count: 1 },
      { name: 'Voice Person', count: 1 },
    ]);
    expect(body.languages).toEqual([
      { code: 'en', label: 'English', count: 2 },
      { code: 'fr', label: 'French', count: 1 },
    ]);
    expect(body.fileTypes).toEqual([
      { name: 'EPUB', count: FILLER_COUNT + 3 },
      { name: 'AUDIOBOOK', count: 1 },
      { name: 'PDF', count: 1 },
    ]);
    expect(body.categories).toEqual([
      { name: 'Science Fiction', count: 2 },
      { name: 'Classics', count: 1 },
    ]);
    expect(body.series).toEqual([{ name: 'Dune', count: 2 }]);
    expect(body.publishers).toEqual([
      { name: 'Chilton', count: 1 },
      { name: 'Putnam', count: 1 },
    ]);
    expect(body.narrators).toEqual([{ name: 'Scott Brick', count: 1 }]);
    expect(body.tags).toEqual([{ name: 'desert', count: 1 }]);
    expect(body.moods).toEqual([{ name: 'epic', count: 1 }]);
    expect(body.ageRatings).toEqual([{ name: '13', count: 1 }]);
    expect(body.contentRatings).toEqual([{ name: 'TEEN', count: 1 }]);
    expect(body.publishedYears).toEqual([
      { name: '1965', count: 1 },
      { name: '1969', count: 1 },
    ]);
    expect(body.amazonRatings).toEqual([
      { name: '3', count: 1 },
      { name: '5', count: 1 },
    ]);
    expect(body.goodreadsRatings).toEqual([{ name: '4', count: 1 }]);
    expect(body.pageCounts).toEqual([
      { name: '0', count: 2 },
      { name: '3', count: 2 },
      { name: '4', count: 1 },
    ]);
    expect(body.libraries).toEqual([{ name: `${c.main}:Main`, count: 4 + FILLER_COUNT + 2 }]);
    expect(body.shelfStatuses).toEqual([{ name: 'unshelved', count: 4 + FILLER_COUNT + 2 }]);
    expect(body.fileSizes).toEqual([{ name: '0', count: 4 + FILLER_COUNT + 1 }]);
    expect(body.comicCreators).toEqual([]);
  });

  it('puts the books without a status first as UNSET, counts the caller’s ratings, and narrows to a scope', async () => {
    const id = c.books.Foundation as number;
    await c.send(c.reader.token, 'PUT', `/api/v1/app/books/${id}/status`, { status: 'WONT_READ' });
    await c.send(c.reader.token, 'PUT', `/api/v1/app/books/${id}/rating`, { rating: 2 });
    const shelf = await c.d.store.db.insertInto('shelf').values({ user_id: c.reader.id, name: 'Keep' }).returning('id').executeTakeFirstOrThrow();
    await c.d.store.db.insertInto('book_shelf_mapping').values({ book_id: id, shelf_id: shelf.id }).execute();
    const body = await json(c.reader.token, '/api/v1/app/filter-options');
    const listed = 4 + FILLER_COUNT + 2;
    expect(body.readStatuses).toEqual([
      { name: 'UNSET', count: listed - 1 },
      { name: 'WONT_READ', count: 1 },
    ]);
    expect(body.personalRatings).toEqual([{ name: '2', count: 1 }]);
    expect(body.shelves).toEqual([{ name: `${shelf.id}:Keep`, count: 1 }]);
    expect(body.shelfStatuses).toEqual([
      { name: 'unshelved', count: listed - 1 },
      { name: 'shelved', count: 1 },
    ]);
    const scoped = await json(c.reader.token, `/api/v1/app/filter-options?shelfId=${shelf.id}`);
    expect(scoped.authors).toEqual([{ name: 'Isaac Asimov', count: 1 }]);
    expect(scoped.readStatuses).toEqual([{ name: 'WONT_READ', count: 1 }]);
    // Another user's view is their own.
    expect((await json(c.opdsReader.token, '/api/v1/app/filter-options')).personalRatings).toEqual([]);
    expect(await json(c.reader.token, `/api/v1/app/filter-options?libraryId=${c.other}`, 403)).toMatchObject({ message: `Access denied to library ${c.other}` });
    expect(await json(c.reader.token, '/api/v1/app/filter-options?shelfId=777777', 404)).toMatchObject({ message: 'Shelf not found with ID: 777777' });
    expect((await json(c.admin.token, `/api/v1/app/filter-options?libraryId=${c.other}`)).authors).toEqual([{ name: 'Hidden Hand', count: 1 }]);
    const empty = await json(c.outsider.token, '/api/v1/app/filter-options');
    expect(Object.values(empty).every((list) => Array.isArray(list) && list.length === 0)).toBe(true);
  });
});

describe('shelves and magic shelves', () => {
  it('lists own and public shelves and magic shelves, and pages a magic shelf’s books for those who may open it', async () => {
    const own = await c.d.store.db.insertInto('shelf').values({ user_id: c.opdsReader.id, name: 'To read', icon: 'book' }).returning('id').executeTakeFirstOrThrow();
    const shared = await c.d.store.db.insertInto('shelf').values({ user_id: c.admin.id, name: 'Staff picks', is_public: 1 }).returning('id').executeTakeFirstOrThrow();
    await c.d.store.db.insertInto('shelf').values({ user_id: c.admin.id, name: 'Admin only' }).execute();
    await c.d.store.db.insertInto('book_shelf_mapping').values([{ book_id: c.books.Dune as number, shelf_id: shared.id }, { book_id: c.books['Secret Diary'] as number, shelf_id: shared.id }]).execute();
    const shelves = (await c.get(c.opdsReader.token, '/api/v1/app/shelves')).json() as Obj[];
    expect(shelves.filter((s) => s.id === own.id || s.id === shared.id)).toEqual([
      { id: own.id, name: 'To read', icon: 'book', bookCount: 0, publicShelf: false },
      { id: shared.id, name: 'Staff picks', bookCount: 1, publicShelf: true },
    ]);
    expect(shelves.map((s) => s.name)).not.toContain('Admin only');

    const rules = (value: string): string => JSON.stringify({ type: 'group', join: 'and', rules: [{ field: 'authors', operator: 'includes_any', value: [value] }] });
    const mine = await c.d.store.db.insertInto('magic_shelf').values({ user_id: c.opdsReader.id, name: 'Fillers', icon: 'list', icon_type: 'LUCIDE', filter_json: rules('Filler Author') }).returning('id').executeTakeFirstOrThrow();
    const publicOne = await c.d.store.db.insertInto('magic_shelf').values({ user_id: c.admin.id, name: 'Herbert', filter_json: rules('Frank Herbert'), is_public: 1 }).returning('id').executeTakeFirstOrThrow();
    const privateOne = await c.d.store.db.insertInto('magic_shelf').values({ user_id: c.admin.id, name: 'Secret', filter_json: rules('Hidden Hand') }).returning('id').executeTakeFirstOrThrow();
    expect((await c.get(c.opdsReader.token, '/api/v1/app/shelves/magic')).json()).toEqual([
      { id: mine.id, name: 'Fillers', icon: 'list', iconType: 'LUCIDE', publicShelf: false },
      { id: publicOne.id, name: 'Herbert', publicShelf: true },
    ]);

    const page = await json(c.opdsReader.token, `/api/v1/app/shelves/magic/${mine.id}/books?size=10&page=1`);
    expect(page).toMatchObject({ page: 1, size: 10, totalElements: FILLER_COUNT, totalPages: 6, hasNext: true, hasPrevious: true });
    expect((page.content as Obj[]).map((b) => b.id)).toEqual([...c.fillers].sort((a, b) => a - b).slice(10, 20));
    expect(await json(c.opdsReader.token, `/api/v1/app/shelves/magic/${publicOne.id}/books`)).toMatchObject({ size: 20, totalElements: 2 });
    expect(await json(c.opdsReader.token, `/api/v1/app/shelves/magic/${privateOne.id}/books`, 403)).toMatchObject({ message: 'You are not allowed to access this magic shelf' });
    expect(await json(c.reader.token, `/api/v1/app/shelves/magic/${publicOne.id}/books`, 403)).toMatchObject({ message: 'You are not allowed to access this resource' });
    expect(await json(c.opdsReader.token, '/api/v1/app/shelves/magic/909090/books', 404)).toMatchObject({ message: 'Magic shelf not found with ID: 909090' });
    // The admin opens any magic shelf, yet sees only what the rules select.
    expect(await json(c.admin.token, `/api/v1/app/shelves/magic/${privateOne.id}/books`)).toMatchObject({ totalElements: 1 });
    // A shelf of a library the caller lacks selects nothing for them.
    const outsiderShelf = await c.d.store.db.insertInto('magic_shelf').values({ user_id: c.outsider.id, name: 'All', filter_json: '{"type":"group","join":"and","rules":[]}' }).returning('id').executeTakeFirstOrThrow();
    expect(await json(c.outsider.token, `/api/v1/app/shelves/magic/${outsiderShelf.id}/books`)).toMatchObject({ totalElements: 0, content: [] });
    expect(await json(c.opdsReader.token, `/api/v1/app/filter-options?magicShelfId=${publicOne.id}`)).toMatchObject({ authors: [{ name: 'Frank Herbert', count: 2 }] });
    expect(await json(c.reader.token, `/api/v1/app/filter-options?magicShelfId=${publicOne.id}`, 403)).toMatchObject({ status: 403 });
  });
});

describe('notebook', () => {
  let highlight: number;
  let note: number;
  let bookmark: number;

  beforeAll(async () => {
    const db = c.d.store.db;
    highlight = (await createAnnotation(db, c.reader.id, { bookId: c.books.Dune as number, cfi: 'epubcfi(/6/2!/4/2)', text: 'Fear is the mind-killer.', chapterTitle: 'Chapter 1' })).id;
    note = (await createAnchoredNote(db, c.reader.id, { bookId: c.books.Dune as number, cfi: 'epubcfi(/6/2!/4/8)', selectedText: 'spice', noteContent: 'Look this up', chapterTitle: 'Appendix' })).id;
    bookmark = (await createBookmark(db, c.reader.id, { bookId: c.books.Dune as number, cfi: 'epubcfi(/6/4)', title: 'Arrakis' })).id;
    await createAnnotation(db, c.reader.id, { bookId: c.books.Foundation as number, cfi: 'epubcfi(/6/2)', text: 'Violence is the last refuge of the incompetent.' });
    await createAnnotation(db, c.opdsReader.id, { bookId: c.books.Dune as number, cfi: 'epubcfi(/6/9)', text: 'Not the reader’s' });
    await createAnnotation(db, c.reader.id, { bookId: c.books['Secret Diary'] as number, cfi: 'epubcfi(/6/3)', text: 'From before losing access' });
    // Distinct creation times, in the order made.
    const stamp = (table: 'annotations' | 'book_notes_v2' | 'book_marks', id: number, at: string) => db.updateTable(table).set({ created_at: at }).where('id', '=', id).execute();
    await stamp('annotations', highlight, '2024-01-01T10:00:00.000Z');
    await stamp('book_notes_v2', note, '2024-01-02T10:00:00.000Z');
    await stamp('book_marks', bookmark, '2024-01-03T10:00:00.000Z');
  });

  it('pages the books with entries, by title, with their counts and authors', async () => {
    const body = await json(c.reader.token, '/api/v1/app/notebook/books');
    expect(body).toEqual({
      content: [
        { bookId: c.books.Dune, bookTitle: 'Dune', noteCount: 3, authors: ['Frank Herbert'], ...(await coverOf(c.books.Dune as number)) },
        { bookId: c.books.Foundation, bookTitle: 'Foundation', noteCount: 1, authors: ['Isaac Asimov'], ...(await coverOf(c.books.Foundation as number)) },
      ],
      page: 0,
      size: 20,
      totalElements: 2,
      totalPages: 1,
      hasNext: false,
      hasPrevious: false,
    });
    expect(await json(c.reader.token, '/api/v1/app/notebook/books?search=found&size=1')).toMatchObject({ totalElements: 1, content: [{ bookTitle: 'Foundation' }] });
    expect(await json(c.reader.token, '/api/v1/app/notebook/books?size=1&page=1')).toMatchObject({ totalElements: 2, content: [{ bookTitle: 'Foundation' }], hasPrevious: true });
    expect(await json(c.reader.token, '/api/v1/app/notebook/books?size=0', 400)).toMatchObject({ message: 'Page size must not be less than one' });
    expect(await json(c.reader.token, '/api/v1/app/notebook/books?page=-1', 400)).toMatchObject({ message: 'Page index must not be less than zero' });
  });

  it('pages a book’s entries newest first, by kind, search or chapter', async () => {
    const body = await json(c.reader.token, `/api/v1/app/notebook/books/${c.books.Dune}/entries`);
    expect(body).toMatchObject({ page: 0, size: 20, totalElements: 3 });
    const [first, second, third] = body.content as Obj[];
    expect(first).toEqual({ id: bookmark, type: 'BOOKMARK', bookId: c.books.Dune, text: 'Arrakis', createdAt: expect.stringMatching(LOCAL_DATE_TIME), updatedAt: expect.stringMatching(LOCAL_DATE_TIME) });
    expect(second).toMatchObject({ id: note, type: 'NOTE', text: 'spice', note: 'Look this up', chapterTitle: 'Appendix' });
    expect(third).toMatchObject({ id: highlight, type: 'HIGHLIGHT', text: 'Fear is the mind-killer.', color: '#FFFF00', style: 'highlight', chapterTitle: 'Chapter 1' });
    const ids = async (query: string): Promise<unknown[]> => ((await json(c.reader.token, `/api/v1/app/notebook/books/${c.books.Dune}/entries${query}`)).content as Obj[]).map((e) => e.id);
    expect(await ids('?sort=date_asc')).toEqual([highlight, note, bookmark]);
    expect(await ids('?sort=chapter')).toEqual([bookmark, note, highlight]);
    expect(await ids('?types=HIGHLIGHT&types=NOTE')).toEqual([note, highlight]);
    expect(await ids('?types=bookmark')).toEqual([bookmark]);
    expect(await ids('?types=SCRIBBLE')).toEqual([]);
    expect(await ids('?search=mind')).toEqual([highlight]);
    // Entries of a book the caller can no longer see stay out of sight.
    expect(await json(c.reader.token, `/api/v1/app/notebook/books/${c.books['Secret Diary']}/entries`)).toMatchObject({ totalElements: 0 });
  });

  it('updates and deletes an entry addressed by id and kind, the caller’s own only', async () => {
    const put = (id: number, type: string, payload: unknown, token = c.reader.token) => c.send(token, 'PUT', `/api/v1/app/notebook/entries/${id}?type=${type}`, payload);
    const updated = await put(highlight, 'highlight', { note: 'Litany', color: '#00FF00' });
    expect(updated.statusCode).toBe(200);
    expect(updated.json()).toEqual({
      id: highlight, type: 'HIGHLIGHT', bookId: c.books.Dune, text: 'Fear is the mind-killer.', note: 'Litany', color: '#00FF00', style: 'highlight', chapterTitle: 'Chapter 1',
      createdAt: expect.stringMatching(LOCAL_DATE_TIME), updatedAt: expect.stringMatching(LOCAL_DATE_TIME),
    });
    expect((await put(note, 'NOTE', { note: 'Melange' })).json()).toMatchObject({ id: note, type: 'NOTE', note: 'Melange', text: 'spice' });
    expect((await put(bookmark, 'BOOKMARK', { color: '#123ABC' })).json()).toMatchObject({ id: bookmark, type: 'BOOKMARK', text: 'Arrakis', color: '#123ABC' });
    const stored = await c.d.store.db.selectFrom('book_marks').select(['color', 'notes']).where('id', '=', bookmark).executeTakeFirstOrThrow();
    expect(stored).toEqual({ color: '#123ABC', notes: null });

    expect((await put(highlight, 'SCRIBBLE', { note: 'x' })).json()).toMatchObject({ status: 400, message: 'Unknown entry type: SCRIBBLE' });
    expect((await put(highlight, 'HIGHLIGHT', { color: 'green' })).statusCode).toBe(400);
    expect((await put(highlight, 'HIGHLIGHT', { note: 'x'.repeat(5001) })).statusCode).toBe(400);
    expect((await put(highlight, 'HIGHLIGHT', { note: 'mine now' }, c.opdsReader.token)).statusCode).toBe(404);
    expect((await c.send(c.reader.token, 'PUT', `/api/v1/app/notebook/entries/${highlight}`, { note: 'no type' })).statusCode).toBe(400);

    expect((await c.send(c.opdsReader.token, 'DELETE', `/api/v1/app/notebook/entries/${note}?type=NOTE`)).statusCode).toBe(404);
    const removed = await c.send(c.reader.token, 'DELETE', `/api/v1/app/notebook/entries/${note}?type=NOTE`);
    expect(removed.statusCode).toBe(204);
    expect(removed.body).toBe('');
    expect((await c.send(c.reader.token, 'DELETE', `/api/v1/app/notebook/entries/${note}?type=NOTE`)).statusCode).toBe(404);
    expect((await json(c.reader.token, '/api/v1/app/notebook/books')).content).toMatchObject([{ bookTitle: 'Dune', noteCount: 2 }, { bookTitle: 'Foundation' }]);
  });
});

async function coverOf(bookId: number): Promise<Obj> {
  const row = await c.d.store.db.selectFrom('book_metadata').select('cover_updated_on').where('book_id', '=', bookId).executeTakeFirstOrThrow();
  return row.cover_updated_on ? { coverUpdatedOn: row.cover_updated_on } : {};
}
