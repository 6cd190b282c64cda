import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { InjectOptions } from 'fastify';
import { seedBook, seedLibrary } from '../helpers/catalog-seed.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';

let d: TestDaemon;
let reader: { id: number; token: string };
let bulkReader: { id: number; token: string };
let admin: { id: number; token: string };
let epub: { bookId: number; fileIds: number[] };
let pdf: { bookId: number; fileIds: number[] };
let cbx: { bookId: number; fileIds: number[] };
let audio: { bookId: number; fileIds: number[] };
let hidden: { bookId: number; fileIds: number[] };

beforeEach(async () => {
  d = await startTestDaemon();
  const shared = await seedLibrary(d.store.db, d.dir, 'shared');
  const secret = await seedLibrary(d.store.db, d.dir, 'secret');
  epub = await seedBook(d.store.db, shared, { title: 'Ebook', types: ['EPUB', 'PDF'] });
  pdf = await seedBook(d.store.db, shared, { title: 'Paper', types: ['PDF'] });
  cbx = await seedBook(d.store.db, shared, { title: 'Comic', types: ['CBX'] });
  audio = await seedBook(d.store.db, shared, { title: 'Listen', types: ['AUDIOBOOK'] });
  hidden = await seedBook(d.store.db, secret, { title: 'Hidden', types: ['EPUB'] });
  reader = await d.createUser('reader', {}, [shared]);
  bulkReader = await d.createUser('bulk', { canBulkResetBookReadStatus: true, canBulkResetBookloreReadProgress: true, canBulkResetKoReaderReadProgress: true }, [shared]);
  admin = await d.createUser('admin', { admin: true });
});
afterEach(async () => d.close());

const call = (token: string | undefined, options: InjectOptions) =>
  d.inject({ ...options, headers: { ...(options.headers ?? {}), ...(token ? { authorization: `Bearer ${token}` } : {}) } });

const progressRow = (userId: number, bookId: number) =>
  d.store.db.selectFrom('user_book_progress').selectAll().where('user_id', '=', userId).where('book_id', '=', bookId).executeTakeFirst();

const postProgress = (token: string, body: Record<string, unknown>) => call(token, { method: 'POST', url: '/api/v1/books/progress', payload: body });

