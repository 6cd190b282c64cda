import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { spawn, spawnSync } from 'node:child_process';
import { basename, dirname, join } from 'node:path';
import { hostname, tmpdir } from 'node:os';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLibrary, listLibraries, type Library } from '../../src/core/libraries/libraries.ts';
import { applyMoves, moveBooks, type MoveResult } from '../../src/core/moves/apply.ts';
import { MoveInterrupted, type StepHook } from '../../src/core/moves/engine.ts';
import { nodeMoveFs, type MoveFs } from '../../src/core/moves/fs.ts';
import { currentOwner, openRows } from '../../src/core/moves/journal.ts';
import { inPlaceRequests, movePattern, planMoves, TEMP_PREFIX, type MovePlan } from '../../src/core/moves/plan.ts';
import { recoverMoves } from '../../src/core/moves/recover.ts';
import { scanLibrary } from '../../src/core/scan/scanner.ts';
import { openStore, type Store } from '../../src/core/store/store.ts';
import { makeTempLibrary, writeSimpleEpub, type SimpleBook, type TempLibrary } from '../helpers/library-fixtures.ts';
import { copyCatalog, onPostgres } from '../helpers/engine.ts';

let lib: TempLibrary;
let store: Store;

beforeEach(async () => {
  lib = makeTempLibrary();
  store = await openStore(join(lib.dataDir, 'bindery.sqlite'));
});

afterEach(async () => {
  await store.close();
  lib.cleanup();
});

afterAll(() => {
  if (template) rmSync(template, { recursive: true, force: true });
});

const epubCache = new Map<string, Buffer>();

/** Writes an EPUB (cached by its spec: building one is the slow part of these tests). */
async function epub(path: string, book: SimpleBook): Promise<void> {
  const key = JSON.stringify(book);
  let bytes = epubCache.get(key);
  if (!bytes) {
    const tmp = join(lib.dataDir, `tmp-${epubCache.size}.epub`);
    mkdirSync(lib.dataDir, { recursive: true });
    await writeSimpleEpub(tmp, book);
    bytes = readFileSync(tmp);
    epubCache.set(key, bytes);
  }
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, bytes);
}

function write(path: string, content: string | Buffer): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content);
}

async function library(pattern: string | undefined = '{authors}/{title}', roots = [lib.root]): Promise<Library> {
  return createLibrary(store.db, { name: `lib-${Math.random()}`, paths: roots, organizationMode: 'AUTO_DETECT', ...(pattern !== undefined ? { fileNamingPattern: pattern } : {}) });
}

async function scan(l: Library): Promise<void> {
  await scanLibrary(store, l, { coversRoot: join(lib.dataDir, 'covers'), workers: 0 });
}

/** A folder audiobook, entered into the catalog directly (its tracks need not be real audio). */
async function addFolderAudiobook(l: Library, subPath: string, folder: string, title: string, author: string): Promise<number> {
  const dir = join(lib.root, subPath, folder);
  write(join(dir, '01.mp3'), `track one of ${title}`);
  write(join(dir, '02.mp3'), `track two of ${title}`);
  write(join(dir, 'cover.jpg'), 'jpeg');
  const rootId = l.paths[0]!.id;
  const book = await store.db.insertInto('book').values({ library_id: l.id, library_path_id: rootId }).returning('id').executeTakeFirstOrThrow();
  await store.db.insertInto('book_metadata').values({ book_id: book.id, title }).execute();
  const a = await store.db.insertInto('author').values({ name: author }).onConflict((oc) => oc.column('name').doNothing()).returning('id').executeTakeFirst();
  const authorId = a?.id ?? (await store.db.selectFrom('author').select('id').where('name', '=', author).executeTakeFirstOrThrow()).id;
  await store.db.insertInto('book_metadata_author_mapping').values({ book_id: book.id, author_id: authorId, sort_order: 0 }).execute();
  await store.db.insertInto('book_file').values({ book_id: book.id, library_path_id: rootId, file_sub_path: subPath, file_name: folder, is_folder_based: 1, book_type: 'AUDIOBOOK' }).execute();
  return book.id;
}

async function bookIdByTitle(title: string): Promise<number> {
  return (await store.db.selectFrom('book_metadata').select('book_id').where('title', '=', title).executeTakeFirstOrThrow()).book_id;
}

async function catalogPaths(bookId: number): Promise<string[]> {
  const rows = await store.db.selectFrom('book_file').innerJoin('library_path', 'library_path.id', 'book_file.library_path_id').select(['library_path.path', 'book_file.file_sub_path', 'book_file.file_name']).where('book_id', '=', bookId).orderBy('book_file.id').execute();
  return rows.map((r) => join(r.path, r.file_sub_path, r.file_name));
}

