// Importing bookdrop files: the original is only removed once a flushed, verified copy is recorded in the catalog.
// Every step (copy, flush, verify, placing, the catalog write) is made to fail in turn: the original survives byte
// for byte, nothing is left in the library, the file is back in review, and the other files of the same request
// are imported.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hasClaimedImports, recoverAbandonedClaims } from '../../src/core/bookdrop/bookdrop-cleanup.ts';
import { bookdropFileJson } from '../../src/core/bookdrop/bookdrop-files.ts';
import { syncBookdrop, type BookdropEnv } from '../../src/core/bookdrop/intake.ts';
import { finalizeImport, finalizeResultJson } from '../../src/core/bookdrop/finalize.ts';
import { nodeImportFs, type ImportFs } from '../../src/core/bookdrop/safe-copy.ts';
import { createLibrary, type Library } from '../../src/core/libraries/libraries.ts';
import { openStore, type Store } from '../../src/core/store/store.ts';
import { makeUndeletable } from '../helpers/undeletable.ts';
import { makeTempLibrary, writeSimpleEpub, type TempLibrary } from '../helpers/library-fixtures.ts';

let lib: TempLibrary;
let store: Store;
let env: BookdropEnv;
let library: Library;

const sha = (path: string): string => createHash('sha256').update(readFileSync(path)).digest('hex');
const bookdrop = (...parts: string[]): string => join(lib.dataDir, 'bookdrop', ...parts);

/** Every file under the library root, relative, hidden ones included. */
function libraryFiles(dir = lib.root, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? libraryFiles(join(dir, e.name), `${prefix}${e.name}/`) : [`${prefix}${e.name}`]));
}

async function pendingIds(): Promise<number[]> {
  return (await store.db.selectFrom('bookdrop_file').select('id').where('status', '=', 'PENDING_REVIEW').orderBy('id').execute()).map((r) => r.id);
}

async function idOf(fileName: string): Promise<number> {
  return (await store.db.selectFrom('bookdrop_file').select('id').where('file_name', '=', fileName).executeTakeFirstOrThrow()).id;
}

beforeEach(async () => {
  lib = makeTempLibrary();
  store = await openStore(join(lib.dataDir, 'bindery.sqlite'));
  env = { store, bookdropDir: join(lib.dataDir, 'bookdrop'), dataDir: lib.dataDir };
  library = await createLibrary(store.db, { name: 'Books', paths: [lib.root] });
  await writeSimpleEpub(bookdrop('dune.epub'), { title: 'Dune', authors: ['Frank Herbert'], cover: '#a63' });
  await writeSimpleEpub(bookdrop('emma.epub'), { title: 'Emma', authors: ['Jane Austen'] });
  await writeSimpleEpub(bookdrop('sub', 'persuasion.epub'), { title: 'Persuasion', authors: ['Jane Austen'] });
  const summary = await syncBookdrop(env, { settleMs: 0 });
  expect(summary.added).toHaveLength(3);
});

afterEach(async () => {
  await store.close();
  lib.cleanup();
});

/** Import steps whose removal of this file fails (with this error code). */
function refusing(fileName: string, code: string): ImportFs {
  const messages: Record<string, string> = { EACCES: 'permission denied', EBUSY: 'resource busy' };
  return { ...nodeImportFs, unlink: async (path) => (path.endsWith(fileName) ? Promise.reject(Object.assign(new Error(`${code}: ${messages[code]}`), { code })) : nodeImportFs.unlink(path)) };
}

const duneBooks = async (): Promise<number> => (await store.db.selectFrom('book_metadata').select('book_id').where('title', '=', 'Dune').execute()).length;

const defaults = (): { defaultLibraryId: number; defaultPathId: number } => ({ defaultLibraryId: library.id, defaultPathId: library.paths[0]!.id });

