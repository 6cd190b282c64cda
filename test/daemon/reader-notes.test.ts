// Bookmarks, highlights, notes, the PDF annotation layer, the notebook, reading sessions and custom fonts over the
// API: each user's own, refused on books they cannot see, validated as Grimmory validates them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedBook, seedLibrary } from '../helpers/catalog-seed.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';

let d: TestDaemon;
let reader: { id: number; token: string };
let other: { id: number; token: string };
let outsider: { id: number; token: string };
let dune: number;
let emma: number;

beforeAll(async () => {
  d = await startTestDaemon();
  await d.setupAdmin();
  const books = await seedLibrary(d.store.db, d.dir, 'Books');
  const hidden = await seedLibrary(d.store.db, d.dir, 'Hidden');
  dune = (await seedBook(d.store.db, books, { title: 'Dune' })).bookId;
  emma = (await seedBook(d.store.db, books, { title: 'Emma', types: ['PDF'] })).bookId;
  await seedBook(d.store.db, hidden, { title: 'Secret' });
  reader = await d.createUser('reader', {}, [books]);
  other = await d.createUser('other', {}, [books]);
  outsider = await d.createUser('outsider', {}, [hidden]);
});
afterAll(() => d.close());

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';
const call = (method: Method, url: string, token = reader.token, payload?: unknown) =>
  d.inject({ method, url, headers: { authorization: `Bearer ${token}` }, ...(payload === undefined ? {} : { payload: payload as object }) });
const LOCAL_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}$/;

describe('annotations (highlights)', () => {
  let id: number;

  it('creates one with Grimmory\'s defaults and refuses a second at the same place', async () => {
    const created = await call('POST', '/api/v1/annotations', reader.token, { bookId: dune, cfi: 'epubcfi(/6/4!/4/2)', text: 'The spice must flow', chapterTitle: 'One' });
    expect(created.statusCode).toBe(200);
    const body = created.json() as Record<string, unknown>;
    expect(body).toMatchObject({ userId: reader.id, bookId: dune, cfi: 'epubcfi(/6/4!/4/2)', text: 'The spice must flow', color: '#FFFF00', style: 'highlight', note: null, chapterTitle: 'One' });
    expect(body.createdAt).toMatch(LOCAL_TIME);
    id = body.id as number;
    const again = await call('POST', '/api/v1/annotations', reader.token, { bookId: dune, cfi: 'epubcfi(/6/4!/4/2)', text: 'again' });
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ status: 409, message: 'Annotation already exists at this location' });
  });

  it('validates colour, style and required fields', async () => {
    for (const bad of [{ bookId: dune, cfi: 'x', text: 't', color: 'yellow' }, { bookId: dune, cfi: 'x', text: 't', style: 'bold' }, { bookId: dune, cfi: '', text: 't' }, { bookId: dune, text: 't' }, { bookId: 'one', cfi: 'x', text: 't' }]) {
      const res = await call('POST', '/api/v1/annotations', reader.token, bad);
      expect(res.statusCode, JSON.stringify(bad)).toBe(400);
      expect(res.json()).toMatchObject({ status: 400 });
    }
  });

  it('updates only the given fields, and keeps each user to their own', async () => {
    const updated = await call('PUT', `/api/v1/annotations/${id}`, reader.token, { color: '#00FF00', note: 'remember' });
    expect(updated.json()).toMatchObject({ color: '#00FF00', style: 'highlight', note: 'remember' });
    expect((await call('GET', `/api/v1/annotations/${id}`, other.token)).statusCode).toBe(404);
    expect((await call('PUT', `/api/v1/annotations/${id}`, other.token, { color: '#000000' })).statusCode).toBe(404);
    expect((await call('DELETE', `/api/v1/annotations/${id}`, other.token)).statusCode).toBe(404);
    expect((await call('GET', `/api/v1/annotations/book/${dune}`, other.token)).json()).toEqual([]);
    expect(((await call('GET', `/api/v1/annotations/book/${dune}`)).json() as unknown[]).length).toBe(1);
  });

  it('refuses books the user cannot see', async () => {
    expect((await call('POST', '/api/v1/annotations', outsider.token, { bookId: dune, cfi: 'x', text: 't' })).statusCode).toBe(403);
    expect((await call('GET', `/api/v1/annotations/book/${dune}`, outsider.token)).statusCode).toBe(403);
    expect((await call('POST', '/api/v1/annotations', reader.token, { bookId: 99999, cfi: 'x', text: 't' })).statusCode).toBe(404);
    expect((await d.inject({ method: 'GET', url: `/api/v1/annotations/book/${dune}` })).statusCode).toBe(401);
  });
});