function hashOf(path: string): string {
  const info = statSync(path);
  if (!info.isDirectory()) return createHash('sha256').update(readFileSync(path)).digest('hex');
  return createHash('sha256').update(readdirSync(path).sort().map((n) => `${n}:${hashOf(join(path, n))}`).join('|')).digest('hex');
}

function walk(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? [join(dir, e.name), ...walk(join(dir, e.name))] : [join(dir, e.name)]));
}

async function inPlacePlan(l: Library, pattern?: string): Promise<MovePlan> {
  return planMoves(store, await inPlaceRequests(store.db, [l.id]), pattern !== undefined ? { pattern } : {});
}

const exdev = (): Error => Object.assign(new Error('cross-device link not permitted'), { code: 'EXDEV' });

/** A filesystem where every rename/link of a real file crosses devices (the temporary copy is on the target's device). */
function crossDeviceFs(base: MoveFs = nodeMoveFs): MoveFs {
  const crossing = (from: string): boolean => !basename(from).startsWith(TEMP_PREFIX);
  return {
    ...base,
    rename: async (from, to) => {
      if (crossing(from)) throw exdev();
      return base.rename(from, to);
    },
    link: async (from, to) => {
      if (crossing(from)) throw exdev();
      return base.link(from, to);
    },
  };
}

describe('planning', () => {
  it('picks the pattern: override, library, app setting, Grimmory default; a trailing slash keeps the file name', async () => {
    expect(await movePattern(store.db, { fileNamingPattern: '{title}' })).toBe('{title}');
    expect(await movePattern(store.db, { fileNamingPattern: '{title}' }, '{authors}/')).toBe('{authors}/{currentFilename}');
    expect(await movePattern(store.db, { fileNamingPattern: null })).toBe('{authors}/<{series}/><{seriesIndex}. >/{title}/{title}< - {authors}>< ({year})>');
    await store.db.insertInto('app_settings').values({ name: 'upload_file_pattern', val: '{title}' }).onConflict((oc) => oc.column('name').doUpdateSet({ val: '{title}' })).execute();
    expect(await movePattern(store.db, { fileNamingPattern: '  ' })).toBe('{title}');
    expect(await movePattern(store.db, { fileNamingPattern: null }, '')).toBe('{currentFilename}');
  });

  it('plans moves, unchanged books, and skips what cannot move', async () => {
    await epub(lib.path('Dune.epub'), { title: 'Dune', authors: ['Frank Herbert'] });
    await epub(lib.path('Frank Herbert', 'Children of Dune.epub'), { title: 'Children of Dune', authors: ['Frank Herbert'] });
    await epub(lib.path('gone.epub'), { title: 'Gone', authors: ['Nobody'] });
    const l = await library();
    await scan(l);
    rmSync(lib.path('gone.epub'));
    const plan = await inPlacePlan(l);
    const by = (title: string) => plan.books.find((b) => b.title === title)!;
    expect(by('Dune')).toMatchObject({ status: 'move', files: [{ kind: 'file', from: lib.path('Dune.epub'), to: lib.path('Frank Herbert', 'Dune.epub'), toSubPath: 'Frank Herbert', toFileName: 'Dune.epub' }] });
    expect(by('Children of Dune').status).toBe('unchanged');
    expect(by('Gone')).toMatchObject({ status: 'skipped', reason: expect.stringMatching(/source not found/) });
    const missing = await planMoves(store, [{ bookId: 999, targetLibraryId: l.id, targetLibraryPathId: l.paths[0]!.id }, { bookId: by('Dune').bookId, targetLibraryId: 77, targetLibraryPathId: 1 }]);
    expect(missing.books.map((b) => b.reason)).toEqual(['book not found', 'library 77 not found']);
    // planning touched nothing
    expect(existsSync(lib.path('Dune.epub'))).toBe(true);
    expect(existsSync(lib.path('Frank Herbert', 'Dune.epub'))).toBe(false);
  });
});

