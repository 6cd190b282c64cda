// The bookdrop queue without HTTP: taking files in (metadata, cover, provider lookups through an injected fetcher),
// listing, file-name patterns, bulk edits, discarding, keeping rows true to the folder, recovery and uploads.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import sharp from 'sharp';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { discardFiles, forgetPath, recoverInterruptedImports, removeVanished, STALE_CLAIM_MS } from '../../src/core/bookdrop/bookdrop-cleanup.ts';
import { bulkEdit, extractFromPattern } from '../../src/core/bookdrop/bookdrop-edits.ts';
import { listBookdropFiles } from '../../src/core/bookdrop/bookdrop-files.ts';
import { bookdropCoverPath } from '../../src/core/bookdrop/bookdrop-paths.ts';
import { bookdropSummary } from '../../src/core/bookdrop/bookdrop-summary.ts';
import { detectDateFormat, extractFromFileName, parseNamePattern, parsePublished } from '../../src/core/bookdrop/filename-pattern.ts';
import { finalizeImport } from '../../src/core/bookdrop/finalize.ts';
import { intakeFile, syncBookdrop, type BookdropEnv, type BookdropMetadataFetcher } from '../../src/core/bookdrop/intake.ts';
import { placeBookdropUpload, placeLibraryUpload, receiveUpload, UploadError } from '../../src/core/bookdrop/upload.ts';
import { createLibrary } from '../../src/core/libraries/libraries.ts';
import type { Owner } from '../../src/core/process-owner.ts';
import { openStore, type Store } from '../../src/core/store/store.ts';
import { workMark } from '../../src/core/work-files.ts';
import { onPostgres } from '../helpers/engine.ts';
import { makeTempLibrary, writeSimpleEpub, type TempLibrary } from '../helpers/library-fixtures.ts';

let lib: TempLibrary;
let store: Store;
let env: BookdropEnv;
const bookdrop = (...parts: string[]): string => join(lib.dataDir, 'bookdrop', ...parts);

beforeEach(async () => {
  lib = makeTempLibrary();
  store = await openStore(join(lib.dataDir, 'bindery.sqlite'));
  env = { store, bookdropDir: join(lib.dataDir, 'bookdrop'), dataDir: lib.dataDir };
});

afterEach(async () => {
  await store.close();
  lib.cleanup();
});

async function rows() {
  return store.db.selectFrom('bookdrop_file').selectAll().orderBy('id').execute();
}

