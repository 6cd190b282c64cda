// The mobile app's book routes (/api/v1/app/books…) over real HTTP handling on a real catalog: the page envelope and
// AppBookSummary / AppBookDetail field by field, paging caps, orders, every kind of filter and its 400s, visibility,
// and progress / status / rating updates through the web routes' rules (thresholds, no downgrade).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAppCatalog, FILLER_COUNT, type AppCatalog } from '../helpers/app-catalog.ts';

type Obj = Record<string, unknown>;

let c: AppCatalog;

beforeAll(async () => {
  c = await buildAppCatalog();
}, 120_000);
afterAll(async () => {
  await c?.close();
});

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/** AppBookSummary's properties (schemas.md) and the JSON type each must have when present. */
const SUMMARY_TYPES: Record<string, string> = {
  id: 'number', title: 'string', authors: 'array', thumbnailUrl: 'string', readStatus: 'string', personalRating: 'number',
  seriesName: 'string', seriesNumber: 'number', libraryId: 'number', addedOn: 'string', lastReadTime: 'string', readProgress: 'number',
  primaryFileId: 'number', primaryFileType: 'string', primaryFileName: 'string', coverUpdatedOn: 'string', audiobookCoverUpdatedOn: 'string',
  isPhysical: 'boolean', publisher: 'string', categories: 'array', tags: 'array', moods: 'array', language: 'string', narrator: 'string',
  isbn13: 'string', isbn10: 'string', publishedDate: 'string', pageCount: 'number', ageRating: 'number', contentRating: 'string',
  metadataMatchScore: 'number', fileSizeKb: 'number', amazonRating: 'number', amazonReviewCount: 'number', goodreadsRating: 'number',
  goodreadsReviewCount: 'number', hardcoverRating: 'number', hardcoverReviewCount: 'number', ranobedbRating: 'number',
  lubimyczytacRating: 'number', audibleRating: 'number', audibleReviewCount: 'number', allMetadataLocked: 'boolean',
};

const DETAIL_TYPES: Record<string, string> = {
  id: 'number', title: 'string', authors: 'array', thumbnailUrl: 'string', readStatus: 'string', personalRating: 'number', seriesName: 'string',
  seriesNumber: 'number', libraryId: 'number', addedOn: 'string', lastReadTime: 'string', subtitle: 'string', description: 'string',
  categories: 'array', publisher: 'string', publishedDate: 'string', pageCount: 'number', isbn13: 'string', language: 'string',
  goodreadsRating: 'number', goodreadsReviewCount: 'number', libraryName: 'string', shelves: 'array', readProgress: 'number',
  primaryFileType: 'string', fileTypes: 'array', files: 'array', coverUpdatedOn: 'string', audiobookCoverUpdatedOn: 'string',
  isPhysical: 'boolean', epubProgress: 'object', pdfProgress: 'object', cbxProgress: 'object', audiobookProgress: 'object', koreaderProgress: 'object',
};

const typeOf = (v: unknown): string => (Array.isArray(v) ? 'array' : v === null ? 'null' : typeof v);

/** Every property is one the DTO has, with its type; nulls are left out (class-level NON_NULL). */
function expectShape(body: Obj, types: Record<string, string>): void {
  for (const [key, value] of Object.entries(body)) {
    expect(types[key], `unexpected property ${key}`).toBeDefined();
    expect(typeOf(value), key).toBe(types[key]);
  }
}

const PAGE_KEYS = ['content', 'hasNext', 'hasPrevious', 'page', 'size', 'totalElements', 'totalPages'];

function expectPage(body: Obj, expected: { page: number; size: number; totalElements: number }): Obj[] {
  expect(Object.keys(body).sort()).toEqual(PAGE_KEYS);
  const totalPages = Math.ceil(expected.totalElements / expected.size);
  expect(body).toMatchObject({ ...expected, totalPages, hasNext: expected.page < totalPages - 1, hasPrevious: expected.page > 0 });
  return body.content as Obj[];
}

/** Listed books of the main library: scanned four, fillers, the audiobook and the paper book (not the file-less or deleted). */
const MAIN_LISTED = 4 + FILLER_COUNT + 2;