describe('applying moves', () => {
  it('moves a book, updates the catalog, closes the journal and is idempotent', async () => {
    await epub(lib.path('incoming', 'dune.epub'), { title: 'Dune', authors: ['Frank Herbert'], series: 'Dune Chronicles', seriesIndex: 1 });
    const l = await library('{authors}/<{series}/><{seriesIndex} - >{title}');
    await scan(l);
    const id = await bookIdByTitle('Dune');
    const before = hashOf(lib.path('incoming', 'dune.epub'));
    const result = await applyMoves(store, await inPlacePlan(l));
    expect(result.books).toEqual([
      { bookId: id, title: 'Dune', status: 'moved', files: [{ kind: 'file', bookFileId: expect.any(Number), from: lib.path('incoming', 'dune.epub'), to: lib.path('Frank Herbert', 'Dune Chronicles', '01 - Dune.epub') }], leftBehind: [] },
    ]);
    expect(await catalogPaths(id)).toEqual([lib.path('Frank Herbert', 'Dune Chronicles', '01 - Dune.epub')]);
    expect(hashOf(lib.path('Frank Herbert', 'Dune Chronicles', '01 - Dune.epub'))).toBe(before);
    expect(existsSync(lib.path('incoming'))).toBe(false);
    expect(existsSync(lib.root)).toBe(true);
    expect(await openRows(store.db)).toEqual([]);
    const journal = await store.db.selectFrom('move_journal').selectAll().execute();
    expect(journal).toMatchObject([{ state: 'done', method: 'rename', closed_at: expect.any(String) }]);
    const again = await inPlacePlan(l);
    expect(again.books.map((b) => b.status)).toEqual(['unchanged']);
  });

  it('moves sidecars that share the base name, and folder sidecars out of a folder that is all the book', async () => {
    await epub(lib.path('Herbert', 'Dune.epub'), { title: 'Dune', authors: ['Frank Herbert'] });
    write(lib.path('Herbert', 'Dune.opf'), '<package/>');
    write(lib.path('Herbert', 'Dune.metadata.json'), '{}');
    write(lib.path('Herbert', 'Dune.cover.jpg'), 'jpeg');
    write(lib.path('Herbert', 'cover.jpg'), 'folder cover');
    write(lib.path('Herbert', 'metadata.opf'), '<calibre/>');
    write(lib.path('Herbert', '.DS_Store'), 'junk');
    // a shared folder: its cover.jpg belongs to nobody in particular and stays
    await epub(lib.path('Shared', 'Emma.epub'), { title: 'Emma', authors: ['Jane Austen'] });
    await epub(lib.path('Shared', 'Persuasion.epub'), { title: 'Persuasion', authors: ['Jane Austen'] });
    write(lib.path('Shared', 'cover.jpg'), 'shared cover');
    write(lib.path('Shared', 'Emma.opf'), '<emma/>');
    const l = await library('{authors}/{title} - {authors}');
    await scan(l);
    const result = await applyMoves(store, await inPlacePlan(l));
    const dune = result.books.find((b) => b.title === 'Dune')!;
    expect(dune.files.map((f) => [f.kind, f.to]).sort()).toEqual(
      [
        ['file', lib.path('Frank Herbert', 'Dune - Frank Herbert.epub')],
        ['sidecar', lib.path('Frank Herbert', 'Dune - Frank Herbert.opf')],
        ['sidecar', lib.path('Frank Herbert', 'Dune - Frank Herbert.metadata.json')],
        ['sidecar', lib.path('Frank Herbert', 'Dune - Frank Herbert.cover.jpg')],
        ['sidecar', lib.path('Frank Herbert', 'cover.jpg')],
        ['sidecar', lib.path('Frank Herbert', 'metadata.opf')],
      ].sort(),
    );
    expect(readFileSync(lib.path('Frank Herbert', 'cover.jpg'), 'utf8')).toBe('folder cover');
    expect(existsSync(lib.path('Herbert'))).toBe(false);
    expect(readFileSync(lib.path('Jane Austen', 'Emma - Jane Austen.opf'), 'utf8')).toBe('<emma/>');
    expect(readFileSync(lib.path('Shared', 'cover.jpg'), 'utf8')).toBe('shared cover');
    expect(readdirSync(lib.path('Shared'))).toEqual(['cover.jpg']);
  });

  it('never overwrites: a taken name gets a counter, within a batch too, and a race fails the book', async () => {
    await epub(lib.path('a', 'dune.epub'), { title: 'Dune', authors: ['Frank Herbert'], body: 'one' });
    await epub(lib.path('b', 'dune.epub'), { title: 'Dune', authors: ['Frank Herbert'], body: 'two' });
    await epub(lib.path('c', 'emma.epub'), { title: 'Emma', authors: ['Jane Austen'] });
    write(lib.path('Frank Herbert', 'Dune.epub'), 'someone else');
    const l = await library();
    await scan(l);
    const plan = await inPlacePlan(l);
    const targets = plan.books.map((b) => b.files[0]!.to);
    expect(targets).toEqual([lib.path('Frank Herbert', 'Dune (2).epub'), lib.path('Frank Herbert', 'Dune (3).epub'), lib.path('Jane Austen', 'Emma.epub')]);
    // a file appears at a target between planning and applying
    write(lib.path('Jane Austen', 'Emma.epub'), 'raced');
    const result = await applyMoves(store, plan);
    expect(result.books.map((b) => b.status)).toEqual(['moved', 'moved', 'failed']);
    expect(result.books[2]!.reason).toMatch(/target already exists/);
    expect(readFileSync(lib.path('Frank Herbert', 'Dune.epub'), 'utf8')).toBe('someone else');
    expect(readFileSync(lib.path('Jane Austen', 'Emma.epub'), 'utf8')).toBe('raced');
    expect(existsSync(lib.path('c', 'emma.epub'))).toBe(true);
    expect(await catalogPaths(await bookIdByTitle('Emma'))).toEqual([lib.path('c', 'emma.epub')]);
    expect(await openRows(store.db)).toEqual([]);
  });

  it('treats a target held by another catalogued (missing) file as taken', async () => {
    await epub(lib.path('x', 'dune.epub'), { title: 'Dune', authors: ['Frank Herbert'] });
    const l = await library();
    await scan(l);
    const other = await store.db.insertInto('book').values({ library_id: l.id, library_path_id: l.paths[0]!.id }).returning('id').executeTakeFirstOrThrow();
    await store.db.insertInto('book_file').values({ book_id: other.id, library_path_id: l.paths[0]!.id, file_sub_path: 'Frank Herbert', file_name: 'Dune.epub', missing_at: new Date().toISOString() }).execute();
    const plan = await inPlacePlan(l);
    expect(plan.books.find((b) => b.bookId !== other.id)!.files[0]!.toFileName).toBe('Dune (2).epub');
  });

  it('keeps the formats of one book together under one counter', async () => {
    await epub(lib.path('in', 'Dune.epub'), { title: 'Dune', authors: ['Frank Herbert'] });
    write(lib.path('in', 'Dune.fb2'), '<FictionBook/>');
    const l = await library();
    await scan(l);
    const id = await bookIdByTitle('Dune');
    const extra = await store.db.insertInto('book_file').values({ book_id: id, library_path_id: l.paths[0]!.id, file_sub_path: 'in', file_name: 'Dune.fb2', book_type: 'FB2' }).returning('id').executeTakeFirstOrThrow();
    write(lib.path('Frank Herbert', 'Dune.fb2'), 'taken');
    const plan = await inPlacePlan(l);
    expect(plan.books[0]!.files.map((f) => f.toFileName)).toEqual(['Dune (2).epub', 'Dune (2).fb2']);
    await applyMoves(store, plan);
    const rows = await store.db.selectFrom('book_file').select(['id', 'file_name']).where('book_id', '=', id).orderBy('id').execute();
    expect(rows).toEqual([{ id: expect.any(Number), file_name: 'Dune (2).epub' }, { id: extra.id, file_name: 'Dune (2).fb2' }]);
  });

  it('moves a folder audiobook as a folder', async () => {
    const l = await library();
    const id = await addFolderAudiobook(l, 'audio', 'phm', 'Project Hail Mary', 'Andy Weir');
    const before = hashOf(lib.path('audio', 'phm'));
    const result = await applyMoves(store, await inPlacePlan(l));
    expect(result.books[0]).toMatchObject({ status: 'moved', files: [{ kind: 'folder', to: lib.path('Andy Weir', 'Project Hail Mary') }] });
    expect(hashOf(lib.path('Andy Weir', 'Project Hail Mary'))).toBe(before);
    expect(readdirSync(lib.path('Andy Weir', 'Project Hail Mary')).sort()).toEqual(['01.mp3', '02.mp3', 'cover.jpg']);
    expect(existsSync(lib.path('audio'))).toBe(false);
    expect(await catalogPaths(id)).toEqual([lib.path('Andy Weir', 'Project Hail Mary')]);
  });

  it('moves across devices through a verified copy (EXDEV), keeping the modification time', async () => {
    await epub(lib.path('in', 'dune.epub'), { title: 'Dune', authors: ['Frank Herbert'] });
    write(lib.path('in', 'dune.opf'), '<opf/>');
    const old = new Date('2001-02-03T04:05:06Z');
    utimesSync(lib.path('in', 'dune.epub'), old, old);
    const l = await library();
    await scan(l);
    const audio = await addFolderAudiobook(l, 'audio', 'phm', 'Project Hail Mary', 'Andy Weir');
    const folderHash = hashOf(lib.path('audio', 'phm'));
    const hash = hashOf(lib.path('in', 'dune.epub'));
    const result = await applyMoves(store, await inPlacePlan(l), { fs: crossDeviceFs() });
    expect(result.books.map((b) => b.status)).toEqual(['moved', 'moved']);
    const target = lib.path('Frank Herbert', 'Dune.epub');
    expect(hashOf(target)).toBe(hash);
    expect(statSync(target).mtime.toISOString()).toBe(old.toISOString());
    expect(readFileSync(lib.path('Frank Herbert', 'Dune.opf'), 'utf8')).toBe('<opf/>');
    expect(existsSync(lib.path('in'))).toBe(false);
    expect(hashOf(lib.path('Andy Weir', 'Project Hail Mary'))).toBe(folderHash);
    expect(existsSync(lib.path('audio'))).toBe(false);
    expect(await catalogPaths(audio)).toEqual([lib.path('Andy Weir', 'Project Hail Mary')]);
    const journal = await store.db.selectFrom('move_journal').select(['method', 'state']).execute();
    expect(journal.every((r) => r.method === 'copy' && r.state === 'done')).toBe(true);
    expect(walk(lib.root).filter((p) => basename(p).startsWith(TEMP_PREFIX))).toEqual([]);
  });

  it('refuses a copy that does not match its source and puts everything back', async () => {
    await epub(lib.path('in', 'dune.epub'), { title: 'Dune', authors: ['Frank Herbert'] });
    const l = await library();
    await scan(l);
    const corrupting: MoveFs = { ...crossDeviceFs(), copyFile: async (_from, to) => write(to, 'garbage') };
    const result = await applyMoves(store, await inPlacePlan(l), { fs: corrupting });
    expect(result.books[0]).toMatchObject({ status: 'failed', reason: expect.stringMatching(/does not match/) });
    expect(existsSync(lib.path('in', 'dune.epub'))).toBe(true);
    expect(existsSync(lib.path('Frank Herbert'))).toBe(false);
    expect(await openRows(store.db)).toEqual([]);
  });

  it('falls back to rename on filesystems without hard links', async () => {
    await epub(lib.path('in', 'dune.epub'), { title: 'Dune', authors: ['Frank Herbert'] });
    const l = await library();
    await scan(l);
    const noLinks: MoveFs = { ...nodeMoveFs, link: async () => Promise.reject(Object.assign(new Error('no links'), { code: 'EPERM' })) };
    const result = await applyMoves(store, await inPlacePlan(l), { fs: noLinks });
    expect(result.books[0]!.status).toBe('moved');
    expect(existsSync(lib.path('Frank Herbert', 'Dune.epub'))).toBe(true);
  });

  it('moves a book into another library, to the folder given', async () => {
    const other = makeTempLibrary();
    try {
      await epub(lib.path('dune.epub'), { title: 'Dune', authors: ['Frank Herbert'] });
      const from = await library();
      await scan(from);
      const to = await createLibrary(store.db, { name: 'Target', paths: [other.root], fileNamingPattern: '{title}' });
      const id = await bookIdByTitle('Dune');
      const result = await moveBooks(store, [{ bookId: id, targetLibraryId: to.id, targetLibraryPathId: to.paths[0]!.id }]);
      expect(result.books[0]!.status).toBe('moved');
      expect(await catalogPaths(id)).toEqual([join(other.root, 'Dune.epub')]);
      expect(await store.db.selectFrom('book').select(['library_id', 'library_path_id']).where('id', '=', id).executeTakeFirst()).toEqual({ library_id: to.id, library_path_id: to.paths[0]!.id });
      expect(existsSync(lib.path('dune.epub'))).toBe(false);
    } finally {
      other.cleanup();
    }
  });
});