describe('taking files in', () => {
  it('reads metadata and the cover, holds the file for review, and keeps the badge count true', async () => {
    await writeSimpleEpub(bookdrop('Dune.epub'), { title: 'Dune', authors: ['Frank Herbert'], series: 'Dune', seriesIndex: 1, isbn: '9780441013593', cover: '#2a6' });
    writeFileSync(bookdrop('notes.txt'), 'not a book');
    writeFileSync(bookdrop('.hidden.epub'), 'partial');
    const summary = await syncBookdrop(env, { settleMs: 0 });
    expect(summary.added).toHaveLength(1);
    const [row] = await rows();
    expect(row).toMatchObject({ file_path: bookdrop('Dune.epub'), file_name: 'Dune.epub', status: 'PENDING_REVIEW', fetched_metadata: null });
    expect(JSON.parse(row!.original_metadata!)).toMatchObject({ title: 'Dune', authors: ['Frank Herbert'], seriesName: 'Dune', seriesNumber: 1, isbn13: '9780441013593', language: 'en' });
    const cover = await sharp(readFileSync(bookdropCoverPath(lib.dataDir, row!.id))).metadata();
    expect(cover.format).toBe('jpeg');
    expect(await bookdropSummary(store.db)).toMatchObject({ pendingCount: 1, totalCount: 1 });

    // A second pass knows the file.
    expect(await syncBookdrop(env, { settleMs: 0 })).toMatchObject({ added: [], known: 1 });
  });

  it('holds an unreadable book under its file name, and leaves files still being written for later', async () => {
    mkdirSync(bookdrop(), { recursive: true });
    writeFileSync(bookdrop('broken.epub'), 'this is not a zip');
    writeFileSync(bookdrop('empty.pdf'), '');
    await writeSimpleEpub(bookdrop('fresh.epub'), { title: 'Fresh' });
    const past = new Date(Date.now() - 60_000);
    utimesSync(bookdrop('broken.epub'), past, past);
    const summary = await syncBookdrop(env, { settleMs: 10_000 });
    // ctime cannot be set back, so only a zero settle time takes a just-written file.
    expect(summary.unsettled).toEqual(expect.arrayContaining([bookdrop('empty.pdf'), bookdrop('fresh.epub')]));
    const again = await syncBookdrop(env, { settleMs: 0 });
    expect(again.unsettled).toEqual([bookdrop('empty.pdf')]);
    const byName = Object.fromEntries((await rows()).map((r) => [r.file_name, JSON.parse(r.original_metadata!)]));
    expect(byName['broken.epub']).toEqual({ title: 'broken' });
    expect(byName['fresh.epub']).toMatchObject({ title: 'Fresh' });
  });

  it('asks the injected fetcher when the setting is on and the file has something to search by', async () => {
    await writeSimpleEpub(bookdrop('dune-herbert.epub'), { title: 'Dune', authors: ['Frank Herbert'] });
    // A title that only repeats the file name gives the providers nothing to search by.
    await writeSimpleEpub(bookdrop('scan0001.epub'), { title: 'scan0001' });
    const asked: string[] = [];
    const fetcher: BookdropMetadataFetcher = async (extracted) => {
      asked.push(extracted.title ?? '');
      return { title: `${extracted.title} (provider)`, publisher: 'Ace', goodreadsRating: 4.3, notAField: 1 } as never;
    };
    await syncBookdrop({ ...env, fetcher }, { settleMs: 0 });
    expect(asked).toEqual(['Dune']);
    const dune = (await rows()).find((r) => r.file_name === 'dune-herbert.epub')!;
    expect(JSON.parse(dune.fetched_metadata!)).toEqual({ title: 'Dune (provider)', publisher: 'Ace', goodreadsRating: 4.3 });
    expect((await rows()).find((r) => r.file_name === 'scan0001.epub')!.fetched_metadata).toBeNull();
  });

  it('does not ask the fetcher with the setting off, and survives a fetcher that fails', async () => {
    await writeSimpleEpub(bookdrop('a.epub'), { title: 'Alpha' });
    await store.db.insertInto('app_settings').values({ name: 'metadata_download_on_bookdrop', val: 'false' }).execute();
    let calls = 0;
    await syncBookdrop({ ...env, fetcher: async () => (calls++, null) }, { settleMs: 0 });
    expect(calls).toBe(0);
    await store.db.updateTable('app_settings').set({ val: 'true' }).where('name', '=', 'metadata_download_on_bookdrop').execute();
    await writeSimpleEpub(bookdrop('b.epub'), { title: 'Beta' });
    const logged: string[] = [];
    const summary = await syncBookdrop({ ...env, fetcher: async () => Promise.reject(new Error('provider down')), log: (_l, m) => logged.push(m) }, { settleMs: 0 });
    expect(summary.added).toHaveLength(1);
    expect(logged.some((m) => m.includes('provider down'))).toBe(true);
  });

  it('records a path once when taken in twice at the same time', async () => {
    await writeSimpleEpub(bookdrop('Dune.epub'), { title: 'Dune' });
    const outcomes = await Promise.all([intakeFile(env, bookdrop('Dune.epub'), { settleMs: 0 }), intakeFile(env, bookdrop('Dune.epub'), { settleMs: 0 })]);
    expect(outcomes.map((o) => o.kind)).toEqual(['added', 'added']);
    expect(await rows()).toHaveLength(1);
    await expect(store.db.insertInto('bookdrop_file').values({ file_path: bookdrop('Dune.epub'), file_name: 'Dune.epub' }).execute()).rejects.toThrow(/unique/i);
  });
});

