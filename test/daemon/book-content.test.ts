// PUT /api/v1/books/{id}/content over real HTTP on real files (replaced atomically, verified, old bytes kept in the
// trash, catalog updated; bad bodies change nothing) and GET /api/v1/books/{id}/recommendations (similar books in
// score order, same series left out, three books per author at most, only what the caller may see).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMON_NAME_BOOKS } from '../../src/core/books/recommendations.ts';
import { createLibrary, type Library } from '../../src/core/libraries/libraries.ts';
import { scanLibrary } from '../../src/core/scan/scanner.ts';
import { seedBook, seedLibrary } from '../helpers/catalog-seed.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { makeTempLibrary, writeSimpleEpub, type TempLibrary } from '../helpers/library-fixtures.ts';
import { buildPdf } from '../helpers/pdf-fixtures.ts';

let d: TestDaemon;
let lib: TempLibrary;
let library: Library;
let base: string;
let pdfBook: number;
let epubBook: number;
let editor: string;
let reader: string;
let outsider: string;

const auth = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });
const put = (id: number, token: string, body: Uint8Array | string | undefined, contentType = 'application/pdf', query = '') =>
  fetch(`${base}/api/v1/books/${id}/content${query}`, { method: 'PUT', headers: { ...auth(token), 'content-type': contentType }, ...(body === undefined ? {} : { body: typeof body === 'string' ? body : new Uint8Array(body) }) });

const pdfPath = (): string => lib.path('Papers', 'Report.pdf');
const trashedCopies = (name: string): string[] => {
  const trash = join(lib.root, '.bindery-trash');
  if (!existsSync(trash)) return [];
  return readdirSync(trash, { recursive: true, withFileTypes: true }).filter((e) => e.isFile() && e.name === name).map((e) => join(e.parentPath, e.name));
};
const hiddenLeftovers = (): string[] => readdirSync(lib.path('Papers')).filter((n) => n.startsWith('.'));

async function setLimitMb(mb: number): Promise<void> {
  await d.store.db.insertInto('app_settings').values({ name: 'max_file_upload_size_in_mb', val: String(mb) }).onConflict((oc) => oc.column('name').doUpdateSet({ val: String(mb) })).execute();
}