describe('POST /api/v1/books/progress', () => {
  it('walks UNREAD → READING → READ at the thresholds and never back to UNREAD', async () => {
    const steps: [number, string][] = [[0.05, 'UNREAD'], [0.1, 'UNREAD'], [0.2, 'READING'], [99.4, 'READING'], [99.5, 'READ'], [30, 'READING'], [0, 'READING']];
    let finishedAt: string | null | undefined;
    for (const [percent, expected] of steps) {
      const res = await postProgress(reader.token, { bookId: epub.bookId, fileProgress: { bookFileId: epub.fileIds[0], positionData: 'epubcfi(/6/4)', positionHref: 'ch1.xhtml', progressPercent: percent } });
      expect(res.statusCode, `at ${percent}%`).toBe(204);
      const row = await progressRow(reader.id, epub.bookId);
      expect(row?.read_status, `at ${percent}%`).toBe(expected);
      expect(row?.epub_progress_percent).toBe(percent);
      if (percent === 99.5) finishedAt = row?.date_finished;
    }
    expect(finishedAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    // Falling back to READING keeps the finish date; nothing else touched the other user.
    expect((await progressRow(reader.id, epub.bookId))?.date_finished).toBe(finishedAt);
    expect(await progressRow(bulkReader.id, epub.bookId)).toBeUndefined();

    const file = await d.store.db.selectFrom('user_book_file_progress').selectAll().where('user_id', '=', reader.id).execute();
    expect(file).toHaveLength(1);
    expect(file[0]).toMatchObject({ book_file_id: epub.fileIds[0], position_data: 'epubcfi(/6/4)', position_href: 'ch1.xhtml', progress_percent: 0 });
  });

  it('rounds the legacy forms to one decimal and files them under the primary file', async () => {
    expect((await postProgress(reader.token, { bookId: epub.bookId, epubProgress: { cfi: 'epubcfi(/6/8)', href: 'ch3.xhtml', percentage: 45.67 } })).statusCode).toBe(204);
    expect(await progressRow(reader.id, epub.bookId)).toMatchObject({ epub_progress: 'epubcfi(/6/8)', epub_progress_href: 'ch3.xhtml', epub_progress_percent: 45.7, read_status: 'READING' });
    const file = await d.store.db.selectFrom('user_book_file_progress').selectAll().where('user_id', '=', reader.id).executeTakeFirstOrThrow();
    expect(file).toMatchObject({ book_file_id: epub.fileIds[0], position_data: 'epubcfi(/6/8)', progress_percent: 45.7 });

    expect((await postProgress(reader.token, { bookId: pdf.bookId, pdfProgress: { page: 12, percentage: 99.96 } })).statusCode).toBe(204);
    expect(await progressRow(reader.id, pdf.bookId)).toMatchObject({ pdf_progress: 12, pdf_progress_percent: 100, read_status: 'READ' });

    // A legacy form that does not match the primary file's reader records only the visit.
    expect((await postProgress(reader.token, { bookId: cbx.bookId, pdfProgress: { page: 3, percentage: 50 } })).statusCode).toBe(204);
    const comic = await progressRow(reader.id, cbx.bookId);
    expect(comic?.read_status).toBeNull();
    expect(comic?.cbx_progress).toBeNull();
    expect(comic?.last_read_time).toMatch(/Z$/);
  });

  it('keeps null positions null (no coercion to 0 or "")', async () => {
    const res = await postProgress(reader.token, { bookId: pdf.bookId, fileProgress: { bookFileId: pdf.fileIds[0], positionData: null, positionHref: null, progressPercent: 5, ttsPositionCfi: null }, epubProgress: null });
    expect(res.statusCode).toBe(204);
    expect(await progressRow(reader.id, pdf.bookId)).toMatchObject({ pdf_progress: null, pdf_progress_percent: 5, read_status: 'READING' });
    const file = await d.store.db.selectFrom('user_book_file_progress').selectAll().where('user_id', '=', reader.id).executeTakeFirstOrThrow();
    expect(file).toMatchObject({ position_data: null, position_href: null, tts_position_cfi: null });
  });

  it('takes an explicit finish date over the automatic one', async () => {
    const res = await postProgress(reader.token, { bookId: pdf.bookId, pdfProgress: { page: 200, percentage: 100 }, dateFinished: '2024-05-06T07:08:09Z' });
    expect(res.statusCode).toBe(204);
    expect(await progressRow(reader.id, pdf.bookId)).toMatchObject({ read_status: 'READ', date_finished: '2024-05-06T07:08:09.000Z' });
    expect((await postProgress(reader.token, { bookId: cbx.bookId, dateFinished: '2023-01-02T03:04:05.000Z' })).statusCode).toBe(204);
    expect(await progressRow(reader.id, cbx.bookId)).toMatchObject({ date_finished: '2023-01-02T03:04:05.000Z', read_status: null });
  });

  it('shows the progress in the Book JSON of the shelf-books route', async () => {
    await postProgress(reader.token, { bookId: audio.bookId, audiobookProgress: { positionMs: 61000, trackIndex: 2, percentage: 12.34 } });
    await postProgress(reader.token, { bookId: pdf.bookId, fileProgress: { bookFileId: pdf.fileIds[0], positionData: '7', progressPercent: 25 } });
    const favorites = await d.store.db.selectFrom('shelf').select('id').where('user_id', '=', reader.id).executeTakeFirstOrThrow();
    await call(reader.token, { method: 'POST', url: '/api/v1/books/shelves', payload: { bookIds: [audio.bookId, pdf.bookId], shelvesToAssign: [favorites.id] } });
    const books = (await call(reader.token, { method: 'GET', url: `/api/v1/shelves/${favorites.id}/books` })).json() as Record<string, unknown>[];
    const byId = new Map(books.map((b) => [b.id, b]));
    expect(byId.get(audio.bookId)).toMatchObject({ readStatus: 'READING', audiobookProgress: { positionMs: 61000, trackIndex: 2, percentage: 12.3 } });
    expect(byId.get(pdf.bookId)).toMatchObject({ readStatus: 'READING', pdfProgress: { page: 7, percentage: 25 }, lastReadTime: expect.stringMatching(/Z$/) });
  });

  it('refuses bad requests with 400, unknown books and files with 404, hidden books with 403, strangers with 401', async () => {
    const noProgress = await postProgress(reader.token, { bookId: epub.bookId });
    expect(noProgress.statusCode).toBe(400);
    expect(noProgress.json()).toMatchObject({ status: 400, message: 'Validation error', details: [expect.stringContaining('progressValid')] });
    expect((await postProgress(reader.token, { bookId: 'abc', dateFinished: '2024-01-01T00:00:00Z' })).statusCode).toBe(400);
    expect((await postProgress(reader.token, { bookId: epub.bookId, epubProgress: { cfi: 'x' } })).statusCode).toBe(400);
    expect((await postProgress(reader.token, { bookId: epub.bookId, dateFinished: 'yesterday' })).statusCode).toBe(400);
    expect((await postProgress(reader.token, { bookId: pdf.bookId, fileProgress: { bookFileId: pdf.fileIds[0], positionData: 'page seven', progressPercent: 3 } })).statusCode).toBe(400);
    const malformed = await call(reader.token, { method: 'POST', url: '/api/v1/books/progress', headers: { 'content-type': 'application/json' }, payload: '{"bookId":' });
    expect(malformed.statusCode).toBe(400);

    const shared = (await d.store.db.selectFrom('book').select('library_id').where('id', '=', epub.bookId).executeTakeFirstOrThrow()).library_id;
    const fileless = await seedBook(d.store.db, shared, { title: 'Physical only', types: [] });
    const noFile = await postProgress(reader.token, { bookId: fileless.bookId, epubProgress: { cfi: 'x', percentage: 10 } });
    expect(noFile.statusCode).toBe(400);
    expect(noFile.json()).toMatchObject({ message: 'Unsupported book type for viewer settings' });

    const missing = await postProgress(reader.token, { bookId: 999999, dateFinished: '2024-01-01T00:00:00Z' });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ status: 404, message: 'Book not found with ID: 999999' });
    const foreignFile = await postProgress(reader.token, { bookId: epub.bookId, fileProgress: { bookFileId: pdf.fileIds[0], progressPercent: 10 } });
    expect(foreignFile.statusCode).toBe(404);

    const hiddenRes = await postProgress(reader.token, { bookId: hidden.bookId, fileProgress: { bookFileId: hidden.fileIds[0], progressPercent: 10 } });
    expect(hiddenRes.statusCode).toBe(403);
    expect(hiddenRes.json()).toMatchObject({ status: 403, message: expect.any(String) });
    expect(await progressRow(reader.id, hidden.bookId)).toBeUndefined();
    expect((await postProgress(admin.token, { bookId: hidden.bookId, fileProgress: { bookFileId: hidden.fileIds[0], progressPercent: 10 } })).statusCode).toBe(204);

    expect((await call(undefined, { method: 'POST', url: '/api/v1/books/progress', payload: { bookId: epub.bookId, dateFinished: '2024-01-01T00:00:00Z' } })).statusCode).toBe(401);
  });
});

