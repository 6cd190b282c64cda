// Komelia's call sequence against a real daemon over HTTP on 127.0.0.1: sign in, libraries, the home screen's lists,
// a library's series (search body, filters), a series and its books, a book, a comic read page by page with its
// progress, and an EPUB read through Readium's manifest, positions, resources and progression. Every JSON answer is
// decoded as komga-client's kotlinx classes decode it (explicitNulls: a missing key throws even where null is
// allowed) and its key set compared with Komga's DTO.
import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLibrary } from '../../src/core/libraries/libraries.ts';
import { scanLibrary } from '../../src/core/scan/scanner.ts';
import { hashPassword } from '../../src/core/users/users.ts';
import { jpeg, png, writeZip } from '../helpers/comic-fixtures.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { opfDocument, writeEpub, xhtmlPage } from '../helpers/epub-fixtures.ts';
import { decodeErrors, keyMismatches } from '../helpers/komga-contract.ts';
import { makeTempLibrary, writeSimpleEpub, type TempLibrary } from '../helpers/library-fixtures.ts';

type Obj = Record<string, unknown>;

let d: TestDaemon;
let lib: TempLibrary;
let base: string;
let libraryId: string;
const ids: Record<string, number> = {};
const auth = `Basic ${Buffer.from('reader-app:komelia-secret').toString('base64')}`;

/**
 * The cookies Komelia's store keeps: it sends its credentials once, to `users/me`, and from then on only the cookies
 * (and keeps one only when its path is the server address it was given, here `/komga`).
 */
const cookies = new Map<string, string>();

function keepCookies(res: Response): void {
  for (const line of res.headers.getSetCookie()) {
    const [pair = '', ...attributes] = line.split(';').map((p) => p.trim());
    const path = attributes.find((a) => a.toLowerCase().startsWith('path='))?.slice(5);
    const [name = '', value = ''] = pair.split('=');
    if (path !== '/komga') continue;
    if (value === '' || attributes.some((a) => a.toLowerCase() === 'max-age=0')) cookies.delete(name);
    else cookies.set(name, value);
  }
}

