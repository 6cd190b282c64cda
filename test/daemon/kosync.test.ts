import { conformancePath } from '../helpers/conformance.ts';
import { copyFileSync, mkdirSync } from 'node:fs';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MAX_ADDRESS_FAILURES } from '../../src/core/auth/login-rate-limit.ts';
import { partialMd5 } from '../../src/core/formats/hash.ts';
import { md5Hex } from '../../src/core/koreader/accounts.ts';
import { createLibrary } from '../../src/core/libraries/libraries.ts';
import { scanLibrary } from '../../src/core/scan/scanner.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { makeTempLibrary, writeSimpleEpub, type TempLibrary } from '../helpers/library-fixtures.ts';

const VECTORS_DIR = conformancePath('kosync', 'partial-md5-vectors');
const LEAVES = '59d481d168cca6267322f150c5f6a2a3';
const TALL = '41cce710f34e5ec21315e19c99821415';
const ACCEPT = 'application/vnd.koreader.v1+json';

let d: TestDaemon;
let lib: TempLibrary;
let reader: { id: number; token: string };
let admin: { id: number; token: string };
let noSync: { id: number; token: string };
let secretHash: string;
const books = { leavesOpen: 0, leavesClosed: 0, tall: 0, secret: 0 };
const files = { leavesOpen: 0, tall: 0 };

const api = (token: string | undefined, options: InjectOptions): Promise<LightMyRequestResponse> =>
  d.inject({ ...options, headers: { ...(options.headers ?? {}), ...(token ? { authorization: `Bearer ${token}` } : {}) } });

interface Device {
  user?: string;
  password?: string;
  key?: string;
  accept?: string;
}
const kindle: Device = { user: 'kindle', password: 'secret' };

function ko(device: Device | undefined, options: InjectOptions): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = { accept: device?.accept ?? ACCEPT };
  if (device?.user !== undefined) headers['x-auth-user'] = device.user;
  const key = device?.key ?? (device?.password !== undefined ? md5Hex(device.password) : undefined);
  if (key !== undefined) headers['x-auth-key'] = key;
  return d.inject({ ...options, url: `/api/koreader${String(options.url)}`, headers: { ...headers, ...(options.headers ?? {}) } });
}

const push = (device: Device, body: Record<string, unknown>) => ko(device, { method: 'PUT', url: '/syncs/progress', payload: body });
const pull = (device: Device, document: string) => ko(device, { method: 'GET', url: `/syncs/progress/${document}` });

async function link(token: string, username: string, password: string, sync = true): Promise<void> {
  expect((await api(token, { method: 'PUT', url: '/api/v1/koreader-users/me', payload: { username, password } })).statusCode).toBe(200);
  if (sync) expect((await api(token, { method: 'PATCH', url: '/api/v1/koreader-users/me/sync?enabled=true' })).statusCode).toBe(204);
}

const bookIdOf = async (libraryId: number, fileName: string): Promise<{ bookId: number; fileId: number }> => {
  const row = await d.store.db
    .selectFrom('book_file')
    .innerJoin('book', 'book.id', 'book_file.book_id')
    .select(['book.id as bookId', 'book_file.id as fileId'])
    .where('book.library_id', '=', libraryId)
    .where('book_file.file_name', '=', fileName)
    .executeTakeFirstOrThrow();
  return row;
};

const progressRow = (userId: number, bookId: number) =>
  d.store.db.selectFrom('user_book_progress').selectAll().where('user_id', '=', userId).where('book_id', '=', bookId).executeTakeFirst();

