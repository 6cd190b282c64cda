// Hardcover progress sync end to end, against a fake Hardcover GraphQL API on 127.0.0.1 that keeps each API key's
// library the way Hardcover does (adding a book starts a read; finishing a read marks the book read): the settings
// round-trip with the key masked, and progress from the web reader, the app, KOReader and Kobo reaching the user's
// Hardcover library with the user's key, in the background, never when sync is off and never failing the reader.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { partialMd5 } from '../../src/core/formats/hash.ts';
import { localDate } from '../../src/core/hardcover/progress-sync.ts';
import { md5Hex } from '../../src/core/koreader/accounts.ts';
import { createLibrary } from '../../src/core/libraries/libraries.ts';
import { scanLibrary } from '../../src/core/scan/scanner.ts';
import { hardcoverGraphqlUrl } from '../../src/daemon/hardcover-sync.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { startFakeSite, type FakeRequest, type FakeSite } from '../helpers/fake-site.ts';
import { DEVICE_HEADERS } from '../helpers/kobo-device.ts';
import { makeTempLibrary, writeSimpleEpub, type TempLibrary } from '../helpers/library-fixtures.ts';

type Json = Record<string, unknown>;

interface FakeRead {
  id: number;
  edition_id: number | null;
  started_at: string | null;
  finished_at: string | null;
  progress: number | null;
  progress_pages: number | null;
}
interface FakeUserBook {
  id: number;
  book_id: number;
  status_id: number;
  edition_id: number | null;
  user_book_reads: FakeRead[];
}
interface Call {
  op: string;
  authorization: string | undefined;
  variables: Json;
}

const DUNE_ISBN = '9780441013593';
/** Hardcover's side: Dune (found by ISBN) and Emma (found by its Hardcover id). */
const BOOKS = [
  { id: 100, slug: 'dune', pages: 380, editions: [{ id: 101, pages: 412, isbn_13: DUNE_ISBN, isbn_10: null }], default_ebook_edition: { id: 102, pages: 500 }, default_physical_edition: { id: 101, pages: 412 } },
  { id: 200, slug: 'emma', pages: 320, editions: [{ id: 201, pages: 300, isbn_13: '9780141439587', isbn_10: null }], default_ebook_edition: { id: 202, pages: 350 }, default_physical_edition: null },
];

const ALICE_KEY = 'alice-hardcover-api-key-0001-wxyz';
/** Each key has its own rate limit (a burst of 10 requests): later tests switch keys rather than wait for refills. */
const ALICE_SECOND_KEY = 'alice-hardcover-api-key-0002-abcd';
const ALICE_THIRD_KEY = 'alice-hardcover-api-key-0003-efgh';
const BOB_KEY = 'bob-hardcover-api-key-000000002';

let d: TestDaemon;
let hc: FakeSite;
let lib: TempLibrary;
let alice: { id: number; token: string };
let bob: { id: number; token: string };
let plain: { id: number; token: string };
const ids = { dune: 0, duneFile: 0, emma: 0, emmaFile: 0, bare: 0, bareFile: 0 };
let emmaHash: string;

let calls: Call[] = [];
const libraries = new Map<string, FakeUserBook[]>();
let nextId = 1000;
let failWith: number | undefined;
let delayMs = 0;

function operation(query: string): string {
  return /(?:query|mutation)\s+(\w+)/.exec(query)?.[1] ?? 'anonymous';
}

function bookRow(book: (typeof BOOKS)[number], query: string, vars: Json): Json {
  const isbns: unknown[] = [vars.isbn13, vars.isbn10].filter((v) => typeof v === 'string');
  const editions = book.editions.filter((e) => isbns.includes(e.isbn_13) || isbns.includes(e.isbn_10));
  return {
    id: book.id,
    pages: book.pages,
    ...(query.includes('default_ebook_edition') ? { default_ebook_edition: book.default_ebook_edition, default_physical_edition: book.default_physical_edition } : {}),
    ...(query.includes('editions(') ? { editions: editions.map((e) => ({ id: e.id, pages: e.pages })) } : {}),
  };
}