beforeAll(async () => {
  d = await startTestDaemon();
  lib = makeTempLibrary();
  const { writeFileSync, mkdirSync } = await import('node:fs');
  mkdirSync(lib.path('Papers'), { recursive: true });
  writeFileSync(pdfPath(), await buildPdf({ title: 'Report', author: 'Ada', pages: 2 }));
  await writeSimpleEpub(lib.path('Novels', 'Novel.epub'), { title: 'Novel', authors: ['Ada'] });
  library = await createLibrary(d.store.db, { name: 'Main', paths: [lib.root] });
  await scanLibrary(d.store, library, { coversRoot: d.ctx.paths.covers, workers: 0 });
  const id = async (name: string) => (await d.store.db.selectFrom('book_file').select('book_id').where('file_name', '=', name).executeTakeFirstOrThrow()).book_id;
  pdfBook = await id('Report.pdf');
  epubBook = await id('Novel.epub');
  editor = (await d.createUser('editor', { canEditMetadata: true }, [library.id])).token;
  reader = (await d.createUser('reader', {}, [library.id])).token;
  outsider = (await d.createUser('outsider', { canEditMetadata: true }, [])).token;
  await d.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(d.app.server.address() as { port: number }).port}`;
}, 60_000);

afterAll(async () => {
  await d?.close();
  lib?.cleanup();
});

describe('replacing a book file’s content', () => {
  it('puts the new bytes in place, keeps the old ones in the trash and updates the catalog (204)', async () => {
    const old = readFileSync(pdfPath());
    const annotated = await buildPdf({ title: 'Report', author: 'Ada', pages: 3, text: 'Noted' });
    const res = await put(pdfBook, editor, annotated);
    expect(res.status).toBe(204);
    expect(new Uint8Array(readFileSync(pdfPath()))).toEqual(annotated);
    const kept = trashedCopies('Report.pdf');
    expect(kept).toHaveLength(1);
    expect(readFileSync(kept[0]!)).toEqual(old);
    expect(relative(join(lib.root, '.bindery-trash'), kept[0]!).split('/').slice(1)).toEqual(['Papers', 'Report.pdf']);
    const row = await d.store.db.selectFrom('book_file').selectAll().where('book_id', '=', pdfBook).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ size_bytes: annotated.length, page_count: 3, mtime_ms: Math.trunc(statSync(pdfPath()).mtimeMs) });
    expect(row.current_hash).not.toBe(row.initial_hash);
    expect(hiddenLeftovers()).toEqual([]);
    // The reader gets the new bytes, and the next scan has nothing to re-read.
    const served = await fetch(`${base}/api/v1/books/${pdfBook}/content`, { headers: auth(reader) });
    expect(new Uint8Array(await served.arrayBuffer())).toEqual(annotated);
    expect(await scanLibrary(d.store, library, { coversRoot: d.ctx.paths.covers, workers: 0 })).toMatchObject({ added: 0, updated: 0, failed: [] });
  });

  it('refuses content that is not a readable book of the same format, changing nothing', async () => {
    const before = readFileSync(pdfPath());
    const trashBefore = trashedCopies('Report.pdf').length;
    const epub = readFileSync(await writeSimpleEpub(join(lib.root, '..', 'other.epub'), { title: 'Other' }));
    for (const body of [Buffer.from('%PDF-1.7 this is not a PDF at all'), epub]) {
      const res = await put(pdfBook, editor, body);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { message: string }).message).toMatch(/^Invalid file format: the new content is not a readable PDF file/);
    }
    const empty = await put(pdfBook, editor, new Uint8Array(0));
    expect(empty.status).toBe(400);
    expect(readFileSync(pdfPath())).toEqual(before);
    expect(trashedCopies('Report.pdf')).toHaveLength(trashBefore);
    expect(hiddenLeftovers()).toEqual([]);
  });

  it('refuses a JSON body (415) and an unknown or absent bookType', async () => {
    const json = await put(pdfBook, editor, '{"a":1}', 'application/json');
    expect(json.status).toBe(415);
    const unknownType = await put(pdfBook, editor, await buildPdf(), 'application/pdf', '?bookType=SCROLL');
    expect(unknownType.status).toBe(400);
    const absent = await put(pdfBook, editor, await buildPdf(), 'application/pdf', '?bookType=EPUB');
    expect(absent.status).toBe(404);
    expect(await absent.json()).toMatchObject({ message: 'File not found: No file of type EPUB found for book' });
  });

  it('replaces the file a bookType names', async () => {
    const epub = readFileSync(await writeSimpleEpub(join(lib.root, '..', 'novel-2.epub'), { title: 'Novel', authors: ['Ada'], body: 'second edition' }));
    const res = await put(epubBook, editor, epub, 'application/epub+zip', '?bookType=epub');
    expect(res.status).toBe(204);
    expect(readFileSync(lib.path('Novels', 'Novel.epub'))).toEqual(epub);
  });

  it('cuts off content over the size limit (the larger of the upload limit and twice the file), answering 400', async () => {
    await setLimitMb(1);
    const before = readFileSync(pdfPath());
    try {
      const big = new Uint8Array(3 * 1024 * 1024).fill(32);
      const declared = await put(pdfBook, editor, big);
      expect(declared.status).toBe(400);
      expect(await declared.json()).toMatchObject({ message: 'File size exceeds the limit: 1 MB' });
      // No Content-Length: cut off while streaming.
      const stream = new ReadableStream({
        start(controller) {
          for (let i = 0; i < 3; i++) controller.enqueue(new Uint8Array(1024 * 1024).fill(33));
          controller.close();
        },
      });
      const streamed = await fetch(`${base}/api/v1/books/${pdfBook}/content`, { method: 'PUT', headers: { ...auth(editor), 'content-type': 'application/pdf' }, body: stream, duplex: 'half' } as RequestInit);
      expect(streamed.status).toBe(400);
    } finally {
      await setLimitMb(100);
    }
    expect(readFileSync(pdfPath())).toEqual(before);
    expect(hiddenLeftovers()).toEqual([]);
  });

  it('refuses a hidden book (403), an unknown book (404), and callers without canEditMetadata (403), changing nothing', async () => {
    const before = readFileSync(pdfPath());
    const body = await buildPdf({ title: 'Intruder' });
    expect((await put(pdfBook, outsider, body)).status).toBe(403);
    expect((await put(pdfBook, reader, body)).status).toBe(403);
    const unknown = await put(999_999, editor, body);
    expect(unknown.status).toBe(404);
    expect(readFileSync(pdfPath())).toEqual(before);
  });
});

describe('recommendations', () => {
  let admin: string;
  let viewer: string;
  const ids: Record<string, number> = {};

  beforeAll(async () => {
    const open = await seedLibrary(d.store.db, join(lib.root, '..'), 'Open');
    const closed = await seedLibrary(d.store.db, join(lib.root, '..'), 'Closed');
    admin = (await d.createUser('recadmin', { admin: true })).token;
    viewer = (await d.createUser('viewer', {}, [open])).token;
    const names = async (table: 'category' | 'tag', values: string[]) => {
      const out: number[] = [];
      for (const name of values) {
        const row = (await d.store.db.selectFrom(table).select('id').where('name', '=', name).executeTakeFirst()) ?? (await d.store.db.insertInto(table).values({ name }).returning('id').executeTakeFirstOrThrow());
        out.push(row.id);
      }
      return out;
    };
    const add = async (libraryId: number, title: string, authors: string[], categories: string[], tags: string[] = [], series?: string) => {
      const { bookId } = await seedBook(d.store.db, libraryId, { title, authors });
      if (series) await d.store.db.updateTable('book_metadata').set({ series_name: series }).where('book_id', '=', bookId).execute();
      for (const id of await names('category', categories)) await d.store.db.insertInto('book_metadata_category_mapping').values({ book_id: bookId, category_id: id }).execute();
      for (const id of await names('tag', tags)) await d.store.db.insertInto('book_metadata_tag_mapping').values({ book_id: bookId, tag_id: id }).execute();
      ids[title] = bookId;
    };
    await add(open, 'Dune', ['Frank Herbert'], ['Science Fiction', 'Classics'], ['desert'], 'Dune');
    await add(open, 'Dune Messiah', ['Frank Herbert'], ['Science Fiction', 'Classics'], ['desert'], 'dune');
    await add(open, 'The Dosadi Experiment', ['Frank Herbert'], ['Science Fiction'], ['desert']);
    await add(open, 'Whipping Star', ['Frank Herbert'], ['Science Fiction']);
    await add(open, 'The Green Brain', ['Frank Herbert'], ['Science Fiction']);
    await add(open, 'Destination: Void', ['Frank Herbert'], ['Science Fiction']);
    await add(open, 'Foundation', ['Isaac Asimov'], ['Science Fiction', 'Classics'], ['desert']);
    await add(open, 'Dune Road', ['Someone Else'], [], ['desert']);
    await add(open, 'Dune Buggy Manual', ['Mechanic'], ['Cars']);
    await add(open, 'Emma', ['Jane Austen'], ['Romance']);
    await add(closed, 'Hidden Herbert', ['Frank Herbert'], ['Science Fiction', 'Classics'], ['desert']);
  });

  const recommend = (token: string, id: number, query = '') => fetch(`${base}/api/v1/books/${id}/recommendations${query}`, { headers: auth(token) });
  const titles = (list: { book: { metadata: { title: string } } }[]): string[] => list.map((r) => r.book.metadata.title);

  it('lists similar books best first, as BookRecommendation {book, similarityScore}', async () => {
    const res = await recommend(viewer, ids.Dune!);
    expect(res.status).toBe(200);
    const list = (await res.json()) as { book: { id: number; metadata: { title: string } }; similarityScore: number }[];
    expect(list[0]).toEqual({ book: expect.objectContaining({ id: ids['The Dosadi Experiment'], libraryId: expect.any(Number), metadata: expect.objectContaining({ title: 'The Dosadi Experiment' }) }), similarityScore: expect.any(Number) });
    const scores = list.map((r) => r.similarityScore);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    expect(scores.every((s) => s > 0 && Math.round(s * 1e5) / 1e5 === s)).toBe(true);
    // Same series left out (whatever its case), nothing unrelated, at most three books by one author.
    expect(titles(list)).not.toContain('Dune Messiah');
    expect(titles(list)).not.toContain('Emma');
    expect(titles(list)).toContain('Foundation');
    expect(titles(list)).toContain('Dune Road');
    expect(list.filter((r) => ['The Dosadi Experiment', 'Whipping Star', 'The Green Brain', 'Destination: Void'].includes(r.book.metadata.title))).toHaveLength(3);
    // Dune Road shares a tag and a title word: it comes last. A title word alone does not make a candidate.
    expect(titles(list).at(-1)).toBe('Dune Road');
    expect(titles(list)).not.toContain('Dune Buggy Manual');
  });

  it('only recommends books the caller may see', async () => {
    const forViewer = titles((await (await recommend(viewer, ids.Dune!)).json()) as never);
    expect(forViewer).not.toContain('Hidden Herbert');
    const forAdmin = titles((await (await recommend(admin, ids.Dune!)).json()) as never);
    expect(forAdmin[0]).toBe('Hidden Herbert');
  });

  it('honours limit (1 to 25) and answers 400 outside it', async () => {
    expect(((await (await recommend(viewer, ids.Dune!, '?limit=2')).json()) as unknown[]).length).toBe(2);
    for (const limit of ['0', '26', 'x']) {
      const res = await recommend(viewer, ids.Dune!, `?limit=${limit}`);
      expect(res.status, limit).toBe(400);
      expect(await res.json()).toMatchObject({ status: 400, message: 'Validation error' });
    }
  });

  it('does not make every book a candidate through a name most books carry, but still scores it', async () => {
    const before = (await (await recommend(viewer, ids.Dune!)).json()) as { book: { id: number }; similarityScore: number }[];
    const libraryId = (await d.store.db.selectFrom('book').select('library_id').where('id', '=', ids.Dune!).executeTakeFirstOrThrow()).library_id;
    const fiction = (await d.store.db.insertInto('category').values({ name: 'Fiction' }).returning('id').executeTakeFirstOrThrow()).id;
    await d.store.write(async ({ exec }) => {
      for (let i = 0; i < COMMON_NAME_BOOKS + 50; i++) {
        const id = (await exec.get('insert into book (library_id) values (?) returning id', [libraryId]))?.id as number;
        await exec.run('insert into book_metadata (book_id, title) values (?, ?)', [id, `Filler ${i}`]);
        await exec.run('insert into book_metadata_category_mapping (book_id, category_id) values (?, ?)', [id, fiction]);
      }
      for (const title of ['Dune', 'Foundation']) await exec.run('insert into book_metadata_category_mapping (book_id, category_id) values (?, ?)', [ids[title] as number, fiction]);
    });
    const after = (await (await recommend(viewer, ids.Dune!)).json()) as { book: { id: number; metadata: { title: string } }; similarityScore: number }[];
    expect(after.map((r) => r.book.id).sort()).toEqual(before.map((r) => r.book.id).sort());
    // Still counted: Dosadi shares one of Dune's three categories now, not one of two (3 + 3.5/3 + 1).
    const dosadi = (list: typeof before) => list.find((r) => r.book.id === ids['The Dosadi Experiment'])!.similarityScore;
    expect(dosadi(before)).toBe(5.75);
    expect(dosadi(after)).toBe(5.16667);
    // A book with nothing but the common name still gets recommendations, from a bounded share of its books.
    const plain = (await seedBook(d.store.db, libraryId, { title: 'Plain' })).bookId;
    await d.store.db.insertInto('book_metadata_category_mapping').values({ book_id: plain, category_id: fiction }).execute();
    const forPlain = (await (await recommend(viewer, plain)).json()) as unknown[];
    expect(forPlain).toHaveLength(25);
  });

  it('answers an empty list for a book like no other, 403 for a hidden book and 404 for an unknown one', async () => {
    expect(await (await recommend(viewer, ids.Emma!)).json()).toEqual([]);
    expect((await recommend(viewer, ids['Hidden Herbert']!)).status).toBe(403);
    expect((await recommend(viewer, 999_999)).status).toBe(404);
  });
});
