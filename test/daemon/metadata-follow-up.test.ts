// After an edit in the web UI, what the settings ask for follows: the metadata written into the EPUB, the sidecar
// rewritten. With both off, the file and the folder are left exactly as they were.
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPrincipal } from '../../src/core/auth/principal.ts';
import { extractEpub } from '../../src/core/formats/epub.ts';
import { findDocument } from '../../src/core/koreader/documents.ts';
import { createLibrary } from '../../src/core/libraries/libraries.ts';
import { scanLibrary } from '../../src/core/scan/scanner.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { makeTempLibrary, writeSimpleEpub, type TempLibrary } from '../helpers/library-fixtures.ts';

let d: TestDaemon;
let lib: TempLibrary;
let admin: string;
let bookId: number;
let library: Awaited<ReturnType<typeof createLibrary>>;

const persistence = (sidecar: boolean, epub: boolean) => ({
  saveToOriginalFile: { epub: { enabled: epub, maxFileSizeInMb: 250 }, pdf: { enabled: false, maxFileSizeInMb: 250 }, cbx: { enabled: false, maxFileSizeInMb: 250 }, audiobook: { enabled: false, maxFileSizeInMb: 250 } },
  convertCbrCb7ToCbz: false,
  moveFilesToLibraryPattern: false,
  sidecarSettings: { enabled: sidecar, writeOnUpdate: sidecar, writeOnScan: false, includeCoverFile: false },
});

async function configure(sidecar: boolean, epub: boolean): Promise<void> {
  const res = await d.inject({ method: 'PUT', url: '/api/v1/settings', headers: { authorization: `Bearer ${admin}` }, payload: [{ name: 'METADATA_PERSISTENCE_SETTINGS', value: persistence(sidecar, epub) }] });
  expect(res.statusCode).toBe(200);
}

const editTitle = (title: string) => d.inject({ method: 'PUT', url: `/api/v1/books/${bookId}/metadata`, headers: { authorization: `Bearer ${admin}` }, payload: { metadata: { title, authors: ['Frank Herbert'] } } });

beforeAll(async () => {
  d = await startTestDaemon();
  admin = await d.setupAdmin();
  lib = makeTempLibrary();
  await writeSimpleEpub(lib.path('Dune.epub'), { title: 'Dune', authors: ['Frank Herbert'] });
  library = await createLibrary(d.store.db, { name: 'Books', paths: [lib.root] });
  await scanLibrary(d.store, library, { coversRoot: d.ctx.paths.covers, workers: 0 });
  bookId = (await d.store.db.selectFrom('book').select('id').executeTakeFirstOrThrow()).id;
});
afterAll(async () => {
  await d.close();
  lib.cleanup();
});

describe('after a metadata edit', () => {
  it('leaves the file and the folder alone while write-back and sidecars are off', async () => {
    const before = readFileSync(lib.path('Dune.epub'));
    expect((await editTitle('Dune (1965)')).statusCode).toBe(200);
    expect(readFileSync(lib.path('Dune.epub')).equals(before)).toBe(true);
    expect(existsSync(lib.path('Dune.metadata.json'))).toBe(false);
  });

  it('writes the new title into the EPUB and rewrites the sidecar when both are on', async () => {
    await configure(true, true);
    const before = await d.store.db.selectFrom('book_file').select(['current_hash', 'initial_hash']).where('book_id', '=', bookId).executeTakeFirstOrThrow();
    expect((await editTitle('Dune: Deluxe Edition')).statusCode).toBe(200);
    const after = await d.store.db.selectFrom('book_file').select(['current_hash', 'initial_hash']).where('book_id', '=', bookId).executeTakeFirstOrThrow();
    expect(after.current_hash).not.toBe(before.current_hash);
    // A KOReader device still holding the copy from before the write names it by the old hash, and still finds it.
    const principal = await loadPrincipal(d.store.db, 1);
    expect((await findDocument(d.store.db, principal!, before.current_hash as string))?.bookId).toBe(bookId);
    expect((await findDocument(d.store.db, principal!, after.current_hash as string))?.bookId).toBe(bookId);
    expect((await extractEpub(lib.path('Dune.epub'), { skipCover: true })).metadata.title).toBe('Dune: Deluxe Edition');
    const sidecar = JSON.parse(readFileSync(lib.path('Dune.metadata.json'), 'utf8')) as { metadata?: { title?: string } } & Record<string, unknown>;
    expect(JSON.stringify(sidecar)).toContain('Dune: Deluxe Edition');
    // The scan that follows sees the file as unchanged: the catalog recorded the new size and time.
    const rescan = await scanLibrary(d.store, library, { coversRoot: d.ctx.paths.covers, workers: 0 });
    expect(rescan.updated).toBe(0);
  });
});
