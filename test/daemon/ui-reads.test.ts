import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { InjectOptions } from 'fastify';
import { mkdirSync } from 'node:fs';
import { createLibrary } from '../../src/core/libraries/libraries.ts';
import { scanLibrary } from '../../src/core/scan/scanner.ts';
import { VERSION } from '../../src/version.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { makeTempLibrary, writeSimpleEpub, type TempLibrary } from '../helpers/library-fixtures.ts';

let d: TestDaemon;
let lib: TempLibrary;
let user: { id: number; token: string };
let admin: { id: number; token: string };

beforeEach(async () => {
  d = await startTestDaemon();
  lib = makeTempLibrary();
  user = await d.createUser('reader');
  admin = await d.createUser('admin', { admin: true });
});
afterEach(async () => {
  await d.close();
  lib.cleanup();
});

const call = (token: string | undefined, options: InjectOptions) =>
  d.inject({ ...options, headers: { ...(options.headers ?? {}), ...(token ? { authorization: `Bearer ${token}` } : {}) } });
const get = (token: string | undefined, url: string) => call(token, { method: 'GET', url });

describe('authors', () => {
  let openLibrary: number;
  let bookOfOpen: number;
  let bookOfClosed: number;
  const authorId = async (name: string): Promise<number> => (await d.store.db.selectFrom('author').select('id').where('name', '=', name).executeTakeFirstOrThrow()).id;

  beforeEach(async () => {
    mkdirSync(lib.path('open'), { recursive: true });
    mkdirSync(lib.path('closed'), { recursive: true });
    await writeSimpleEpub(lib.path('open', 'one.epub'), { title: 'Shared Work', authors: ['Ann Author', 'Bob Writer'] });
    await writeSimpleEpub(lib.path('open', 'two.epub'), { title: 'Solo Work', authors: ['Ann Author'] });
    await writeSimpleEpub(lib.path('closed', 'three.epub'), { title: 'Locked Work', authors: ['Ann Author', 'Cara Hidden'] });
    const open = await createLibrary(d.store.db, { name: 'Open', paths: [lib.path('open')] });
    const closed = await createLibrary(d.store.db, { name: 'Closed', paths: [lib.path('closed')] });
    for (const library of [open, closed]) await scanLibrary(d.store, library, { coversRoot: d.ctx.paths.covers, workers: 0 });
    openLibrary = open.id;
    await d.store.db.insertInto('user_library_mapping').values({ user_id: user.id, library_id: openLibrary }).execute();
    await d.store.db.insertInto('author').values({ name: 'Zed Nobooks' }).execute();
    const titled = async (title: string) => (await d.store.db.selectFrom('book_metadata').select('book_id').where('title', '=', title).executeTakeFirstOrThrow()).book_id;
    bookOfOpen = await titled('Shared Work');
    bookOfClosed = await titled('Locked Work');
  });

  it('counts only the books each user may see', async () => {
    const res = await get(user.token, '/api/v1/authors');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual([
      { id: await authorId('Ann Author'), name: 'Ann Author', bookCount: 2, hasPhoto: false },
      { id: await authorId('Bob Writer'), name: 'Bob Writer', bookCount: 1, hasPhoto: false },
    ]);
    const all = (await get(admin.token, '/api/v1/authors')).json() as { name: string; bookCount: number }[];
    expect(all.map((a) => [a.name, a.bookCount])).toEqual([['Ann Author', 3], ['Bob Writer', 1], ['Cara Hidden', 1], ['Zed Nobooks', 0]]);
  });

  it('follows content restrictions as well as libraries', async () => {
    await d.store.db.insertInto('user_library_mapping').values({ user_id: user.id, library_id: (await d.store.db.selectFrom('library').select('id').where('name', '=', 'Closed').executeTakeFirstOrThrow()).id }).execute();
    const cat = await d.store.db.insertInto('category').values({ name: 'Horror' }).returning('id').executeTakeFirstOrThrow();
    await d.store.db.insertInto('book_metadata_category_mapping').values({ book_id: bookOfClosed, category_id: cat.id }).execute();
    await d.store.db.insertInto('user_content_restriction').values({ user_id: user.id, restriction_type: 'CATEGORY', mode: 'EXCLUDE', value: 'horror' }).execute();
    const names = ((await get(user.token, '/api/v1/authors')).json() as { name: string; bookCount: number }[]).map((a) => [a.name, a.bookCount]);
    expect(names).toEqual([['Ann Author', 2], ['Bob Writer', 1]]);
  });

  it('shows details to users who can see one of the author\'s books, 404 otherwise', async () => {
    const ann = await authorId('Ann Author');
    expect((await get(user.token, `/api/v1/authors/${ann}`)).json()).toEqual({ id: ann, name: 'Ann Author', nameLocked: false, descriptionLocked: false, asinLocked: false, photoLocked: false });
    const hidden = await get(user.token, `/api/v1/authors/${await authorId('Cara Hidden')}`);
    expect(hidden.statusCode).toBe(404);
    expect(hidden.json()).toMatchObject({ status: 404, message: `Author not found with ID: ${await authorId('Cara Hidden')}` });
    expect((await get(admin.token, `/api/v1/authors/${await authorId('Cara Hidden')}`)).statusCode).toBe(200);
    expect((await get(user.token, '/api/v1/authors/999999')).statusCode).toBe(404);
    expect((await get(user.token, '/api/v1/authors/someone')).statusCode).toBe(400);

    expect((await get(user.token, '/api/v1/authors/by-name?name=bob%20WRITER')).json()).toMatchObject({ id: await authorId('Bob Writer'), name: 'Bob Writer' });
    expect((await get(user.token, '/api/v1/authors/by-name?name=Cara%20Hidden')).statusCode).toBe(404);
    expect((await get(user.token, '/api/v1/authors/by-name?name=Nobody')).statusCode).toBe(404);
    expect((await get(user.token, '/api/v1/authors/by-name')).statusCode).toBe(400);
  });

  it('lists a book\'s author names in credit order, for books the caller may see', async () => {
    const res = await get(user.token, `/api/v1/authors/book/${bookOfOpen}`);
    expect(res.json()).toEqual(['Ann Author', 'Bob Writer']);
    expect((await get(user.token, `/api/v1/authors/book/${bookOfClosed}`)).statusCode).toBe(403);
    expect((await get(user.token, '/api/v1/authors/book/424242')).statusCode).toBe(404);
    expect((await get(undefined, '/api/v1/authors')).statusCode).toBe(401);
  });
});