describe('POST /api/v1/books/status', () => {
  const setStatus = (token: string, bookIds: unknown, status: unknown) => call(token, { method: 'POST', url: '/api/v1/books/status', payload: { bookIds, status } });

  it('sets a status by hand, stamping the finish date only for READ', async () => {
    const read = await setStatus(reader.token, [epub.bookId], 'read');
    expect(read.statusCode).toBe(200);
    const [answer] = read.json() as Record<string, unknown>[];
    expect(answer).toEqual({ bookId: epub.bookId, readStatus: 'READ', readStatusModifiedTime: expect.stringMatching(/Z$/), dateFinished: answer?.readStatusModifiedTime });
    expect(await progressRow(reader.id, epub.bookId)).toMatchObject({ read_status: 'READ', date_finished: answer?.dateFinished });

    const paused = (await setStatus(reader.token, [epub.bookId], 'PAUSED')).json() as Record<string, unknown>[];
    expect(paused[0]).toMatchObject({ readStatus: 'PAUSED', dateFinished: null });
    expect(await progressRow(reader.id, epub.bookId)).toMatchObject({ read_status: 'PAUSED', date_finished: null });
  });

  it('needs the bulk flag for several books, admin or not, and changes all or nothing', async () => {
    const refused = await setStatus(reader.token, [epub.bookId, pdf.bookId], 'READ');
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ status: 403, message: 'Permission denied: Bulk reset book read status' });
    expect((await setStatus(admin.token, [epub.bookId, pdf.bookId], 'READ')).statusCode).toBe(403);

    const ok = await setStatus(bulkReader.token, [epub.bookId, pdf.bookId], 'WONT_READ');
    expect(ok.statusCode).toBe(200);
    expect((ok.json() as { readStatus: string }[]).map((r) => r.readStatus)).toEqual(['WONT_READ', 'WONT_READ']);

    const unknown = await setStatus(bulkReader.token, [cbx.bookId, 424242], 'READ');
    expect(unknown.statusCode).toBe(404);
    expect(await progressRow(bulkReader.id, cbx.bookId)).toBeUndefined();
    expect((await setStatus(bulkReader.token, [cbx.bookId, hidden.bookId], 'READ')).statusCode).toBe(403);
    expect(await progressRow(bulkReader.id, cbx.bookId)).toBeUndefined();
  });

  it('refuses an unknown status, an empty list and a hidden book', async () => {
    expect((await setStatus(reader.token, [epub.bookId], 'FINISHED')).statusCode).toBe(400);
    expect((await setStatus(reader.token, [], 'READ')).statusCode).toBe(400);
    expect((await setStatus(reader.token, [epub.bookId], null)).statusCode).toBe(400);
    expect((await setStatus(reader.token, [hidden.bookId], 'READ')).statusCode).toBe(403);
  });
});