beforeAll(async () => {
  d = await startTestDaemon();
  lib = makeTempLibrary();
  mkdirSync(lib.path('open'), { recursive: true });
  mkdirSync(lib.path('closed'), { recursive: true });
  copyFileSync(`${VECTORS_DIR}/leaves.epub`, lib.path('open', 'leaves.epub'));
  copyFileSync(`${VECTORS_DIR}/tall.pdf`, lib.path('open', 'tall.pdf'));
  copyFileSync(`${VECTORS_DIR}/leaves.epub`, lib.path('closed', 'leaves-copy.epub'));
  await writeSimpleEpub(lib.path('closed', 'secret.epub'), { title: 'Secret', body: 'only in the closed library' });
  secretHash = await partialMd5(lib.path('closed', 'secret.epub'));
  const open = await createLibrary(d.store.db, { name: 'Open', paths: [lib.path('open')] });
  const closed = await createLibrary(d.store.db, { name: 'Closed', paths: [lib.path('closed')] });
  // Open first: the closed library's copy of leaves.epub is the newer book.
  for (const library of [open, closed]) await scanLibrary(d.store, library, { coversRoot: d.ctx.paths.covers, workers: 0 });
  const leavesOpen = await bookIdOf(open.id, 'leaves.epub');
  const tall = await bookIdOf(open.id, 'tall.pdf');
  books.leavesOpen = leavesOpen.bookId;
  books.tall = tall.bookId;
  books.leavesClosed = (await bookIdOf(closed.id, 'leaves-copy.epub')).bookId;
  books.secret = (await bookIdOf(closed.id, 'secret.epub')).bookId;
  files.leavesOpen = leavesOpen.fileId;
  files.tall = tall.fileId;

  reader = await d.createUser('reader', { canSyncKoReader: true }, [open.id]);
  noSync = await d.createUser('nosync', {}, [open.id]);
  admin = await d.createUser('boss', { admin: true });
});

afterAll(async () => {
  await d.close();
  lib.cleanup();
});

beforeEach(async () => {
  const db = d.store.db;
  await db.deleteFrom('user_book_file_progress').execute();
  await db.deleteFrom('user_book_progress').execute();
  await db.deleteFrom('koreader_document_progress').execute();
  await db.deleteFrom('koreader_user').execute();
  await db.updateTable('user_permissions').set({ permission_sync_koreader: 1 }).where('user_id', '=', reader.id).execute();
  await link(reader.token, 'kindle', 'secret');
});

describe('the scanned library speaks KOReader document ids', () => {
  it('stores the conformance digests as the files current hash', async () => {
    const hashes = await d.store.db.selectFrom('book_file').select(['id', 'current_hash']).where('id', 'in', [files.leavesOpen, files.tall]).orderBy('id').execute();
    expect(new Set(hashes.map((h) => h.current_hash))).toEqual(new Set([LEAVES, TALL]));
  });

  it('finds the newest book the user may see: the open copy for the reader, the newer closed copy for an admin', async () => {
    await link(admin.token, 'boss-kobo', 'boss-secret');
    const body = { document: LEAVES, progress: '/body/DocFragment[8]/body/div/text()[2].4', percentage: 0.42, device: 'Kindle', device_id: 'K1' };
    expect((await push(kindle, body)).statusCode).toBe(200);
    expect((await push({ user: 'boss-kobo', password: 'boss-secret' }, body)).statusCode).toBe(200);
    expect(await progressRow(reader.id, books.leavesOpen)).toMatchObject({ koreader_progress_percent: 0.42 });
    expect(await progressRow(reader.id, books.leavesClosed)).toBeUndefined();
    expect(await progressRow(admin.id, books.leavesClosed)).toMatchObject({ koreader_progress_percent: 0.42 });
    expect(await progressRow(admin.id, books.leavesOpen)).toBeUndefined();
  });
});