describe('listing', () => {
  beforeEach(async () => {
    for (const name of ['c.epub', 'a.epub', 'b.epub']) await writeSimpleEpub(bookdrop(name), { title: name });
    await syncBookdrop(env, { settleMs: 0 });
    await store.db.updateTable('bookdrop_file').set({ status: 'FINALIZED' }).where('file_name', '=', 'b.epub').execute();
  });

  it('pages, filters pending rows for status=pending (any case) and sorts', async () => {
    const all = await listBookdropFiles(store.db, undefined, { page: 0, size: 2, sort: ['fileName,desc'] });
    expect(all.page).toEqual({ size: 2, number: 0, totalElements: 3, totalPages: 2 });
    expect(all.content.map((f) => f.fileName)).toEqual(['c.epub', 'b.epub']);
    const pending = await listBookdropFiles(store.db, 'PeNdInG', { page: 0, size: 20, sort: ['fileName'] });
    expect(pending.content.map((f) => f.fileName)).toEqual(['a.epub', 'c.epub']);
    expect(pending.content[0]).toEqual({
      id: expect.any(Number), fileName: 'a.epub', filePath: bookdrop('a.epub'), fileSize: expect.any(Number), originalMetadata: expect.objectContaining({ title: 'a.epub' }),
      fetchedMetadata: null, createdAt: expect.any(String), updatedAt: expect.any(String), status: 'PENDING_REVIEW',
    });
    expect((await listBookdropFiles(store.db, 'other', { page: 0, size: 20 })).page.totalElements).toBe(3);
    await expect(listBookdropFiles(store.db, undefined, { page: 0, size: 20, sort: ['nope,asc'] })).rejects.toThrow(/No property 'nope'/);
  });
});