interface Expectation {
  bookId: number;
  files: { bookFileId: number | null; from: string; to: string; hash: string }[];
}

/** Builds a library with a book with sidecars, a root-level book, and a folder audiobook into `lib`. */
async function buildCrashLibrary(): Promise<void> {
  await epub(lib.path('Herbert', 'Dune.epub'), { title: 'Dune', authors: ['Frank Herbert'] });
  write(lib.path('Herbert', 'Dune.opf'), '<package/>');
  write(lib.path('Herbert', 'cover.jpg'), 'cover');
  await epub(lib.path('Emma.epub'), { title: 'Emma', authors: ['Jane Austen'] });
  write(lib.path('Emma.metadata.json'), '{"title":"Emma"}');
  const l = await library();
  await scan(l);
  await addFolderAudiobook(l, 'audio', 'phm', 'Project Hail Mary', 'Andy Weir');
}

let template: string | undefined;

/** What a move changes in the catalog, as the template has it (the same in every copy of it). */
interface MovedRows {
  books: { id: number; library_id: number; library_path_id: number | null }[];
  files: { id: number; library_path_id: number | null; file_sub_path: string; file_name: string }[];
}
let templateRows: MovedRows | undefined;
/** The store of the test's own copy of the template, which later fixtures of the same test reset in place. */
let fixtureStore: Store | undefined;