describe('authentication', () => {
  const unauthorized = { code: 2001, message: 'Unauthorized' };

  it('accepts the account name with the MD5 of its password, in either letter case', async () => {
    const ok = await ko(kindle, { method: 'GET', url: '/users/auth' });
    expect(ok.statusCode).toBe(200);
    expect(ok.headers['content-type']).toMatch(/^application\/json(;|$)/);
    expect(ok.json()).toEqual({ authorized: 'OK', username: 'kindle' });
    expect((await ko({ user: 'kindle', key: md5Hex('secret').toUpperCase() }, { method: 'GET', url: '/users/auth' })).statusCode).toBe(200);
  });

  it('limits failed sign-ins with the shared policy: after twenty from one address, 429 code 2001 on every kosync route', async () => {
    const from = (device: Device, address: string, options: InjectOptions = { method: 'GET', url: '/users/auth' }) => ko(device, { ...options, remoteAddress: address });
    for (let i = 0; i < MAX_ADDRESS_FAILURES; i++) expect((await from({ user: `mallory-${i}`, key: md5Hex(`guess-${i}`) }, '10.4.4.4')).statusCode).toBe(401);
    const blocked = await from(kindle, '10.4.4.4');
    expect(blocked.statusCode).toBe(429);
    expect(blocked.json()).toEqual({ code: 2001, message: 'Too many failed sign-in attempts. Please try again later.' });
    expect(blocked.headers['retry-after']).toBe('900');
    expect((await from(kindle, '10.4.4.4', { method: 'GET', url: '/syncs/progress/0123456789abcdef0123456789abcdef' })).statusCode).toBe(429);
    expect((await from(kindle, '10.4.4.4', { method: 'PUT', url: '/syncs/progress', payload: { document: 'x', progress: '1', percentage: 0.1, device: 'k' } })).statusCode).toBe(429);
    // The web login from that address is refused too (one policy); other addresses are not.
    expect((await d.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: 'x', password: 'y' }, remoteAddress: '10.4.4.4' })).statusCode).toBe(429);
    expect((await from(kindle, '10.4.4.5')).statusCode).toBe(200);
  });

  it('refuses missing headers, a wrong key, an unknown account with 401 code 2001', async () => {
    for (const device of [undefined, { user: 'kindle' }, { key: md5Hex('secret') }, { user: 'kindle', key: '' }, { user: 'kindle', password: 'wrong' }, { user: 'kobo', password: 'secret' }]) {
      const res = await ko(device, { method: 'GET', url: '/users/auth' });
      expect(res.statusCode, JSON.stringify(device)).toBe(401);
      expect(res.json()).toEqual(unauthorized);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
    }
    expect((await pull({ user: 'kindle', password: 'wrong' }, LEAVES)).json()).toEqual(unauthorized);
    expect((await push({ user: 'kindle', password: 'wrong' }, { document: LEAVES, progress: '1', percentage: 0.1, device: 'x' })).statusCode).toBe(401);
  });

  it('refuses a device whose sync is switched off, or whose user lost the KOReader permission', async () => {
    await api(reader.token, { method: 'PATCH', url: '/api/v1/koreader-users/me/sync?enabled=false' });
    for (const res of [await ko(kindle, { method: 'GET', url: '/users/auth' }), await pull(kindle, LEAVES), await push(kindle, { document: LEAVES, progress: '1', percentage: 0.1, device: 'x' })]) {
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ code: 2001, message: 'Sync is disabled for this user' });
    }
    await api(reader.token, { method: 'PATCH', url: '/api/v1/koreader-users/me/sync?enabled=true' });
    await d.store.db.updateTable('user_permissions').set({ permission_sync_koreader: 0 }).where('user_id', '=', reader.id).execute();
    const res = await ko(kindle, { method: 'GET', url: '/users/auth' });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ code: 2001 });
  });

  it('serves without the vendor Accept header but refuses another protocol version with 412', async () => {
    expect((await ko({ ...kindle, accept: '*/*' }, { method: 'GET', url: '/users/auth' })).statusCode).toBe(200);
    const v2 = await ko({ ...kindle, accept: 'application/vnd.koreader.v2+json' }, { method: 'GET', url: '/users/auth' });
    expect(v2.statusCode).toBe(412);
    expect(v2.json()).toEqual({ code: 102, message: 'Unsupported version specified in the Accept header.' });
  });

  it('always refuses registration (402 code 2005), with or without credentials, and answers the healthcheck', async () => {
    for (const device of [undefined, kindle]) {
      const res = await ko(device, { method: 'POST', url: '/users/create', payload: { username: 'new-user', password: md5Hex('x') } });
      expect(res.statusCode).toBe(402);
      expect(res.json()).toEqual({ code: 2005, message: 'User registration is disabled.' });
    }
    expect(await d.store.db.selectFrom('koreader_user').select('username').execute()).toEqual([{ username: 'kindle' }]);
    const health = await ko(undefined, { method: 'GET', url: '/healthcheck' });
    expect(health.statusCode).toBe(200);
    expect(health.json()).toEqual({ state: 'OK' });
  });
});