describe('POST /api/v1/books/reset-progress', () => {
  const reset = (token: string, type: string | undefined, ids: unknown) => call(token, { method: 'POST', url: `/api/v1/books/reset-progress${type ? `?type=${type}` : ''}`, payload: ids as object });

  beforeEach(async () => {
    await postProgress(reader.token, { bookId: epub.bookId, fileProgress: { bookFileId: epub.fileIds[0], positionData: 'epubcfi(/6/2)', positionHref: 'ch9.xhtml', progressPercent: 60 } });
    await d.store.db
      .updateTable('user_book_progress')
      .set({ personal_rating: 8, koreader_progress: '/body/p[3]', koreader_progress_percent: 0.4, koreader_device: 'Kobo', kobo_progress_percent: 41, kobo_location: 'loc' })
      .where('user_id', '=', reader.id)
      .execute();
  });

  it('BOOKLORE clears Bindery progress and status, keeps rating and device progress, and drops per-file positions', async () => {
    const res = await reset(reader.token, 'BOOKLORE', [epub.bookId]);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual([{ bookId: epub.bookId, readStatus: null, readStatusModifiedTime: expect.stringMatching(/Z$/), dateFinished: null }]);
    expect(await progressRow(reader.id, epub.bookId)).toMatchObject({
      read_status: null, epub_progress: null, epub_progress_percent: null, last_read_time: null, epub_progress_href: 'ch9.xhtml',
      personal_rating: 8, koreader_progress_percent: 0.4, kobo_progress_percent: 41,
    });
    expect(await d.store.db.selectFrom('user_book_file_progress').select('id').where('user_id', '=', reader.id).execute()).toEqual([]);
  });

  it('KOREADER and KOBO clear only their device columns', async () => {
    expect((await reset(reader.token, 'KOREADER', [epub.bookId])).statusCode).toBe(200);
    expect(await progressRow(reader.id, epub.bookId)).toMatchObject({ koreader_progress: null, koreader_progress_percent: null, koreader_device: null, read_status: 'READING', kobo_progress_percent: 41 });
    const kobo = await reset(reader.token, 'KOBO', [epub.bookId]);
    expect((kobo.json() as { readStatusModifiedTime: unknown }[])[0]?.readStatusModifiedTime).toEqual(expect.any(String));
    expect(await progressRow(reader.id, epub.bookId)).toMatchObject({ kobo_progress_percent: null, kobo_location: null, read_status: 'READING', epub_progress_percent: 60 });
  });

  it('answers a null modified time for books without progress', async () => {
    const res = await reset(bulkReader.token, 'BOOKLORE', [epub.bookId, pdf.bookId]);
    expect(res.json()).toEqual([
      { bookId: epub.bookId, readStatus: null, readStatusModifiedTime: null, dateFinished: null },
      { bookId: pdf.bookId, readStatus: null, readStatusModifiedTime: null, dateFinished: null },
    ]);
    expect(await progressRow(reader.id, epub.bookId)).toMatchObject({ epub_progress_percent: 60 });
  });

  it('enforces the per-type bulk flags; Kobo needs none', async () => {
    const booklore = await reset(reader.token, 'BOOKLORE', [epub.bookId, pdf.bookId]);
    expect(booklore.statusCode).toBe(403);
    expect(booklore.json()).toMatchObject({ message: 'Permission denied: Bulk reset Booklore read progress' });
    expect((await reset(reader.token, 'KOREADER', [epub.bookId, pdf.bookId])).json()).toMatchObject({ status: 403, message: 'Permission denied: Bulk reset KoReader read progress' });
    expect((await reset(reader.token, 'KOBO', [epub.bookId, pdf.bookId])).statusCode).toBe(200);
    expect((await progressRow(reader.id, epub.bookId))?.read_status).toBe('READING');
  });

  it('refuses an empty or oversized list, a missing or unknown type, and hidden books', async () => {
    const empty = await reset(reader.token, 'BOOKLORE', []);
    expect(empty.statusCode).toBe(400);
    expect(empty.json()).toMatchObject({ message: 'No book IDs provided' });
    expect((await reset(bulkReader.token, 'KOBO', Array.from({ length: 501 }, (_, i) => i + 1))).statusCode).toBe(400);
    expect((await reset(reader.token, undefined, [epub.bookId])).statusCode).toBe(400);
    expect((await reset(reader.token, 'EVERYTHING', [epub.bookId])).statusCode).toBe(400);
    expect((await reset(reader.token, 'KOBO', [hidden.bookId])).statusCode).toBe(403);
    expect((await reset(reader.token, 'KOBO', [31337])).statusCode).toBe(404);
  });
});

