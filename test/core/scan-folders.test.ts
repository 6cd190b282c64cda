// Scans limited to some folders of a library (what the library watcher asks for): only those folders are read, only
// their files can be found missing, a folder that is gone hands over to its parent, and books that moved between two
// scanned folders keep their identity.
import { mkdirSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLibrary, type Library } from '../../src/core/libraries/libraries.ts';
import { foldScope, inScope, rootScope } from '../../src/core/scan/scan-scope.ts';
import { scanLibrary, type ScanSummary } from '../../src/core/scan/scanner.ts';
import { openStore, type Store } from '../../src/core/store/store.ts';
import { makeTempLibrary, writeSimpleEpub, type TempLibrary } from '../helpers/library-fixtures.ts';

let lib: TempLibrary;
let store: Store;
let library: Library;

beforeEach(async () => {
  lib = makeTempLibrary();
  store = await openStore(join(lib.dataDir, 'bindery.sqlite'));
  library = await createLibrary(store.db, { name: 'Books', paths: [lib.root] });
});

afterEach(async () => {
  await store.close();
  lib.cleanup();
});

function scan(folders?: string[]): Promise<ScanSummary> {
  return scanLibrary(store, library, { coversRoot: join(lib.dataDir, 'covers'), workers: 0, ...(folders ? { folders } : {}) });
}

async function files(): Promise<Record<string, { book: number; missing: boolean }>> {
  const rows = await store.db.selectFrom('book_file').select(['file_sub_path', 'file_name', 'book_id', 'missing_at']).orderBy('id').execute();
  return Object.fromEntries(rows.map((r) => [r.file_sub_path ? `${r.file_sub_path}/${r.file_name}` : r.file_name, { book: r.book_id, missing: r.missing_at !== null }]));
}

describe('a scan of some folders', () => {
  it('reads only those folders and marks only their vanished files missing', async () => {
    await writeSimpleEpub(lib.path('A', 'one.epub'), { title: 'One' });
    await writeSimpleEpub(lib.path('B', 'two.epub'), { title: 'Two' });
    await scan();
    const lastFull = (await store.db.selectFrom('library').select('last_scanned_at').executeTakeFirstOrThrow()).last_scanned_at;

    await writeSimpleEpub(lib.path('A', 'Sub', 'three.epub'), { title: 'Three' });
    await writeSimpleEpub(lib.path('B', 'four.epub'), { title: 'Four' });
    rmSync(lib.path('B', 'two.epub'));
    const summary = await scan([lib.path('A')]);
    expect(summary).toMatchObject({ added: 1, missing: 0 });
    expect(Object.keys(await files()).sort()).toEqual(['A/Sub/three.epub', 'A/one.epub', 'B/two.epub']);
    expect((await files())['B/two.epub']!.missing).toBe(false);
    // Only a scan of the whole library counts as the library's last scan.
    expect((await store.db.selectFrom('library').select('last_scanned_at').executeTakeFirstOrThrow()).last_scanned_at).toBe(lastFull);

    expect(await scan([lib.path('B')])).toMatchObject({ added: 1, missing: 1 });
    expect(await files()).toMatchObject({ 'B/two.epub': { missing: true }, 'B/four.epub': { missing: false }, 'A/one.epub': { missing: false } });
  });

  it('hands a folder that is gone over to its parent, and keeps a book moved between scanned folders', async () => {
    await writeSimpleEpub(lib.path('Author', 'Old', 'book.epub'), { title: 'Moving' });
    await writeSimpleEpub(lib.path('Author', 'Gone', 'gone.epub'), { title: 'Gone' });
    await scan();
    const before = await files();

    mkdirSync(lib.path('Author', 'New'));
    renameSync(lib.path('Author', 'Old', 'book.epub'), lib.path('Author', 'New', 'book.epub'));
    rmSync(lib.path('Author', 'Gone'), { recursive: true });
    const summary = await scan([lib.path('Author', 'Old'), lib.path('Author', 'New'), lib.path('Author', 'Gone')]);
    expect(summary).toMatchObject({ added: 0, moved: 1, missing: 1 });
    const after = await files();
    expect(after['Author/New/book.epub']).toEqual({ book: before['Author/Old/book.epub']!.book, missing: false });
    expect(after['Author/Gone/gone.epub']).toEqual({ book: before['Author/Gone/gone.epub']!.book, missing: true });
  });

  it('leaves libraries whose folders it does not touch alone, and skips hidden folders', async () => {
    await writeSimpleEpub(lib.path('A', 'one.epub'), { title: 'One' });
    expect(await scan([lib.path('..', 'elsewhere')])).toMatchObject({ added: 0 });
    expect(await scan([lib.path('.hidden')])).toMatchObject({ added: 0 });
    expect(await files()).toEqual({});
    expect(await scan([lib.root])).toMatchObject({ added: 1 });
  });
});

describe('scan scopes', () => {
  it('folds nested folders into their parents and tells which catalog files they cover', async () => {
    expect(foldScope(['a/b', 'a', 'c d', 'c', 'c/d'])).toEqual(['a', 'c', 'c d']);
    expect(foldScope(['x', ''])).toEqual(['']);
    expect(inScope(['a/b'], 'a/b', 'x.epub')).toBe(true);
    expect(inScope(['a/b'], 'a/b/c', 'x.epub')).toBe(true);
    // A folder audiobook is catalogued as (parent folder, its name).
    expect(inScope(['a/b'], 'a', 'b')).toBe(true);
    expect(inScope(['a/b'], 'a', 'bc')).toBe(false);
    expect(inScope(['a/b'], 'a/bc', 'x.epub')).toBe(false);
  });

  it('climbs from a missing folder to the nearest one that exists, and ignores folders outside the root', async () => {
    mkdirSync(lib.path('Here', 'Deep'), { recursive: true });
    expect(await rootScope(lib.root, [lib.path('Here', 'Deep', 'gone', 'too'), lib.path('Here', 'Deep')])).toEqual(['Here/Deep']);
    expect(await rootScope(lib.root, [lib.path('nothing')])).toEqual(['']);
    expect(await rootScope(lib.root, [join(lib.root, '..', 'books-other')])).toEqual([]);
    symlinkSync(lib.path('Here'), lib.path('@eaDir'));
    expect(await rootScope(lib.root, [lib.path('@eaDir', 'Deep')])).toEqual([]);
  });
});
