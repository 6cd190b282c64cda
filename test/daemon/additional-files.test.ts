// AdditionalFileController's upload and delete over real HTTP on a real library: files land beside the book (named by
// the pattern when they are another format of it), are recorded so a rescan leaves them alone, and a deleted file goes
// to the library's trash. Bad input, hidden books and missing permissions change nothing on disk.
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPhysicalBook } from '../../src/core/books/physical-books.ts';
import { createLibrary, type Library } from '../../src/core/libraries/libraries.ts';
import { scanLibrary } from '../../src/core/scan/scanner.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { makeTempLibrary, writeSimpleEpub, type TempLibrary } from '../helpers/library-fixtures.ts';
import { buildPdf } from '../helpers/pdf-fixtures.ts';

let d: TestDaemon;
let lib: TempLibrary;
let library: Library;
let base: string;
let bookId: number;
let primaryId: number;
let uploader: string;
let deleter: string;
let outsider: string;
let nobody: string;

const DUNE_DIR = ['Frank Herbert', 'Dune'];
const auth = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });

async function upload(id: number, token: string, file: { name: string; data: Buffer | Uint8Array } | undefined, fields: Record<string, string> = {}, query = ''): Promise<Response> {
  const form = new FormData();
  if (file) form.append('file', new Blob([new Uint8Array(file.data)]), file.name);
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  return fetch(`${base}/api/v1/books/${id}/files${query}`, { method: 'POST', headers: auth(token), body: form });
}

const del = (id: number, fileId: number, token: string) => fetch(`${base}/api/v1/books/${id}/files/${fileId}`, { method: 'DELETE', headers: auth(token) });

/** Hidden files the daemon might leave behind anywhere in the library (partial uploads, checks), trash excepted. */
function strayHiddenFiles(dir: string = lib.root): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === '.bindery-trash') continue;
    if (entry.name.startsWith('.')) out.push(relative(lib.root, join(dir, entry.name)));
    if (entry.isDirectory()) out.push(...strayHiddenFiles(join(dir, entry.name)));
  }
  return out;
}

async function setLimitMb(mb: number): Promise<void> {
  await d.store.db.insertInto('app_settings').values({ name: 'max_file_upload_size_in_mb', val: String(mb) }).onConflict((oc) => oc.column('name').doUpdateSet({ val: String(mb) })).execute();
}

const fileRow = (id: number) => d.store.db.selectFrom('book_file').selectAll().where('id', '=', id).executeTakeFirst();

beforeAll(async () => {
  d = await startTestDaemon();
  lib = makeTempLibrary();
  await writeSimpleEpub(lib.path(...DUNE_DIR, 'Dune.epub'), { title: 'Dune', authors: ['Frank Herbert'] });
  library = await createLibrary(d.store.db, { name: 'Main', paths: [lib.root] });
  await scanLibrary(d.store, library, { coversRoot: d.ctx.paths.covers, workers: 0 });
  const file = await d.store.db.selectFrom('book_file').select(['id', 'book_id']).executeTakeFirstOrThrow();
  bookId = file.book_id;
  primaryId = file.id;
  uploader = (await d.createUser('uploader', { canUpload: true }, [library.id])).token;
  deleter = (await d.createUser('deleter', { canDeleteBook: true }, [library.id])).token;
  outsider = (await d.createUser('outsider', { canUpload: true, canDeleteBook: true }, [])).token;
  nobody = (await d.createUser('nobody', {}, [library.id])).token;
  await d.app.listen({ port: 0, host: '127.0.0.1' });
  const address = d.app.server.address() as { port: number };
  base = `http://127.0.0.1:${address.port}`;
}, 60_000);

afterAll(async () => {
  await d?.close();
  lib?.cleanup();
});