/** A request as komga-client sends it after signing in: the session cookies, JSON bodies. */
async function call(method: string, path: string, body?: unknown, query: Record<string, string> = {}, headers: Record<string, string> = {}): Promise<Response> {
  const url = new URL(`${base}/komga/${path}`);
  for (const [k, v] of Object.entries(query)) url.searchParams.append(k, v);
  const cookie = [...cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  const res = await fetch(url, {
    method,
    headers: { accept: 'application/json', ...(cookie ? { cookie } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  keepCookies(res);
  return res;
}

/** Calls, expects 200, and decodes the body strictly as `dto` (`List<X>` for a list, `Page<X>` for a page). */
async function decoded<T = Obj>(dto: string, method: string, path: string, body?: unknown, query?: Record<string, string>): Promise<T> {
  const res = await call(method, path, body, query);
  const text = await res.text();
  expect(res.status, `${method} ${path}: ${text.slice(0, 300)}`).toBe(200);
  const json = JSON.parse(text) as unknown;
  const list = /^List<(.+)>$/.exec(dto);
  const items = list ? (json as unknown[]) : [json];
  if (list) expect(Array.isArray(json), `${path} is a list`).toBe(true);
  const name = list ? (list[1] as string) : dto;
  for (const item of items) {
    if (name === 'String') {
      expect(typeof item).toBe('string');
      continue;
    }
    expect(decodeErrors(name, item), `${method} ${path}`).toEqual([]);
    if (!name.startsWith('WP') && !name.startsWith('R2')) expect(keyMismatches(name, item), `${method} ${path}`).toEqual([]);
  }
  return json as T;
}

const condition = (...allOf: Obj[]): Obj => ({ condition: { allOf } });

beforeAll(async () => {
  d = await startTestDaemon();
  lib = makeTempLibrary();
  mkdirSync(lib.path('main'));
  await writeSimpleEpub(lib.path('main', 'Dune.epub'), { title: 'Dune', authors: ['Frank Herbert'], series: 'Dune', seriesIndex: 1, cover: '#2a6' });
  await writeSimpleEpub(lib.path('main', 'Dune Messiah.epub'), { title: 'Dune Messiah', authors: ['Frank Herbert'], series: 'Dune', seriesIndex: 2 });
  // A reflowable EPUB 3 with a navigation document, three chapters, a stylesheet and an image.
  const long = `<p>${'The spice must flow. '.repeat(150)}</p>`;
  await writeEpub(lib.path('main', 'Reader.epub'), {
    opf: opfDocument({
      metadata: '<dc:identifier id="bookid">urn:uuid:reader</dc:identifier><dc:title>A Reader’s Book</dc:title><dc:creator>Ann Author</dc:creator><dc:language>en</dc:language><dc:date>2019-05-04</dc:date>',
      manifest: [
        '<item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>',
        '<item id="c1" href="text/one.xhtml" media-type="application/xhtml+xml"/>',
        '<item id="c2" href="text/two.xhtml" media-type="application/xhtml+xml"/>',
        '<item id="c3" href="text/three.xhtml" media-type="application/xhtml+xml"/>',
        '<item id="css" href="style.css" media-type="text/css"/>',
        '<item id="img" href="images/map.png" media-type="image/png"/>',
        '<item id="sea" href="images/sea%20map.png" media-type="image/png"/>',
      ].join(''),
      spine: '<itemref idref="c1"/><itemref idref="c2"/><itemref idref="c3"/>',
    }),
    files: {
      'OEBPS/nav.xhtml': xhtmlPage('<nav epub:type="toc" xmlns:epub="http://www.idpf.org/2007/ops"><ol><li><a href="text/one.xhtml">One</a></li><li><a href="text/two.xhtml#middle">Two</a></li></ol></nav>'),
      'OEBPS/text/one.xhtml': xhtmlPage('<h1>One</h1><p>Short.</p>'),
      'OEBPS/text/two.xhtml': xhtmlPage(`<h1 id="middle">Two</h1>${long}`),
      'OEBPS/text/three.xhtml': xhtmlPage('<h1>Three</h1><p>The end.</p>'),
      'OEBPS/style.css': 'body { margin: 0 }',
      'OEBPS/images/map.png': await png('#36c', 10, 10),
      'OEBPS/images/sea map.png': await png('#3c6', 12, 10),
    },
  });
  await writeZip(lib.path('main', 'Comic.cbz'), [
    { name: '01.jpg', data: await jpeg('#3c3', 400, 600) },
    { name: '02.png', data: await png('#c33', 40, 60) },
    { name: '03.jpg', data: await jpeg('#33c', 40, 60) },
  ]);
  const library = await createLibrary(d.store.db, { name: 'Main', paths: [lib.path('main')] });
  libraryId = String(library.id);
  await scanLibrary(d.store, library, { coversRoot: d.ctx.paths.covers, workers: 0 });
  for (const r of await d.store.db.selectFrom('book_file').select(['book_id', 'file_name']).execute()) ids[r.file_name.replace(/\.[^.]+$/, '')] = r.book_id;
  const tag = await d.store.db.insertInto('tag').values({ name: 'Desert' }).returning('id').executeTakeFirstOrThrow();
  await d.store.db.insertInto('book_metadata_tag_mapping').values({ book_id: ids.Dune as number, tag_id: tag.id }).execute();
  const owner = await d.createUser('owner', {}, [library.id]);
  const shelf = await d.store.db.insertInto('shelf').values({ user_id: owner.id, name: 'Desert planets' }).returning('id').executeTakeFirstOrThrow();
  await d.store.db.insertInto('book_shelf_mapping').values({ shelf_id: shelf.id, book_id: ids.Dune as number }).execute();
  await d.store.db.insertInto('opds_user_v2').values({ user_id: owner.id, username: 'reader-app', password_hash: await hashPassword('komelia-secret') }).execute();
  await d.store.db.insertInto('app_settings').values({ name: 'komga_api_enabled', val: 'true' }).onConflict((oc) => oc.column('name').doUpdateSet({ val: 'true' })).execute();
  await d.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(d.app.server.address() as AddressInfo).port}`;
}, 120_000);

afterAll(async () => {
  await d?.close();
  lib?.cleanup();
});

describe('Komelia replay', () => {
  let dune: Obj;

  it('signs in once with its credentials, then with the session cookie', async () => {
    expect((await call('GET', 'api/v1/libraries')).status).toBe(401);
    const login = await call('GET', 'api/v2/users/me', undefined, { 'remember-me': 'true' }, { authorization: auth, 'cache-control': 'no-cache, no-store, max-age=0' });
    expect(login.status).toBe(200);
    expect([...cookies.keys()].sort()).toEqual(['KOMGA-SESSION', 'komga-remember-me']);
    expect(login.headers.getSetCookie().every((c) => c.includes('HttpOnly'))).toBe(true);
    const me = await decoded('UserDto', 'GET', 'api/v2/users/me');
    expect(me.ageRestriction).toBeNull();
    expect(me.roles).toEqual(expect.arrayContaining(['PAGE_STREAMING', 'FILE_DOWNLOAD']));
    const libraries = await decoded<Obj[]>('List<LibraryDto>', 'GET', 'api/v1/libraries');
    expect(libraries.map((l) => l.oneshotsDirectory)).toEqual([null]);
  });

  it('fills the home screen', async () => {
    const keepReading = await decoded('Page<BookDto>', 'POST', 'api/v1/books/list', condition({ readStatus: { operator: 'is', value: 'IN_PROGRESS' } }), {
      sort: 'readProgress.readDate,desc',
      size: '20',
    });
    expect(keepReading.content).toEqual([]);
    await decoded('Page<BookDto>', 'GET', 'api/v1/books/ondeck', undefined, { page: '0', size: '20' });
    const latest = await decoded<{ content: Obj[] }>('Page<BookDto>', 'GET', 'api/v1/books/latest', undefined, { size: '2' });
    expect(latest.content).toHaveLength(2);
    const fresh = await decoded<{ content: Obj[] }>('Page<SeriesDto>', 'GET', 'api/v1/series/new', undefined, { library_id: libraryId });
    expect(fresh.content.length).toBeGreaterThan(0);
    await decoded('Page<SeriesDto>', 'GET', 'api/v1/series/updated');
  });

  it('browses a library: series by search body, and the filter values', async () => {
    const page = await decoded<{ content: Obj[]; totalElements: number }>(
      'Page<SeriesDto>',
      'POST',
      'api/v1/series/list',
      condition({ libraryId: { operator: 'is', value: libraryId } }, { deleted: { operator: 'isFalse' } }),
      { sort: 'metadata.titleSort,asc', page: '0', size: '50' },
    );
    expect(page.content.map((s) => s.name)).toEqual(['Dune', 'Unknown Series']);
    dune = page.content[0] as Obj;
    expect((dune.metadata as Obj).ageRating).toBeNull();
    for (const path of ['genres', 'tags', 'tags/series', 'publishers', 'languages', 'age-ratings', 'series/release-dates', 'sharing-labels']) {
      await decoded('List<String>', 'GET', `api/v1/${path}`, undefined, { library_id: libraryId });
    }
    expect(await (await call('GET', 'api/v1/tags/series', undefined, { library_id: libraryId })).json()).toEqual(['Desert']);
    expect(await (await call('GET', 'api/v1/age-ratings')).json()).toEqual(['None']);
    expect(await (await call('GET', 'api/v1/series/release-dates')).json()).toEqual(['2019']);
    const authors = await decoded<{ content: Obj[] }>('Page<AuthorDto>', 'GET', 'api/v2/authors', undefined, { search: 'herb' });
    expect(authors.content).toEqual([{ name: 'Frank Herbert', role: 'writer' }]);
    const tagged = await decoded<{ content: Obj[] }>('Page<SeriesDto>', 'POST', 'api/v1/series/list', {
      condition: { anyOf: [{ tag: { operator: 'is', value: 'desert' } }, { title: { operator: 'beginsWith', value: 'nothing' } }] },
    });
    expect(tagged.content.map((s) => s.name)).toEqual(['Dune']);
    const searched = await decoded<{ content: Obj[] }>('Page<SeriesDto>', 'POST', 'api/v1/series/list', { fullTextSearch: 'unknown' });
    expect(searched.content.map((s) => s.name)).toEqual(['Unknown Series']);
  });

  it('opens a series: detail, books by search body, collections', async () => {
    const id = dune.id as string;
    await decoded('SeriesDto', 'GET', `api/v1/series/${id}`);
    const books = await decoded<{ content: Obj[] }>('Page<BookDto>', 'POST', 'api/v1/books/list', condition({ seriesId: { operator: 'is', value: id } }, { deleted: { operator: 'isFalse' } }), {
      sort: 'metadata.numberSort,asc',
      unpaged: 'true',
    });
    expect(books.content.map((b) => (b.metadata as Obj).title)).toEqual(['Dune', 'Dune Messiah']);
    for (const book of books.content) expect(book.readProgress).toBeNull();
    const collections = await decoded<Obj[]>('List<CollectionDto>', 'GET', `api/v1/series/${id}/collections`);
    expect(collections.map((c) => c.name)).toEqual(['Desert planets']);
    const cover = await call('GET', `api/v1/collections/${collections[0]?.id as string}/thumbnail`);
    expect(cover.status).toBe(200);
    expect(cover.headers.get('content-type')).toBe('image/jpeg');
    // The reader's neighbours in the series, and none past the ends (404, which komga-client reads as null).
    const [first, second] = books.content;
    expect((await decoded<Obj>('BookDto', 'GET', `api/v1/books/${first?.id as string}/next`)).id).toBe(second?.id);
    expect((await decoded<Obj>('BookDto', 'GET', `api/v1/books/${second?.id as string}/previous`)).id).toBe(first?.id);
    expect((await call('GET', `api/v1/books/${second?.id as string}/next`)).status).toBe(404);
    expect(await (await call('GET', 'api/v1/authors/names', undefined, { search: 'frank' })).json()).toEqual(['Frank Herbert']);
  });

  it('opens a book and reads a comic page by page, keeping progress', async () => {
    const comic = ids.Comic as number;
    const book = await decoded<Obj>('BookDto', 'GET', `api/v1/books/${comic}`);
    expect(book.readProgress).toBeNull();
    expect(await decoded('List<ReadListDto>', 'GET', `api/v1/books/${comic}/readlists`)).toEqual([]);
    const pages = await decoded<Obj[]>('List<PageDto>', 'GET', `api/v1/books/${comic}/pages`);
    expect(pages[0]).toMatchObject({ number: 1, fileName: '01.jpg', mediaType: 'image/jpeg', width: 400, height: 600 });
    const image = await call('GET', `api/v1/books/${comic}/pages/1`);
    expect(image.status).toBe(200);
    expect(image.headers.get('content-type')).toBe('image/jpeg');
    const thumbnail = await call('GET', `api/v1/books/${comic}/pages/1/thumbnail`);
    expect(thumbnail.status).toBe(200);
    const sharp = (await import('sharp')).default;
    expect(await sharp(Buffer.from(await thumbnail.arrayBuffer())).metadata()).toMatchObject({ format: 'jpeg', width: 200, height: 300 });
    expect((await call('PATCH', `api/v1/books/${comic}/read-progress`, { page: 2, completed: false })).status).toBe(204);
    const reading = await decoded<Obj>('BookDto', 'GET', `api/v1/books/${comic}`);
    expect(reading.readProgress).toMatchObject({ page: 2, completed: false });
    const inProgress = await decoded<{ content: Obj[] }>('Page<BookDto>', 'POST', 'api/v1/books/list', condition({ readStatus: { operator: 'is', value: 'IN_PROGRESS' } }), {
      sort: 'readProgress.readDate,desc',
    });
    expect(inProgress.content.map((b) => b.id)).toEqual([String(comic)]);
  });

  it('reads an EPUB through Readium: manifest, resources, positions, progression', async () => {
    const epub = ids.Reader as number;
    const manifestRes = await call('GET', `api/v1/books/${epub}/manifest`);
    expect(manifestRes.headers.get('content-type')).toMatch(/^application\/webpub\+json/);
    const manifest = await decoded<{ readingOrder: Obj[]; resources: Obj[]; toc: Obj[]; metadata: Obj }>('WPPublication', 'GET', `api/v1/books/${epub}/manifest`);
    // Absolute links under the server address: Komelia's reader refuses any other URL, and asks for a resource by the
    // book id and name it reads out of the link.
    const serverUrl = `${base}/komga`;
    expect(manifest.readingOrder.map((l) => l.href)).toEqual(['text/one.xhtml', 'text/two.xhtml', 'text/three.xhtml'].map((p) => `${serverUrl}/api/v1/books/${epub}/resource/OEBPS/${p}`));
    const proxied = (url: string): Promise<Response> => {
      expect(url.startsWith(serverUrl), url).toBe(true);
      const match = /.*\/api\/v1\/books\/(.*)\/resource\/(.*)/.exec(url) as RegExpExecArray;
      return call('GET', `api/v1/books/${match[1] as string}/resource/${match[2] as string}`);
    };
    expect(manifest.metadata).toMatchObject({ title: 'A Reader’s Book', author: ['Ann Author'], published: '2019-05-04' });
    expect(manifest.toc.map((l) => l.title)).toEqual(['One', 'Two']);
    expect(manifest.toc[1]?.href).toBe(`${serverUrl}/api/v1/books/${epub}/resource/OEBPS/text/two.xhtml#middle`);
    const chapter = await proxied(manifest.readingOrder[1]?.href as string);
    expect(chapter.status).toBe(200);
    expect(chapter.headers.get('content-type')).toMatch(/^application\/xhtml\+xml/);
    expect(await chapter.text()).toContain('The spice must flow.');
    const css = manifest.resources.find((l) => String(l.href).endsWith('style.css')) as Obj;
    expect((await proxied(css.href as string)).status).toBe(200);
    const sea = manifest.resources.find((l) => String(l.href).endsWith('sea%20map.png')) as Obj;
    const seaImage = await proxied(sea.href as string);
    expect(seaImage.status).toBe(200);
    expect(seaImage.headers.get('content-type')).toBe('image/png');
    // Only the EPUB's own items: no way out of the archive, no entry it does not list.
    for (const hostile of ['../../../../etc/passwd', '%2e%2e/%2e%2e/etc/passwd', 'OEBPS/../../outside', 'mimetype-not-listed']) {
      expect((await call('GET', `api/v1/books/${epub}/resource/${hostile}`)).status, hostile).toBe(404);
    }

    const positions = await decoded<{ total: number; positions: Obj[] }>('R2Positions', 'GET', `api/v1/books/${epub}/positions`);
    expect(positions.total).toBe(positions.positions.length);
    expect(positions.total).toBeGreaterThan(3);
    expect(positions.positions[0]).toMatchObject({ href: 'OEBPS/text/one.xhtml', locations: { position: 1, progression: 0, totalProgression: 0 } });

    expect((await call('GET', `api/v1/books/${epub}/progression`)).status).toBe(204);
    const progression = {
      modified: new Date().toISOString(),
      device: { id: 'komelia-1', name: 'Komelia' },
      // Komelia takes the resource URL's prefix off before sending.
      locator: { href: (manifest.readingOrder[1]?.href as string).replace(/^http(s)?:\/\/.*\/resource\//, ''), type: 'application/xhtml+xml', locations: { progression: 0.5 } },
    };
    expect((await call('PUT', `api/v1/books/${epub}/progression`, progression)).status).toBe(204);
    const back = await decoded<{ locator: { href: string; locations: Obj }; device: Obj }>('R2Progression', 'GET', `api/v1/books/${epub}/progression`);
    expect(back.device).toEqual({ id: 'komelia-1', name: 'Komelia' });
    expect(back.locator.href).toBe('OEBPS/text/two.xhtml');
    expect(back.locator.locations.progression).toBe(0.5);
    const total = back.locator.locations.totalProgression as number;
    expect(total).toBeGreaterThan(0.1);
    expect(total).toBeLessThan(0.9);

    // Stored as the book's progress: Komga's readProgress, and Bindery's own progress every other client reads.
    const book = await decoded<Obj>('BookDto', 'GET', `api/v1/books/${epub}`);
    expect(book.readProgress).toMatchObject({ completed: false });
    const stored = await d.store.db.selectFrom('user_book_progress').select(['read_status', 'epub_progress_href', 'epub_progress_percent']).where('book_id', '=', epub).executeTakeFirstOrThrow();
    expect(stored).toMatchObject({ read_status: 'READING', epub_progress_href: 'OEBPS/text/two.xhtml' });
    expect(stored.epub_progress_percent).toBeCloseTo(total * 100, 0);

    // Komga's refusals: an older progression (409), a resource that is not in the book (400), no progression (400).
    expect((await call('PUT', `api/v1/books/${epub}/progression`, { ...progression, modified: '2001-01-01T00:00:00Z' })).status).toBe(409);
    expect((await call('PUT', `api/v1/books/${epub}/progression`, { ...progression, modified: new Date().toISOString(), locator: { href: 'OEBPS/nowhere.xhtml', locations: { progression: 0 } } })).status).toBe(400);
    expect((await call('PUT', `api/v1/books/${epub}/progression`, { ...progression, modified: new Date().toISOString(), locator: { href: 'OEBPS/text/one.xhtml' } })).status).toBe(400);

    // Finishing the last chapter reads the book.
    const last = { ...progression, modified: new Date(Date.now() + 1000).toISOString(), locator: { href: 'OEBPS/text/three.xhtml', locations: { progression: 1 } } };
    expect((await call('PUT', `api/v1/books/${epub}/progression`, last)).status).toBe(204);
    expect((await decoded<Obj>('BookDto', 'GET', `api/v1/books/${epub}`)).readProgress).toMatchObject({ completed: true });
  });

  it('follows another client’s progress when it moved since', async () => {
    const epub = ids.Reader as number;
    await d.store.db
      .updateTable('user_book_progress')
      .set({ read_status: 'READING', epub_progress_percent: 10, epub_progress_href: 'OEBPS/text/one.xhtml', last_read_time: new Date(Date.now() + 60_000).toISOString() })
      .where('book_id', '=', epub)
      .execute();
    const back = await decoded<{ locator: { href: string; locations: Obj } }>('R2Progression', 'GET', `api/v1/books/${epub}/progression`);
    expect(back.locator.href).toBe('OEBPS/text/one.xhtml');
    expect(back.locator.locations.totalProgression).toBe(0.1);
  });

  it('signs out: the session ends', async () => {
    const remembered = cookies.get('komga-remember-me') as string;
    expect((await call('POST', 'api/logout')).status).toBe(204);
    expect(cookies.size).toBe(0);
    expect((await call('GET', 'api/v1/libraries', undefined, {}, { cookie: `komga-remember-me=${remembered}` })).status).toBe(401);
    // Signing in again, for the remaining steps.
    expect((await call('GET', 'api/v2/users/me', undefined, {}, { authorization: auth })).status).toBe(200);
    expect([...cookies.keys()]).toEqual(['KOMGA-SESSION']);
  });

  it('refuses a search body Komga would refuse, with 400', async () => {
    for (const body of [{ condition: { libraryId: { operator: 'contains', value: 'x' } } }, { condition: { nope: {} } }, { condition: { allOf: 'x' } }, { fullTextSearch: 3 }]) {
      const res = await call('POST', 'api/v1/books/list', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
  });
});