describe('progress', () => {
  const leaves = { document: LEAVES, progress: '/body/DocFragment[8]/body/div/text()[2].4', percentage: 0.4213, device: 'Kobo_clara', device_id: '1A2B3C4D5E6F' };

  it('round-trips a push: {document, timestamp} back, then the stored position with the server time', async () => {
    const before = Math.floor(Date.now() / 1000);
    const put = await push(kindle, { ...leaves, metadata: { filename: 'leaves.epub', title: 'Leaves of Grass', authors: 'Walt Whitman' } });
    expect(put.statusCode).toBe(200);
    expect(put.headers['content-type']).toMatch(/^application\/json(;|$)/);
    const answer = put.json() as { document: string; timestamp: number };
    expect(Object.keys(answer).sort()).toEqual(['document', 'timestamp']);
    expect(answer.document).toBe(LEAVES);
    expect(Number.isInteger(answer.timestamp)).toBe(true);
    expect(answer.timestamp).toBeGreaterThanOrEqual(before);
    expect(answer.timestamp).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));

    const get = await pull(kindle, LEAVES);
    expect(get.statusCode).toBe(200);
    expect(get.headers['content-type']).toMatch(/^application\/json(;|$)/);
    expect(get.json()).toEqual({ document: LEAVES, percentage: 0.4213, progress: leaves.progress, device: 'Kobo_clara', device_id: '1A2B3C4D5E6F', timestamp: answer.timestamp });

    expect(await progressRow(reader.id, books.leavesOpen)).toMatchObject({
      koreader_progress: leaves.progress,
      koreader_progress_percent: 0.4213,
      koreader_device: 'Kobo_clara',
      koreader_device_id: '1A2B3C4D5E6F',
      read_status: 'READING',
      // Without "sync with web reader" the web reader's position is left alone.
      epub_progress: null,
      epub_progress_percent: null,
    });
    // Grimmory's book JSON shows the KOReader percentage.
    const book = await api(reader.token, { method: 'GET', url: `/api/v1/books/${books.leavesOpen}` });
    expect(book.statusCode).toBe(200);
    expect(book.json()).toMatchObject({ koreaderProgress: { percentage: 42.1 }, readStatus: 'READING' });
  });

  it('keeps the last write, whatever its percentage, and finds a PDF by its digest', async () => {
    const first = { document: TALL, percentage: 0.32, progress: '56', device: 'my kpw' };
    expect((await push(kindle, first)).statusCode).toBe(200);
    expect((await push(kindle, { document: TALL, percentage: 0.22, progress: '36', device: 'my pb' })).statusCode).toBe(200);
    const body = (await pull(kindle, TALL)).json() as Record<string, unknown>;
    expect(body).toMatchObject({ document: TALL, percentage: 0.22, progress: '36', device: 'my pb' });
    // A push without device_id has none to give back.
    expect(body).not.toHaveProperty('device_id');
    expect(await progressRow(reader.id, books.tall)).toMatchObject({ koreader_progress: '36', koreader_progress_percent: 0.22 });
  });

  it('moves the read status at 0.25 % and 99.5 %, back down as well', async () => {
    const steps: [number, string][] = [[0.001, 'UNREAD'], [0.0026, 'READING'], [0.995, 'READ'], [0.3, 'READING'], [0.001, 'UNREAD'], [1, 'READ']];
    for (const [percentage, status] of steps) {
      expect((await push(kindle, { ...leaves, percentage })).statusCode).toBe(200);
      const row = await progressRow(reader.id, books.leavesOpen);
      expect(row?.read_status, String(percentage)).toBe(status);
      if (status === 'READ') expect(row?.date_finished).toMatch(/^\d{4}-\d\d-\d\dT/);
    }
  });

  it('answers {} for a document without progress, and keeps positions of unknown documents per user', async () => {
    const empty = await pull(kindle, LEAVES);
    expect(empty.statusCode).toBe(200);
    expect(empty.json()).toEqual({});
    expect((await pull(kindle, '89isjkdaj9jnon_existent')).json()).toEqual({});

    expect((await push(kindle, { document: '89isjkdaj9j', percentage: 0.32, progress: '56', device: 'my kpw' })).json()).toMatchObject({ document: '89isjkdaj9j' });
    expect((await pull(kindle, '89isjkdaj9j')).json()).toMatchObject({ document: '89isjkdaj9j', percentage: 0.32, progress: '56', device: 'my kpw' });
    await link(admin.token, 'boss-kobo', 'boss-secret');
    expect((await pull({ user: 'boss-kobo', password: 'boss-secret' }, '89isjkdaj9j')).json()).toEqual({});
  });

  it('treats a book in a library the user cannot see as an unknown document', async () => {
    expect((await push(kindle, { document: secretHash, percentage: 0.5, progress: '/body/DocFragment[1]/body/p/text().2', device: 'Kindle' })).statusCode).toBe(200);
    expect(await progressRow(reader.id, books.secret)).toBeUndefined();
    // What was pushed is kept for the device (as any unknown document), nothing about the book is revealed.
    expect((await pull(kindle, secretHash)).json()).toMatchObject({ document: secretHash, percentage: 0.5, device: 'Kindle' });
    await link(admin.token, 'boss-kobo', 'boss-secret');
    expect((await pull({ user: 'boss-kobo', password: 'boss-secret' }, secretHash)).json()).toEqual({});
  });

  it('refuses malformed pushes with the reference codes and no write', async () => {
    const cases: [Record<string, unknown>, number, number][] = [
      [{ progress: '1', percentage: 0.1, device: 'x' }, 403, 2004],
      [{ document: '', progress: '1', percentage: 0.1, device: 'x' }, 403, 2004],
      [{ document: 'a:b', progress: '1', percentage: 0.1, device: 'x' }, 403, 2004],
      [{ document: LEAVES, percentage: 0.1, device: 'x' }, 403, 2003],
      [{ document: LEAVES, progress: '1', device: 'x' }, 403, 2003],
      [{ document: LEAVES, progress: '1', percentage: 'lots', device: 'x' }, 403, 2003],
      [{ document: LEAVES, progress: '1', percentage: 0.1 }, 403, 2003],
    ];
    for (const [body, status, code] of cases) {
      const res = await push(kindle, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(status);
      expect(res.json()).toMatchObject({ code });
    }
    expect((await push(kindle, [] as unknown as Record<string, unknown>)).json()).toEqual({ code: 104, message: 'Body should be a JSON hash.' });
    expect(await progressRow(reader.id, books.leavesOpen)).toBeUndefined();
    // percentage 0 and numeric strings are fine, as on the reference server.
    expect((await push(kindle, { document: LEAVES, progress: '/body/DocFragment[2]/body.0', percentage: '0', device: 'x' })).statusCode).toBe(200);
    expect((await pull(kindle, 'a:b')).json()).toMatchObject({ code: 2004 });
  });
});