/** Answers one GraphQL document the way Hardcover would, for the library of the bearer's key. */
function answer(request: FakeRequest): Json {
  const { query, variables = {} } = JSON.parse(request.body) as { query: string; variables?: Json };
  const op = operation(query);
  const authorization = request.headers.authorization as string | undefined;
  calls.push({ op, authorization, variables });
  const key = (authorization ?? '').replace(/^Bearer /, '');
  const mine = libraries.get(key) ?? [];
  libraries.set(key, mine);
  const today = localDate();
  switch (op) {
    case 'BinderyBook': {
      const book = BOOKS.find((b) => b.id === variables.bookId || b.slug === variables.slug);
      return { data: { books: book ? [bookRow(book, query, variables)] : [] } };
    }
    case 'BinderyBookByIsbn': {
      const book = BOOKS.find((b) => b.editions.some((e) => e.isbn_13 === variables.isbn13 || e.isbn_10 === variables.isbn10));
      return { data: { books: book ? [bookRow(book, query, variables)] : [] } };
    }
    case 'BinderyUserBook':
      return { data: { me: [{ user_books: mine.filter((u) => u.book_id === variables.bookId) }] } };
    case 'BinderyAddUserBook': {
      const object = variables.object as { book_id: number; edition_id: number; status_id: number };
      const read: FakeRead = { id: nextId++, edition_id: object.edition_id, started_at: today, finished_at: null, progress: 0, progress_pages: 0 };
      const added: FakeUserBook = { id: nextId++, book_id: object.book_id, status_id: object.status_id, edition_id: object.edition_id, user_book_reads: [read] };
      mine.push(added);
      return { data: { insert_user_book: { error: null, user_book: added } } };
    }
    case 'BinderyResumeUserBook': {
      const userBook = mine.find((u) => u.id === variables.id);
      if (!userBook) return { data: { update_user_book: { id: null, error: 'not found', user_book: null } } };
      const object = variables.object as { edition_id: number; status_id: number };
      if (userBook.status_id !== object.status_id) userBook.user_book_reads.push({ id: nextId++, edition_id: object.edition_id, started_at: today, finished_at: null, progress: 0, progress_pages: 0 });
      Object.assign(userBook, { edition_id: object.edition_id, status_id: object.status_id });
      return { data: { update_user_book: { id: userBook.id, error: null, user_book: userBook } } };
    }
    case 'BinderyUpdateRead': {
      const object = variables.object as Partial<FakeRead>;
      const userBook = mine.find((u) => u.user_book_reads.some((r) => r.id === variables.id));
      const read = userBook?.user_book_reads.find((r) => r.id === variables.id);
      if (!userBook || !read) return { data: { update_user_book_read: { id: null, error: 'not found' } } };
      Object.assign(read, object);
      if (object.finished_at) userBook.status_id = 3;
      return { data: { update_user_book_read: { id: read.id, error: null } } };
    }
    case 'BinderyStartRead': {
      const object = variables.read as Partial<FakeRead>;
      const userBook = mine.find((u) => u.id === variables.userBookId);
      if (!userBook) return { data: { insert_user_book_read: { error: 'not found', user_book_read: null } } };
      const read: FakeRead = { id: nextId++, edition_id: null, started_at: null, finished_at: null, progress: null, progress_pages: null, ...object };
      userBook.user_book_reads.push(read);
      if (object.finished_at) userBook.status_id = 3;
      return { data: { insert_user_book_read: { error: null, user_book_read: { id: read.id } } } };
    }
    default:
      return { errors: [{ message: `unknown operation ${op}` }] };
  }
}

const auth = (token: string) => ({ authorization: `Bearer ${token}` });

async function synced(): Promise<void> {
  while (d.ctx.background.size > 0) await Promise.allSettled([...d.ctx.background]);
}