async function movedRows(): Promise<MovedRows> {
  return {
    books: await store.db.selectFrom('book').select(['id', 'library_id', 'library_path_id']).orderBy('id').execute(),
    files: await store.db.selectFrom('book_file').select(['id', 'library_path_id', 'file_sub_path', 'file_name']).orderBy('id').execute(),
  };
}

/**
 * Puts the test's copy back as the template has it: the books folder copied anew, and the catalog rows a move changes
 * (books' and files' places, the journal) restored. Much cheaper than a new copy of the catalog (on PostgreSQL a
 * CREATE DATABASE, which waits for a checkpoint) and a store opened on it, for every one of the ~60 steps tried.
 */
async function resetFixture(rows: MovedRows): Promise<void> {
  rmSync(lib.root, { recursive: true, force: true });
  cpSync(join(template as string, 'books'), lib.root, { recursive: true });
  await store.write(async ({ db }) => {
    await db.deleteFrom('move_journal').execute();
    for (const b of rows.books) await db.updateTable('book').set({ library_id: b.library_id, library_path_id: b.library_path_id }).where('id', '=', b.id).execute();
    for (const f of rows.files) await db.updateTable('book_file').set({ library_path_id: f.library_path_id, file_sub_path: f.file_sub_path, file_name: f.file_name }).where('id', '=', f.id).execute();
  });
  expect(await movedRows()).toEqual(rows);
}