describe('bookmarks', () => {
  it('keeps EPUB, PDF and audiobook places, one bookmark per place', async () => {
    const epub = await call('POST', '/api/v1/bookmarks', reader.token, { bookId: dune, cfi: 'epubcfi(/6/8)', title: 'Chapter 3' });
    expect(epub.json()).toMatchObject({ bookId: dune, cfi: 'epubcfi(/6/8)', title: 'Chapter 3', pageNumber: null });
    const pdf = await call('POST', '/api/v1/bookmarks', reader.token, { bookId: emma, pageNumber: 12 });
    expect(pdf.json()).toMatchObject({ bookId: emma, pageNumber: 12, cfi: null });
    expect((await call('POST', '/api/v1/bookmarks', reader.token, { bookId: emma, pageNumber: 12 })).statusCode).toBe(409);
    expect((await call('POST', '/api/v1/bookmarks', reader.token, { bookId: emma })).statusCode).toBe(400);
    expect((await call('POST', '/api/v1/bookmarks', reader.token, { bookId: emma, pageNumber: 0 })).statusCode).toBe(400);

    const id = (epub.json() as { id: number }).id;
    const updated = await call('PUT', `/api/v1/bookmarks/${id}`, reader.token, { color: '#123456', priority: 2, notes: 'good part' });
    expect(updated.json()).toMatchObject({ color: '#123456', priority: 2, notes: 'good part', title: 'Chapter 3' });
    expect((await call('PUT', `/api/v1/bookmarks/${id}`, reader.token, { priority: 9 })).statusCode).toBe(400);
    expect((await call('DELETE', `/api/v1/bookmarks/${id}`)).statusCode).toBe(204);
    expect((await call('GET', `/api/v1/bookmarks/${id}`)).statusCode).toBe(404);
  });
});

describe('notes', () => {
  it('free-form notes: create, replace by id, list, delete', async () => {
    const first = (await call('POST', '/api/v1/book-notes', reader.token, { bookId: dune, title: 'Thoughts', content: 'Paul is a lot' })).json() as { id: number };
    const replaced = await call('POST', '/api/v1/book-notes', reader.token, { id: first.id, bookId: dune, title: 'Thoughts', content: 'Paul is a lot, really' });
    expect(replaced.json()).toMatchObject({ id: first.id, content: 'Paul is a lot, really' });
    expect((await call('POST', '/api/v1/book-notes', other.token, { id: first.id, bookId: dune, content: 'hijack' })).statusCode).toBe(404);
    expect((await call('POST', '/api/v1/book-notes', reader.token, { bookId: dune, content: '   ' })).statusCode).toBe(400);
    expect(((await call('GET', `/api/v1/book-notes/book/${dune}`)).json() as unknown[]).length).toBe(1);
    expect((await call('DELETE', `/api/v1/book-notes/${first.id}`)).statusCode).toBe(204);
  });

  it('anchored notes (v2): create, update, list', async () => {
    const note = await call('POST', '/api/v2/book-notes', reader.token, { bookId: dune, cfi: 'epubcfi(/6/10)', selectedText: 'Fear is the mind-killer', noteContent: 'Litany', color: '#FF0000' });
    expect(note.json()).toMatchObject({ cfi: 'epubcfi(/6/10)', selectedText: 'Fear is the mind-killer', noteContent: 'Litany', color: '#FF0000' });
    const id = (note.json() as { id: number }).id;
    expect((await call('PUT', `/api/v2/book-notes/${id}`, reader.token, { noteContent: 'Litany against fear' })).json()).toMatchObject({ noteContent: 'Litany against fear', color: '#FF0000' });
    expect((await call('GET', `/api/v2/book-notes/book/${dune}`)).json()).toMatchObject([{ id }]);
  });
});

describe('PDF annotation layer', () => {
  it('answers 204 until saved, then gives back what was saved, per user', async () => {
    expect((await call('GET', `/api/v1/pdf-annotations/book/${emma}`)).statusCode).toBe(204);
    expect((await call('PUT', `/api/v1/pdf-annotations/book/${emma}`, reader.token, { '1': '{"ink":[]}', '2': 'x' })).statusCode).toBe(204);
    expect((await call('PUT', `/api/v1/pdf-annotations/book/${emma}`, reader.token, { '1': '{"ink":[1]}' })).statusCode).toBe(204);
    expect((await call('GET', `/api/v1/pdf-annotations/book/${emma}`)).json()).toEqual({ '1': '{"ink":[1]}' });
    expect((await call('GET', `/api/v1/pdf-annotations/book/${emma}`, other.token)).statusCode).toBe(204);
    expect((await call('PUT', `/api/v1/pdf-annotations/book/${emma}`, reader.token, { '1': { nested: true } })).statusCode).toBe(400);
    expect((await call('DELETE', `/api/v1/pdf-annotations/book/${emma}`)).statusCode).toBe(204);
    expect((await call('GET', `/api/v1/pdf-annotations/book/${emma}`)).statusCode).toBe(204);
  });
});

