// Sidecar metadata files against real libraries: format, paths, safe reading and writing, export, import with
// locks, sync status, library-wide runs, writes on scan and update, and moves taking sidecars along.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createPhysicalBook } from '../../src/core/books/physical-books.ts';
import { writeMetadataPatch } from '../../src/core/books/metadata-writer.ts';
import { createLibrary, type Library } from '../../src/core/libraries/libraries.ts';
import { moveBooks } from '../../src/core/moves/apply.ts';
import { scanLibrary } from '../../src/core/scan/scanner.ts';
import { bookSidecarStatus, exportBookSidecar, importBookSidecar, readBookSidecar } from '../../src/core/sidecar/book-sidecar.ts';
import { SidecarError } from '../../src/core/sidecar/errors.ts';
import { readSidecarFile, writeFileAtomically } from '../../src/core/sidecar/files.ts';
import { parseSidecar, serializeSidecar, MAX_SIDECAR_BYTES } from '../../src/core/sidecar/format.ts';
import { exportLibrarySidecars, importLibrarySidecars } from '../../src/core/sidecar/library-sidecars.ts';
import { sidecarCoverPathFor, sidecarPathFor } from '../../src/core/sidecar/paths.ts';
import { openStore, type Store } from '../../src/core/store/store.ts';
import { comicInfoXml, jpeg as comicPage, writeZip } from '../helpers/comic-fixtures.ts';
import { makeTempLibrary, writeSimpleEpub, type TempLibrary } from '../helpers/library-fixtures.ts';

let lib: TempLibrary;
let store: Store;
let covers: string;

beforeEach(async () => {
  lib = makeTempLibrary();
  store = await openStore(join(lib.dataDir, 'bindery.sqlite'));
  covers = join(lib.dataDir, 'covers');
});

afterEach(async () => {
  await store.close();
  lib.cleanup();
});

async function setSidecars(settings: { enabled: boolean; writeOnUpdate?: boolean; writeOnScan?: boolean; includeCoverFile?: boolean } | null): Promise<void> {
  const value = {
    saveToOriginalFile: null,
    convertCbrCb7ToCbz: false,
    moveFilesToLibraryPattern: false,
    sidecarSettings: settings && { writeOnUpdate: false, writeOnScan: false, includeCoverFile: false, ...settings },
  };
  await store.db
    .insertInto('app_settings')
    .values({ name: 'metadata_persistence_settings_v2', val: JSON.stringify(value) })
    .onConflict((oc) => oc.column('name').doUpdateSet({ val: JSON.stringify(value) }))
    .execute();
}

async function scanned(): Promise<Library> {
  const library = await createLibrary(store.db, { name: `lib-${Math.random()}`, paths: [lib.root], organizationMode: 'BOOK_PER_FILE' });
  await scanLibrary(store, library, { coversRoot: covers, workers: 0 });
  return library;
}

async function bookId(title: string): Promise<number> {
  return (await store.db.selectFrom('book_metadata').select('book_id').where('title', '=', title).executeTakeFirstOrThrow()).book_id;
}

async function metadataOf(id: number): Promise<{ title: string | null; series_number: number | null; search_text: string | null; tags: string[]; authors: string[]; updatedAt: string | null }> {
  const row = await store.db.selectFrom('book_metadata').select(['title', 'series_number', 'search_text']).where('book_id', '=', id).executeTakeFirstOrThrow();
  const tags = await store.db.selectFrom('book_metadata_tag_mapping as m').innerJoin('tag', 'tag.id', 'm.tag_id').select('tag.name').where('m.book_id', '=', id).orderBy('tag.name').execute();
  const authors = await store.db.selectFrom('book_metadata_author_mapping as m').innerJoin('author', 'author.id', 'm.author_id').select('author.name').where('m.book_id', '=', id).orderBy('m.sort_order').execute();
  const book = await store.db.selectFrom('book').select('metadata_updated_at').where('id', '=', id).executeTakeFirstOrThrow();
  return { ...row, tags: tags.map((t) => t.name), authors: authors.map((a) => a.name), updatedAt: book.metadata_updated_at };
}

type Obj = Record<string, unknown>;
/** A sidecar file's JSON, loosely: enough to read and edit it in tests. */
interface SidecarJson {
  generatedAt?: string;
  metadata: Obj & { series: Obj; comicMetadata: Obj };
  cover?: Obj;
}