describe('personal rating', () => {
  const rate = (token: string, ids: unknown, rating: unknown) => call(token, { method: 'PUT', url: '/api/v1/books/personal-rating', payload: { ids, rating } });

  it('stores 0..10, clears with null, and resets without creating rows', async () => {
    const res = await rate(reader.token, [epub.bookId, pdf.bookId], 10);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual([{ bookId: epub.bookId, personalRating: 10 }, { bookId: pdf.bookId, personalRating: 10 }]);
    expect((await progressRow(reader.id, pdf.bookId))?.personal_rating).toBe(10);
    expect((await rate(reader.token, [pdf.bookId], 0)).json()).toEqual([{ bookId: pdf.bookId, personalRating: 0 }]);
    expect((await rate(reader.token, [pdf.bookId], null)).statusCode).toBe(200);
    expect((await progressRow(reader.id, pdf.bookId))?.personal_rating).toBeNull();

    const cleared = await call(reader.token, { method: 'POST', url: '/api/v1/books/reset-personal-rating', payload: [epub.bookId, cbx.bookId] });
    expect(cleared.json()).toEqual([{ bookId: epub.bookId, personalRating: null }, { bookId: cbx.bookId, personalRating: null }]);
    expect((await progressRow(reader.id, epub.bookId))?.personal_rating).toBeNull();
    expect(await progressRow(reader.id, cbx.bookId)).toBeUndefined();
  });

  it('refuses ratings outside 0..10, fractions, hidden books and an empty reset list', async () => {
    for (const bad of [11, -1, 5.5, 'five']) expect((await rate(reader.token, [epub.bookId], bad)).statusCode, String(bad)).toBe(400);
    expect((await rate(reader.token, [hidden.bookId], 5)).statusCode).toBe(403);
    expect((await rate(reader.token, [777777], 5)).statusCode).toBe(404);
    expect(await progressRow(reader.id, epub.bookId)).toBeUndefined();
    expect((await call(reader.token, { method: 'POST', url: '/api/v1/books/reset-personal-rating', payload: [] })).statusCode).toBe(400);
    expect((await call(reader.token, { method: 'POST', url: '/api/v1/books/reset-personal-rating', payload: [hidden.bookId] })).statusCode).toBe(403);
  });
});