describe('finalizing bookdrop files', () => {
  it('copies each file under the upload pattern, records the book, then removes the original and the row', async () => {
    const before = sha(bookdrop('dune.epub'));
    const outcome = await finalizeImport(env, { selectAll: true, ...defaults() });
    expect(outcome).toMatchObject({ totalFiles: 3, successfullyImported: 3, failed: 0 });
    const target = join(lib.root, 'Frank Herbert', 'Dune', 'Dune - Frank Herbert.epub');
    expect(sha(target)).toBe(before);
    expect(existsSync(bookdrop('dune.epub'))).toBe(false);
    expect(await store.db.selectFrom('bookdrop_file').selectAll().execute()).toEqual([]);
    const book = await store.db
      .selectFrom('book_file')
      .innerJoin('book_metadata', 'book_metadata.book_id', 'book_file.book_id')
      .select(['book_file.file_sub_path', 'book_file.file_name', 'book_file.content_hash', 'book_metadata.title'])
      .where('book_file.file_name', '=', 'Dune - Frank Herbert.epub')
      .executeTakeFirstOrThrow();
    expect(book).toEqual({ file_sub_path: 'Frank Herbert/Dune', file_name: 'Dune - Frank Herbert.epub', content_hash: before, title: 'Dune' });
    // The book gets its cover and thumbnail (made from the cover taken when the file arrived).
    const { book_id: bookId } = await store.db.selectFrom('book_file').select('book_id').where('file_name', '=', 'Dune - Frank Herbert.epub').executeTakeFirstOrThrow();
    expect(readdirSync(join(lib.dataDir, 'covers', String(bookId))).sort()).toEqual(['cover.jpg', 'thumbnail.jpg']);
    expect((await store.db.selectFrom('book').select('book_cover_hash').where('id', '=', bookId).executeTakeFirstOrThrow()).book_cover_hash).toMatch(/^BL-/);
    // Nothing half-written is left anywhere in the library.
    expect(libraryFiles().filter((f) => f.split('/').pop()!.startsWith('.'))).toEqual([]);
    expect(finalizeResultJson(outcome)).toEqual({
      totalFiles: 3,
      successfullyImported: 3,
      failed: 0,
      processedAt: expect.stringMatching(/Z$/),
      results: expect.arrayContaining([{ fileName: 'Dune - Frank Herbert.epub', success: true, message: "File successfully imported into the 'Books' library from the Bookdrop folder" }]),
    });
  });

  it('takes per-file metadata over what the file says, for the name and the catalog', async () => {
    const id = await idOf('emma.epub');
    const outcome = await finalizeImport(env, {
      files: [{ fileId: id, libraryId: library.id, pathId: library.paths[0]!.id, metadata: { title: 'Emma (Annotated)', authors: ['J. Austen'], seriesName: 'Novels', seriesNumber: 2, goodreadsRating: 4.1, moods: ['witty'] } }],
    });
    expect(outcome.successfullyImported).toBe(1);
    expect(outcome.results[0]!.path).toBe(join(lib.root, 'J. Austen', 'Novels', '02. ', 'Emma (Annotated)', 'Emma (Annotated) - J. Austen.epub'));
    const meta = await store.db.selectFrom('book_metadata').select(['title', 'series_name', 'series_number', 'goodreads_rating']).where('book_id', '=', outcome.results[0]!.bookId!).executeTakeFirstOrThrow();
    expect(meta).toEqual({ title: 'Emma (Annotated)', series_name: 'Novels', series_number: 2, goodreads_rating: 4.1 });
    const mood = await store.db.selectFrom('book_metadata_mood_mapping').innerJoin('mood', 'mood.id', 'book_metadata_mood_mapping.mood_id').select('mood.name').where('book_id', '=', outcome.results[0]!.bookId!).execute();
    expect(mood).toEqual([{ name: 'witty' }]);
    // The other two were not asked for.
    expect((await pendingIds()).length).toBe(2);
  });

  it('gives a taken name a counter and never overwrites', async () => {
    const taken = join(lib.root, 'Frank Herbert', 'Dune', 'Dune - Frank Herbert.epub');
    await writeSimpleEpub(taken, { title: 'Another Dune', authors: ['Someone'] });
    const theirs = sha(taken);
    const outcome = await finalizeImport(env, { files: [{ fileId: await idOf('dune.epub') }], ...defaults() });
    expect(outcome.results[0]).toMatchObject({ success: true, fileName: 'Dune - Frank Herbert (2).epub' });
    expect(sha(taken)).toBe(theirs);
    expect(existsSync(join(lib.root, 'Frank Herbert', 'Dune', 'Dune - Frank Herbert (2).epub'))).toBe(true);
  });

  it('refuses without a target and reports unknown ids and libraries per file', async () => {
    const dune = await idOf('dune.epub');
    const outcome = await finalizeImport(env, { files: [{ fileId: dune }, { fileId: 999, libraryId: library.id, pathId: library.paths[0]!.id }, { fileId: await idOf('emma.epub'), libraryId: 77, pathId: 1 }] });
    expect(outcome).toMatchObject({ totalFiles: 3, successfullyImported: 0, failed: 3 });
    expect(outcome.results.map((r) => r.message)).toEqual([`No library or folder given for fileId=${dune}`, 'Bookdrop file not found with ID: 999', 'Library not found with ID: 77']);
    const noDefaults = await finalizeImport(env, { selectAll: true, excludedIds: [await idOf('emma.epub'), await idOf('persuasion.epub')] });
    expect(noDefaults.results).toEqual([{ fileId: dune, fileName: 'dune.epub', success: false, message: `Missing metadata and defaults for fileId=${dune}` }]);
    expect(existsSync(bookdrop('dune.epub'))).toBe(true);
    expect((await pendingIds()).length).toBe(3);
  });

  it('does not import a format the library does not allow', async () => {
    const { mkdirSync } = await import('node:fs');
    mkdirSync(lib.path('..', 'comics'));
    const other = await createLibrary(store.db, { name: 'Comics', paths: [lib.path('..', 'comics')], allowedFormats: ['CBX'] });
    const outcome = await finalizeImport(env, { files: [{ fileId: await idOf('dune.epub') }], defaultLibraryId: other.id, defaultPathId: other.paths[0]!.id });
    expect(outcome.results[0]).toMatchObject({ success: false, message: "Format 'EPUB' is not allowed in library 'Comics'" });
  });

  it('reports a file that vanished from the bookdrop and forgets its row', async () => {
    const { rmSync } = await import('node:fs');
    rmSync(bookdrop('emma.epub'));
    const outcome = await finalizeImport(env, { selectAll: true, ...defaults() });
    expect(outcome).toMatchObject({ totalFiles: 3, successfullyImported: 2, failed: 1 });
    expect(outcome.results.find((r) => !r.success)).toMatchObject({ fileName: 'emma.epub', message: 'Source file does not exist in bookdrop folder' });
    expect(await store.db.selectFrom('bookdrop_file').selectAll().execute()).toEqual([]);
  });

  it('does not import a file twice (a second request finds it claimed or gone)', async () => {
    const id = await idOf('dune.epub');
    const [a, b] = await Promise.all([finalizeImport(env, { files: [{ fileId: id }], ...defaults() }), finalizeImport(env, { files: [{ fileId: id }], ...defaults() })]);
    const successes = [...a.results, ...b.results].filter((r) => r.success);
    expect(successes).toHaveLength(1);
    expect(await store.db.selectFrom('book_file').select('id').execute()).toHaveLength(1);
  });
});