describe('uploading an additional file', () => {
  let pdfId: number;
  let pdf: Uint8Array;

  it('adds another format of the book beside it, named by the pattern, and answers the BookFile', async () => {
    pdf = await buildPdf({ title: 'Dune (print)', pages: 3 });
    const res = await upload(bookId, uploader, { name: 'scan of dune.pdf', data: pdf }, { isBook: 'true' });
    expect(res.status).toBe(200);
    const json = (await res.json()) as Record<string, unknown>;
    const target = lib.path(...DUNE_DIR, 'Dune - Frank Herbert.pdf');
    expect(json).toEqual({
      id: expect.any(Number),
      bookId,
      fileName: 'Dune - Frank Herbert.pdf',
      filePath: target,
      fileSubPath: 'Frank Herbert/Dune',
      book: true,
      folderBased: false,
      bookType: 'PDF',
      fileSizeKb: Math.round(pdf.length / 1024),
      extension: 'pdf',
      addedOn: expect.any(String),
    });
    pdfId = json.id as number;
    expect(new Uint8Array(readFileSync(target))).toEqual(pdf);
    const row = await fileRow(pdfId);
    expect(row).toMatchObject({ book_id: bookId, is_book: 1, book_type: 'PDF', size_bytes: pdf.length, page_count: 3, description: null });
    expect(row?.current_hash).toMatch(/^[0-9a-f]{32}$/);
    expect(row?.initial_hash).toBe(row?.current_hash);
    expect(row?.content_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(row?.mtime_ms).toBe(Math.trunc(statSync(target).mtimeMs));
    expect(strayHiddenFiles()).toEqual([]);
  });

  it('is left alone by the next scan: no new book, nothing changed', async () => {
    const books = await d.store.db.selectFrom('book').select('id').execute();
    const summary = await scanLibrary(d.store, library, { coversRoot: d.ctx.paths.covers, workers: 0 });
    expect(summary).toMatchObject({ added: 0, updated: 0, moved: 0, missing: 0, failed: [] });
    expect(await d.store.db.selectFrom('book').select('id').execute()).toEqual(books);
    expect(await fileRow(pdfId)).toMatchObject({ book_id: bookId });
  });

  it('keeps a companion file under its own name, with its description; fields may follow the file', async () => {
    const map = Buffer.from('not really a jpeg, but a companion file');
    const res = await upload(bookId, uploader, { name: '../../Arrakis map.jpg', data: map }, { isBook: 'false', description: 'Map of Arrakis' });
    expect(res.status).toBe(200);
    const json = (await res.json()) as Record<string, unknown>;
    expect(json).toMatchObject({ bookId, fileName: 'Arrakis map.jpg', fileSubPath: 'Frank Herbert/Dune', book: false, description: 'Map of Arrakis', extension: 'jpg' });
    expect(json).not.toHaveProperty('bookType');
    expect(readFileSync(lib.path(...DUNE_DIR, 'Arrakis map.jpg'))).toEqual(map);
    expect(existsSync(join(lib.root, '..', 'Arrakis map.jpg'))).toBe(false);
    const listed = (await (await fetch(`${base}/api/v1/books/${bookId}/files?isBook=false`, { headers: auth(uploader) })).json()) as { fileName: string }[];
    expect(listed.map((f) => f.fileName)).toEqual(['Arrakis map.jpg']);
  });

  it('takes isBook and bookType from the query too', async () => {
    const res = await upload(bookId, uploader, { name: 'notes.pdf', data: Buffer.from('%PDF-ish notes') }, {}, '?isBook=false&bookType=pdf');
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ fileName: 'notes.pdf', book: false, bookType: 'PDF' });
  });

  it('refuses another format with the content of an existing book file (400)', async () => {
    const res = await upload(bookId, uploader, { name: 'copy.pdf', data: pdf }, { isBook: 'true' });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ status: 400, message: 'Alternative format file already exists with same content' });
  });

  it('refuses a book format that does not parse, or is no book format, leaving nothing behind', async () => {
    const broken = await upload(bookId, uploader, { name: 'broken.epub', data: Buffer.from('PK not really a zip') }, { isBook: 'true' });
    expect(broken.status).toBe(400);
    expect(((await broken.json()) as { message: string }).message).toMatch(/^Invalid file format: /);
    const text = await upload(bookId, uploader, { name: 'readme.txt', data: Buffer.from('hello') }, { isBook: 'true' });
    expect(text.status).toBe(400);
    expect(await text.json()).toMatchObject({ message: 'Invalid file format: Unsupported book file extension: txt' });
    expect(readdirSync(lib.path(...DUNE_DIR)).sort()).toEqual(['Arrakis map.jpg', 'Dune - Frank Herbert.pdf', 'Dune.epub', 'notes.pdf']);
    expect(strayHiddenFiles()).toEqual([]);
  });

  it('never replaces a file: a taken name is 409 and the first file stays', async () => {
    const res = await upload(bookId, uploader, { name: 'Arrakis map.jpg', data: Buffer.from('other bytes') }, { isBook: 'false' });
    expect(res.status).toBe(409);
    expect(await res.json()).toMatchObject({ status: 409, message: 'File already exists' });
    expect(readFileSync(lib.path(...DUNE_DIR, 'Arrakis map.jpg'), 'utf8')).toBe('not really a jpeg, but a companion file');
  });

  it('answers 400 for a missing or malformed isBook, an unknown bookType, a missing or empty file, a bad name', async () => {
    const cases: [Promise<Response>, string | RegExp][] = [
      [upload(bookId, uploader, { name: 'a.jpg', data: Buffer.from('x') }), 'Validation error'],
      [upload(bookId, uploader, { name: 'a.jpg', data: Buffer.from('x') }, { isBook: 'maybe' }), 'Validation error'],
      [upload(bookId, uploader, { name: 'a.jpg', data: Buffer.from('x') }, { isBook: 'false', bookType: 'SCROLL' }), 'Validation error'],
      [upload(bookId, uploader, undefined, { isBook: 'false' }), 'Uploaded file is missing.'],
      [upload(bookId, uploader, { name: 'empty.jpg', data: Buffer.alloc(0) }, { isBook: 'false' }), 'Uploaded file is missing.'],
      [upload(bookId, uploader, { name: '.hidden', data: Buffer.from('x') }, { isBook: 'false' }), 'Invalid filename'],
      [upload(bookId, uploader, { name: '..', data: Buffer.from('x') }, { isBook: 'false' }), 'Invalid filename'],
    ];
    for (const [pending, message] of cases) {
      const res = await pending;
      expect(res.status).toBe(400);
      expect(((await res.json()) as { message: string }).message).toMatch(message);
    }
    expect(existsSync(lib.path(...DUNE_DIR, 'a.jpg'))).toBe(false);
    expect(strayHiddenFiles()).toEqual([]);
  });

  it('cuts off an upload over max_file_upload_size_in_mb', async () => {
    await setLimitMb(1);
    try {
      for (const size of [3 * 1024 * 1024, 1024 * 1024 + 10]) {
        const res = await upload(bookId, uploader, { name: 'big.jpg', data: Buffer.alloc(size, 7) }, { isBook: 'false' });
        expect(res.status).toBe(400);
        expect(await res.json()).toMatchObject({ message: 'File size exceeds the limit: 1 MB' });
      }
    } finally {
      await setLimitMb(100);
    }
    expect(existsSync(lib.path(...DUNE_DIR, 'big.jpg'))).toBe(false);
    expect(strayHiddenFiles()).toEqual([]);
  });

  it('refuses a hidden book (403), an unknown one (404) and callers without the upload permission (403), writing nothing', async () => {
    const hidden = await upload(bookId, outsider, { name: 'x.jpg', data: Buffer.from('x') }, { isBook: 'false' });
    expect(hidden.status).toBe(403);
    const unknown = await upload(999_999, uploader, { name: 'x.jpg', data: Buffer.from('x') }, { isBook: 'false' });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ message: 'Book not found with ID: 999999' });
    const denied = await upload(bookId, nobody, { name: 'x.jpg', data: Buffer.from('x') }, { isBook: 'false' });
    expect(denied.status).toBe(403);
    expect(existsSync(lib.path(...DUNE_DIR, 'x.jpg'))).toBe(false);
  });

  it('gives a physical book its first file, named by the pattern in the library folder', async () => {
    const physicalId = await createPhysicalBook(d.store.db, { libraryId: library.id, title: 'Emma', authors: ['Jane Austen'] });
    const epub = readFileSync(await writeSimpleEpub(join(lib.root, '..', 'emma-upload.epub'), { title: 'Emma (file)', authors: ['Jane Austen'] }));
    const res = await upload(physicalId, uploader, { name: 'emma.epub', data: epub }, { isBook: 'true' });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ fileName: 'Emma - Jane Austen.epub', fileSubPath: 'Jane Austen/Emma', book: true, bookType: 'EPUB' });
    expect(readFileSync(lib.path('Jane Austen', 'Emma', 'Emma - Jane Austen.epub'))).toEqual(epub);
    const book = await d.store.db.selectFrom('book').select(['library_path_id', 'is_physical']).where('id', '=', physicalId).executeTakeFirstOrThrow();
    expect(book).toEqual({ library_path_id: library.paths[0]!.id, is_physical: 1 });
    const shown = (await (await fetch(`${base}/api/v1/books/${physicalId}`, { headers: auth(uploader) })).json()) as { primaryFile?: { fileName: string } };
    expect(shown.primaryFile?.fileName).toBe('Emma - Jane Austen.epub');
    // The book's metadata is the catalog's, not the new file's.
    expect((await d.store.db.selectFrom('book_metadata').select('title').where('book_id', '=', physicalId).executeTakeFirstOrThrow()).title).toBe('Emma');
  });
});