const titles = (content: Obj[]): string[] => content.map((b) => b.title as string);
const list = async (token: string, query: string): Promise<Obj> => {
  const res = await c.get(token, `/api/v1/app/books${query}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as Obj;
};

describe('GET /api/v1/app/books', () => {
  it('pages the listed books newest first, 50 at most, in the flat AppPageResponse envelope', async () => {
    const body = await list(c.reader.token, '');
    const content = expectPage(body, { page: 0, size: 50, totalElements: MAIN_LISTED });
    expect(content).toHaveLength(50);
    // Fillers were added in 2020: the recent books come first.
    expect(titles(content).slice(0, 6).sort()).toEqual(['Dune', 'Dune Messiah', 'Field Manual', 'Foundation', 'Paper Only', 'Spoken']);
    expect(titles(content)[6]).toMatch(/^Filler /);
    expect(titles(content)).not.toContain('No Files');
    expect(titles(content)).not.toContain('Gone');
    expect(titles(content)).not.toContain('Secret Diary');
    for (const book of content) expectShape(book, SUMMARY_TYPES);
  });

  it('sends AppBookSummary field by field', async () => {
    const content = (await list(c.reader.token, '?search=dune&sort=seriesNumber&dir=asc')).content as Obj[];
    const dune = content[0] as Obj;
    const file = await c.d.store.db.selectFrom('book_file').select(['id', 'file_name', 'file_size_kb']).where('book_id', '=', c.books.Dune as number).executeTakeFirstOrThrow();
    const meta = await c.d.store.db.selectFrom('book_metadata').select(['cover_updated_on']).where('book_id', '=', c.books.Dune as number).executeTakeFirstOrThrow();
    expect(dune).toEqual({
      id: c.books.Dune,
      title: 'Dune',
      authors: ['Frank Herbert'],
      thumbnailUrl: `/api/books/${c.books.Dune}/cover`,
      seriesName: 'Dune',
      seriesNumber: 1,
      libraryId: c.main,
      addedOn: expect.stringMatching(ISO_INSTANT),
      primaryFileId: file.id,
      primaryFileType: 'EPUB',
      primaryFileName: file.file_name,
      ...(meta.cover_updated_on ? { coverUpdatedOn: meta.cover_updated_on } : {}),
      isPhysical: false,
      publisher: 'Chilton',
      categories: ['Science Fiction'],
      tags: ['desert'],
      moods: ['epic'],
      language: 'en',
      publishedDate: '1965-08-01',
      pageCount: 412,
      ageRating: 13,
      contentRating: 'TEEN',
      fileSizeKb: file.file_size_kb,
      amazonRating: 4.6,
      goodreadsRating: 4.3,
      goodreadsReviewCount: 1200,
      allMetadataLocked: false,
    });
    expect(meta.cover_updated_on).toMatch(ISO_INSTANT);
    const paper = ((await list(c.reader.token, '?search=paper')).content as Obj[])[0] as Obj;
    expect(paper).toMatchObject({ title: 'Paper Only', isPhysical: true, authors: [], categories: [] });
    expect(paper.primaryFileId).toBeUndefined();
  });

  it('caps the size at 50, replaces sizes and pages out of range, and pages on', async () => {
    expectPage(await list(c.reader.token, '?size=500'), { page: 0, size: 50, totalElements: MAIN_LISTED });
    expectPage(await list(c.reader.token, '?size=0'), { page: 0, size: 50, totalElements: MAIN_LISTED });
    expectPage(await list(c.reader.token, '?page=-3&size=10'), { page: 0, size: 10, totalElements: MAIN_LISTED });
    const last = expectPage(await list(c.reader.token, '?page=1'), { page: 1, size: 50, totalElements: MAIN_LISTED });
    expect(last).toHaveLength(MAIN_LISTED - 50);
    expect(expectPage(await list(c.reader.token, '?page=9'), { page: 9, size: 50, totalElements: MAIN_LISTED })).toEqual([]);
    const first = (await list(c.reader.token, '?page=0&size=20')).content as Obj[];
    const second = (await list(c.reader.token, '?page=1&size=20')).content as Obj[];
    expect(new Set([...first, ...second].map((b) => b.id)).size).toBe(40);
    // An order no index gives is paged from the whole list sorted once, which gives the total too.
    expectPage(await list(c.reader.token, '?sort=pageCount&size=10'), { page: 0, size: 10, totalElements: MAIN_LISTED });
    expect(expectPage(await list(c.reader.token, '?sort=pageCount&page=1'), { page: 1, size: 50, totalElements: MAIN_LISTED })).toHaveLength(MAIN_LISTED - 50);
    expect(expectPage(await list(c.reader.token, '?sort=pageCount&page=9'), { page: 9, size: 50, totalElements: MAIN_LISTED })).toEqual([]);
  });

  it('orders by the app sort names in either direction; an unknown name orders by date added, newest first', async () => {
    const asc = titles((await list(c.reader.token, '?sort=title&dir=asc&size=50')).content as Obj[]);
    expect(asc.slice(0, 4)).toEqual(['Dune', 'Dune Messiah', 'Field Manual', 'Filler 01']);
    const desc = titles((await list(c.reader.token, '?sort=TITLE&size=3')).content as Obj[]);
    expect(desc).toEqual(['Spoken', 'Paper Only', 'Foundation']);
    const pages = (await list(c.reader.token, '?sort=pageCount&dir=desc&size=4')).content as Obj[];
    expect(pages.map((b) => [b.title, b.pageCount])).toEqual([['Dune', 412], ['Foundation', 320], ['Dune Messiah', 256], ['Spoken', 40]]);
    const unknown = titles((await list(c.reader.token, '?sort=nonsense&size=60')).content as Obj[]);
    const byDate = titles((await list(c.reader.token, '?size=60')).content as Obj[]);
    expect(unknown).toEqual(byDate);
    expect(byDate.slice(-FILLER_COUNT + 50)).toEqual(byDate.slice(-5));
  });

  it('filters by authors, language, series, category, tag, publisher, file type and search, with or / and / not', async () => {
    const get = async (query: string): Promise<string[]> => titles((await list(c.reader.token, `${query}&size=50&sort=title&dir=asc`)).content as Obj[]);
    expect(await get('?authors=frank herbert')).toEqual(['Dune', 'Dune Messiah']);
    expect(await get('?authors=Frank Herbert,Isaac Asimov')).toEqual(['Dune', 'Dune Messiah', 'Foundation']);
    expect(await get('?authors=Frank Herbert&authors=Isaac Asimov&filterMode=and')).toEqual([]);
    expect(await get('?language=FR')).toEqual(['Foundation']);
    expect(await get('?series=dune')).toEqual(['Dune', 'Dune Messiah']);
    expect(await get('?category=Science Fiction&category=Classics&filterMode=and')).toEqual(['Foundation']);
    expect(await get('?category=Science Fiction')).toEqual(['Dune', 'Foundation']);
    expect(await get('?tag=DESERT')).toEqual(['Dune']);
    expect(await get('?publisher=chilton,putnam')).toEqual(['Dune', 'Dune Messiah']);
    expect(await get('?fileType=pdf')).toEqual(['Field Manual']);
    expect(await get('?fileType=AUDIOBOOK')).toEqual(['Spoken']);
    expect(await get('?search=MESS')).toEqual(['Dune Messiah']);
    expect(await get('?search=asimov')).toEqual(['Foundation']);
    const notFillers = await get('?authors=Filler Author&filterMode=not');
    expect(notFillers).toEqual(['Dune', 'Dune Messiah', 'Field Manual', 'Foundation', 'Paper Only', 'Spoken']);
    // Not a wildcard: the percent sign is searched for literally.
    expect(await get('?search=%25')).toEqual([]);
  });

  it('filters by buckets: page count, published year, ratings, age rating, file size', async () => {
    const get = async (query: string): Promise<string[]> => titles((await list(c.reader.token, `${query}&size=50&sort=title&dir=asc`)).content as Obj[]);
    expect(await get('?pageCount=0')).toEqual(['Field Manual', 'Spoken']);
    expect(await get('?pageCount=3,4')).toEqual(['Dune', 'Dune Messiah', 'Foundation']);
    expect(await get('?pageCount=0&filterMode=not')).toEqual(['Dune', 'Dune Messiah', 'Foundation']);
    expect(await get('?publishedDate=1965')).toEqual(['Dune']);
    expect(await get('?amazonRating=5')).toEqual(['Dune']);
    expect(await get('?amazonRating=3')).toEqual(['Dune Messiah']);
    expect(await get('?ageRating=13')).toEqual(['Dune']);
    expect((await list(c.reader.token, '?fileSize=0')).totalElements).toBe(FILLER_COUNT + 1 + 4);
    expect(await get('?fileSize=0&filterMode=not')).toEqual(['Paper Only']);
    expect(await get('?goodreadsRating=4&filterMode=not')).toEqual([]);
  });

  it('refuses values that name nothing with 400 in the error shape', async () => {
    const cases: [string, string][] = [
      ['?fileType=XYZ', 'Invalid fileType values: [XYZ]. Valid values: [PDF, EPUB, CBX, FB2, MOBI, AZW3, AUDIOBOOK]'],
      ['?status=SKIMMED', 'Invalid status values: [SKIMMED]. Valid values: [UNREAD, READING, RE_READING, READ, PARTIALLY_READ, PAUSED, WONT_READ, ABANDONED, UNSET]'],
      ['?ageRating=7', 'Invalid ageRating bucket ID: 7'],
      ['?pageCount=big', 'Invalid pageCount values: [big]'],
      ['?shelfStatus=maybe', 'Invalid shelfStatus values: [maybe]. Valid values: [shelved, unshelved]'],
      ['?comicCreator=Stan Lee:writer', 'Invalid comic creator role: writer'],
      ['?shelves=abc', 'Invalid shelf values: [abc]'],
    ];
    for (const [query, message] of cases) {
      const res = await c.get(c.reader.token, `/api/v1/app/books${query}`);
      expect(res.statusCode, query).toBe(400);
      expect(res.json()).toEqual({ status: 400, message, timestamp: expect.any(String) });
    }
    const wrongType = await c.get(c.reader.token, '/api/v1/app/books?page=first');
    expect(wrongType.statusCode).toBe(400);
    expect(wrongType.json()).toMatchObject({ status: 400, message: 'Validation error', details: [expect.stringContaining('page')] });
  });

  it('keeps other libraries out and answers 403 for a library, shelf or magic shelf the caller may not open', async () => {
    expect(titles((await list(c.reader.token, '?search=secret')).content as Obj[])).toEqual([]);
    expect(titles((await list(c.admin.token, '?search=secret')).content as Obj[])).toEqual(['Secret Diary']);
    expect((await list(c.admin.token, '')).totalElements).toBe(MAIN_LISTED + 1);
    const library = await c.get(c.reader.token, `/api/v1/app/books?libraryId=${c.other}`);
    expect(library.statusCode).toBe(403);
    expect(library.json()).toMatchObject({ status: 403, message: `Access denied to library ${c.other}` });
    expect((await list(c.admin.token, `?libraryId=${c.other}`)).totalElements).toBe(1);
    expectPage(await list(c.outsider.token, ''), { page: 0, size: 50, totalElements: 0 });
    expect((await c.get(c.outsider.token, '/api/v1/app/books/ids')).json()).toEqual([]);

    const missingShelf = await c.get(c.reader.token, '/api/v1/app/books?shelfId=999999');
    expect(missingShelf.statusCode).toBe(404);
    expect(missingShelf.json()).toMatchObject({ message: 'Shelf not found with ID: 999999' });
    const privateShelf = await c.d.store.db.insertInto('shelf').values({ user_id: c.admin.id, name: 'Admin private' }).returning('id').executeTakeFirstOrThrow();
    const shelf403 = await c.get(c.reader.token, `/api/v1/app/books?shelfId=${privateShelf.id}`);
    expect(shelf403.statusCode).toBe(403);
    expect(shelf403.json()).toMatchObject({ message: `Access denied to shelf ${privateShelf.id}` });

    const rules = JSON.stringify({ type: 'group', join: 'and', rules: [{ field: 'authors', operator: 'includes_any', value: ['Frank Herbert'] }] });
    const magic = await c.d.store.db.insertInto('magic_shelf').values({ user_id: c.admin.id, name: 'Herbert', filter_json: rules, is_public: 1 }).returning('id').executeTakeFirstOrThrow();
    const noOpds = await c.get(c.reader.token, `/api/v1/app/books?magicShelfId=${magic.id}`);
    expect(noOpds.statusCode).toBe(403);
    expect(noOpds.json()).toMatchObject({ message: 'You are not allowed to access this resource' });
    expect(titles((await list(c.opdsReader.token, `?magicShelfId=${magic.id}&sort=title&dir=asc`)).content as Obj[])).toEqual(['Dune', 'Dune Messiah']);
    expect((await c.get(c.opdsReader.token, '/api/v1/app/books?magicShelfId=424242')).statusCode).toBe(404);
  });

  it('lists every matching id for "select all"', async () => {
    const ids = (await c.get(c.reader.token, '/api/v1/app/books/ids?authors=Filler Author')).json() as number[];
    expect(ids).toEqual([...c.fillers].sort((a, b) => a - b));
    expect((await c.get(c.reader.token, '/api/v1/app/books/ids?fileType=nope')).statusCode).toBe(400);
  });
});

describe('one book', () => {
  it('sends AppBookDetail with its files and the caller’s shelves', async () => {
    const id = c.books.Dune as number;
    const shelf = await c.d.store.db.insertInto('shelf').values({ user_id: c.reader.id, name: 'Mine', icon: 'star' }).returning('id').executeTakeFirstOrThrow();
    const foreign = await c.d.store.db.insertInto('shelf').values({ user_id: c.admin.id, name: 'Not yours' }).returning('id').executeTakeFirstOrThrow();
    await c.d.store.db.insertInto('book_shelf_mapping').values([{ book_id: id, shelf_id: shelf.id }, { book_id: id, shelf_id: foreign.id }]).execute();
    const res = await c.get(c.reader.token, `/api/v1/app/books/${id}`);
    expect(res.statusCode).toBe(200);
    const body = res.json() as Obj;
    expectShape(body, DETAIL_TYPES);
    const file = await c.d.store.db.selectFrom('book_file').selectAll().where('book_id', '=', id).executeTakeFirstOrThrow();
    expect(body).toMatchObject({
      id,
      title: 'Dune',
      authors: ['Frank Herbert'],
      thumbnailUrl: `/api/books/${id}/cover`,
      libraryId: c.main,
      libraryName: 'Main',
      categories: ['Science Fiction'],
      publisher: 'Chilton',
      primaryFileType: 'EPUB',
      fileTypes: ['EPUB'],
      isPhysical: false,
      shelves: [{ id: shelf.id, name: 'Mine', icon: 'star', bookCount: 1, publicShelf: false }],
    });
    expect(body.files).toEqual([
      { id: file.id, bookId: id, fileName: file.file_name, book: true, folderBased: false, bookType: 'EPUB', archiveType: 'ZIP', fileSizeKb: file.file_size_kb, extension: 'epub', addedOn: file.added_on, primary: true },
    ]);
    expect(body.readStatus).toBeUndefined();
    expect(body.epubProgress).toBeUndefined();
  });

  it('answers 404 for an unknown book and 403 for one in a library the caller lacks', async () => {
    for (const path of ['', '/progress']) {
      const missing = await c.get(c.reader.token, `/api/v1/app/books/987654${path}`);
      expect(missing.statusCode).toBe(404);
      expect(missing.json()).toEqual({ status: 404, message: 'Book not found with ID: 987654', timestamp: expect.any(String) });
      const hidden = await c.get(c.reader.token, `/api/v1/app/books/${c.books['Secret Diary']}${path}`);
      expect(hidden.statusCode).toBe(403);
      expect(hidden.json()).toMatchObject({ status: 403 });
    }
    expect((await c.get(c.reader.token, '/api/v1/app/books/abc')).statusCode).toBe(400);
  });
});

describe('progress, status and rating', () => {
  const progressOf = async (token: string, id: number): Promise<Obj> => (await c.get(token, `/api/v1/app/books/${id}/progress`)).json() as Obj;

  it('records progress with the web thresholds: READING above 0.1 %, READ at 99.5 %, never back to UNREAD', async () => {
    const id = c.books.Foundation as number;
    expect(await progressOf(c.reader.token, id)).toEqual({});
    const put = (payload: unknown) => c.send(c.reader.token, 'PUT', `/api/v1/app/books/${id}/progress`, payload);

    const reading = await put({ epubProgress: { cfi: 'epubcfi(/6/4!/4/2)', href: 'ch1.xhtml', percentage: 42.44 } });
    expect(reading.statusCode).toBe(200);
    expect(reading.body).toBe('');
    let progress = await progressOf(c.reader.token, id);
    expect(progress).toEqual({
      readProgress: 42.4,
      readStatus: 'READING',
      lastReadTime: expect.stringMatching(ISO_INSTANT),
      epubProgress: { cfi: 'epubcfi(/6/4!/4/2)', href: 'ch1.xhtml', percentage: 42.4, updatedAt: progress.lastReadTime },
    });

    await put({ epubProgress: { cfi: 'epubcfi(/6/4!/4/9)', percentage: 99.5 } });
    progress = await progressOf(c.reader.token, id);
    expect(progress.readStatus).toBe('READ');
    const row = await c.d.store.db.selectFrom('user_book_progress').selectAll().where('user_id', '=', c.reader.id).where('book_id', '=', id).executeTakeFirstOrThrow();
    expect(row.date_finished).toMatch(ISO_INSTANT);

    await put({ epubProgress: { cfi: 'epubcfi(/6/2)', percentage: 0 } });
    expect((await progressOf(c.reader.token, id)).readStatus).toBe('READ');
    await put({ epubProgress: { cfi: 'epubcfi(/6/3)', percentage: 10 } });
    expect((await progressOf(c.reader.token, id)).readStatus).toBe('READING');

    // The web routes see the same reading state.
    const web = (await c.get(c.reader.token, `/api/v1/books/${id}`)).json() as Obj;
    expect(web.readStatus).toBe('READING');

    // The per-file form, and an explicit finish date.
    const file = await c.d.store.db.selectFrom('book_file').select('id').where('book_id', '=', id).executeTakeFirstOrThrow();
    expect((await put({ fileProgress: { bookFileId: file.id, positionData: 'epubcfi(/6/8)', progressPercent: 100 }, dateFinished: '2024-05-01T10:00:00Z' })).statusCode).toBe(200);
    const done = await c.d.store.db.selectFrom('user_book_progress').selectAll().where('user_id', '=', c.reader.id).where('book_id', '=', id).executeTakeFirstOrThrow();
    expect(done.read_status).toBe('READ');
    expect(done.date_finished).toBe('2024-05-01T10:00:00.000Z');
  });

  it('refuses a report without progress, with wrong types, for unknown or hidden books and unknown files', async () => {
    const id = c.books['Dune Messiah'] as number;
    const empty = await c.send(c.reader.token, 'PUT', `/api/v1/app/books/${id}/progress`, {});
    expect(empty.statusCode).toBe(400);
    expect(empty.json()).toEqual({ status: 400, message: 'Validation error', details: ['progressValid: At least one progress field must be provided'], timestamp: expect.any(String) });
    const wrongType = await c.send(c.reader.token, 'PUT', `/api/v1/app/books/${id}/progress`, { epubProgress: { percentage: 'half' } });
    expect(wrongType.statusCode).toBe(400);
    expect(wrongType.json()).toMatchObject({ message: 'Validation error' });
    const malformed = await c.d.inject({ method: 'PUT', url: `/api/v1/app/books/${id}/progress`, headers: { authorization: `Bearer ${c.reader.token}`, 'content-type': 'application/json' }, payload: '{"epubProgress":' });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json()).toMatchObject({ message: 'Request body is missing or malformed.' });
    expect((await c.send(c.reader.token, 'PUT', '/api/v1/app/books/987654/progress', { pdfProgress: { page: 1, percentage: 5 } })).statusCode).toBe(404);
    expect((await c.send(c.reader.token, 'PUT', `/api/v1/app/books/${c.books['Secret Diary']}/progress`, { epubProgress: { percentage: 5 } })).statusCode).toBe(403);
    const unknownFile = await c.send(c.reader.token, 'PUT', `/api/v1/app/books/${id}/progress`, { fileProgress: { bookFileId: 987654, progressPercent: 5 } });
    expect(unknownFile.statusCode).toBe(404);
    expect(await c.d.store.db.selectFrom('user_book_progress').select('id').where('user_id', '=', c.reader.id).where('book_id', '=', id).executeTakeFirst()).toBeUndefined();
  });

  it('shows an audiobook position and KOReader progress as the app DTO has them', async () => {
    const id = c.books.Spoken as number;
    const file = await c.d.store.db.selectFrom('book_file').select('id').where('book_id', '=', id).executeTakeFirstOrThrow();
    expect((await c.send(c.reader.token, 'PUT', `/api/v1/app/books/${id}/progress`, { audiobookProgress: { positionMs: 65_000, trackIndex: 2, percentage: 12.5 } })).statusCode).toBe(200);
    await c.d.store.db.updateTable('user_book_progress').set({ koreader_progress_percent: 0.25, koreader_device: 'Kindle', koreader_device_id: 'K1', koreader_last_sync_time: '2024-01-02T03:04:05.000Z' }).where('user_id', '=', c.reader.id).where('book_id', '=', id).execute();
    const progress = await progressOf(c.reader.token, id);
    expect(progress).toMatchObject({
      readStatus: 'READING',
      readProgress: 0.25,
      audiobookProgress: { positionMs: 65_000, trackIndex: 2, percentage: 12.5, updatedAt: expect.stringMatching(ISO_INSTANT) },
      koreaderProgress: { percentage: 0.25, device: 'Kindle', deviceId: 'K1', lastSyncTime: '2024-01-02T03:04:05.000Z' },
    });
    const stored = await c.d.store.db.selectFrom('user_book_file_progress').select(['position_data', 'position_href']).where('user_id', '=', c.reader.id).where('book_file_id', '=', file.id).executeTakeFirstOrThrow();
    expect(stored).toEqual({ position_data: '65000', position_href: '2' });
    const detail = (await c.get(c.reader.token, `/api/v1/app/books/${id}`)).json() as Obj;
    expect(detail.audiobookProgress).toEqual(progress.audiobookProgress);
  });

  it('sets the status and the 1-5 rating, and refuses bad values', async () => {
    const id = c.books['Field Manual'] as number;
    const status = await c.send(c.reader.token, 'PUT', `/api/v1/app/books/${id}/status`, { status: 'PAUSED' });
    expect(status.statusCode).toBe(200);
    expect(status.body).toBe('');
    expect((await progressOf(c.reader.token, id)).readStatus).toBe('PAUSED');
    await c.send(c.reader.token, 'PUT', `/api/v1/app/books/${id}/status`, { status: 'READ' });
    const row = await c.d.store.db.selectFrom('user_book_progress').selectAll().where('user_id', '=', c.reader.id).where('book_id', '=', id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ read_status: 'READ', date_finished: expect.stringMatching(ISO_INSTANT), read_status_modified_time: expect.stringMatching(ISO_INSTANT) });

    const bad = await c.send(c.reader.token, 'PUT', `/api/v1/app/books/${id}/status`, { status: 'SKIMMED' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ message: 'Request body is missing or malformed.' });
    const missing = await c.send(c.reader.token, 'PUT', `/api/v1/app/books/${id}/status`, {});
    expect(missing.json()).toMatchObject({ status: 400, message: 'Validation error', details: ['status: must not be null'] });

    expect((await c.send(c.reader.token, 'PUT', `/api/v1/app/books/${id}/rating`, { rating: 4 })).statusCode).toBe(200);
    let summary = ((await list(c.reader.token, '?search=field manual')).content as Obj[])[0] as Obj;
    expect(summary).toMatchObject({ personalRating: 4, readStatus: 'READ' });
    expect((await list(c.reader.token, '?minRating=4&size=5')).totalElements).toBe(1);
    expect((await list(c.reader.token, '?personalRating=4')).totalElements).toBe(1);
    expect((await c.send(c.reader.token, 'PUT', `/api/v1/app/books/${id}/rating`, { rating: 6 })).statusCode).toBe(400);
    expect((await c.send(c.reader.token, 'PUT', `/api/v1/app/books/${id}/rating`, { rating: 0 })).statusCode).toBe(400);
    expect((await c.send(c.reader.token, 'PUT', `/api/v1/app/books/${id}/rating`, { rating: null })).statusCode).toBe(200);
    summary = ((await list(c.reader.token, '?search=field manual')).content as Obj[])[0] as Obj;
    expect(summary.personalRating).toBeUndefined();
    expect((await c.send(c.reader.token, 'PUT', `/api/v1/app/books/${c.books['Secret Diary']}/rating`, { rating: 3 })).statusCode).toBe(403);
    expect((await c.send(c.reader.token, 'PUT', `/api/v1/app/books/${c.books['Secret Diary']}/status`, { status: 'READ' })).statusCode).toBe(403);
    expect((await c.send(c.reader.token, 'PUT', '/api/v1/app/books/987654/status', { status: 'READ' })).statusCode).toBe(404);
  });

  it('filters and orders by the caller’s own reading state', async () => {
    const titlesOf = async (query: string): Promise<string[]> => titles((await list(c.reader.token, query)).content as Obj[]);
    expect(await titlesOf('?status=READ&sort=title&dir=asc')).toEqual(['Field Manual', 'Foundation']);
    expect(await titlesOf('?status=READING,PAUSED&sort=title&dir=asc')).toEqual(['Spoken']);
    // UNSET: books the user never touched.
    expect((await list(c.reader.token, '?status=UNSET')).totalElements).toBe(MAIN_LISTED - 3);
    expect((await list(c.reader.token, '?status=READ&filterMode=not')).totalElements).toBe(MAIN_LISTED - 2);
    // A status set by hand is no reading: Field Manual has no last read time and sorts with the unread books.
    expect((await titlesOf('?sort=lastReadTime&dir=desc&size=2'))).toEqual(['Spoken', 'Foundation']);
    expect((await titlesOf('?sort=lastReadTime&dir=asc&size=50&page=1')).slice(-2)).toEqual(['Foundation', 'Spoken']);
    // Another user's state is theirs alone.
    expect((await list(c.opdsReader.token, '?status=READ')).totalElements).toBe(0);
  });
});

describe('home lists, search and random', () => {
  it('continue reading and listening hold the books being read, most recent first, by kind', async () => {
    const reading = (await c.get(c.reader.token, '/api/v1/app/books/continue-reading')).json() as Obj[];
    const listening = (await c.get(c.reader.token, '/api/v1/app/books/continue-listening')).json() as Obj[];
    expect(titles(listening)).toEqual(['Spoken']);
    expect(titles(reading)).not.toContain('Spoken');
    for (const b of [...reading, ...listening]) expectShape(b, SUMMARY_TYPES);
    await c.send(c.reader.token, 'PUT', `/api/v1/app/books/${c.books['Dune Messiah']}/progress`, { epubProgress: { cfi: 'x', percentage: 5 } });
    await c.send(c.reader.token, 'PUT', `/api/v1/app/books/${c.books.Dune}/progress`, { epubProgress: { cfi: 'y', percentage: 7 } });
    const now = titles((await c.get(c.reader.token, '/api/v1/app/books/continue-reading')).json() as Obj[]);
    expect(now.slice(0, 2)).toEqual(['Dune', 'Dune Messiah']);
    expect(titles((await c.get(c.reader.token, '/api/v1/app/books/continue-reading?limit=1')).json() as Obj[])).toEqual(['Dune']);
    expect((await c.get(c.outsider.token, '/api/v1/app/books/continue-reading')).json()).toEqual([]);
  });

  it('recently added keeps the last 30 days; recently scanned the scanned books; limits default to 10 and cap at 50', async () => {
    const added = titles((await c.get(c.reader.token, '/api/v1/app/books/recently-added?limit=100')).json() as Obj[]);
    expect(added.sort()).toEqual(['Dune', 'Dune Messiah', 'Field Manual', 'Foundation', 'Paper Only', 'Spoken']);
    expect(((await c.get(c.reader.token, '/api/v1/app/books/recently-added?limit=0')).json() as Obj[]).length).toBe(6);
    const scanned = titles((await c.get(c.reader.token, '/api/v1/app/books/recently-scanned')).json() as Obj[]);
    expect(scanned.sort()).toEqual(['Dune', 'Dune Messiah', 'Field Manual', 'Foundation']);
    expect(titles((await c.get(c.admin.token, '/api/v1/app/books/recently-scanned?limit=50')).json() as Obj[])).toContain('Secret Diary');
    await c.d.store.db.updateTable('book').set({ added_on: new Date().toISOString() }).where('id', 'in', c.fillers).execute();
    expect(((await c.get(c.reader.token, '/api/v1/app/books/recently-added')).json() as Obj[]).length).toBe(10);
    expect(((await c.get(c.reader.token, '/api/v1/app/books/recently-added?limit=500')).json() as Obj[]).length).toBe(50);
    await c.d.store.db.updateTable('book').set({ added_on: '2020-01-01T00:00:00.000Z' }).where('id', 'in', c.fillers).execute();
  });

  it('search needs a non-blank query and pages 20 by default', async () => {
    const blank = await c.get(c.reader.token, '/api/v1/app/books/search?q=%20%20');
    expect(blank.statusCode).toBe(400);
    expect(blank.json()).toEqual({ status: 400, message: 'Query parameters are required for the search.', timestamp: expect.any(String) });
    expect((await c.get(c.reader.token, '/api/v1/app/books/search')).statusCode).toBe(400);
    const fillers = (await c.get(c.reader.token, '/api/v1/app/books/search?q=filler')).json() as Obj;
    expect(expectPage(fillers, { page: 0, size: 20, totalElements: FILLER_COUNT })).toHaveLength(20);
    expect(titles(expectPage((await c.get(c.reader.token, '/api/v1/app/books/search?q=herbert&size=5')).json() as Obj, { page: 0, size: 5, totalElements: 2 })).sort()).toEqual(['Dune', 'Dune Messiah']);
    expect((await c.get(c.reader.token, '/api/v1/app/books/search?q=secret')).json()).toMatchObject({ totalElements: 0, content: [] });
  });

  it('random sends a page of visible books', async () => {
    const body = (await c.get(c.reader.token, '/api/v1/app/books/random?size=7')).json() as Obj;
    const content = expectPage(body, { page: 0, size: 7, totalElements: MAIN_LISTED });
    expect(content).toHaveLength(7);
    const ids = new Set(content.map((b) => b.libraryId));
    expect([...ids]).toEqual([c.main]);
    expect((await c.get(c.reader.token, `/api/v1/app/books/random?libraryId=${c.other}`)).statusCode).toBe(403);
    expect(expectPage((await c.get(c.admin.token, `/api/v1/app/books/random?libraryId=${c.other}`)).json() as Obj, { page: 0, size: 20, totalElements: 1 })).toHaveLength(1);
  });
});