describe('notebook', () => {
  it('gathers highlights, notes and bookmarks, filters, searches and pages', async () => {
    await call('POST', '/api/v1/annotations', reader.token, { bookId: emma, cfi: 'epubcfi(/6/2)', text: '100% sure_thing', note: 'odd chars' });
    await call('POST', '/api/v1/bookmarks', reader.token, { bookId: dune, cfi: 'epubcfi(/6/20)', title: 'Arrakis' });
    const all = (await call('GET', '/api/v1/notebook?size=2')).json() as { content: { type: string; bookTitle: string; createdAt: string }[]; page: { totalElements: number; totalPages: number; size: number; number: number } };
    expect(all.page).toMatchObject({ size: 2, number: 0 });
    expect(all.page.totalElements).toBeGreaterThanOrEqual(4);
    expect(all.content).toHaveLength(2);
    expect(all.content[0]?.createdAt).toMatch(LOCAL_TIME);

    const notes = (await call('GET', '/api/v1/notebook?types=NOTE')).json() as { content: { type: string; text: string; note: string }[] };
    expect(notes.content.map((e) => e.type)).toEqual(['NOTE']);
    expect(notes.content[0]).toMatchObject({ text: 'Fear is the mind-killer', note: 'Litany against fear' });

    // LIKE wildcards in the search are literal: "0%" matches only text with "0%" in it.
    const percent = (await call('GET', `/api/v1/notebook?search=${encodeURIComponent('0% sure_')}`)).json() as { content: { text: string }[] };
    expect(percent.content.map((e) => e.text)).toEqual(['100% sure_thing']);
    const byBook = (await call('GET', `/api/v1/notebook/export?bookId=${dune}&types=BOOKMARK,HIGHLIGHT&sort=asc`)).json() as { type: string; bookId: number }[];
    expect(byBook.every((e) => e.bookId === dune)).toBe(true);
    expect(new Set(byBook.map((e) => e.type))).toEqual(new Set(['HIGHLIGHT', 'BOOKMARK']));

    expect((await call('GET', '/api/v1/notebook/books')).json()).toEqual([
      { bookId: dune, bookTitle: 'Dune' },
      { bookId: emma, bookTitle: 'Emma' },
    ]);
    expect((await call('GET', '/api/v1/notebook', other.token)).json()).toMatchObject({ content: [], page: { totalElements: 0 } });
  });
});

describe('reading sessions', () => {
  it('records sessions (202) and lists them newest first, five to a page', async () => {
    for (let i = 0; i < 7; i++) {
      const start = new Date(Date.UTC(2026, 10, 1 + i, 20, 0, 0));
      const res = await call('POST', '/api/v1/reading-sessions', reader.token, {
        bookId: dune, bookType: 'EPUB', startTime: start.toISOString(), endTime: new Date(start.getTime() + 600_000).toISOString(), durationSeconds: 600, startProgress: i * 10, endProgress: i * 10 + 5, progressDelta: 5,
      });
      expect(res.statusCode).toBe(202);
    }
    const page = (await call('GET', `/api/v1/reading-sessions/book/${dune}`)).json() as { content: { startTime: string; bookTitle: string; bookType: string }[]; page: { totalElements: number; totalPages: number } };
    expect(page.page).toEqual({ size: 5, number: 0, totalElements: 7, totalPages: 2 });
    expect(page.content[0]).toMatchObject({ startTime: '2026-11-07T20:00:00.000Z', bookTitle: 'Dune', bookType: 'EPUB' });
    expect((await call('GET', `/api/v1/reading-sessions/book/${dune}?size=101`)).statusCode).toBe(400);
  });

  it('refuses a session that ends before it starts, a bad date, a hidden book', async () => {
    const base = { bookId: dune, durationSeconds: 10 };
    expect((await call('POST', '/api/v1/reading-sessions', reader.token, { ...base, startTime: '2026-11-02T00:00:00Z', endTime: '2026-11-01T00:00:00Z' })).statusCode).toBe(400);
    expect((await call('POST', '/api/v1/reading-sessions', reader.token, { ...base, startTime: 'yesterday', endTime: '2026-11-01T00:00:00Z' })).statusCode).toBe(400);
    expect((await call('POST', '/api/v1/reading-sessions', reader.token, { ...base, durationSeconds: undefined, startTime: '2026-11-01T00:00:00Z', endTime: '2026-11-01T00:10:00Z' })).statusCode).toBe(400);
    expect((await call('POST', '/api/v1/reading-sessions', outsider.token, { ...base, startTime: '2026-11-01T00:00:00Z', endTime: '2026-11-01T00:10:00Z' })).statusCode).toBe(403);
  });
});