function editSidecar(path: string, edit: (json: SidecarJson) => void): void {
  const json = JSON.parse(readFileSync(path, 'utf8')) as SidecarJson;
  edit(json);
  writeFileSync(path, JSON.stringify(json, null, 2));
}

async function refusal(promise: Promise<unknown>): Promise<SidecarError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof SidecarError) return error;
    throw error;
  }
  throw new Error('expected a SidecarError');
}

/** A sidecar as Grimmory's Jackson writes it: ` : ` made `: `, inline arrays, nanosecond instants, Float as `1.0`. */
const GRIMMORY_SIDECAR = `{
  "version": "1.0",
  "generatedAt": "2025-03-01T10:20:30.123456789Z",
  "generatedBy": "booklore",
  "metadata": {
    "title": "Dune Messiah",
    "authors": [ "Frank Herbert" ],
    "publisher": "Putnam",
    "publishedDate": "1969-10-15",
    "description": "<p>The sequel.</p>",
    "isbn13": "9780593098233",
    "language": "en",
    "pageCount": 256,
    "categories": [ "Science Fiction", "Classics" ],
    "moods": [ "dark" ],
    "tags": [ ],
    "series": {
      "name": "Dune",
      "number": 2.0,
      "total": 6
    },
    "identifiers": {
      "goodreadsId": "44492285",
      "hardcoverBookId": "123"
    },
    "ratings": {
      "goodreads": {
        "average": 3.89,
        "count": 300000
      }
    },
    "futureField": { "nested": [ 1, 2, 3 ] }
  },
  "cover": {
    "source": "external",
    "path": "Dune.cover.jpg"
  }
}`;