describe('viewer settings', () => {
  const get = (token: string, bookId: number, fileId: number | string) => call(token, { method: 'GET', url: `/api/v1/books/${bookId}/viewer-setting?bookFileId=${fileId}` });
  const put = (token: string, bookId: number | string, body: unknown) => call(token, { method: 'PUT', url: `/api/v1/books/${bookId}/viewer-setting`, payload: body as object });

  it('answers empty blocks until the reader saves its preferences, per user', async () => {
    const empty = await get(reader.token, epub.bookId, epub.fileIds[0] as number);
    expect(empty.statusCode).toBe(200);
    expect(empty.json()).toEqual({ pdfSettings: null, newPdfSettings: null, ebookSettings: null, cbxSettings: null });

    const ebookSettings = { fontFamily: 'serif', fontSize: 18, gap: 0.05, hyphenate: true, isDark: false, justify: true, lineHeight: 1.5, maxBlockSize: 1440, maxColumnCount: 2, maxInlineSize: 720, theme: 'gray', flow: 'paginated' };
    expect((await put(reader.token, epub.bookId, { ebookSettings })).statusCode).toBe(204);
    expect((await get(reader.token, epub.bookId, epub.fileIds[0] as number)).json()).toEqual({ pdfSettings: null, newPdfSettings: null, cbxSettings: null, ebookSettings: { bookId: epub.bookId, userId: reader.id, ...ebookSettings } });
    expect((await get(bulkReader.token, epub.bookId, epub.fileIds[0] as number)).json()).toMatchObject({ ebookSettings: null });
    // The same book's PDF file opens the PDF reader, which has no preferences yet.
    expect((await get(reader.token, epub.bookId, epub.fileIds[1] as number)).json()).toEqual({ pdfSettings: null, newPdfSettings: null, ebookSettings: null, cbxSettings: null });
  });

  it('keeps both PDF blocks and the comic block', async () => {
    expect((await put(reader.token, pdf.bookId, { pdfSettings: { zoom: 'page-fit', spread: 'off', isDarkTheme: false }, newPdfSettings: { pageSpread: 'ODD', pageViewMode: 'TWO_PAGE', fitMode: 'FIT_WIDTH', scrollMode: 'INFINITE', backgroundColor: 'BLACK' } })).statusCode).toBe(204);
    expect((await get(reader.token, pdf.bookId, pdf.fileIds[0] as number)).json()).toEqual({
      pdfSettings: { bookId: pdf.bookId, zoom: 'page-fit', spread: 'off', isDarkTheme: false },
      newPdfSettings: { bookId: pdf.bookId, pageSpread: 'ODD', pageViewMode: 'TWO_PAGE', fitMode: 'FIT_WIDTH', scrollMode: 'INFINITE', backgroundColor: 'BLACK' },
      ebookSettings: null,
      cbxSettings: null,
    });
    expect((await put(reader.token, cbx.bookId, { cbxSettings: { pageSpread: 'EVEN', pageViewMode: 'SINGLE_PAGE', fitMode: 'AUTO', scrollMode: 'LONG_STRIP', backgroundColor: 'GRAY' } })).statusCode).toBe(204);
    expect((await get(reader.token, cbx.bookId, cbx.fileIds[0] as number)).json()).toMatchObject({ cbxSettings: { bookId: cbx.bookId, scrollMode: 'LONG_STRIP', fitMode: 'AUTO' } });
  });

  it('refuses audiobooks, foreign or missing files, bad values and hidden books', async () => {
    const audioRes = await get(reader.token, audio.bookId, audio.fileIds[0] as number);
    expect(audioRes.statusCode).toBe(400);
    expect(audioRes.json()).toMatchObject({ message: 'Unsupported book type for viewer settings' });
    expect((await put(reader.token, audio.bookId, { ebookSettings: {} })).statusCode).toBe(400);
    expect((await get(reader.token, epub.bookId, pdf.fileIds[0] as number)).statusCode).toBe(404);
    expect((await call(reader.token, { method: 'GET', url: `/api/v1/books/${epub.bookId}/viewer-setting` })).statusCode).toBe(400);
    expect((await get(reader.token, epub.bookId, 'first')).statusCode).toBe(400);
    expect((await put(reader.token, cbx.bookId, { cbxSettings: { scrollMode: 'SIDEWAYS' } })).statusCode).toBe(400);
    expect((await put(reader.token, 'x', {})).statusCode).toBe(400);
    expect((await get(reader.token, hidden.bookId, hidden.fileIds[0] as number)).statusCode).toBe(403);
    expect((await put(reader.token, hidden.bookId, { ebookSettings: { fontSize: 3 } })).statusCode).toBe(403);
    expect((await get(reader.token, 123456, 1)).statusCode).toBe(404);
    expect((await call(undefined, { method: 'GET', url: `/api/v1/books/${epub.bookId}/viewer-setting?bookFileId=1` })).statusCode).toBe(401);
  });
});