/** A fresh copy of the crash library (built once, then copied: scanning is the slow part), with what should move where. */
async function crashFixture(): Promise<{ plan: MovePlan; expect: Expectation[] }> {
  if (!template) {
    await buildCrashLibrary();
    await store.close();
    template = mkdtempSync(join(tmpdir(), 'bindery-moves-template-'));
    cpSync(dirname(lib.root), template, { recursive: true });
    await copyCatalog(join(lib.dataDir, 'bindery.sqlite'), join(template, 'data', 'bindery.sqlite'));
    store = await openStore(join(lib.dataDir, 'bindery.sqlite'));
    await store.db.updateTable('library_path').set({ path: lib.root }).execute();
    templateRows = await movedRows();
    fixtureStore = store;
  } else if (store === fixtureStore && templateRows) {
    await resetFixture(templateRows);
  } else {
    await store.close();
    lib.cleanup();
    const base = mkdtempSync(join(tmpdir(), 'bindery-moves-'));
    cpSync(template, base, { recursive: true });
    await copyCatalog(join(template, 'data', 'bindery.sqlite'), join(base, 'data', 'bindery.sqlite'));
    const root = join(base, 'books');
    lib = { root, dataDir: join(base, 'data'), path: (...parts) => join(root, ...parts), cleanup: () => rmSync(base, { recursive: true, force: true }) };
    store = await openStore(join(lib.dataDir, 'bindery.sqlite'));
    await store.db.updateTable('library_path').set({ path: root }).execute();
    fixtureStore = store;
  }
  const l = (await listLibraries(store.db))[0]!;
  const plan = await inPlacePlan(l);
  const expectation = plan.books.map((b) => ({
    bookId: b.bookId,
    files: [...b.files, ...b.sidecars].map((f) => ({ bookFileId: f.bookFileId, from: f.from, to: f.to, hash: hashOf(f.from) })),
  }));
  expect(plan.books.map((b) => b.status)).toEqual(['move', 'move', 'move']);
  expect(expectation.map((e) => e.files.length).sort()).toEqual([1, 2, 3]);
  return { plan, expect: expectation };
}

/** Every file exists exactly once, at its old or new place, with its content; a book is wholly old or wholly new; the catalog agrees. */
async function assertConsistent(expectations: Expectation[]): Promise<void> {
  for (const book of expectations) {
    const places = book.files.map((f) => {
      const atOld = existsSync(f.from);
      const atNew = existsSync(f.to);
      expect(atOld !== atNew, `${f.from} should be at exactly one of its places (old: ${atOld}, new: ${atNew})`).toBe(true);
      expect(hashOf(atOld ? f.from : f.to)).toBe(f.hash);
      return atOld ? 'old' : 'new';
    });
    expect(new Set(places).size, `book ${book.bookId} half moved: ${places.join(',')}`).toBe(1);
    const catalog = await catalogPaths(book.bookId);
    const expected = book.files.filter((f) => f.bookFileId !== null).map((f) => (places[0] === 'old' ? f.from : f.to));
    expect(catalog).toEqual(expected);
  }
  expect(walk(lib.root).filter((p) => basename(p).startsWith(TEMP_PREFIX))).toEqual([]);
  expect(await openRows(store.db)).toEqual([]);
}

/** Counts the steps of a full run. */
async function countSteps(fs?: MoveFs): Promise<number> {
  const { plan } = await crashFixture();
  let n = 0;
  await applyMoves(store, plan, { step: () => void n++, ...(fs ? { fs } : {}) });
  return n;
}

function failAt(n: number, make: () => Error): { hook: StepHook; fired: () => string | undefined } {
  let count = 0;
  let fired: string | undefined;
  return {
    hook: (step) => {
      count++;
      if (count === n) {
        fired = step;
        throw make();
      }
    },
    fired: () => fired,
  };
}

