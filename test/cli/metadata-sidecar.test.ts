// `bindery metadata sidecar export|import|status`, run as the real command over a real library.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/core/store/store.ts';
import { cliFor } from '../helpers/cli.ts';
import { makeTempLibrary, writeSimpleEpub, type TempLibrary } from '../helpers/library-fixtures.ts';

let lib: TempLibrary;
let dune: number;
let emma: number;
const bindery = cliFor(() => lib.dataDir);

/** Runs SQL on the CLI's catalog between commands. */
async function withCatalog(work: (db: Awaited<ReturnType<typeof openStore>>['db']) => Promise<unknown>): Promise<void> {
  const store = await openStore(join(lib.dataDir, 'bindery.sqlite'));
  try {
    await work(store.db);
  } finally {
    await store.close();
  }
}

function edit(path: string, change: (metadata: Record<string, unknown>) => void): void {
  const json = JSON.parse(readFileSync(path, 'utf8')) as { metadata: Record<string, unknown> };
  change(json.metadata);
  writeFileSync(path, JSON.stringify(json, null, 2));
}

beforeEach(async () => {
  lib = makeTempLibrary();
  await writeSimpleEpub(lib.path('Herbert', 'Dune.epub'), { title: 'Dune', authors: ['Frank Herbert'], cover: '#2a6' });
  await writeSimpleEpub(lib.path('Austen', 'Emma.epub'), { title: 'Emma', authors: ['Jane Austen'] });
  expect((await bindery('library', 'add', 'Books', lib.root)).code).toBe(0);
  expect((await bindery('scan')).code).toBe(0);
  const list = JSON.parse((await bindery('--json', 'books', 'list')).stdout) as { id: number; title: string }[];
  dune = list.find((b) => b.title === 'Dune')!.id;
  emma = list.find((b) => b.title === 'Emma')!.id;
});

afterEach(() => lib.cleanup());

describe('one book', () => {
  it('exports (with --force while sidecars are off), imports an edit around a lock, and reports the status', async () => {
    const off = await bindery('--json', 'metadata', 'sidecar', 'export', '--book', String(dune));
    expect(off.code).toBe(2);
    expect(JSON.parse(off.stdout)).toEqual({ error: { code: 'SIDECARS_DISABLED', message: expect.stringMatching(/turned off.*--force/) } });
    expect(existsSync(lib.path('Herbert', 'Dune.metadata.json'))).toBe(false);

    const exported = await bindery('--json', 'metadata', 'sidecar', 'export', '--book', String(dune), '--force', '--cover');
    expect(exported.code, exported.stderr).toBe(0);
    const sidecarPath = lib.path('Herbert', 'Dune.metadata.json');
    expect(JSON.parse(exported.stdout)).toEqual({ bookId: dune, sidecarPath, coverPath: lib.path('Herbert', 'Dune.cover.jpg') });

    const status = await bindery('metadata', 'sidecar', 'status', '--book', String(dune));
    expect(status.code).toBe(0);
    expect(status.stdout.trim()).toBe(`IN_SYNC ${sidecarPath}`);

    await withCatalog((db) => db.updateTable('book_metadata').set({ title_locked: 1 }).where('book_id', '=', dune).execute());
    edit(sidecarPath, (m) => {
      m.title = 'Dune!';
      m.tags = ['spice'];
    });
    const imported = await bindery('metadata', 'sidecar', 'import', '--book', String(dune));
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout).toBe(`imported ${sidecarPath}: changed tags\n  kept (locked): title\n`);
    const again = await bindery('--json', 'metadata', 'sidecar', 'import', '--book', String(dune));
    expect(JSON.parse(again.stdout)).toEqual({ bookId: dune, sidecarPath, changed: [], locked: ['title'] });
    const shown = JSON.parse((await bindery('--json', 'books', 'show', String(dune))).stdout) as { metadata: { title: string; tags: string[] } };
    expect(shown.metadata).toMatchObject({ title: 'Dune', tags: ['spice'] });
  });

  it('exits 3 for what is not there and 1 for a malformed sidecar, with the reason', async () => {
    const unknown = await bindery('--json', 'metadata', 'sidecar', 'import', '--book', '98765');
    expect(unknown.code).toBe(3);
    expect(JSON.parse(unknown.stdout).error.code).toBe('BOOK_NOT_FOUND');
    const noFile = await bindery('--json', 'metadata', 'sidecar', 'import', '--book', String(dune));
    expect(noFile.code).toBe(3);
    expect(JSON.parse(noFile.stdout).error.code).toBe('SIDECAR_NOT_FOUND');

    writeFileSync(lib.path('Herbert', 'Dune.metadata.json'), '{"metadata": {"authors": "Frank Herbert"}');
    const bad = await bindery('metadata', 'sidecar', 'import', '--book', String(dune));
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^bindery: Dune\.metadata\.json is not a valid sidecar file: not JSON/);
    const status = await bindery('--json', 'metadata', 'sidecar', 'status', '--book', String(dune));
    expect(JSON.parse(status.stdout)).toEqual({ bookId: dune, status: 'CONFLICT', sidecarPath: lib.path('Herbert', 'Dune.metadata.json') });

    const both = await bindery('--json', 'metadata', 'sidecar', 'export', '--book', String(dune), '--library', 'Books');
    expect(both.code).toBe(2);
    expect(JSON.parse(both.stdout).error.code).toBe('INVALID_ARGUMENT');
    expect((await bindery('metadata', 'sidecar', 'export', '--library', 'Nope', '--force')).code).toBe(3);
  });
});