describe('magic shelves', () => {
  it('is an empty list on a new install', async () => {
    const res = await get(user.token, '/api/magic-shelves');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual([]);
  });

  it('lists the caller\'s own magic shelves, then public ones of others, never others\' private ones', async () => {
    const filter = '{"type":"group","join":"and","rules":[]}';
    const mine = await d.store.db.insertInto('magic_shelf').values({ user_id: user.id, name: 'Unread', icon: 'book', icon_type: 'LUCIDE', filter_json: filter }).returning('id').executeTakeFirstOrThrow();
    const shared = await d.store.db.insertInto('magic_shelf').values({ user_id: admin.id, name: 'Staff', filter_json: filter, is_public: 1 }).returning('id').executeTakeFirstOrThrow();
    await d.store.db.insertInto('magic_shelf').values({ user_id: admin.id, name: 'Admin only', filter_json: filter }).execute();
    expect((await get(user.token, '/api/magic-shelves')).json()).toEqual([
      { id: mine.id, name: 'Unread', icon: 'book', iconType: 'LUCIDE', filterJson: filter, isPublic: false },
      { id: shared.id, name: 'Staff', icon: null, iconType: null, filterJson: filter, isPublic: true },
    ]);
    expect(((await get(admin.token, '/api/magic-shelves')).json() as { name: string }[]).map((s) => s.name)).toEqual(['Staff', 'Admin only']);
    expect((await get(undefined, '/api/magic-shelves')).statusCode).toBe(401);
  });
});

describe('metadata tasks', () => {
  it('has no active task, and only admins and metadata editors may ask', async () => {
    expect((await get(admin.token, '/api/metadata/tasks/active')).json()).toEqual([]);
    const editor = await d.createUser('editor', { canEditMetadata: true });
    expect((await get(editor.token, '/api/metadata/tasks/active')).statusCode).toBe(200);
    const refused = await get(user.token, '/api/metadata/tasks/active');
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ status: 403, message: 'Access denied.' });
  });
});

describe('bookdrop notification', () => {
  it('counts zero files on a new install', async () => {
    const res = await get(admin.token, '/api/v1/bookdrop/notification');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ pendingCount: 0, totalCount: 0, lastUpdatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/) });
  });

  it('counts pending files among all bookdrop files, for admins and bookdrop users only', async () => {
    await d.store.db.insertInto('bookdrop_file').values([
      { file_path: '/drop/a.epub', file_name: 'a.epub', status: 'PENDING_REVIEW' },
      { file_path: '/drop/b.epub', file_name: 'b.epub', status: 'PENDING_REVIEW' },
      { file_path: '/drop/c.epub', file_name: 'c.epub', status: 'FINALIZED' },
    ]).execute();
    const dropper = await d.createUser('dropper', { canAccessBookdrop: true });
    expect((await get(dropper.token, '/api/v1/bookdrop/notification')).json()).toMatchObject({ pendingCount: 2, totalCount: 3 });
    expect((await get(user.token, '/api/v1/bookdrop/notification')).statusCode).toBe(403);
  });
});

describe('version', () => {
  it('reports the running version and no release check', async () => {
    const res = await get(user.token, '/api/v1/version?_=1700000000000');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ current: `v${VERSION}`, latest: 'unknown' });
    expect((await get(user.token, '/api/v1/version/changelog')).json()).toEqual([]);
    expect((await get(undefined, '/api/v1/version')).statusCode).toBe(401);
  });
});