describe('crash safety', () => {
  for (const mode of ['same device', 'across devices'] as const) {
    it(`recovers from a crash at every step (${mode})`, async () => {
      const fs = mode === 'across devices' ? crossDeviceFs() : undefined;
      const total = await countSteps(fs);
      expect(total).toBeGreaterThan(20);
      const seen: string[] = [];
      for (let n = 1; n <= total; n++) {
        const fixture = await crashFixture();
        const crash = failAt(n, () => new MoveInterrupted('simulated crash'));
        await expect(applyMoves(store, fixture.plan, { step: crash.hook, ...(fs ? { fs } : {}) })).rejects.toBeInstanceOf(MoveInterrupted);
        seen.push(crash.fired() ?? '?');
        const report = await recoverMoves(store, fs ? { fs } : {});
        expect(report.problems, `crash at step ${n} (${crash.fired()})`).toEqual([]);
        await assertConsistent(fixture.expect);
      }
      expect(new Set(seen)).toContain('catalog');
      if (mode === 'across devices') expect(new Set(seen)).toContain('journal-copied');
      else expect(new Set(seen)).toContain('unlink-source');
    });

    it(`undoes a book whose move fails at any step, and leaves the others done (${mode})`, async () => {
      const fs = mode === 'across devices' ? crossDeviceFs() : undefined;
      const total = await countSteps(fs);
      for (let n = 1; n <= total; n++) {
        const fixture = await crashFixture();
        const failure = failAt(n, () => Object.assign(new Error('disk trouble'), { code: 'EIO' }));
        const result: MoveResult = await applyMoves(store, fixture.plan, { step: failure.hook, ...(fs ? { fs } : {}) });
        const failed = result.books.filter((b) => b.status === 'failed');
        expect(failed.length, `failure at step ${n} (${failure.fired()})`).toBeLessThanOrEqual(1);
        // a failure after the catalog update only delays clean-up, which the next recovery finishes
        const report = await recoverMoves(store, fs ? { fs } : {});
        expect(report.problems).toEqual([]);
        await assertConsistent(fixture.expect);
        for (const book of failed) expect(existsSync(fixture.expect.find((e) => e.bookId === book.bookId)!.files[0]!.from)).toBe(true);
      }
    });
  }

  it('recovers when recovery itself is interrupted', async () => {
    const fs = crossDeviceFs();
    const total = await countSteps(fs);
    for (const n of [Math.floor(total / 4), Math.floor(total / 2), total - 3]) {
      for (let m = 1; m <= 40; m++) {
        const fixture = await crashFixture();
        await expect(applyMoves(store, fixture.plan, { fs, step: failAt(n, () => new MoveInterrupted('crash')).hook })).rejects.toBeInstanceOf(MoveInterrupted);
        const second = failAt(m, () => new MoveInterrupted('crash during recovery'));
        let finished = false;
        try {
          await recoverMoves(store, { fs, step: second.hook });
          finished = true;
        } catch (error) {
          expect(error).toBeInstanceOf(MoveInterrupted);
        }
        const report = await recoverMoves(store, { fs });
        expect(report.problems).toEqual([]);
        await assertConsistent(fixture.expect);
        if (finished) break;
      }
    }
  });

  it('cleans up a half-written copy', async () => {
    const { plan, expect: expectation } = await crashFixture();
    const partial: MoveFs = {
      ...crossDeviceFs(),
      copyFile: async (from, to) => {
        write(to, readFileSync(from).subarray(0, 10));
        throw new MoveInterrupted('power cut while copying');
      },
    };
    await expect(applyMoves(store, plan, { fs: partial })).rejects.toBeInstanceOf(MoveInterrupted);
    expect(walk(lib.root).some((p) => basename(p).startsWith(TEMP_PREFIX))).toBe(true);
    await recoverMoves(store, { fs: crossDeviceFs() });
    await assertConsistent(expectation);
    expect(existsSync(lib.path('Herbert', 'Dune.epub'))).toBe(true);
  });

  it('treats batches of an earlier boot or another host name (a re-created container) as dead', async () => {
    const { plan } = await crashFixture();
    await expect(applyMoves(store, plan, { step: failAt(8, () => new MoveInterrupted('crash')).hook })).rejects.toBeInstanceOf(MoveInterrupted);
    await store.db.updateTable('move_journal').set({ owner: JSON.stringify({ ...currentOwner(), pid: process.ppid, host: `${hostname()}-old` }) }).execute();
    expect(await recoverMoves(store)).toMatchObject({ busy: 0, problems: [] });
    expect(await openRows(store.db)).toEqual([]);
  });

  it('leaves batches of live processes alone and recovers those of dead ones', async () => {
    const { plan } = await crashFixture();
    await expect(applyMoves(store, plan, { step: failAt(3, () => new MoveInterrupted('crash')).hook })).rejects.toBeInstanceOf(MoveInterrupted);
    const me = currentOwner();
    // the parent process is alive: hands off
    await store.db.updateTable('move_journal').set({ owner: JSON.stringify({ ...me, pid: process.ppid }) }).execute();
    expect(await recoverMoves(store)).toMatchObject({ busy: 1, resumed: 0, rolledBack: 0 });
    expect((await openRows(store.db)).length).toBeGreaterThan(0);
    // a process that has exited
    const dead = spawnSync(process.execPath, ['-e', '0']).pid;
    await store.db.updateTable('move_journal').set({ owner: JSON.stringify({ ...me, pid: dead }) }).execute();
    expect(await recoverMoves(store)).toMatchObject({ busy: 0, rolledBack: 1 });
    expect(await openRows(store.db)).toEqual([]);
  });
});

