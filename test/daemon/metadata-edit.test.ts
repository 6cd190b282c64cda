import { mkdirSync, readFileSync, statSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { extractEpub } from '../../src/core/formats/epub.ts';
import { extractPdf } from '../../src/core/formats/pdf.ts';
import { findLibrary } from '../../src/core/libraries/libraries.ts';
import { scanLibrary } from '../../src/core/scan/scanner.ts';
import { comicInfoXml, jpeg, writeZip } from '../helpers/comic-fixtures.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { makeTempLibrary, writeSimpleEpub, type TempLibrary } from '../helpers/library-fixtures.ts';
import { buildPdf } from '../helpers/pdf-fixtures.ts';

type Json = Record<string, unknown>;

let d: TestDaemon;
let lib: TempLibrary;
let admin: { id: number; token: string };
let editor: { id: number; token: string };
let outsider: { id: number; token: string };
let bulkEditor: { id: number; token: string };
let reader: { id: number; token: string };
let libraryId: number;
const ids: Record<string, number> = {};

const auth = (token: string) => ({ authorization: `Bearer ${token}` });
const put = (url: string, payload: unknown, token = admin.token) => d.inject({ method: 'PUT', url, headers: auth(token), payload: payload as Json });
const post = (url: string, payload: unknown, token = admin.token) => d.inject({ method: 'POST', url, headers: auth(token), payload: payload as Json });
const book = async (id: number): Promise<Json & { metadata: Json }> => (await d.inject({ method: 'GET', url: `/api/v1/books/${id}?withDescription=true`, headers: auth(admin.token) })).json();

async function idle(): Promise<void> {
  while (d.ctx.background.size > 0) await Promise.allSettled([...d.ctx.background]);
}

async function persistence(epub: boolean, pdf = false, cbx = false): Promise<void> {
  const format = (enabled: boolean) => ({ enabled, maxFileSizeInMb: 250 });
  const val = JSON.stringify({ saveToOriginalFile: { epub: format(epub), pdf: format(pdf), cbx: format(cbx), audiobook: format(false) }, convertCbrCb7ToCbz: false, moveFilesToLibraryPattern: false });
  await d.store.db.insertInto('app_settings').values({ name: 'metadata_persistence_settings_v2', val }).onConflict((oc) => oc.column('name').doUpdateSet({ val })).execute();
}

/** The full MetadataUpdateWrapper the web editor sends: every field, with the lock flags as they stand. */
function editorPayload(current: Json, changes: Json): Json {
  return { metadata: { ...current, ...changes }, clearFlags: {} };
}

beforeAll(async () => {
  d = await startTestDaemon();
  lib = makeTempLibrary();
  mkdirSync(lib.path('main'), { recursive: true });
  mkdirSync(lib.path('hidden'), { recursive: true });
  await writeSimpleEpub(lib.path('main', 'Dune.epub'), { title: 'Dune', authors: ['Frank Herbert'], series: 'Dune Chronicles', seriesIndex: 1, isbn: '9780441013593', cover: '#2a6' });
  await writeSimpleEpub(lib.path('main', 'Emma.epub'), { title: 'Emma', authors: ['Jane Austen'] });
  await writeSimpleEpub(lib.path('main', 'Children.epub'), { title: 'Children of Dune', authors: ['F. Herbert'] });
  const { writeFileSync } = await import('node:fs');
  writeFileSync(lib.path('main', 'Manual.pdf'), await buildPdf({ title: 'The Manual', author: 'Tech Writer', pages: 2 }));
  await writeZip(lib.path('main', 'Saga.cbz'), [
    { name: 'ComicInfo.xml', data: comicInfoXml({ Title: 'Saga One', Series: 'Saga', Number: '1', Writer: 'Brian K. Vaughan', Genre: 'Space Opera' }) },
    { name: 'p001.jpg', data: await jpeg('#c33', 40, 60) },
  ]);
  await writeSimpleEpub(lib.path('hidden', 'Secret.epub'), { title: 'Secret', authors: ['Frank Herbert'] });
  admin = await d.createUser('admin', { admin: true });
  const create = async (name: string, path: string): Promise<number> => {
    const res = await post('/api/v1/libraries', { name, paths: [{ path }] });
    expect(res.statusCode).toBe(200);
    return res.json().id as number;
  };
  libraryId = await create('Main', lib.path('main'));
  await create('Hidden', lib.path('hidden'));
  await idle();
  for (const row of await d.store.db.selectFrom('book_metadata').select(['book_id', 'title']).execute()) ids[row.title as string] = row.book_id;
  editor = await d.createUser('editor', { canEditMetadata: true }, [libraryId]);
  outsider = await d.createUser('outsider', { canEditMetadata: true, canBulkEditMetadata: true, canBulkLockUnlockMetadata: true }, []);
  bulkEditor = await d.createUser('bulk', { canBulkEditMetadata: true, canBulkLockUnlockMetadata: true, canEditMetadata: true }, [libraryId]);
  reader = await d.createUser('reader', {}, [libraryId]);
}, 60_000);

afterAll(async () => {
  await d.close();
  lib.cleanup();
});

describe('PUT /api/v1/books/{bookId}/metadata', () => {
  it('saves what the editor sends and answers the updated BookMetadata', async () => {
    const before = await book(ids.Emma as number);
    const res = await put(`/api/v1/books/${ids.Emma}/metadata`, editorPayload(before.metadata, {
      title: 'Emma (Annotated)',
      subtitle: 'A Novel',
      authors: ['Jane Austen', 'Fiona Stafford'],
      categories: ['Classics', 'Romance'],
      moods: ['witty'],
      tags: ['school'],
      publisher: 'Penguin',
      publishedDate: '1815-12-23',
      seriesName: 'Austen Novels',
      seriesNumber: 4,
      pageCount: '474',
      description: '<p>Handsome, clever and rich.</p>',
      amazonRating: 4.1,
    }), editor.token);
    expect(res.statusCode).toBe(200);
    const m = res.json();
    expect(m).toMatchObject({
      bookId: ids.Emma,
      title: 'Emma (Annotated)',
      subtitle: 'A Novel',
      authors: ['Jane Austen', 'Fiona Stafford'],
      categories: ['Classics', 'Romance'],
      moods: ['witty'],
      tags: ['school'],
      publisher: 'Penguin',
      publishedDate: '1815-12-23',
      seriesName: 'Austen Novels',
      seriesNumber: 4,
      pageCount: 474,
      description: '<p>Handsome, clever and rich.</p>',
      amazonRating: 4.1,
      titleLocked: false,
    });
    const after = await book(ids.Emma as number);
    expect(after.metadata.title).toBe('Emma (Annotated)');
    const row = await d.store.db.selectFrom('book').select(['metadata_updated_at', 'metadata_match_score']).where('id', '=', ids.Emma as number).executeTakeFirstOrThrow();
    expect(row.metadata_updated_at).not.toBeNull();
    expect(row.metadata_match_score).toBeGreaterThan(0);
    const search = await d.store.db.selectFrom('book_metadata').select('search_text').where('book_id', '=', ids.Emma as number).executeTakeFirstOrThrow();
    expect(search.search_text).toContain('fiona stafford');
  });

  it('follows the replace modes: REPLACE_ALL clears what is absent, REPLACE_WHEN_PROVIDED and REPLACE_MISSING do not', async () => {
    const id = ids.Emma as number;
    let res = await put(`/api/v1/books/${id}/metadata?replaceMode=REPLACE_WHEN_PROVIDED`, { metadata: { publisher: 'Oxford', subtitle: '' } });
    expect(res.json()).toMatchObject({ publisher: 'Oxford', subtitle: 'A Novel', title: 'Emma (Annotated)', authors: ['Jane Austen', 'Fiona Stafford'] });
    res = await put(`/api/v1/books/${id}/metadata?replaceMode=REPLACE_MISSING`, { metadata: { publisher: 'Ignored', isbn13: '9780141439587' } });
    expect(res.json()).toMatchObject({ publisher: 'Oxford', isbn13: '9780141439587' });
    res = await put(`/api/v1/books/${id}/metadata?mergeCategories=true&replaceMode=REPLACE_WHEN_PROVIDED`, { metadata: { categories: ['Satire'] } });
    expect(res.json().categories).toEqual(['Classics', 'Romance', 'Satire']);
    res = await put(`/api/v1/books/${id}/metadata`, { metadata: { title: 'Emma', authors: ['Jane Austen'] }, clearFlags: { moods: true } });
    const m = res.json();
    expect(m).toMatchObject({ title: 'Emma', authors: ['Jane Austen'] });
    expect(m.publisher).toBeUndefined();
    expect(m.categories).toEqual([]);
    expect(m.moods).toEqual([]);
  });

  it('keeps locked fields; a lock set or lifted by a request applies from the next request', async () => {
    const id = ids.Emma as number;
    let res = await put(`/api/v1/books/${id}/metadata?replaceMode=REPLACE_WHEN_PROVIDED`, { metadata: { title: 'Locked Title', titleLocked: true, publisher: 'P1' } });
    expect(res.json()).toMatchObject({ title: 'Locked Title', titleLocked: true, publisher: 'P1' });
    res = await put(`/api/v1/books/${id}/metadata?replaceMode=REPLACE_WHEN_PROVIDED`, { metadata: { title: 'Changed', publisher: 'P2' } });
    expect(res.json()).toMatchObject({ title: 'Locked Title', publisher: 'P2' });
    res = await put(`/api/v1/books/${id}/metadata?replaceMode=REPLACE_WHEN_PROVIDED`, { metadata: { title: 'Changed', titleLocked: false } });
    expect(res.json()).toMatchObject({ title: 'Locked Title', titleLocked: false });
    res = await put(`/api/v1/books/${id}/metadata?replaceMode=REPLACE_WHEN_PROVIDED`, { metadata: { title: 'Emma' } });
    expect(res.json().title).toBe('Emma');
    // clear flags do not reach a locked field either.
    await put(`/api/v1/books/${id}/metadata?replaceMode=REPLACE_WHEN_PROVIDED`, { metadata: { publisherLocked: true } });
    res = await put(`/api/v1/books/${id}/metadata?replaceMode=REPLACE_WHEN_PROVIDED`, { metadata: {}, clearFlags: { publisher: true } });
    expect(res.json().publisher).toBe('P2');
  });

  it('edits comic metadata with its own locks', async () => {
    const id = ids['Saga One'] as number;
    const res = await put(`/api/v1/books/${id}/metadata?replaceMode=REPLACE_WHEN_PROVIDED`, {
      metadata: { comicMetadata: { issueNumber: '2', storyArc: 'Chapter Two', pencillers: ['Fiona Staples'], characters: ['Alana', 'Marko'], manga: false, storyArcLocked: true } },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().comicMetadata).toMatchObject({ issueNumber: '2', storyArc: 'Chapter Two', pencillers: ['Fiona Staples'], characters: ['Alana', 'Marko'], manga: false, storyArcLocked: true });
    const again = await put(`/api/v1/books/${id}/metadata?replaceMode=REPLACE_WHEN_PROVIDED`, { metadata: { comicMetadata: { storyArc: 'Other' } } });
    expect(again.json().comicMetadata.storyArc).toBe('Chapter Two');
  });

  it('refuses bad values, hidden books, missing books and users without the permission', async () => {
    const url = `/api/v1/books/${ids.Dune}/metadata`;
    const bad = await put(url, { metadata: { pageCount: 'many' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ status: 400, message: 'Validation error', details: ['metadata.pageCount: expected a number'] });
    expect((await put(url, { metadata: { publishedDate: '17 May' } })).statusCode).toBe(400);
    expect((await put(`${url}?replaceMode=SOMETIMES`, { metadata: {} })).statusCode).toBe(400);
    const malformed = await d.inject({ method: 'PUT', url, headers: { ...auth(admin.token), 'content-type': 'application/json' }, payload: '{"metadata":' });
    expect(malformed.statusCode).toBe(400);
    expect((await put(`/api/v1/books/${ids.Secret}/metadata`, { metadata: { title: 'x' } }, outsider.token)).statusCode).toBe(403);
    expect((await put(`/api/v1/books/${ids.Secret}/metadata`, { metadata: { title: 'x' } }, editor.token)).statusCode).toBe(403);
    expect((await put('/api/v1/books/999999/metadata', { metadata: { title: 'x' } })).statusCode).toBe(404);
    expect((await put(url, { metadata: { title: 'x' } }, reader.token)).statusCode).toBe(403);
    expect((await book(ids.Dune as number)).metadata.title).toBe('Dune');
  });
});

describe('locks across books', () => {
  it('toggle-all-lock locks every field and answers the BookMetadata list; an edit then changes nothing but locks', async () => {
    const res = await put('/api/v1/books/metadata/toggle-all-lock', { bookIds: [ids['The Manual']], lock: 'LOCK' }, bulkEditor.token);
    expect(res.statusCode).toBe(200);
    const [m] = res.json() as Json[];
    expect(m).toMatchObject({ bookId: ids['The Manual'], titleLocked: true, authorsLocked: true, coverLocked: true, tagsLocked: true });
    expect(m?.description).toBeUndefined();
    const edit = await put(`/api/v1/books/${ids['The Manual']}/metadata?replaceMode=REPLACE_WHEN_PROVIDED`, { metadata: { title: 'Nope', publisher: 'Nope' } });
    expect(edit.json()).toMatchObject({ title: 'The Manual' });
    expect(edit.json().publisher).toBeUndefined();
    const unlock = await put(`/api/v1/books/${ids['The Manual']}/metadata?replaceMode=REPLACE_WHEN_PROVIDED`, { metadata: { publisher: 'Later', publisherLocked: false } });
    expect(unlock.json()).toMatchObject({ publisherLocked: false, titleLocked: true });
    expect(unlock.json().publisher).toBeUndefined();
    expect((await put(`/api/v1/books/${ids['The Manual']}/metadata?replaceMode=REPLACE_WHEN_PROVIDED`, { metadata: { publisher: 'Later' } })).json().publisher).toBe('Later');
    const open = await put('/api/v1/books/metadata/toggle-all-lock', { bookIds: [ids['The Manual']], lock: 'UNLOCK' }, bulkEditor.token);
    expect(open.json()[0]).toMatchObject({ titleLocked: false, coverLocked: false });
  });

  it('toggle-field-locks sets the named locks (thumbnailLocked is the cover) and answers an empty 200', async () => {
    const res = await put('/api/v1/books/metadata/toggle-field-locks', { bookIds: [ids.Dune, ids.Emma], fieldActions: { seriesNameLocked: 'LOCK', thumbnailLocked: 'LOCK', titleLocked: 'UNLOCK' } }, editor.token);
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('');
    for (const id of [ids.Dune, ids.Emma] as number[]) expect((await book(id)).metadata).toMatchObject({ seriesNameLocked: true, coverLocked: true, titleLocked: false });
    expect((await put('/api/v1/books/metadata/toggle-field-locks', { bookIds: [ids.Dune], fieldActions: { nonsenseLocked: 'LOCK' } })).statusCode).toBe(400);
    expect((await put('/api/v1/books/metadata/toggle-field-locks', { bookIds: [ids.Secret], fieldActions: { titleLocked: 'LOCK' } }, editor.token)).statusCode).toBe(403);
    await put('/api/v1/books/metadata/toggle-field-locks', { bookIds: [ids.Dune, ids.Emma], fieldActions: { seriesNameLocked: 'UNLOCK', thumbnailLocked: 'UNLOCK' } });
  });
});

describe('PUT /api/v1/books/bulk-edit-metadata', () => {
  it('sets, merges and clears fields on many books, skipping locked fields, and answers 204', async () => {
    await put('/api/v1/books/metadata/toggle-field-locks', { bookIds: [ids['Children of Dune']], fieldActions: { publisherLocked: 'LOCK' } });
    const res = await put('/api/v1/books/bulk-edit-metadata', { bookIds: [ids.Dune, ids['Children of Dune']], publisher: 'Ace', tags: ['sci-fi'], mergeTags: true, language: 'en', clearSeriesName: true }, bulkEditor.token);
    expect(res.statusCode).toBe(204);
    const dune = (await book(ids.Dune as number)).metadata;
    const children = (await book(ids['Children of Dune'] as number)).metadata;
    expect(dune).toMatchObject({ publisher: 'Ace', tags: ['sci-fi'], language: 'en', title: 'Dune', authors: ['Frank Herbert'] });
    expect(dune.seriesName).toBeUndefined();
    expect(children.publisher).toBeUndefined();
    expect(children).toMatchObject({ tags: ['sci-fi'] });
    await put('/api/v1/books/bulk-edit-metadata', { bookIds: [ids.Dune], tags: ['classic'], mergeTags: true }, bulkEditor.token);
    expect((await book(ids.Dune as number)).metadata.tags).toEqual(['classic', 'sci-fi']);
    expect((await put('/api/v1/books/bulk-edit-metadata', { bookIds: [ids.Secret], publisher: 'x' }, outsider.token)).statusCode).toBe(403);
    expect((await put('/api/v1/books/bulk-edit-metadata', { bookIds: [ids.Dune], publisher: 'x' }, editor.token)).statusCode).toBe(403);
    expect((await put('/api/v1/books/bulk-edit-metadata', { bookIds: [ids.Dune], seriesTotal: 'lots' })).statusCode).toBe(400);
  });
});

describe('the metadata manager', () => {
  it('consolidates spellings into one, removing the old name once nobody uses it', async () => {
    const res = await post('/api/v1/books/metadata/manage/consolidate', { metadataType: 'authors', targetValues: ['Frank Herbert'], valuesToMerge: ['f. herbert'] }, bulkEditor.token);
    expect(res.statusCode).toBe(204);
    expect((await book(ids['Children of Dune'] as number)).metadata.authors).toEqual(['Frank Herbert']);
    expect(await d.store.db.selectFrom('author').select('id').where('name', '=', 'F. Herbert').executeTakeFirst()).toBeUndefined();
    const categories = await post('/api/v1/books/metadata/manage/consolidate', { metadataType: 'tags', targetValues: ['Science Fiction'], valuesToMerge: ['sci-fi', 'classic'] });
    expect(categories.statusCode).toBe(204);
    expect((await book(ids.Dune as number)).metadata.tags).toEqual(['Science Fiction']);
    const series = await post('/api/v1/books/metadata/manage/consolidate', { metadataType: 'publishers', targetValues: ['Ace Books'], valuesToMerge: ['ACE'] });
    expect(series.statusCode).toBe(204);
    expect((await book(ids.Dune as number)).metadata.publisher).toBe('Ace Books');
    // Two rows that differ only in case: the exact spelling is the target, the other is merged into it.
    await put(`/api/v1/books/${ids.Emma}/metadata?replaceMode=REPLACE_WHEN_PROVIDED`, { metadata: { authors: ['JANE AUSTEN'] } });
    const casing = await post('/api/v1/books/metadata/manage/consolidate', { metadataType: 'authors', targetValues: ['Jane Austen'], valuesToMerge: ['JANE AUSTEN'] });
    expect(casing.statusCode).toBe(204);
    expect((await book(ids.Emma as number)).metadata.authors).toEqual(['Jane Austen']);
    expect(await d.store.db.selectFrom('author').select('id').where('name', '=', 'JANE AUSTEN').executeTakeFirst()).toBeUndefined();
    const twoTargets = await post('/api/v1/books/metadata/manage/consolidate', { metadataType: 'series', targetValues: ['A', 'B'], valuesToMerge: ['C'] });
    expect(twoTargets.statusCode).toBe(400);
    expect(twoTargets.json().details).toEqual(['Series merge requires exactly one target value']);
  });

  it('changes only the books the caller may see', async () => {
    const res = await post('/api/v1/books/metadata/manage/consolidate', { metadataType: 'authors', targetValues: ['F. Herbert'], valuesToMerge: ['Frank Herbert'] }, bulkEditor.token);
    expect(res.statusCode).toBe(204);
    expect((await book(ids.Dune as number)).metadata.authors).toEqual(['F. Herbert']);
    // The hidden library's book keeps its author, and so the author row stays.
    expect((await book(ids.Secret as number)).metadata.authors).toEqual(['Frank Herbert']);
    await post('/api/v1/books/metadata/manage/consolidate', { metadataType: 'authors', targetValues: ['Frank Herbert'], valuesToMerge: ['F. Herbert'] });
  });

  it('deletes values from every book and validates the request', async () => {
    const res = await post('/api/v1/books/metadata/manage/delete', { metadataType: 'tags', valuesToDelete: ['science fiction'] }, bulkEditor.token);
    expect(res.statusCode).toBe(204);
    expect((await book(ids.Dune as number)).metadata.tags).toEqual([]);
    await put(`/api/v1/books/${ids.Dune}/metadata?replaceMode=REPLACE_WHEN_PROVIDED`, { metadata: { seriesName: 'Dune Chronicles', seriesNumber: 1 } });
    await post('/api/v1/books/metadata/manage/delete', { metadataType: 'series', valuesToDelete: ['dune chronicles'] });
    const m = (await book(ids.Dune as number)).metadata;
    expect(m.seriesName).toBeUndefined();
    expect(m.seriesNumber).toBeUndefined();
    const invalid = await post('/api/v1/books/metadata/manage/delete', { metadataType: 'tags', valuesToDelete: [] });
    expect(invalid.statusCode).toBe(400);
    expect(invalid.json().message).toBe('Validation error');
    expect((await post('/api/v1/books/metadata/manage/delete', { metadataType: 'colours', valuesToDelete: ['x'] })).statusCode).toBe(400);
    expect((await post('/api/v1/books/metadata/manage/delete', { metadataType: 'tags', valuesToDelete: ['x'] }, editor.token)).statusCode).toBe(403);
  });
});

describe('POST /api/v1/books/metadata/recalculate-match-scores', () => {
  it('recomputes every score (admins only)', async () => {
    await d.store.db.updateTable('book').set({ metadata_match_score: null }).execute();
    expect((await post('/api/v1/books/metadata/recalculate-match-scores', undefined, bulkEditor.token)).statusCode).toBe(403);
    const res = await post('/api/v1/books/metadata/recalculate-match-scores', undefined);
    expect(res.statusCode).toBe(204);
    const rows = await d.store.db.selectFrom('book').select('metadata_match_score').execute();
    expect(rows.every((r) => typeof r.metadata_match_score === 'number' && r.metadata_match_score > 0)).toBe(true);
    expect((await book(ids.Dune as number)).metadataMatchScore).toEqual(expect.any(Number));
  });
});

describe('writing metadata back into the files', () => {
  it('does nothing to files while the setting is off', async () => {
    await persistence(false);
    const file = lib.path('main', 'Emma.epub');
    const bytes = readFileSync(file);
    await put(`/api/v1/books/${ids.Emma}/metadata?replaceMode=REPLACE_WHEN_PROVIDED`, { metadata: { subtitle: 'Off' } });
    expect(readFileSync(file).equals(bytes)).toBe(true);
  });

  it('writes the EPUB after an edit, updates the file row, and the next scan sees the file as unchanged', async () => {
    await persistence(true, true);
    const file = lib.path('main', 'Dune.epub');
    const before = await d.store.db.selectFrom('book_file').selectAll().where('book_id', '=', ids.Dune as number).executeTakeFirstOrThrow();
    const res = await put(`/api/v1/books/${ids.Dune}/metadata?replaceMode=REPLACE_WHEN_PROVIDED`, { metadata: { title: 'Dune (Deluxe)', description: '<p>Arrakis. <b>Dune.</b></p>', categories: ['Science Fiction'] } });
    expect(res.statusCode).toBe(200);
    const x = await extractEpub(file, { skipCover: true });
    expect(x.metadata).toMatchObject({ title: 'Dune (Deluxe)', authors: ['Frank Herbert'], publisher: 'Ace Books', description: 'Arrakis. Dune.', categories: ['Science Fiction'] });
    const after = await d.store.db.selectFrom('book_file').selectAll().where('book_id', '=', ids.Dune as number).executeTakeFirstOrThrow();
    const info = statSync(file);
    expect(after.size_bytes).toBe(info.size);
    expect(after.mtime_ms).toBe(Math.trunc(info.mtimeMs));
    expect(after.content_hash).not.toBe(before.content_hash);
    expect(after.current_hash).not.toBe(before.current_hash);
    expect(after.initial_hash).toBe(before.initial_hash);

    const bytes = readFileSync(file);
    const again = await put(`/api/v1/books/${ids.Dune}/metadata?replaceMode=REPLACE_WHEN_PROVIDED`, { metadata: { title: 'Dune (Deluxe)' } });
    expect(again.statusCode).toBe(200);
    expect(readFileSync(file).equals(bytes)).toBe(true);

    const summary = await scanLibrary(d.store, await findLibrary(d.store.db, libraryId), { coversRoot: d.ctx.paths.covers, workers: 0 });
    expect(summary.updated).toBe(0);
    // The catalog keeps what the file cannot hold as written (the description's HTML).
    expect((await book(ids.Dune as number)).metadata.description).toBe('<p>Arrakis. <b>Dune.</b></p>');
  });

  it('writes ComicInfo.xml into CBZ comics when that format is switched on', async () => {
    const file = lib.path('main', 'Saga.cbz');
    const original = readFileSync(file);
    await persistence(true, true, false);
    await put(`/api/v1/books/${ids['Saga One']}/metadata?replaceMode=REPLACE_WHEN_PROVIDED`, { metadata: { publisher: 'Image' } });
    expect(readFileSync(file).equals(original)).toBe(true);
    await persistence(true, true, true);
    await put(`/api/v1/books/${ids['Saga One']}/metadata?replaceMode=REPLACE_WHEN_PROVIDED`, { metadata: { publisher: 'Image Comics' } });
    const { extractComic } = await import('../../src/core/formats/comic.ts');
    const x = await extractComic(file, { skipCover: true });
    expect(x.metadata).toMatchObject({ title: 'Saga One', publisher: 'Image Comics', seriesName: 'Saga', authors: ['Brian K. Vaughan'] });
    expect(x.comic).toMatchObject({ issueNumber: '2', storyArc: 'Chapter Two', pencillers: ['Fiona Staples'] });
  });

  it('writes PDFs as an incremental update and bulk edits in the background', async () => {
    const file = lib.path('main', 'Manual.pdf');
    const original = readFileSync(file);
    const res = await put('/api/v1/books/bulk-edit-metadata', { bookIds: [ids['The Manual']], publisher: 'Tech Press', authors: ['Tech Writer', 'Second Writer'] });
    expect(res.statusCode).toBe(204);
    await idle();
    const updated = readFileSync(file);
    expect(updated.subarray(0, original.length).equals(original)).toBe(true);
    const x = await extractPdf(file, { skipCover: true });
    expect(x.metadata).toMatchObject({ publisher: 'Tech Press', authors: ['Tech Writer', 'Second Writer'], title: 'The Manual' });
  });
});