describe('custom fonts', () => {
  const multipart = (fileName: string, data: Buffer, fontName?: string): { payload: Buffer; headers: Record<string, string> } => {
    const boundary = '----bindery-test';
    const parts: Buffer[] = [];
    if (fontName !== undefined) parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="fontName"\r\n\r\n${fontName}\r\n`));
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${fileName}"\r\nContent-Type: font/ttf\r\n\r\n`), data, Buffer.from(`\r\n--${boundary}--\r\n`));
    return { payload: Buffer.concat(parts), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
  };
  const upload = (token: string, fileName: string, data: Buffer, fontName?: string) => {
    const { payload, headers } = multipart(fileName, data, fontName);
    return d.inject({ method: 'POST', url: '/api/v1/custom-fonts/upload', headers: { ...headers, authorization: `Bearer ${token}` }, payload });
  };
  const ttf = Buffer.concat([Buffer.from([0, 1, 0, 0]), Buffer.alloc(200, 7)]);

  it('takes a real font, cleans its name, lists and serves it to its owner only', async () => {
    const fonts = await d.createUser('typographer', { canManageFonts: true });
    const res = await upload(fonts.token, 'Literata.ttf', ttf, '<b>Literata</b> "Book"');
    expect(res.statusCode).toBe(200);
    const font = res.json() as { id: number; fontName: string; format: string; fileSize: number; uploadedAt: string };
    expect(font).toMatchObject({ fontName: 'Literata Book', originalFileName: 'Literata.ttf', format: 'TTF', fileSize: ttf.length });
    expect(font.uploadedAt).toMatch(LOCAL_TIME);
    expect((await call('GET', '/api/v1/custom-fonts', fonts.token)).json()).toHaveLength(1);
    const file = await d.inject({ method: 'GET', url: `/api/v1/custom-fonts/${font.id}/file?token=${fonts.token}` });
    expect(file.statusCode).toBe(200);
    expect(file.headers['content-type']).toBe('font/ttf');
    expect(file.rawPayload.equals(ttf)).toBe(true);
    const admin = await d.createUser('fontadmin', { admin: true });
    expect((await call('GET', `/api/v1/custom-fonts/${font.id}/file`, admin.token)).statusCode).toBe(404);
    expect((await call('DELETE', `/api/v1/custom-fonts/${font.id}`, fonts.token)).statusCode).toBe(200);
    expect((await call('GET', '/api/v1/custom-fonts', fonts.token)).json()).toEqual([]);
  });

  it('refuses a file that is not the font its name says, an unknown format, and users without the permission', async () => {
    const fonts = await d.createUser('typographer2', { canManageFonts: true });
    const fake = await upload(fonts.token, 'evil.ttf', Buffer.from('<script>alert(1)</script>'));
    expect(fake.statusCode).toBe(400);
    expect(fake.json()).toMatchObject({ message: expect.stringContaining('Invalid font file format') });
    expect((await upload(fonts.token, 'font.exe', ttf)).statusCode).toBe(400);
    expect((await upload(reader.token, 'Literata.ttf', ttf)).statusCode).toBe(403);
    expect((await call('GET', '/api/v1/custom-fonts', fonts.token)).json()).toEqual([]);
  });

  it('allows ten fonts per user', async () => {
    const fonts = await d.createUser('collector', { canManageFonts: true });
    for (let i = 0; i < 10; i++) expect((await upload(fonts.token, `f${i}.ttf`, ttf)).statusCode).toBe(200);
    const eleventh = await upload(fonts.token, 'f10.ttf', ttf);
    expect(eleventh.statusCode).toBe(400);
    expect(eleventh.json()).toMatchObject({ message: 'Font limit exceeded. Maximum 10 fonts per user allowed' });
  });
});
