import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLibrary, type Library } from '../../src/core/libraries/libraries.ts';
import { scanLibrary } from '../../src/core/scan/scanner.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { makeTempLibrary, writeSimpleEpub, type TempLibrary } from '../helpers/library-fixtures.ts';

let d: TestDaemon;
let lib: TempLibrary;
let shelfA: Library;
let shelfB: Library;
let dune: number;
let emma: number;

const auth = (token: string) => ({ authorization: `Bearer ${token}` });
const move = (token: string | undefined, payload: unknown) =>
  d.inject({ method: 'POST', url: '/api/v1/files/move', headers: token ? auth(token) : {}, payload: payload as Record<string, unknown> });

async function locationOf(bookId: number): Promise<string> {
  const row = await d.store.db
    .selectFrom('book_file')
    .innerJoin('library_path', 'library_path.id', 'book_file.library_path_id')
    .select(['library_path.path', 'book_file.file_sub_path', 'book_file.file_name'])
    .where('book_id', '=', bookId)
    .executeTakeFirstOrThrow();
  return join(row.path, row.file_sub_path, row.file_name);
}

beforeEach(async () => {
  d = await startTestDaemon();
  lib = makeTempLibrary();
  await writeSimpleEpub(lib.path('a', 'in', 'dune.epub'), { title: 'Dune', authors: ['Frank Herbert'] });
  await writeSimpleEpub(lib.path('b', 'emma.epub'), { title: 'Emma', authors: ['Jane Austen'] });
  shelfA = await createLibrary(d.store.db, { name: 'A', paths: [lib.path('a')], fileNamingPattern: '{authors}/{title}' });
  shelfB = await createLibrary(d.store.db, { name: 'B', paths: [lib.path('b')], fileNamingPattern: '{title}' });
  for (const l of [shelfA, shelfB]) await scanLibrary(d.store, l, { coversRoot: d.ctx.paths.covers, workers: 0 });
  const ids = await d.store.db.selectFrom('book_metadata').select(['book_id', 'title']).execute();
  dune = ids.find((r) => r.title === 'Dune')!.book_id;
  emma = ids.find((r) => r.title === 'Emma')!.book_id;
});

afterEach(async () => {
  await d.close();
  lib.cleanup();
});

describe('POST /api/v1/files/move', () => {
  it('needs a token and admin or canManageLibrary', async () => {
    const body = { moves: [{ bookId: dune, targetLibraryId: shelfA.id, targetLibraryPathId: shelfA.paths[0]!.id }] };
    expect((await move(undefined, body)).statusCode).toBe(401);
    const reader = await d.createUser('reader', { canUpload: true, canMoveOrganizeFiles: true }, [shelfA.id]);
    const denied = await move(reader.token, body);
    expect(denied.statusCode).toBe(403);
    expect(denied.json()).toMatchObject({ status: 403, message: 'Access denied.' });
    expect(existsSync(lib.path('a', 'in', 'dune.epub'))).toBe(true);
  });

  it('moves a book within its library by the library pattern, answering 200 with no body', async () => {
    const admin = await d.createUser('admin', { admin: true });
    const res = await move(admin.token, { bookIds: [dune], moves: [{ bookId: dune, targetLibraryId: shelfA.id, targetLibraryPathId: shelfA.paths[0]!.id }] });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('');
    expect(await locationOf(dune)).toBe(lib.path('a', 'Frank Herbert', 'Dune.epub'));
    expect(existsSync(lib.path('a', 'Frank Herbert', 'Dune.epub'))).toBe(true);
    expect(existsSync(lib.path('a', 'in'))).toBe(false);
  });

  it('moves a book to another library with that library pattern', async () => {
    const manager = await d.createUser('manager', { canManageLibrary: true }, [shelfA.id, shelfB.id]);
    const res = await move(manager.token, { moves: [{ bookId: dune, targetLibraryId: shelfB.id, targetLibraryPathId: shelfB.paths[0]!.id }] });
    expect(res.statusCode).toBe(200);
    expect(await locationOf(dune)).toBe(lib.path('b', 'Dune.epub'));
    const book = await d.store.db.selectFrom('book').select(['library_id', 'library_path_id']).where('id', '=', dune).executeTakeFirstOrThrow();
    expect(book).toEqual({ library_id: shelfB.id, library_path_id: shelfB.paths[0]!.id });
  });

  it('refuses with 403 a book the caller cannot see, or a target library not theirs, and moves nothing', async () => {
    const manager = await d.createUser('manager', { canManageLibrary: true }, [shelfA.id]);
    const hidden = await move(manager.token, {
      moves: [
        { bookId: dune, targetLibraryId: shelfA.id, targetLibraryPathId: shelfA.paths[0]!.id },
        { bookId: emma, targetLibraryId: shelfA.id, targetLibraryPathId: shelfA.paths[0]!.id },
      ],
    });
    expect(hidden.statusCode).toBe(403);
    expect(hidden.json()).toMatchObject({ status: 403 });
    const elsewhere = await move(manager.token, { moves: [{ bookId: dune, targetLibraryId: shelfB.id, targetLibraryPathId: shelfB.paths[0]!.id }] });
    expect(elsewhere.statusCode).toBe(403);
    expect(await locationOf(dune)).toBe(lib.path('a', 'in', 'dune.epub'));
    expect(await locationOf(emma)).toBe(lib.path('b', 'emma.epub'));
  });

  it('skips unknown books, libraries and folders, and incomplete entries, like Grimmory', async () => {
    const admin = await d.createUser('admin', { admin: true });
    const res = await move(admin.token, {
      moves: [
        { bookId: 9999, targetLibraryId: shelfA.id, targetLibraryPathId: shelfA.paths[0]!.id },
        { bookId: dune, targetLibraryId: 9999, targetLibraryPathId: shelfA.paths[0]!.id },
        { bookId: dune, targetLibraryId: shelfA.id, targetLibraryPathId: shelfB.paths[0]!.id },
        { bookId: dune, targetLibraryId: null, targetLibraryPathId: null },
      ],
    });
    expect(res.statusCode).toBe(200);
    expect(await locationOf(dune)).toBe(lib.path('a', 'in', 'dune.epub'));
    expect((await move(admin.token, {})).statusCode).toBe(200);
    expect((await move(admin.token, { moves: null, bookIds: null })).statusCode).toBe(200);
  });
});