describe('deleting an additional file', () => {
  const trashed = (name: string): string[] => {
    const trash = join(lib.root, '.bindery-trash');
    if (!existsSync(trash)) return [];
    return readdirSync(trash, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile() && e.name === name)
      .map((e) => join(e.parentPath, e.name));
  };

  it('moves the file to the library trash and forgets it (204)', async () => {
    const data = Buffer.from('companion to be deleted');
    const added = (await (await upload(bookId, uploader, { name: 'delete me.jpg', data }, { isBook: 'false' })).json()) as { id: number };
    const res = await del(bookId, added.id, deleter);
    expect(res.status).toBe(204);
    expect(await res.text()).toBe('');
    expect(existsSync(lib.path(...DUNE_DIR, 'delete me.jpg'))).toBe(false);
    const kept = trashed('delete me.jpg');
    expect(kept).toHaveLength(1);
    expect(readFileSync(kept[0]!)).toEqual(data);
    expect(relative(join(lib.root, '.bindery-trash'), kept[0]!).split('/').slice(1)).toEqual([...DUNE_DIR, 'delete me.jpg']);
    expect(await fileRow(added.id)).toBeUndefined();
    // The scan skips the trash: the file does not come back as a book.
    expect((await scanLibrary(d.store, library, { coversRoot: d.ctx.paths.covers, workers: 0 })).added).toBe(0);
  });

  it('deletes another format of the book the same way', async () => {
    const alt = await d.store.db.selectFrom('book_file').select('id').where('book_id', '=', bookId).where('file_name', '=', 'Dune - Frank Herbert.pdf').executeTakeFirstOrThrow();
    expect((await del(bookId, alt.id, deleter)).status).toBe(204);
    expect(trashed('Dune - Frank Herbert.pdf')).toHaveLength(1);
    expect(existsSync(lib.path(...DUNE_DIR, 'Dune.epub'))).toBe(true);
  });

  it('forgets a file already gone from disk', async () => {
    const added = (await (await upload(bookId, uploader, { name: 'vanishing.jpg', data: Buffer.from('v') }, { isBook: 'false' })).json()) as { id: number };
    rmSync(lib.path(...DUNE_DIR, 'vanishing.jpg'));
    expect((await del(bookId, added.id, deleter)).status).toBe(204);
    expect(await fileRow(added.id)).toBeUndefined();
  });

  it('never deletes the primary file (400), an unknown file or another book’s file (400)', async () => {
    const primary = await del(bookId, primaryId, deleter);
    expect(primary.status).toBe(400);
    expect(await primary.json()).toMatchObject({ message: `Primary book file cannot be processed as an additional file: ${primaryId}` });
    expect(existsSync(lib.path(...DUNE_DIR, 'Dune.epub'))).toBe(true);
    const unknown = await del(bookId, 999_999, deleter);
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toMatchObject({ message: 'Additional file not found with id: 999999' });
    const other = await d.store.db.selectFrom('book_file').select(['id', 'book_id']).where('book_id', '!=', bookId).executeTakeFirstOrThrow();
    expect((await del(bookId, other.id, deleter)).status).toBe(400);
    expect(await fileRow(other.id)).toBeDefined();
  });

  it('refuses a hidden book (403), an unknown book (404) and callers without the delete permission (403)', async () => {
    const added = (await (await upload(bookId, uploader, { name: 'guarded.jpg', data: Buffer.from('g') }, { isBook: 'false' })).json()) as { id: number };
    expect((await del(bookId, added.id, outsider)).status).toBe(403);
    expect((await del(bookId, added.id, nobody)).status).toBe(403);
    expect((await del(999_999, added.id, deleter)).status).toBe(404);
    expect(existsSync(lib.path(...DUNE_DIR, 'guarded.jpg'))).toBe(true);
    expect(await fileRow(added.id)).toBeDefined();
  });

  it('changes nothing when the file cannot be moved to the trash', async () => {
    const added = (await (await upload(bookId, uploader, { name: 'stuck.jpg', data: Buffer.from('s') }, { isBook: 'false' })).json()) as { id: number };
    // A plain file where the trash folder should be: the move must fail.
    const trash = join(lib.root, '.bindery-trash');
    rmSync(trash, { recursive: true, force: true });
    writeFileSync(trash, 'not a folder');
    try {
      const res = await del(bookId, added.id, deleter);
      expect(res.status).toBe(500);
      expect(existsSync(lib.path(...DUNE_DIR, 'stuck.jpg'))).toBe(true);
      expect(await fileRow(added.id)).toBeDefined();
    } finally {
      rmSync(trash, { force: true });
    }
  });
});