describe('file name patterns', () => {
  const extract = (name: string, pattern: string) => extractFromFileName(name, parseNamePattern(pattern)!);

  it.each([
    ['Chronicles of Earth - Ch 25.cbz', '{SeriesName} - Ch {SeriesNumber}', { seriesName: 'Chronicles of Earth', seriesNumber: 25 }],
    ['Chronicles of Earth - Ch 10.5.cbz', '{SeriesName} - Ch {SeriesNumber}', { seriesName: 'Chronicles of Earth', seriesNumber: 10.5 }],
    ['Chronicles of Earth Vol.3 (of 150).cbz', '{SeriesName} Vol.{SeriesNumber} (of {SeriesTotal})', { seriesName: 'Chronicles of Earth', seriesNumber: 3, seriesTotal: 150 }],
    ['John Smith, Jane Doe & Ann Lee - The Lost City.epub', '{Authors} - {Title}', { authors: ['John Smith', 'Jane Doe', 'Ann Lee'], title: 'The Lost City' }],
    ['John Smith - The Lost City (1949).epub', '{Authors} - {Title} ({Published:yyyy})', { authors: ['John Smith'], title: 'The Lost City', publishedDate: '1949-01-01' }],
    ['Epic Press - Saga #1 (2011).cbz', '{Publisher} - {SeriesName} #{SeriesNumber} ({Published:yyyy})', { publisher: 'Epic Press', seriesName: 'Saga', seriesNumber: 1, publishedDate: '2011-01-01' }],
    ['Saga - Ch 500 [EN].cbz', '{SeriesName} - Ch {SeriesNumber} [{Language}]', { seriesName: 'Saga', seriesNumber: 500, language: 'EN' }],
    ['[Epic Press] Saga Vol.5 [5 of 20].cbz', '[{Publisher}] {SeriesName} Vol.{SeriesNumber} [* of {SeriesTotal}]', { publisher: 'Epic Press', seriesName: 'Saga', seriesNumber: 5, seriesTotal: 20 }],
    ['Saga 1 The Beginning - John Smith.epub', '{SeriesName} {SeriesNumber} {Title} - {Authors}', { seriesName: 'Saga', seriesNumber: 1, title: 'The Beginning', authors: ['John Smith'] }],
    ['The Last Kingdom.epub', '{Title}', { title: 'The Last Kingdom' }],
    ['Report 2021-03-15 final.pdf', '{Title} {Published:yyyy-MM-dd} *', { title: 'Report', publishedDate: '2021-03-15' }],
    ['978-x 9780441013593 Dune.epub', '{ISBN13} {Title}', { isbn13: '9780441013593', title: 'Dune' }],
    ['Dune B00B7NPRY8.epub', '{Title} {ASIN}', { title: 'Dune', asin: 'B00B7NPRY8' }],
  ])('%s with %s', (name, pattern, expected) => {
    expect(extract(name, pattern)).toEqual(expected);
  });

  it('returns nothing when the pattern does not occur, and refuses a blank pattern', () => {
    expect(extract('Random Name.epub', '{SeriesName} - Ch {SeriesNumber}')).toBeUndefined();
    expect(parseNamePattern('   ')).toBeUndefined();
  });

  it('stays fast on patterns that would make a backtracking regex run away', () => {
    const pattern = `${'{Title}'.repeat(30)}Z`;
    const started = performance.now();
    expect(extract(`${'a'.repeat(240)}.epub`, pattern)).toBeUndefined();
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it('reads dates the way Grimmory guesses them', () => {
    expect(detectDateFormat('2021')).toBe('yyyy');
    expect(detectDateFormat('20210315')).toBe('yyyyMMdd');
    expect(detectDateFormat('2021-3')).toBe('yyyy-M');
    expect(detectDateFormat('15.03.2021')).toBe('dd.MM.yyyy');
    expect(detectDateFormat('03/15/2021')).toBe('MM/dd/yyyy');
    expect(parsePublished('20210315', undefined)).toBe('2021-03-15');
    expect(parsePublished('2021-3', undefined)).toBe('2021-03-01');
    expect(parsePublished('15.03.2021', undefined)).toBe('2021-03-15');
    expect(parsePublished('99', undefined)).toBe('1999-01-01');
    expect(parsePublished('21', undefined)).toBe('2021-01-01');
    expect(parsePublished('2021-02-30', 'yyyy-MM-dd')).toBe('2021-02-28');
    expect(parsePublished('2021-13-01', 'yyyy-MM-dd')).toBeUndefined();
    expect(parsePublished('March 2021', undefined)).toBeUndefined();
  });

  it('previews five files without storing, then stores into the fetched metadata', async () => {
    for (let i = 1; i <= 7; i++) await writeSimpleEpub(bookdrop(`Saga - Ch ${i}.cbz.epub`), { title: `x${i}` });
    await writeSimpleEpub(bookdrop('Other.epub'), { title: 'Other' });
    await syncBookdrop(env, { settleMs: 0 });
    const preview = await extractFromPattern(store.db, { pattern: '{SeriesName} - Ch {SeriesNumber}', selectAll: true, preview: true });
    // The first five by id: Other.epub sorts first, so four of them match.
    expect(preview).toMatchObject({ totalFiles: 8, successfullyExtracted: 4, failed: 1 });
    expect(preview.results).toHaveLength(5);
    expect((await rows()).every((r) => r.fetched_metadata === null)).toBe(true);
    const full = await extractFromPattern(store.db, { pattern: '{SeriesName} - Ch {SeriesNumber}', selectAll: true });
    expect(full).toMatchObject({ totalFiles: 8, successfullyExtracted: 7, failed: 1 });
    expect(full.results.find((r) => !r.success)).toMatchObject({ fileName: 'Other.epub', errorMessage: expect.stringContaining('did not match') });
    const first = (await rows()).find((r) => r.file_name === 'Saga - Ch 1.cbz.epub')!;
    expect(JSON.parse(first.fetched_metadata!)).toEqual({ seriesName: 'Saga', seriesNumber: 1 });
  });
});

describe('bulk edits', () => {
  it('sets enabled fields on the selection, replacing or merging lists', async () => {
    for (const name of ['a.epub', 'b.epub', 'c.epub']) await writeSimpleEpub(bookdrop(name), { title: name });
    await syncBookdrop(env, { settleMs: 0 });
    const all = await rows();
    const [a, b, c] = ['a.epub', 'b.epub', 'c.epub'].map((name) => all.find((r) => r.file_name === name));
    await store.db.updateTable('bookdrop_file').set({ fetched_metadata: JSON.stringify({ title: 'A', authors: ['One'], tags: ['x'] }) }).where('id', '=', a!.id).execute();
    const result = await bulkEdit(store.db, {
      fields: { seriesName: 'Cycle', publisher: 'Ignored', authors: ['Two'], tags: ['y'] },
      enabledFields: ['seriesName', 'authors', 'tags'],
      mergeArrays: true,
      selectAll: true,
      excludedIds: [c!.id],
    });
    expect(result).toEqual({ totalFiles: 2, successfullyUpdated: 2, failed: 0 });
    const byId = Object.fromEntries((await rows()).map((r) => [r.id, r.fetched_metadata ? JSON.parse(r.fetched_metadata) : null]));
    expect(byId[a!.id]).toEqual({ title: 'A', seriesName: 'Cycle', authors: ['One', 'Two'], tags: ['x', 'y'] });
    expect(byId[b!.id]).toEqual({ seriesName: 'Cycle', authors: ['Two'], tags: ['y'] });
    expect(byId[c!.id]).toBeNull();
    await bulkEdit(store.db, { fields: { authors: ['Three'] }, enabledFields: ['authors'], mergeArrays: false, selectedIds: [a!.id] });
    expect(JSON.parse((await rows()).find((r) => r.id === a!.id)!.fetched_metadata!).authors).toEqual(['Three']);
  });
});

describe('keeping the queue true to the folder', () => {
  beforeEach(async () => {
    await writeSimpleEpub(bookdrop('a.epub'), { title: 'A', cover: '#111' });
    await writeSimpleEpub(bookdrop('sub', 'b.epub'), { title: 'B' });
    await writeSimpleEpub(bookdrop('sub', 'c.epub'), { title: 'C' });
    await syncBookdrop(env, { settleMs: 0 });
  });

  it('discards: deletes the files inside the bookdrop, their rows and covers, and emptied folders', async () => {
    const all = await rows();
    const [a, b, c] = ['a.epub', 'b.epub', 'c.epub'].map((name) => all.find((r) => r.file_name === name));
    await store.db.updateTable('bookdrop_file').set({ file_path: lib.path('outside.epub') }).where('id', '=', c!.id).execute();
    writeFileSync(lib.path('outside.epub'), 'a user file outside the bookdrop');
    rmSync(bookdrop('sub', 'c.epub'));
    const summary = await discardFiles(env, [a!.id, b!.id, c!.id]);
    expect(summary).toEqual({ rows: 3, deletedFiles: 2, failures: [] });
    expect(existsSync(bookdrop('a.epub'))).toBe(false);
    expect(existsSync(bookdrop('sub'))).toBe(false);
    expect(existsSync(bookdrop())).toBe(true);
    expect(existsSync(lib.path('outside.epub'))).toBe(true);
    expect(existsSync(bookdropCoverPath(lib.dataDir, a!.id))).toBe(false);
    expect(await rows()).toEqual([]);
  });

  it('drops rows of vanished files, but not when the whole folder looks unmounted', async () => {
    rmSync(bookdrop('sub'), { recursive: true });
    expect(await removeVanished(env, false)).toBe(2);
    rmSync(bookdrop('a.epub'));
    expect(await removeVanished(env, true)).toBe(0);
    expect(await rows()).toHaveLength(1);
  });

  it('forgets a removed file or folder when the watcher says so', async () => {
    rmSync(bookdrop('sub'), { recursive: true });
    expect(await forgetPath(env, bookdrop('sub'), true)).toBe(2);
    expect(await forgetPath(env, bookdrop('a.epub'), false)).toBe(0);
    expect(await rows()).toHaveLength(1);
  });

  it('after a crash: completes an import the catalog has, releases one it does not', async () => {
    const library = await createLibrary(store.db, { name: 'Books', paths: [lib.root] });
    const byName = (name: string) => rows().then((all) => all.find((r) => r.file_name === name)!);
    const [a, b] = [await byName('a.epub'), await byName('b.epub')];
    const original = readFileSync(bookdrop('a.epub'));
    // "a" was imported and recorded, but the process died before removing the original.
    await finalizeImport(env, { files: [{ fileId: a!.id }], defaultLibraryId: library.id, defaultPathId: library.paths[0]!.id }, {
      fs: { ...(await import('../../src/core/bookdrop/safe-copy.ts')).nodeImportFs, unlink: async (p) => (p === bookdrop('a.epub') ? Promise.reject(Object.assign(new Error('killed'), { code: 'EINTR' })) : rmSync(p)) },
    });
    // (A removal that fails while the process lives leaves the row imported, reason given; a kill leaves the claim.)
    await store.db.updateTable('bookdrop_file').set({ original_left: null }).where('id', '=', a!.id).execute();
    // "b" was claimed and the process died before anything was recorded.
    await store.db.updateTable('bookdrop_file').set({ status: 'FINALIZED' }).where('id', '=', b!.id).execute();
    const old = new Date(Date.now() - STALE_CLAIM_MS - 1000).toISOString();
    await store.db.updateTable('bookdrop_file').set({ updated_at: old }).execute();

    expect(await recoverInterruptedImports(env)).toEqual({ completed: 1, released: 1, originalsLeft: [] });
    expect(existsSync(bookdrop('a.epub'))).toBe(false);
    expect(readFileSync(join(lib.root, 'A', 'A.epub'))).toEqual(original);
    const left = await rows();
    // Files are taken in four at a time, so their row ids follow whichever finished first: compare by name.
    expect(left.map((r) => [r.file_name, r.status]).sort()).toEqual([['b.epub', 'PENDING_REVIEW'], ['c.epub', 'PENDING_REVIEW']]);
  });
});

describe('an import whose process still runs', () => {
  it('is left claimed while its process runs (on another machine too, with PostgreSQL) and released once it is killed', async () => {
    await writeSimpleEpub(bookdrop('Dune.epub'), { title: 'Dune', authors: ['Frank Herbert'] });
    await syncBookdrop(env, { settleMs: 0 });
    const holder = spawn(process.execPath, [join(import.meta.dirname, '../helpers/liveness-holder.ts'), join(lib.dataDir, 'bindery.sqlite')], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const owner = JSON.parse(await new Promise<string>((resolve) => holder.stdout?.once('data', (d: Buffer) => resolve(d.toString())))) as Owner;
      // On PostgreSQL the importer is made to look like a replica on another machine (a SQLite catalog never spans machines).
      const recorded = onPostgres ? { ...owner, host: 'replica-b.example', boot: 'boot-of-replica-b', pid: 4_000_000 } : owner;
      await store.db.updateTable('bookdrop_file').set({ status: 'FINALIZED', import_owner: JSON.stringify(recorded) }).execute();
      expect(await recoverInterruptedImports(env)).toEqual({ completed: 0, released: 0, originalsLeft: [] });
      expect((await rows()).map((r) => r.status)).toEqual(['FINALIZED']);
    } finally {
      const exited = new Promise((resolve) => holder.once('exit', resolve));
      holder.kill('SIGKILL');
      await exited;
    }
    let released = 0;
    for (let i = 0; i < 100 && released === 0; i++) {
      released = (await recoverInterruptedImports(env)).released;
      if (released === 0) await new Promise((r) => setTimeout(r, 100));
    }
    expect(released).toBe(1);
    expect((await rows()).map((r) => r.status)).toEqual(['PENDING_REVIEW']);
    expect(existsSync(bookdrop('Dune.epub'))).toBe(true);
  });
});

describe('uploads', () => {
  const stream = (data: Buffer | string): Readable => Readable.from([Buffer.from(data)]);

  it('streams to a hidden partial file and stops at the size limit, leaving nothing behind', async () => {
    mkdirSync(bookdrop(), { recursive: true });
    await expect(receiveUpload(stream(Buffer.alloc(2048)), bookdrop(), 1024, 1, await workMark(store.liveness))).rejects.toThrow('File size exceeds the limit: 1 MB');
    const { readdirSync } = await import('node:fs');
    expect(readdirSync(bookdrop())).toEqual([]);
    const received = await receiveUpload(stream('abc'), bookdrop(), 1024, 1, await workMark(store.liveness));
    expect(received.size).toBe(3);
    expect(received.path.split('/').pop()!.startsWith('.bindery-')).toBe(true);
  });

  it('places a bookdrop upload under its name, takes it in, and refuses a taken name', async () => {
    const epub = await writeSimpleEpub(lib.path('..', 'Dune.epub'), { title: 'Dune' });
    const first = await receiveUpload(stream(readFileSync(epub)), bookdrop(), 1 << 20, 1, await workMark(store.liveness));
    const placed = await placeBookdropUpload(env, first, '../../etc/Dune.epub');
    expect(placed.path).toBe(bookdrop('Dune.epub'));
    expect(placed.id).toEqual(expect.any(Number));
    const second = await receiveUpload(stream('other content'), bookdrop(), 1 << 20, 1, await workMark(store.liveness));
    await expect(placeBookdropUpload(env, second, 'Dune.epub')).rejects.toMatchObject({ code: 'EXISTS' });
    expect(readFileSync(bookdrop('Dune.epub'))).toEqual(readFileSync(epub));
    expect(existsSync(second.path)).toBe(false);
    const third = await receiveUpload(stream('x'), bookdrop(), 1 << 20, 1, await workMark(store.liveness));
    await expect(placeBookdropUpload(env, third, 'notes.txt')).rejects.toBeInstanceOf(UploadError);
  });

  it('places a library upload by the upload pattern and records the book', async () => {
    const library = await createLibrary(store.db, { name: 'Books', paths: [lib.root] });
    const epub = await writeSimpleEpub(lib.path('..', 'in.epub'), { title: 'Emma', authors: ['Jane Austen'] });
    const received = await receiveUpload(stream(readFileSync(epub)), join(lib.dataDir, 'tmp'), 1 << 20, 1, await workMark(store.liveness));
    const placed = await placeLibraryUpload(env, received, { libraryId: library.id, pathId: library.paths[0]!.id, fileName: 'emma-upload.epub' });
    expect(placed.path).toBe(join(lib.root, 'Jane Austen', 'Emma', 'Emma - Jane Austen.epub'));
    const file = await store.db.selectFrom('book_file').select(['book_id', 'file_sub_path']).executeTakeFirstOrThrow();
    expect(file).toEqual({ book_id: placed.bookId, file_sub_path: 'Jane Austen/Emma' });
    const again = await receiveUpload(stream(readFileSync(epub)), join(lib.dataDir, 'tmp'), 1 << 20, 1, await workMark(store.liveness));
    await expect(placeLibraryUpload(env, again, { libraryId: library.id, pathId: library.paths[0]!.id, fileName: 'emma.epub' })).rejects.toMatchObject({ code: 'EXISTS' });
    const missing = await receiveUpload(stream(readFileSync(epub)), join(lib.dataDir, 'tmp'), 1 << 20, 1, await workMark(store.liveness));
    await expect(placeLibraryUpload(env, missing, { libraryId: 99, pathId: 1, fileName: 'x.epub' })).rejects.toMatchObject({ code: 'LIBRARY_NOT_FOUND', message: 'Library not found with ID: 99' });
  });
});
