import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cliFor, runCli, type CliResult } from '../helpers/cli.ts';
import { emptyTestDatabase, onPostgres } from '../helpers/engine.ts';
import { makeTempLibrary, writeSimpleEpub, type TempLibrary } from '../helpers/library-fixtures.ts';

let lib: TempLibrary;
const bindery = cliFor(() => lib.dataDir);
const runBin = (args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> => runCli(args, { env });

beforeEach(() => {
  lib = makeTempLibrary();
});
afterEach(() => lib.cleanup());

describe('bindery CLI', () => {
  it('adds a library, scans it and lists and shows its books, as JSON', async () => {
    await writeSimpleEpub(lib.path('Dune.epub'), { title: 'Dune', authors: ['Frank Herbert'], series: 'Dune', seriesIndex: 1 });
    await writeSimpleEpub(lib.path('Emma.epub'), { title: 'Emma', authors: ['Jane Austen'] });

    const added = await bindery('--json', 'library', 'add', 'Fiction', lib.root);
    expect(added.code).toBe(0);
    expect(JSON.parse(added.stdout)).toMatchObject({ id: 1, name: 'Fiction', organizationMode: 'AUTO_DETECT', paths: [{ path: lib.root }] });

    const scan = await bindery('--json', 'scan', 'Fiction');
    expect(scan.code).toBe(0);
    expect(JSON.parse(scan.stdout)).toMatchObject({ libraryName: 'Fiction', added: 2, updated: 0, moved: 0, missing: 0, failed: [], skippedRoots: [] });

    const list = JSON.parse((await bindery('--json', 'books', 'list')).stdout) as { id: number; title: string; authors: string[]; formats: string[] }[];
    expect(list.map((b) => b.title).sort()).toEqual(['Dune', 'Emma']);
    const dune = list.find((b) => b.title === 'Dune')!;
    expect(dune).toMatchObject({ authors: ['Frank Herbert'], formats: ['EPUB'], seriesName: 'Dune', seriesNumber: 1, missing: false });

    const shown = JSON.parse((await bindery('--json', 'books', 'show', String(dune.id))).stdout);
    expect(shown).toMatchObject({ id: dune.id, libraryName: 'Fiction', metadata: { title: 'Dune', authors: ['Frank Herbert'] }, primaryFile: { fileName: 'Dune.epub', bookType: 'EPUB' } });

    const text = await bindery('books', 'show', String(dune.id));
    expect(text.stdout).toMatch(/title\s+Dune/);
    expect(text.stdout).toMatch(/authors\s+Frank Herbert/);
  });

  it('prints plain progress lines and a summary when not on a terminal, and exits 5 when files failed', async () => {
    await writeSimpleEpub(lib.path('ok.epub'), { title: 'Fine' });
    writeFileSync(lib.path('bad.epub'), 'garbage');
    await bindery('library', 'add', 'L', lib.root);
    const scan = await bindery('scan');
    expect(scan.code).toBe(5);
    expect(scan.stderr).toMatch(/L: scanning/);
    expect(scan.stdout).toMatch(/L: 1 added, 0 updated, 0 moved, 0 missing, 0 back, 0 unchanged, 1 failed/);
    expect(scan.stdout).toMatch(/failed .*bad\.epub: \[CORRUPT\]/);
  });

  it('reports errors as one line, or as a JSON error object, with documented exit codes', async () => {
    const missing = await bindery('scan', 'Nope');
    expect(missing.code).toBe(3);
    expect(missing.stderr.trim()).toBe('bindery: no library "Nope"');

    const json = await bindery('--json', 'books', 'show', '999');
    expect(json.code).toBe(3);
    expect(JSON.parse(json.stdout)).toEqual({ error: { code: 'BOOK_NOT_FOUND', message: 'no book with id 999' } });

    const badId = await bindery('--json', 'books', 'show', 'abc');
    expect(badId.code).toBe(2);
    expect(JSON.parse(badId.stdout).error.code).toBe('INVALID_ARGUMENT');

    await bindery('library', 'add', 'Twice', lib.root);
    const dup = await bindery('--json', 'library', 'add', 'Twice', lib.root);
    expect(dup.code).toBe(4);
    expect(JSON.parse(dup.stdout).error.code).toBe('LIBRARY_CONFLICT');

    const notFolder = await bindery('library', 'add', 'X', join(lib.root, 'does-not-exist'));
    expect(notFolder.code).toBe(2);
    expect(notFolder.stderr).toMatch(/not a folder/);

    expect((await bindery('frobnicate')).code).toBe(2);

    const remove = await bindery('library', 'remove', 'Twice');
    expect(remove.code).toBe(2);
    expect(remove.stderr).toMatch(/--yes/);
    expect((await bindery('library', 'remove', 'Twice', '--yes')).code).toBe(0);
  });

  it('rejects bad settings with a clear message', async () => {
    const result = await runBin(['library', 'list'], { BINDERY_DATA_DIR: lib.dataDir, BINDERY_SCAN_WORKERS: 'many' });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/scanWorkers must be a whole number \(got "many" from BINDERY_SCAN_WORKERS\)/);
  });

  it('reads settings from a config file, with the environment winning over it', async () => {
    const file = join(lib.dataDir, '..', 'config.json');
    writeFileSync(file, JSON.stringify({ dataDir: lib.dataDir, scanWorkers: 1 }));
    const fromFile = await runBin(['--json', 'library', 'list'], { BINDERY_CONFIG: file });
    expect(fromFile.code).toBe(0);
    writeFileSync(file, JSON.stringify({ dataDir: lib.dataDir, scanWorker: 1 }));
    const typo = await runBin(['library', 'list'], { BINDERY_CONFIG: file });
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/unknown setting "scanWorker"/);
  });

  it('takes the catalog database from --database-url before BINDERY_DATABASE_URL, and names one it cannot reach without its password', async () => {
    const result = await runBin(['--data-dir', lib.dataDir, '--database-url', 'postgres://reader:flag-secret@127.0.0.1:1/books', 'library', 'list'], {
      BINDERY_DATABASE_URL: 'postgres://reader:env-secret@127.0.0.1:2/other',
    });
    expect(result.code).toBe(6);
    expect(result.stderr).toMatch(/^bindery: cannot reach the catalog database at postgres:\/\/reader:\*\*\*@127\.0\.0\.1:1\/books: .*ECONNREFUSED/);
    expect(result.stderr).not.toMatch(/secret/);
    const fromEnv = await runBin(['--json', 'library', 'list'], { BINDERY_DATA_DIR: lib.dataDir, BINDERY_DATABASE_URL: 'postgres://reader:env-secret@127.0.0.1:2/other' });
    expect(fromEnv.code).toBe(6);
    expect(JSON.parse(fromEnv.stdout)).toEqual({ error: { code: 'STORE_ERROR', message: expect.stringContaining('postgres://reader:***@127.0.0.1:2/other') } });
    const wrong = await runBin(['--data-dir', lib.dataDir, '--database-url', 'mysql://reader@host/books', 'library', 'list'], {});
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/databaseUrl/);
  });

  it.runIf(onPostgres)('keeps the catalog on PostgreSQL with --database-url: no SQLite file in the data directory', async () => {
    const database = await emptyTestDatabase();
    try {
      expect((await bindery('--database-url', database.url, 'library', 'add', 'Fiction', lib.root)).code).toBe(0);
      const listed = await runBin(['--json', 'library', 'list'], { BINDERY_DATA_DIR: lib.dataDir, BINDERY_DATABASE_URL: database.url });
      expect(listed.code, listed.stderr).toBe(0);
      expect(JSON.parse(listed.stdout)).toEqual([expect.objectContaining({ name: 'Fiction' })]);
      expect(existsSync(join(lib.dataDir, 'bindery.sqlite'))).toBe(false);
    } finally {
      await database.drop();
    }
  });
});