describe('finalizing with a failing step', () => {
  const eio = (what: string): Error => Object.assign(new Error(`EIO: i/o error, ${what}`), { code: 'EIO' });

  const failures: [step: string, fs: () => ImportFs, message: RegExp][] = [
    ['the copy', () => ({ ...nodeImportFs, copy: async (from, to) => (to.includes('.bindery-') && from.endsWith('emma.epub') ? Promise.reject(eio('copyfile')) : nodeImportFs.copy(from, to)) }), /^copy failed: EIO/],
    [
      'the flush (after a partial copy was written)',
      () => ({
        ...nodeImportFs,
        copy: async (from, to) => {
          if (!from.endsWith('emma.epub')) return nodeImportFs.copy(from, to);
          writeFileSync(to, readFileSync(from).subarray(0, 100));
        },
        flush: async (path) => {
          const partial = statSync(path).size === 100;
          if (partial) throw eio('fsync');
          return nodeImportFs.flush(path);
        },
      }),
      /^flushing the copy to disk failed: EIO/,
    ],
    [
      'the verification (a copy that differs)',
      () => ({
        ...nodeImportFs,
        copy: async (from, to) => {
          await nodeImportFs.copy(from, to);
          if (from.endsWith('emma.epub')) writeFileSync(to, Buffer.concat([readFileSync(to), Buffer.from('garbage')]));
        },
      }),
      /^verification failed: the copy \(\d+ bytes\) differs from the original/,
    ],
    ['placing the copy', () => ({ ...nodeImportFs, link: async (from, to) => (to.endsWith('Emma - Jane Austen.epub') ? Promise.reject(eio('link')) : nodeImportFs.link(from, to)) }), /^placing the copy failed: EIO/],
  ];

  it.each(failures)('%s: the original survives intact and the others are imported', async (_step, fs, message) => {
    const original = sha(bookdrop('emma.epub'));
    const emma = await idOf('emma.epub');
    const outcome = await finalizeImport(env, { selectAll: true, ...defaults() }, { fs: fs() });
    expect(outcome).toMatchObject({ totalFiles: 3, successfullyImported: 2, failed: 1 });
    const failed = outcome.results.find((r) => !r.success);
    expect(failed).toMatchObject({ fileId: emma, fileName: 'emma.epub' });
    expect(failed!.message).toMatch(message);
    expect(sha(bookdrop('emma.epub'))).toBe(original);
    // Back in review; the others are gone from the queue and in the library.
    expect(await pendingIds()).toEqual([emma]);
    const files = libraryFiles();
    expect(files.filter((f) => f.includes('Emma') || f.split('/').pop()!.startsWith('.'))).toEqual([]);
    expect(files).toEqual(expect.arrayContaining(['Frank Herbert/Dune/Dune - Frank Herbert.epub', 'Jane Austen/Persuasion/Persuasion - Jane Austen.epub']));
    const titles = (await store.db.selectFrom('book_metadata').select('title').orderBy('title').execute()).map((r) => r.title);
    expect(titles).toEqual(['Dune', 'Persuasion']);

    // Once the trouble is gone, the same file imports.
    const retry = await finalizeImport(env, { selectAll: true, ...defaults() });
    expect(retry).toMatchObject({ totalFiles: 1, successfullyImported: 1 });
    expect(sha(join(lib.root, 'Jane Austen', 'Emma', 'Emma - Jane Austen.epub'))).toBe(original);
  });

  it('a failing catalog write: the transaction rolls back, the copy and its cover are removed, the original stays', async () => {
    const original = sha(bookdrop('dune.epub'));
    const dune = await idOf('dune.epub');
    const outcome = await finalizeImport(env, { selectAll: true, ...defaults() }, {
      beforeCommit: (fileId) => {
        if (fileId === dune) throw new Error('SQLITE_FULL: database or disk is full');
      },
    });
    expect(outcome).toMatchObject({ totalFiles: 3, successfullyImported: 2, failed: 1 });
    expect(outcome.results.find((r) => !r.success)!.message).toBe('recording the book in the catalog failed: SQLITE_FULL: database or disk is full');
    expect(sha(bookdrop('dune.epub'))).toBe(original);
    expect(existsSync(join(lib.root, 'Frank Herbert'))).toBe(true); // the folder may stay; the file must not
    expect(libraryFiles().filter((f) => f.startsWith('Frank Herbert/'))).toEqual([]);
    const titles = (await store.db.selectFrom('book_metadata').select('title').orderBy('title').execute()).map((r) => r.title);
    expect(titles).toEqual(['Emma', 'Persuasion']);
    // Covers exist for the books that are in the catalog, and only for them.
    const coverDirs = readdirSync(join(lib.dataDir, 'covers')).filter((n) => /^\d+$/.test(n)).map(Number);
    const bookIds = (await store.db.selectFrom('book').select('id').execute()).map((r) => r.id);
    expect(coverDirs.every((id) => bookIds.includes(id))).toBe(true);
    expect(await pendingIds()).toEqual([dune]);
  });

  it('an original that cannot be removed: imported, reported, and not offered again', async () => {
    const outcome = await finalizeImport(env, { files: [{ fileId: await idOf('dune.epub') }], ...defaults() }, {
      fs: { ...nodeImportFs, unlink: async (path) => (path.endsWith('dune.epub') ? Promise.reject(Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' })) : nodeImportFs.unlink(path)) },
    });
    expect(outcome.results[0]).toMatchObject({ success: true, warning: expect.stringContaining('could not be removed') });
    expect(existsSync(bookdrop('dune.epub'))).toBe(true);
    const row = await store.db.selectFrom('bookdrop_file').select('status').where('file_name', '=', 'dune.epub').executeTakeFirstOrThrow();
    expect(row.status).toBe('FINALIZED');
    expect(await pendingIds()).toHaveLength(2);
  });

  it('an original that cannot be removed stays imported through every recovery, is reported, and goes once it can', async () => {
    const dune = await idOf('dune.epub');
    await finalizeImport(env, { files: [{ fileId: dune }], ...defaults() }, { fs: refusing('dune.epub', 'EACCES') });
    const unlock = makeUndeletable(bookdrop());
    if (!unlock) return; // neither chattr nor permissions can stop a removal here
    try {
      // The periodic look for interrupted imports (the daemon's, every few seconds) must not take it for one.
      expect(await recoverAbandonedClaims(env)).toEqual({ completed: 0, released: 0 });
      expect(await hasClaimedImports(store)).toBe(false);
      const row = await store.db.selectFrom('bookdrop_file').selectAll().where('id', '=', dune).executeTakeFirstOrThrow();
      expect(row).toMatchObject({ status: 'FINALIZED', import_owner: null, original_left: 'EACCES: permission denied' });
      expect(bookdropFileJson(row)).toMatchObject({ status: 'FINALIZED', originalLeft: 'EACCES: permission denied' });
      expect(await pendingIds()).not.toContain(dune);
      // Importing everything waiting for review does not import it a second time.
      const again = await finalizeImport(env, { selectAll: true, ...defaults() });
      expect(again.results.map((r) => r.fileId)).not.toContain(dune);
      // A rescan tries the removal again and reports what it still cannot remove.
      const synced = await syncBookdrop(env, { settleMs: 0 });
      // (Emma, imported just now into the locked folder, is left too.)
      expect(synced.warnings).toContainEqual({ path: bookdrop('dune.epub'), reason: expect.stringMatching(/^imported, but the original could not be removed from the bookdrop: /) });
      expect(await pendingIds()).not.toContain(dune);
    } finally {
      unlock();
    }
    expect(await duneBooks()).toBe(1);
    // Once the removal works, the original and the row go.
    const synced = await syncBookdrop(env, { settleMs: 0 });
    expect(synced).toMatchObject({ added: [], warnings: [] });
    expect(existsSync(bookdrop('dune.epub'))).toBe(false);
    expect(await store.db.selectFrom('bookdrop_file').select('id').where('id', '=', dune).executeTakeFirst()).toBeUndefined();
    expect(await duneBooks()).toBe(1);
  });

  it('an import killed after recording its book, whose original cannot be removed: the recovery keeps it imported', async () => {
    const dune = await idOf('dune.epub');
    await finalizeImport(env, { files: [{ fileId: dune }], ...defaults() }, { fs: refusing('dune.epub', 'EACCES') });
    // What a kill between recording the book and removing the original leaves: the claim of a process not running it.
    const owner = JSON.stringify((await store.liveness.register()).owner);
    await store.db.updateTable('bookdrop_file').set({ import_owner: owner, original_left: null }).where('id', '=', dune).execute();
    const unlock = makeUndeletable(bookdrop());
    if (!unlock) return;
    try {
      expect(await recoverAbandonedClaims(env)).toEqual({ completed: 1, released: 0 });
      const row = await store.db.selectFrom('bookdrop_file').selectAll().where('id', '=', dune).executeTakeFirstOrThrow();
      expect(row).toMatchObject({ status: 'FINALIZED', import_owner: null, original_left: expect.stringMatching(/EPERM|EACCES/) });
      expect(await recoverAbandonedClaims(env)).toEqual({ completed: 0, released: 0 });
      expect(await pendingIds()).not.toContain(dune);
    } finally {
      unlock();
    }
    expect(await duneBooks()).toBe(1);
  });

  it('an original left behind that no longer holds the imported book goes back to review', async () => {
    const dune = await idOf('dune.epub');
    await finalizeImport(env, { files: [{ fileId: dune }], ...defaults() }, { fs: refusing('dune.epub', 'EBUSY') });
    // Replaced by another book under the same name.
    await writeSimpleEpub(bookdrop('dune.epub'), { title: 'Dune Messiah', authors: ['Frank Herbert'] });
    const old = new Date(Date.now() - 60_000);
    utimesSync(bookdrop('dune.epub'), old, old);
    await syncBookdrop(env, { settleMs: 0 });
    const row = await store.db.selectFrom('bookdrop_file').selectAll().where('id', '=', dune).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: 'PENDING_REVIEW', original_left: null });
    expect(bookdropFileJson(row).originalMetadata?.title).toBe('Dune Messiah');
  });
});