describe('the sidecar format', () => {
  it("reads Grimmory's files, keeping the known fields and ignoring the rest", () => {
    const sidecar = parseSidecar(GRIMMORY_SIDECAR);
    expect(sidecar.generatedBy).toBe('booklore');
    expect(sidecar.generatedAt).toBe('2025-03-01T10:20:30.123456789Z');
    expect(sidecar.metadata).toEqual({
      title: 'Dune Messiah', authors: ['Frank Herbert'], publisher: 'Putnam', publishedDate: '1969-10-15', description: '<p>The sequel.</p>',
      isbn13: '9780593098233', language: 'en', pageCount: 256, categories: ['Science Fiction', 'Classics'], moods: ['dark'], tags: [],
      series: { name: 'Dune', number: 2, total: 6 }, identifiers: { goodreadsId: '44492285', hardcoverBookId: '123' }, ratings: { goodreads: { average: 3.89, count: 300000 } },
    });
    expect(sidecar.cover).toEqual({ source: 'external', path: 'Dune.cover.jpg' });
    // What it writes reads back the same.
    expect(parseSidecar(serializeSidecar(sidecar))).toEqual(sidecar);
  });

  it('refuses malformed and hostile files with one clear SIDECAR_INVALID naming every bad field', () => {
    const bad = (text: string): SidecarError => {
      try {
        parseSidecar(text, 'Dune.metadata.json');
      } catch (error) {
        if (error instanceof SidecarError) return error;
        throw error;
      }
      throw new Error(`accepted: ${text.slice(0, 80)}`);
    };
    expect(bad('{"metadata": {').message).toMatch(/^Dune\.metadata\.json is not a valid sidecar file: not JSON/);
    expect(bad('[1, 2]').message).toMatch(/top level is not a JSON object/);
    expect(bad('"text"').code).toBe('SIDECAR_INVALID');
    const many = bad(JSON.stringify({ metadata: { title: 42, authors: 'Frank Herbert', pageCount: 1.5, publishedDate: '1965-02-30', series: [], abridged: 'yes' } }));
    expect(many.message).toContain('metadata.title: expected a string');
    expect(many.message).toContain('metadata.authors: expected a list of strings');
    expect(many.message).toContain('metadata.pageCount: expected a whole number');
    expect(many.message).toContain('metadata.publishedDate: expected a date');
    expect(many.message).toContain('metadata.series: expected an object');
    expect(many.message).toContain('metadata.abridged: expected true or false');
    expect(bad('{"version": "2.0", "metadata": {}}').message).toMatch(/version: "2\.0" is not supported/);
    expect(bad('{"generatedAt": "yesterday"}').message).toMatch(/generatedAt/);
    expect(bad(JSON.stringify({ metadata: { tags: Array.from({ length: 1001 }, (_, i) => `t${i}`) } })).message).toMatch(/more than 1000/);
    expect(bad(JSON.stringify({ metadata: { pageCount: 2 ** 40 } })).message).toMatch(/pageCount/);
    // A prototype key is just an unknown field; deep nesting under unknown keys is never walked.
    const hostile = parseSidecar(`{"__proto__": {"polluted": true}, "metadata": {"__proto__": {"title": "x"}, "deep": ${'['.repeat(50000)}${']'.repeat(50000)}, "title": "Ok"}}`);
    expect(hostile.metadata).toEqual({ title: 'Ok' });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("names the files as Grimmory does: the book's name up to its last dot", () => {
    expect(sidecarPathFor('/b/Dune.epub')).toBe('/b/Dune.metadata.json');
    expect(sidecarCoverPathFor('/b/Dune.epub')).toBe('/b/Dune.cover.jpg');
    expect(sidecarPathFor('/b/Vol. 2. The End.pdf')).toBe('/b/Vol. 2. The End.metadata.json');
    expect(sidecarPathFor('/b/tale.fb2.zip')).toBe('/b/tale.fb2.metadata.json');
    expect(sidecarPathFor('/b/Audio Book')).toBe('/b/Audio Book.metadata.json');
    expect(sidecarPathFor('/b/.hidden')).toBe('/b/.hidden.metadata.json');
  });
});

describe('sidecar files on disk', () => {
  it('reads only small regular UTF-8 files, never through a link', async () => {
    const dir = lib.path('files');
    mkdirSync(dir, { recursive: true });
    expect(await readSidecarFile(join(dir, 'none.metadata.json'))).toBeUndefined();
    writeFileSync(join(dir, 'secret.json'), '{"metadata": {"title": "secret"}}');
    symlinkSync(join(dir, 'secret.json'), join(dir, 'link.metadata.json'));
    expect((await refusal(readSidecarFile(join(dir, 'link.metadata.json')))).message).toMatch(/symbolic link/);
    writeFileSync(join(dir, 'big.metadata.json'), `{"metadata": {"description": "${'x'.repeat(MAX_SIDECAR_BYTES)}"}}`);
    expect((await refusal(readSidecarFile(join(dir, 'big.metadata.json')))).message).toMatch(/at most/);
    writeFileSync(join(dir, 'latin1.metadata.json'), Buffer.from([0x7b, 0x22, 0x76, 0xe9, 0x22, 0x3a, 0x31, 0x7d]));
    expect((await refusal(readSidecarFile(join(dir, 'latin1.metadata.json')))).message).toMatch(/not UTF-8/);
    mkdirSync(join(dir, 'dir.metadata.json'));
    expect((await refusal(readSidecarFile(join(dir, 'dir.metadata.json')))).message).toMatch(/not a regular file/);
    if (spawnSync('mkfifo', [join(dir, 'fifo.metadata.json')]).status === 0) {
      expect((await refusal(readSidecarFile(join(dir, 'fifo.metadata.json')))).message).toMatch(/not a regular file/);
    }
  });

  it('writes atomically: the old file stays whole when the write fails, and no temporary file is left', async () => {
    const dir = lib.path('atomic');
    mkdirSync(dir, { recursive: true });
    const target = join(dir, 'Dune.metadata.json');
    await writeFileAtomically(target, 'first');
    await writeFileAtomically(target, 'second');
    expect(readFileSync(target, 'utf8')).toBe('second');
    mkdirSync(join(dir, 'busy.metadata.json', 'child'), { recursive: true });
    expect((await refusal(writeFileAtomically(join(dir, 'busy.metadata.json'), 'x'))).code).toBe('IO');
    expect(readdirSync(dir).sort()).toEqual(['Dune.metadata.json', 'busy.metadata.json']);
  });
});

describe('one book', () => {
  it('exports, is in sync, takes an edited file back in, and is in sync again', async () => {
    await writeSimpleEpub(lib.path('Herbert', 'Dune.epub'), { title: 'Dune', authors: ['Frank Herbert'], series: 'Dune', seriesIndex: 1, cover: '#2a6' });
    await scanned();
    const id = await bookId('Dune');
    const sidecarPath = lib.path('Herbert', 'Dune.metadata.json');
    expect(await bookSidecarStatus(store.db, id)).toBe('MISSING');
    expect(await readBookSidecar(store.db, id)).toBeUndefined();

    await setSidecars({ enabled: true, includeCoverFile: true });
    const result = await exportBookSidecar(store, covers, id);
    expect(result).toEqual({ sidecarPath, coverPath: lib.path('Herbert', 'Dune.cover.jpg') });
    expect(readFileSync(lib.path('Herbert', 'Dune.cover.jpg')).subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8]));
    const written = JSON.parse(readFileSync(sidecarPath, 'utf8')) as SidecarJson;
    expect(Object.keys(written)).toEqual(['version', 'generatedAt', 'generatedBy', 'metadata', 'cover']);
    expect(written).toMatchObject({ version: '1.0', generatedBy: 'bindery', cover: { source: 'external', path: 'Dune.cover.jpg' } });
    expect(written.metadata).toMatchObject({ title: 'Dune', authors: ['Frank Herbert'], language: 'en', series: { name: 'Dune', number: 1 } });
    expect(await bookSidecarStatus(store.db, id)).toBe('IN_SYNC');

    const before = await metadataOf(id);
    editSidecar(sidecarPath, (j) => {
      j.generatedAt = new Date(Date.now() + 60_000).toISOString();
      j.metadata.title = 'Dune (edited)';
      j.metadata.tags = ['desert', 'spice'];
      j.metadata.series.number = 1.5;
      j.metadata.subtitle = '   ';
    });
    expect(await bookSidecarStatus(store.db, id)).toBe('CONFLICT');
    const imported = await importBookSidecar(store, covers, id);
    expect(imported.changed.sort()).toEqual(['series_number', 'tags', 'title']);
    expect(imported.locked).toEqual([]);
    const after = await metadataOf(id);
    expect(after).toMatchObject({ title: 'Dune (edited)', series_number: 1.5, tags: ['desert', 'spice'], authors: ['Frank Herbert'] });
    expect(after.search_text).toContain('dune (edited)');
    expect(after.updatedAt! > before.updatedAt!).toBe(true);
    expect(await bookSidecarStatus(store.db, id)).toBe('IN_SYNC');

    // Importing the same file again changes nothing, not even the change date.
    expect((await importBookSidecar(store, covers, id)).changed).toEqual([]);
    expect((await metadataOf(id)).updatedAt).toBe(after.updatedAt);
  });

  it('never overwrites a locked field, and reports it', async () => {
    await writeSimpleEpub(lib.path('Dune.epub'), { title: 'Dune', authors: ['Frank Herbert'] });
    await scanned();
    const id = await bookId('Dune');
    await exportBookSidecar(store, covers, id, { force: true });
    await store.db.updateTable('book_metadata').set({ title_locked: 1, authors_locked: 1 }).where('book_id', '=', id).execute();
    editSidecar(lib.path('Dune.metadata.json'), (j) => {
      j.metadata.title = 'Not Dune';
      j.metadata.authors = ['Someone Else'];
      j.metadata.publisher = 'Chilton';
    });
    const result = await importBookSidecar(store, covers, id);
    expect(result.changed).toEqual(['publisher']);
    expect(result.locked.sort()).toEqual(['authors', 'title']);
    expect(await metadataOf(id)).toMatchObject({ title: 'Dune', authors: ['Frank Herbert'] });
    // The catalog changed after the file was written and still differs from it (the locked title).
    expect(await bookSidecarStatus(store.db, id)).toBe('OUTDATED');

    await store.db.updateTable('book_metadata').set({ all_fields_locked: 1, title_locked: 0, authors_locked: 0 }).where('book_id', '=', id).execute();
    editSidecar(lib.path('Dune.metadata.json'), (j) => (j.metadata.language = 'fr'));
    const none = await importBookSidecar(store, covers, id);
    expect(none.changed).toEqual([]);
    expect(none.locked).toEqual(expect.arrayContaining(['title', 'authors', 'publisher', 'language']));
  });

  it('says OUTDATED when the catalog changed after the export', async () => {
    await writeSimpleEpub(lib.path('Dune.epub'), { title: 'Dune', authors: ['Frank Herbert'] });
    await scanned();
    const id = await bookId('Dune');
    await exportBookSidecar(store, covers, id, { force: true });
    editSidecar(lib.path('Dune.metadata.json'), (j) => (j.generatedAt = '2020-01-01T00:00:00Z'));
    expect(await bookSidecarStatus(store.db, id)).toBe('IN_SYNC');
    await store.db.transaction().execute((trx) => writeMetadataPatch(trx, id, { fields: { publisher: 'Chilton' } }));
    await store.db.updateTable('book').set({ metadata_updated_at: new Date().toISOString() }).where('id', '=', id).execute();
    expect(await bookSidecarStatus(store.db, id)).toBe('OUTDATED');
  });

  it('rejects a malformed sidecar on import and changes nothing; its status is CONFLICT', async () => {
    await writeSimpleEpub(lib.path('Dune.epub'), { title: 'Dune', authors: ['Frank Herbert'] });
    await scanned();
    const id = await bookId('Dune');
    const before = await metadataOf(id);
    writeFileSync(lib.path('Dune.metadata.json'), '{"metadata": {"title": "Half", "authors": [');
    const error = await refusal(importBookSidecar(store, covers, id));
    expect(error.code).toBe('SIDECAR_INVALID');
    expect(error.message).toMatch(/^Dune\.metadata\.json is not a valid sidecar file: not JSON/);
    writeFileSync(lib.path('Dune.metadata.json'), '{"metadata": {"title": "Half", "pageCount": "many"}}');
    expect((await refusal(importBookSidecar(store, covers, id))).message).toContain('metadata.pageCount: expected a whole number');
    expect(await metadataOf(id)).toEqual(before);
    expect(await bookSidecarStatus(store.db, id)).toBe('CONFLICT');
    await expect(readBookSidecar(store.db, id)).rejects.toMatchObject({ code: 'SIDECAR_INVALID' });
  });

  it('imports a file Grimmory wrote, with ids, ratings, moods and categories', async () => {
    await writeSimpleEpub(lib.path('Dune.epub'), { title: 'Dune', authors: ['Frank Herbert'] });
    await scanned();
    const id = await bookId('Dune');
    writeFileSync(lib.path('Dune.metadata.json'), GRIMMORY_SIDECAR);
    await importBookSidecar(store, covers, id);
    const row = await store.db.selectFrom('book_metadata').selectAll().where('book_id', '=', id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ title: 'Dune Messiah', publisher: 'Putnam', published_date: '1969-10-15', isbn_13: '9780593098233', page_count: 256, series_name: 'Dune', series_number: 2, series_total: 6, goodreads_id: '44492285', hardcover_book_id: '123', goodreads_rating: 3.89, goodreads_review_count: 300000 });
    const moods = await store.db.selectFrom('book_metadata_mood_mapping as m').innerJoin('mood', 'mood.id', 'm.mood_id').select('mood.name').where('m.book_id', '=', id).execute();
    expect(moods.map((m) => m.name)).toEqual(['dark']);
    // The catalog now says what the file says.
    expect(await bookSidecarStatus(store.db, id)).toBe('IN_SYNC');
  });

  it('round-trips comic metadata, creators included', async () => {
    mkdirSync(lib.path('comics'), { recursive: true });
    await writeZip(lib.path('comics', 'Saga 01.cbz'), [
      { name: 'ComicInfo.xml', data: comicInfoXml({ Title: 'Saga 1', Series: 'Saga', Number: '1', Penciller: 'Fiona Staples', Characters: 'Alana, Marko', Manga: 'No' }) },
      { name: 'p1.jpg', data: await comicPage('#123') },
    ]);
    await scanned();
    const id = await bookId('Saga 1');
    await exportBookSidecar(store, covers, id, { force: true });
    const path = lib.path('comics', 'Saga 01.metadata.json');
    const written = JSON.parse(readFileSync(path, 'utf8')) as SidecarJson;
    expect(written.metadata.comicMetadata).toMatchObject({ issueNumber: '1', pencillers: ['Fiona Staples'], characters: ['Alana', 'Marko'] });
    editSidecar(path, (j) => {
      j.metadata.comicMetadata.characters = ['Hazel'];
      j.metadata.comicMetadata.inkers = ['Someone'];
      j.metadata.comicMetadata.issueNumberLocked = false;
    });
    const result = await importBookSidecar(store, covers, id);
    expect(result.changed.sort()).toEqual(['comic.characters', 'comic.inkers']);
    expect(await bookSidecarStatus(store.db, id)).toBe('IN_SYNC');
  });

  it('honours the settings: no file while sidecars are off (unless forced); a physical book has none', async () => {
    await writeSimpleEpub(lib.path('Dune.epub'), { title: 'Dune', authors: ['Frank Herbert'] });
    const library = await scanned();
    const id = await bookId('Dune');
    expect((await refusal(exportBookSidecar(store, covers, id))).code).toBe('SIDECARS_DISABLED');
    await setSidecars({ enabled: false });
    expect((await refusal(exportBookSidecar(store, covers, id))).code).toBe('SIDECARS_DISABLED');
    expect(existsSync(lib.path('Dune.metadata.json'))).toBe(false);
    await exportBookSidecar(store, covers, id, { force: true });
    expect(existsSync(lib.path('Dune.metadata.json'))).toBe(true);
    expect(existsSync(lib.path('Dune.cover.jpg'))).toBe(false);

    const physical = await createPhysicalBook(store.db, { libraryId: library.id, title: 'Paper' });
    expect(await bookSidecarStatus(store.db, physical)).toBe('NOT_APPLICABLE');
    expect((await refusal(exportBookSidecar(store, covers, physical, { force: true }))).code).toBe('NO_BOOK_FILE');
    expect((await refusal(importBookSidecar(store, covers, physical))).code).toBe('NO_BOOK_FILE');
    expect((await refusal(bookSidecarStatus(store.db, 999_999))).code).toBe('BOOK_NOT_FOUND');
  });

  it('rewrites the sidecar after an import that changed something when writeOnUpdate is on', async () => {
    await writeSimpleEpub(lib.path('Dune.epub'), { title: 'Dune', authors: ['Frank Herbert'] });
    await scanned();
    const id = await bookId('Dune');
    await setSidecars({ enabled: true, writeOnUpdate: true });
    await exportBookSidecar(store, covers, id);
    await store.db.updateTable('book_metadata').set({ title_locked: 1 }).where('book_id', '=', id).execute();
    editSidecar(lib.path('Dune.metadata.json'), (j) => {
      j.generatedAt = '2020-01-01T00:00:00Z';
      j.metadata.title = 'Locked Out';
      j.metadata.publisher = 'Chilton';
    });
    await importBookSidecar(store, covers, id);
    const rewritten = JSON.parse(readFileSync(lib.path('Dune.metadata.json'), 'utf8')) as SidecarJson;
    expect(rewritten.metadata).toMatchObject({ title: 'Dune', publisher: 'Chilton' });
    expect(rewritten.generatedAt).not.toBe('2020-01-01T00:00:00Z');
    expect(await bookSidecarStatus(store.db, id)).toBe('IN_SYNC');
  });
});