describe('sync with the web reader', () => {
  const enable = (token: string, route = 'sync-progress-with-grimmory') => api(token, { method: 'PATCH', url: `/api/v1/koreader-users/me/${route}?enabled=true` });

  it('turns a KOReader push into the web reader position of that file', async () => {
    expect((await enable(reader.token)).statusCode).toBe(204);
    expect((await push(kindle, { document: LEAVES, progress: '/body/DocFragment[8]/body/div/text()[2].4', percentage: 0.4213, device: 'Kindle' })).statusCode).toBe(200);
    const file = await d.store.db.selectFrom('user_book_file_progress').selectAll().where('user_id', '=', reader.id).where('book_file_id', '=', files.leavesOpen).executeTakeFirst();
    expect(file).toMatchObject({ position_data: 'epubcfi(/6/16!/4/4/3:4)', progress_percent: 42.1 });
    const row = await progressRow(reader.id, books.leavesOpen);
    expect(row).toMatchObject({ epub_progress: 'epubcfi(/6/16!/4/4/3:4)', epub_progress_percent: 42.1, koreader_progress_percent: 0.4213, read_status: 'READING' });
    // The KOReader position is still what a device gets back (a tie goes to KOReader).
    expect((await pull(kindle, LEAVES)).json()).toMatchObject({ device: 'Kindle', progress: '/body/DocFragment[8]/body/div/text()[2].4' });

    // A PDF page goes over as the page; an XPointer that leads nowhere leaves only the percentage.
    await push(kindle, { document: TALL, progress: '12', percentage: 0.5, device: 'Kindle' });
    expect(await progressRow(reader.id, books.tall)).toMatchObject({ pdf_progress: 12, pdf_progress_percent: 50 });
    await push(kindle, { document: LEAVES, progress: '/body/DocFragment[999]/body/p.0', percentage: 0.6, device: 'Kindle' });
    expect(await progressRow(reader.id, books.leavesOpen)).toMatchObject({ epub_progress: null, epub_progress_percent: 60 });
  });

  it('offers the web reader position when it is newer, as an XPointer or a page', async () => {
    await push(kindle, { document: LEAVES, progress: '/body/DocFragment[3]/body.0', percentage: 0.05, device: 'Kindle', device_id: 'K1' });
    await push(kindle, { document: TALL, progress: '3', percentage: 0.1, device: 'Kindle', device_id: 'K1' });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const web = (body: Record<string, unknown>) => api(reader.token, { method: 'POST', url: '/api/v1/books/progress', payload: body });
    expect((await web({ bookId: books.leavesOpen, fileProgress: { bookFileId: files.leavesOpen, positionData: 'epubcfi(/6/16!/4/4,/3:4,/3:20)', positionHref: null, progressPercent: 60 } })).statusCode).toBe(204);
    expect((await web({ bookId: books.tall, fileProgress: { bookFileId: files.tall, positionData: '12', progressPercent: 75 } })).statusCode).toBe(204);

    // Off: KOReader only ever sees its own pushes.
    expect((await pull(kindle, LEAVES)).json()).toMatchObject({ percentage: 0.05, device: 'Kindle' });
    expect((await enable(reader.token, 'sync-progress-with-booklore')).statusCode).toBe(204);
    const epub = (await pull(kindle, LEAVES)).json() as Record<string, unknown>;
    expect(epub).toEqual({ document: LEAVES, percentage: 0.6, progress: '/body/DocFragment[8]/body/div[1]/text()[2].4', device: 'Bindery web reader', device_id: 'bindery-web-reader', timestamp: expect.any(Number) });
    expect((await pull(kindle, TALL)).json()).toMatchObject({ document: TALL, percentage: 0.75, progress: '12', device: 'Bindery web reader' });

    // The next KOReader push wins again.
    await push(kindle, { document: TALL, progress: '13', percentage: 0.76, device: 'Kindle', device_id: 'K1' });
    expect((await pull(kindle, TALL)).json()).toMatchObject({ progress: '13', device: 'Kindle', device_id: 'K1' });
  });
});