async function putSettings(token: string, body: unknown) {
  return d.inject({ method: 'PUT', url: '/api/v1/hardcover-sync-settings', headers: auth(token), payload: body as Json });
}

async function webProgress(token: string, bookId: number, fileId: number, percent: number) {
  return d.inject({ method: 'POST', url: '/api/v1/books/progress', headers: auth(token), payload: { bookId, fileProgress: { bookFileId: fileId, progressPercent: percent, positionData: null } } });
}

beforeAll(async () => {
  hc = await startFakeSite();
  hc.on('POST', '/graphql', async (request) => {
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    if (failWith !== undefined) return { status: failWith, json: { message: 'upstream trouble' } };
    return { json: answer(request) };
  });
  d = await startTestDaemon({ outgoingAllowPrivateHosts: '127.0.0.1', metadataProviderBaseUrls: JSON.stringify({ Hardcover: hc.url }) });
  lib = makeTempLibrary();
  await writeSimpleEpub(lib.path('Dune.epub'), { title: 'Dune', authors: ['Frank Herbert'], isbn: DUNE_ISBN });
  await writeSimpleEpub(lib.path('Emma.epub'), { title: 'Emma', authors: ['Jane Austen'], body: 'Emma Woodhouse, handsome, clever, and rich.' });
  await writeSimpleEpub(lib.path('Bare.epub'), { title: 'Untraceable', body: 'Nothing to look it up by.' });
  emmaHash = await partialMd5(lib.path('Emma.epub'));
  const library = await createLibrary(d.store.db, { name: 'Main', paths: [lib.root] });
  await scanLibrary(d.store, library, { coversRoot: d.ctx.paths.covers, workers: 0 });
  const files = await d.store.db.selectFrom('book_file').innerJoin('book_metadata', 'book_metadata.book_id', 'book_file.book_id').select(['book_file.id', 'book_file.book_id', 'book_metadata.title']).execute();
  for (const f of files) {
    if (f.title === 'Dune') Object.assign(ids, { dune: f.book_id, duneFile: f.id });
    if (f.title === 'Emma') Object.assign(ids, { emma: f.book_id, emmaFile: f.id });
    if (f.title === 'Untraceable') Object.assign(ids, { bare: f.book_id, bareFile: f.id });
  }
  // Emma was matched on Hardcover before: its Hardcover book id is stored, its ISBN is not.
  await d.store.db.updateTable('book_metadata').set({ hardcover_book_id: '200', isbn_13: null, isbn_10: null }).where('book_id', '=', ids.emma).execute();
  await d.setupAdmin();
  alice = await d.createUser('alice', { canSyncKoReader: true, canSyncKobo: true }, [library.id]);
  bob = await d.createUser('bob', { canSyncKobo: true }, [library.id]);
  plain = await d.createUser('plain', { canUpload: true }, [library.id]);
}, 120_000);

afterAll(async () => {
  await d?.close();
  await hc?.close();
  lib?.cleanup();
});

beforeEach(() => {
  calls = [];
  failWith = undefined;
  delayMs = 0;
});