const PAUSE_DURING_MOVE = join(import.meta.dirname, '..', 'helpers', 'kill-during-move.ts');

/** Recovers until no batch is left busy (a killed process's database connection ends within moments). */
async function recoverOnceFree(timeoutMs: number): Promise<Awaited<ReturnType<typeof recoverMoves>>> {
  const started = performance.now();
  for (;;) {
    const report = await recoverMoves(store);
    if (report.busy === 0 || performance.now() - started > timeoutMs) return report;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('movers on other machines', () => {
  it('leaves a batch alone while the process moving it runs, wherever it runs, and recovers it once that process is killed', async () => {
    const { expect: expectation } = await crashFixture();
    // Another process, half-way through Dune: its book file is at the new place, its sidecar not yet.
    const mover = spawn(process.execPath, [PAUSE_DURING_MOVE, lib.dataDir, '{authors}/{title}', 'link', 'Dune.opf', 'pause'], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const said = await new Promise<string>((resolve) => mover.stdout?.once('data', (d: Buffer) => resolve(d.toString().trim())));
      expect(said).toBe('paused');
      const open = await openRows(store.db);
      expect(open.length).toBeGreaterThan(0);
      const owner = JSON.parse(open[0]!.owner) as ReturnType<typeof currentOwner>;
      expect(owner.pid).toBe(mover.pid);
      if (onPostgres) {
        // A catalog in a database server may be shared by several machines: the mover is made to look like a replica
        // on another one, which no host, boot or pid check can see. (A SQLite catalog never spans machines.)
        await store.db.updateTable('move_journal').set({ owner: JSON.stringify({ ...owner, host: 'replica-b.example', boot: 'boot-of-replica-b', pid: 4_000_000 }) }).where('closed_at', 'is', null).execute();
      }
      const before = (await openRows(store.db)).map((r) => [r.id, r.state, r.owner]);
      expect(await recoverMoves(store)).toMatchObject({ busy: 1, resumed: 0, rolledBack: 0, problems: [] });
      expect((await openRows(store.db)).map((r) => [r.id, r.state, r.owner])).toEqual(before);
      // Its files stay where the mover has them.
      const dune = expectation.flatMap((b) => b.files).filter((f) => /Dune\.(epub|opf)$/.test(f.from));
      expect(dune.map((f) => [basename(f.from), existsSync(f.from), existsSync(f.to)])).toEqual([
        ['Dune.epub', false, true],
        ['Dune.opf', true, false],
      ]);
    } finally {
      const exited = new Promise((resolve) => mover.once('exit', resolve));
      mover.kill('SIGKILL');
      await exited;
    }
    expect(await recoverOnceFree(10_000)).toMatchObject({ busy: 0, problems: [] });
    await assertConsistent(expectation);
  });

  // Only a database server's connection can be lost under a running mover; SQLite has nothing to lose.
  it.runIf(onPostgres)('stops a move as a crash would when its registration is lost, registers again, and the move is recovered', async () => {
    const { plan, expect: expectation } = await crashFixture();
    await store.liveness.register();
    let steps = 0;
    const cut: StepHook = async () => {
      if (++steps !== 3) return;
      // What a restart of the database server, or a network cut, does to the connection holding the lock.
      await store.exec.run("select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and application_name like 'bindery-session %'");
      await new Promise((r) => setTimeout(r, 300));
    };
    await expect(applyMoves(store, plan, { step: cut })).rejects.toThrow(/lost its registration/);
    const open = await openRows(store.db);
    expect(open.length).toBeGreaterThan(0);
    // Every other process now takes the batch for dead, even once this one has registered again.
    const owner = JSON.parse(open[0]!.owner) as ReturnType<typeof currentOwner>;
    // Registered again on a new connection: other processes see this one running again.
    const livenessLocks = async (): Promise<number> =>
      Number(((await store.exec.get(`select count(*) as n from pg_locks where locktype = 'advisory' and granted and classid = CAST(? AS bigint)::oid and database = (select oid from pg_database where datname = current_database())`, [0x6c697665])) as { n: number }).n);
    for (let i = 0; i < 100 && (await livenessLocks()) === 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(await livenessLocks()).toBe(1);
    expect(await store.liveness.alive(owner)).toBe(false);
    expect(await recoverMoves(store)).toMatchObject({ busy: 0, problems: [] });
    await assertConsistent(expectation);
  });
});