describe('/api/v1/koreader-users/me', () => {
  it('needs a token and admin or canSyncKoReader', async () => {
    expect((await api(undefined, { method: 'GET', url: '/api/v1/koreader-users/me' })).statusCode).toBe(401);
    for (const [method, url] of [['GET', ''], ['PUT', ''], ['PATCH', '/sync?enabled=true'], ['PATCH', '/sync-progress-with-grimmory?enabled=true'], ['PATCH', '/sync-progress-with-booklore?enabled=true']] as const) {
      const res = await api(noSync.token, { method, url: `/api/v1/koreader-users/me${url}`, ...(method === 'PUT' ? { payload: { username: 'x', password: 'y' } } : {}) });
      expect(res.statusCode, `${method} ${url}`).toBe(403);
    }
    // Admins may, without the flag.
    expect((await api(admin.token, { method: 'PUT', url: '/api/v1/koreader-users/me', payload: { username: 'boss', password: 'pw' } })).statusCode).toBe(200);
  });

  it('shows, creates and updates the account and its switches', async () => {
    await d.store.db.deleteFrom('koreader_user').execute();
    const missing = await api(reader.token, { method: 'GET', url: '/api/v1/koreader-users/me' });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ status: 404, message: `Koreader user not found for BookLore user ID: ${reader.id}` });
    expect((await api(reader.token, { method: 'PATCH', url: '/api/v1/koreader-users/me/sync?enabled=true' })).statusCode).toBe(404);

    const created = await api(reader.token, { method: 'PUT', url: '/api/v1/koreader-users/me', payload: { username: 'kindle', password: 'secret' } });
    expect(created.statusCode).toBe(200);
    const account = created.json() as { id: number };
    // Neither the password nor its MD5 is kept, so neither comes back (the settings page shows an empty field).
    expect(account).toEqual({ id: account.id, username: 'kindle', password: '', passwordMD5: null, syncEnabled: false, syncWithWebReader: false });
    expect(JSON.stringify((await api(reader.token, { method: 'GET', url: '/api/v1/koreader-users/me' })).json())).not.toContain(md5Hex('secret'));

    expect((await api(reader.token, { method: 'PATCH', url: '/api/v1/koreader-users/me/sync?enabled=true' })).statusCode).toBe(204);
    expect((await api(reader.token, { method: 'PATCH', url: '/api/v1/koreader-users/me/sync-progress-with-grimmory?enabled=true' })).statusCode).toBe(204);
    expect((await api(reader.token, { method: 'GET', url: '/api/v1/koreader-users/me' })).json()).toMatchObject({ id: account.id, syncEnabled: true, syncWithWebReader: true });
    expect((await api(reader.token, { method: 'PATCH', url: '/api/v1/koreader-users/me/sync-progress-with-booklore?enabled=false' })).statusCode).toBe(204);
    expect((await api(reader.token, { method: 'GET', url: '/api/v1/koreader-users/me' })).json()).toMatchObject({ syncEnabled: true, syncWithWebReader: false });
    expect((await api(reader.token, { method: 'PATCH', url: '/api/v1/koreader-users/me/sync' })).statusCode).toBe(400);

    // New credentials take effect at once.
    expect((await api(reader.token, { method: 'PUT', url: '/api/v1/koreader-users/me', payload: { username: 'kobo', password: 'new' } })).json()).toMatchObject({ id: account.id, username: 'kobo', syncEnabled: true });
    expect((await ko(kindle, { method: 'GET', url: '/users/auth' })).statusCode).toBe(401);
    expect((await ko({ user: 'kobo', password: 'new' }, { method: 'GET', url: '/users/auth' })).statusCode).toBe(200);
  });

  it('refuses a taken username and missing fields with 400', async () => {
    const taken = await api(admin.token, { method: 'PUT', url: '/api/v1/koreader-users/me', payload: { username: 'kindle', password: 'x' } });
    expect(taken.statusCode).toBe(400);
    expect(taken.json()).toMatchObject({ status: 400, message: 'A data conflict occurred. The operation could not be completed.' });
    expect((await api(admin.token, { method: 'PUT', url: '/api/v1/koreader-users/me', payload: { username: 'boss' } })).statusCode).toBe(400);
    expect((await api(admin.token, { method: 'PUT', url: '/api/v1/koreader-users/me', payload: { password: 'x' } })).statusCode).toBe(400);
  });
});