describe('GET/PUT /api/v1/hardcover-sync-settings', () => {
  it('starts empty, stores the key and answers it masked', async () => {
    const empty = await d.inject({ method: 'GET', url: '/api/v1/hardcover-sync-settings', headers: auth(alice.token) });
    expect(empty.statusCode).toBe(200);
    expect(empty.json()).toEqual({ hardcoverApiKey: null, hardcoverSyncEnabled: false });

    const saved = await putSettings(alice.token, { hardcoverApiKey: `  ${ALICE_KEY}  `, hardcoverSyncEnabled: true });
    expect(saved.statusCode).toBe(200);
    expect(saved.json()).toEqual({ hardcoverApiKey: '********wxyz', hardcoverSyncEnabled: true });
    expect(saved.body).not.toContain(ALICE_KEY.slice(0, 12));

    const read = await d.inject({ method: 'GET', url: '/api/v1/hardcover-sync-settings', headers: auth(alice.token) });
    expect(read.json()).toEqual({ hardcoverApiKey: '********wxyz', hardcoverSyncEnabled: true });
    // Stored whole, where Grimmory keeps it; never part of the user's settings object.
    const stored = await d.store.db.selectFrom('user_settings').select('setting_value').where('user_id', '=', alice.id).where('setting_key', '=', 'hardcoverApiKey').executeTakeFirstOrThrow();
    expect(stored.setting_value).toBe(ALICE_KEY);
    const me = await d.inject({ method: 'GET', url: '/api/v1/users/me', headers: auth(alice.token) });
    expect(me.body).not.toContain(ALICE_KEY);
  });

  it('keeps the stored key when the masked form comes back, clears it when emptied', async () => {
    const toggled = await putSettings(alice.token, { hardcoverApiKey: '********wxyz', hardcoverSyncEnabled: false });
    expect(toggled.json()).toEqual({ hardcoverApiKey: '********wxyz', hardcoverSyncEnabled: false });
    const kept = await d.store.db.selectFrom('user_settings').select('setting_value').where('user_id', '=', alice.id).where('setting_key', '=', 'hardcoverApiKey').executeTakeFirstOrThrow();
    expect(kept.setting_value).toBe(ALICE_KEY);

    const cleared = await putSettings(alice.token, { hardcoverApiKey: '', hardcoverSyncEnabled: false });
    expect(cleared.json()).toEqual({ hardcoverApiKey: '', hardcoverSyncEnabled: false });
    const short = await putSettings(alice.token, { hardcoverApiKey: 'short-key', hardcoverSyncEnabled: true });
    expect(short.json()).toEqual({ hardcoverApiKey: '********', hardcoverSyncEnabled: true });

    // Back to the real key for the sync tests below.
    expect((await putSettings(alice.token, { hardcoverApiKey: ALICE_KEY, hardcoverSyncEnabled: true })).statusCode).toBe(200);
    expect((await putSettings(bob.token, { hardcoverApiKey: BOB_KEY, hardcoverSyncEnabled: false })).statusCode).toBe(200);
  });

  it('refuses bad bodies with 400 and callers without a sync permission with 403', async () => {
    expect((await putSettings(alice.token, { hardcoverApiKey: 'a\nb', hardcoverSyncEnabled: true })).statusCode).toBe(400);
    expect((await putSettings(alice.token, { hardcoverApiKey: 'x'.repeat(2049), hardcoverSyncEnabled: true })).statusCode).toBe(400);
    expect((await putSettings(alice.token, { hardcoverApiKey: 'k', hardcoverSyncEnabled: 'maybe' })).statusCode).toBe(400);
    expect((await d.inject({ method: 'GET', url: '/api/v1/hardcover-sync-settings', headers: auth(plain.token) })).statusCode).toBe(403);
    expect((await putSettings(plain.token, { hardcoverApiKey: 'k', hardcoverSyncEnabled: true })).statusCode).toBe(403);
    expect((await d.inject({ method: 'GET', url: '/api/v1/hardcover-sync-settings' })).statusCode).toBe(401);
    // The failed attempts changed nothing.
    const read = await d.inject({ method: 'GET', url: '/api/v1/hardcover-sync-settings', headers: auth(alice.token) });
    expect(read.json()).toEqual({ hardcoverApiKey: '********wxyz', hardcoverSyncEnabled: true });
  });
});