describe('a whole library', () => {
  it('exports and imports every book, collecting the one that fails without stopping', async () => {
    for (const title of ['Alpha', 'Beta', 'Gamma']) await writeSimpleEpub(lib.path(`${title}.epub`), { title, authors: ['Writer'] });
    const library = await scanned();
    await setSidecars({ enabled: true });
    // Beta's sidecar name is taken by a folder: its export fails, the others go on.
    mkdirSync(lib.path('Beta.metadata.json', 'in-the-way'), { recursive: true });
    const exported = await exportLibrarySidecars(store, covers, library.id);
    expect(exported).toMatchObject({ libraryId: library.id, books: 3, done: 2, skipped: 0, failed: 1 });
    expect(exported.failures).toEqual([{ bookId: await bookId('Beta'), code: 'IO', message: expect.stringContaining('Beta.metadata.json') }]);
    expect(existsSync(lib.path('Alpha.metadata.json')) && existsSync(lib.path('Gamma.metadata.json'))).toBe(true);

    editSidecar(lib.path('Alpha.metadata.json'), (j) => (j.metadata.tags = ['first']));
    writeFileSync(lib.path('Gamma.metadata.json'), '{"metadata": {"title": 7}}');
    const imported = await importLibrarySidecars(store, covers, library.id);
    // Beta's "sidecar" is a folder: a failure too, not a missing file.
    expect(imported).toMatchObject({ books: 3, done: 1, changed: 1, failed: 2, skipped: 0 });
    expect(imported.failures).toEqual([
      { bookId: await bookId('Beta'), code: 'SIDECAR_INVALID', message: 'Beta.metadata.json is not a regular file' },
      { bookId: await bookId('Gamma'), code: 'SIDECAR_INVALID', message: expect.stringContaining('metadata.title: expected a string') },
    ]);
    expect((await metadataOf(await bookId('Alpha'))).tags).toEqual(['first']);
    expect((await metadataOf(await bookId('Gamma'))).title).toBe('Gamma');
    await expect(exportLibrarySidecars(store, covers, 424242)).rejects.toMatchObject({ code: 'LIBRARY_NOT_FOUND' });
  });

  it('skips books without a sidecar on import and refuses to export while sidecars are off', async () => {
    for (const title of ['Alpha', 'Beta']) await writeSimpleEpub(lib.path(`${title}.epub`), { title, authors: ['Writer'] });
    const library = await scanned();
    await expect(exportLibrarySidecars(store, covers, library.id)).rejects.toMatchObject({ code: 'SIDECARS_DISABLED' });
    expect(await importLibrarySidecars(store, covers, library.id)).toMatchObject({ books: 2, done: 0, skipped: 2, failed: 0 });
  });

  it('writes sidecars for the books a scan adds when writeOnScan is on', async () => {
    await setSidecars({ enabled: true, writeOnScan: true, includeCoverFile: true });
    await writeSimpleEpub(lib.path('Alpha.epub'), { title: 'Alpha', authors: ['Writer'], cover: '#a22' });
    const library = await scanned();
    expect(JSON.parse(readFileSync(lib.path('Alpha.metadata.json'), 'utf8')).metadata.title).toBe('Alpha');
    expect(existsSync(lib.path('Alpha.cover.jpg'))).toBe(true);
    const firstWrite = statSync(lib.path('Alpha.metadata.json')).mtimeMs;
    await writeSimpleEpub(lib.path('Beta.epub'), { title: 'Beta', authors: ['Writer'] });
    await new Promise((r) => setTimeout(r, 20));
    const summary = await scanLibrary(store, library, { coversRoot: covers, workers: 0 });
    expect(summary.added).toBe(1);
    expect(existsSync(lib.path('Beta.metadata.json'))).toBe(true);
    // Only new books: Alpha's file was not written again.
    expect(statSync(lib.path('Alpha.metadata.json')).mtimeMs).toBe(firstWrite);
  });
});