describe('a whole library', () => {
  it('summarises every book and exits 5 when one failed', async () => {
    // The settings turn sidecars and their covers on; no --force needed.
    await withCatalog((db) =>
      db
        .insertInto('app_settings')
        .values({ name: 'metadata_persistence_settings_v2', val: JSON.stringify({ sidecarSettings: { enabled: true, writeOnUpdate: false, writeOnScan: false, includeCoverFile: true } }) })
        .onConflict((oc) => oc.column('name').doUpdateSet({ val: (eb) => eb.ref('excluded.val') }))
        .execute(),
    );
    mkdirSync(lib.path('Austen', 'Emma.metadata.json', 'blocker'), { recursive: true });
    const exported = await bindery('--json', 'metadata', 'sidecar', 'export', '--library', 'Books');
    expect(exported.code).toBe(5);
    expect(JSON.parse(exported.stdout)).toEqual({
      libraryId: 1,
      libraryName: 'Books',
      books: 2,
      exported: 1,
      skipped: 0,
      failed: 1,
      failures: [{ bookId: emma, code: 'IO', message: expect.stringContaining('Emma.metadata.json') }],
    });
    expect(existsSync(lib.path('Herbert', 'Dune.cover.jpg'))).toBe(true);

    edit(lib.path('Herbert', 'Dune.metadata.json'), (m) => (m.publisher = 'Chilton'));
    const text = await bindery('metadata', 'sidecar', 'import');
    expect(text.code).toBe(5);
    expect(text.stdout).toBe(`Books: 1 imported (1 changed the catalog), 0 skipped, 1 failed\n  failed book ${emma}: [SIDECAR_INVALID] Emma.metadata.json is not a regular file\n`);

    const json = await bindery('--json', 'metadata', 'sidecar', 'import');
    expect(JSON.parse(json.stdout)).toEqual([{ libraryId: 1, libraryName: 'Books', books: 2, imported: 1, changed: 0, skipped: 0, failed: 1, failures: [expect.objectContaining({ bookId: emma })] }]);
    const shown = JSON.parse((await bindery('--json', 'books', 'show', String(dune))).stdout) as { metadata: { publisher: string } };
    expect(shown.metadata.publisher).toBe('Chilton');
  });
});