describe('progress pushed to Hardcover', () => {
  it('sends a web-reader change with the user’s key: finds the book by ISBN, shelves it and sets the pages read', async () => {
    const res = await webProgress(alice.token, ids.dune, ids.duneFile, 50);
    expect(res.statusCode).toBe(204);
    await synced();
    expect(calls.map((c) => c.op)).toEqual(['BinderyBookByIsbn', 'BinderyUserBook', 'BinderyAddUserBook', 'BinderyUpdateRead']);
    expect(calls.every((c) => c.authorization === `Bearer ${ALICE_KEY}`)).toBe(true);
    expect(calls[0]?.variables).toEqual({ isbn13: DUNE_ISBN });
    expect(calls[2]?.variables).toEqual({ object: { book_id: 100, edition_id: 101, status_id: 2 } });
    // 50 % of the ISBN's edition (412 pages), on the read Hardcover started when the book was added.
    expect(calls[3]?.variables).toMatchObject({ object: { edition_id: 101, started_at: localDate(), progress_pages: 206 } });
    expect(libraries.get(ALICE_KEY)?.[0]).toMatchObject({ book_id: 100, status_id: 2, user_book_reads: [{ progress_pages: 206, finished_at: null }] });
    expect(libraries.get(BOB_KEY)).toBeUndefined();
  });

  it('finishes the read at 99 % and leaves a book already read alone', async () => {
    expect((await webProgress(alice.token, ids.dune, ids.duneFile, 99.5)).statusCode).toBe(204);
    await synced();
    expect(calls.map((c) => c.op)).toEqual(['BinderyBookByIsbn', 'BinderyUserBook', 'BinderyUpdateRead']);
    expect(calls[2]?.variables).toMatchObject({ object: { progress_pages: 410, finished_at: localDate() } });
    expect(libraries.get(ALICE_KEY)?.[0]).toMatchObject({ status_id: 3 });

    calls = [];
    expect((await webProgress(alice.token, ids.dune, ids.duneFile, 100)).statusCode).toBe(204);
    await synced();
    expect(calls.map((c) => c.op)).toEqual(['BinderyBookByIsbn', 'BinderyUserBook']);
  });

  it('sends nothing for a user whose sync is off, or for a book Hardcover cannot be searched by', async () => {
    expect((await webProgress(bob.token, ids.dune, ids.duneFile, 30)).statusCode).toBe(204);
    expect((await webProgress(alice.token, ids.bare, ids.bareFile, 30)).statusCode).toBe(204);
    await synced();
    expect(calls).toEqual([]);
  });

  it('never fails or slows the progress request: a slow or failing Hardcover only shows in the log', async () => {
    expect((await putSettings(alice.token, { hardcoverApiKey: ALICE_SECOND_KEY, hardcoverSyncEnabled: true })).statusCode).toBe(200);
    delayMs = 1500;
    failWith = 500;
    const started = Date.now();
    const res = await webProgress(alice.token, ids.emma, ids.emmaFile, 40);
    const elapsed = Date.now() - started;
    expect(res.statusCode).toBe(204);
    expect(elapsed).toBeLessThan(1000);
    const row = await d.store.db.selectFrom('user_book_progress').select(['read_status', 'epub_progress_percent']).where('user_id', '=', alice.id).where('book_id', '=', ids.emma).executeTakeFirstOrThrow();
    expect(row).toEqual({ read_status: 'READING', epub_progress_percent: 40 });
    await synced();
    expect(calls).toEqual([]);
    expect(hc.requests.at(-1)?.headers.authorization).toBe(`Bearer ${ALICE_SECOND_KEY}`);

    // Once Hardcover answers again, the next change goes through (by the stored Hardcover id this time).
    delayMs = 0;
    failWith = undefined;
    expect((await webProgress(alice.token, ids.emma, ids.emmaFile, 41)).statusCode).toBe(204);
    await synced();
    expect(calls.map((c) => c.op)).toEqual(['BinderyBook', 'BinderyUserBook', 'BinderyAddUserBook', 'BinderyUpdateRead']);
    expect(calls[0]?.variables).toEqual({ bookId: 200 });
    // No ISBN: the default ebook edition (350 pages).
    expect(calls[2]?.variables).toEqual({ object: { book_id: 200, edition_id: 202, status_id: 2 } });
    expect(calls[3]?.variables).toMatchObject({ object: { progress_pages: 144 } });
  });

  it('sends KOReader pushes (a 0..1 fraction) once per new position', async () => {
    expect((await d.inject({ method: 'PUT', url: '/api/v1/koreader-users/me', headers: auth(alice.token), payload: { username: 'alice-ko', password: 'ko-secret' } })).statusCode).toBe(200);
    expect((await d.inject({ method: 'PATCH', url: '/api/v1/koreader-users/me/sync?enabled=true', headers: auth(alice.token) })).statusCode).toBe(204);
    const push = (percentage: number) =>
      d.inject({
        method: 'PUT',
        url: '/api/koreader/syncs/progress',
        headers: { accept: 'application/vnd.koreader.v1+json', 'x-auth-user': 'alice-ko', 'x-auth-key': md5Hex('ko-secret') },
        payload: { document: emmaHash, progress: '/body/DocFragment[2]/body/p[1]/text().0', percentage, device: 'Kindle', device_id: 'K1' },
      });
    const res = await push(0.6);
    expect(res.statusCode, res.body).toBe(200);
    await synced();
    expect(calls.map((c) => c.op)).toEqual(['BinderyBook', 'BinderyUserBook', 'BinderyUpdateRead']);
    expect(calls[2]?.variables).toMatchObject({ object: { edition_id: 202, progress_pages: 210 } });

    // The same position again sends nothing; an unknown document sends nothing either.
    calls = [];
    expect((await push(0.6)).statusCode).toBe(200);
    const unknown = await d.inject({
      method: 'PUT',
      url: '/api/koreader/syncs/progress',
      headers: { accept: 'application/vnd.koreader.v1+json', 'x-auth-user': 'alice-ko', 'x-auth-key': md5Hex('ko-secret') },
      payload: { document: '0123456789abcdef0123456789abcdef', progress: 'x', percentage: 0.3, device: 'Kindle' },
    });
    expect(unknown.statusCode).toBe(200);
    await synced();
    expect(calls).toEqual([]);
  });

  it('sends a Kobo bookmark with the device’s percent', async () => {
    expect((await putSettings(alice.token, { hardcoverApiKey: ALICE_THIRD_KEY, hardcoverSyncEnabled: true })).statusCode).toBe(200);
    const settings = await d.inject({ method: 'GET', url: '/api/v1/kobo-settings', headers: auth(alice.token) });
    const token = (settings.json() as { token: string }).token;
    expect((await d.inject({ method: 'PUT', url: '/api/v1/kobo-settings', headers: auth(alice.token), payload: { syncEnabled: true } })).statusCode).toBe(200);
    const at = '2025-03-01T10:00:00.0000000Z';
    const res = await d.inject({
      method: 'PUT',
      url: `/api/kobo/${token}/v1/library/${ids.emma}/state`,
      headers: DEVICE_HEADERS,
      payload: { ReadingStates: [{ EntitlementId: String(ids.emma), LastModified: at, StatusInfo: { LastModified: at, Status: 'Reading' }, CurrentBookmark: { LastModified: at, ProgressPercent: 80 } }] },
    });
    expect(res.statusCode, res.body).toBe(200);
    await synced();
    // A new key is a new Hardcover library: the book is shelved there first.
    expect(calls.map((c) => c.op)).toEqual(['BinderyBook', 'BinderyUserBook', 'BinderyAddUserBook', 'BinderyUpdateRead']);
    expect(calls[3]?.variables).toMatchObject({ object: { edition_id: 202, progress_pages: 280 } });
    expect(calls.every((c) => c.authorization === `Bearer ${ALICE_THIRD_KEY}`)).toBe(true);
  });

  it('takes the GraphQL URL from the Hardcover metadata provider’s base URL', () => {
    expect(hardcoverGraphqlUrl(d.ctx)).toBe(`${hc.url}/graphql`);
    expect(hardcoverGraphqlUrl({ config: { ...d.config, metadataProviderBaseUrls: '' } })).toBe('https://api.hardcover.app/v1/graphql');
  });
});