describe('moving files', () => {
  it("takes a book's sidecar and cover along, but not a neighbour's whose name starts the same", async () => {
    await writeSimpleEpub(lib.path('in', 'Dune.epub'), { title: 'Dune', authors: ['Frank Herbert'] });
    await writeSimpleEpub(lib.path('in', 'Dune.Messiah.epub'), { title: 'Dune Messiah', authors: ['Frank Herbert'] });
    const library = await createLibrary(store.db, { name: 'Books', paths: [lib.root], organizationMode: 'BOOK_PER_FILE', fileNamingPattern: 'sorted/{title}' });
    await scanLibrary(store, library, { coversRoot: covers, workers: 0 });
    await setSidecars({ enabled: true, includeCoverFile: true });
    await exportLibrarySidecars(store, covers, library.id);
    writeFileSync(lib.path('in', 'Dune.cover.jpg'), 'cover');
    const dune = await bookId('Dune');
    await moveBooks(store, [{ bookId: dune, targetLibraryId: library.id, targetLibraryPathId: library.paths[0]!.id }]);
    expect(existsSync(lib.path('sorted', 'Dune.epub'))).toBe(true);
    expect(existsSync(lib.path('sorted', 'Dune.metadata.json'))).toBe(true);
    expect(existsSync(lib.path('sorted', 'Dune.cover.jpg'))).toBe(true);
    expect(existsSync(lib.path('in', 'Dune.Messiah.metadata.json'))).toBe(true);
    expect(await bookSidecarStatus(store.db, dune)).toBe('IN_SYNC');
    expect(await bookSidecarStatus(store.db, await bookId('Dune Messiah'))).toBe('IN_SYNC');
  });
});
