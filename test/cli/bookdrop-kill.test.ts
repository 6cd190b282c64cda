// A bookdrop import killed with SIGKILL at the worst moments, in a real child process, then the real CLI: the next
// bookdrop command recognises the half-finished import (no "(2)" copy, no duplicate book) and removes the partial
// files a kill left, in the library and in the bookdrop folder.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { recoverInterruptedImports } from '../../src/core/bookdrop/bookdrop-cleanup.ts';
import { finalizeImport } from '../../src/core/bookdrop/finalize.ts';
import { listLibraries } from '../../src/core/libraries/libraries.ts';
import { openStore } from '../../src/core/store/store.ts';
import { WORK_MARK } from '../../src/core/work-files.ts';
import { cliFor } from '../helpers/cli.ts';
import { onPostgres } from '../helpers/engine.ts';
import { startAdminDaemon, until } from '../helpers/served-daemon.ts';
import { makeTempLibrary, writeSimpleEpub, type TempLibrary } from '../helpers/library-fixtures.ts';

const KILL_DURING_IMPORT = join(import.meta.dirname, '..', 'helpers', 'kill-during-import.ts');
const RECEIVE_UPLOAD = join(import.meta.dirname, '..', 'helpers', 'endless-upload.ts');

let lib: TempLibrary;
const bindery = cliFor(() => lib.dataDir);
const bookdrop = (...parts: string[]): string => join(lib.dataDir, 'bookdrop', ...parts);
const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 2_100));

/** Every file under a folder, relative to it. */
function filesUnder(root: string): string[] {
  const out: string[] = [];
  const visit = (dir: string, rel: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) visit(join(dir, entry.name), join(rel, entry.name));
      else out.push(join(rel, entry.name));
    }
  };
  visit(root, '');
  return out.sort();
}

function killedImport(point: 'before-commit' | 'after-copy'): void {
  const child = spawnSync(process.execPath, [KILL_DURING_IMPORT, lib.dataDir, bookdrop(), point], { encoding: 'utf8' });
  expect(child.signal, child.stderr || child.stdout).toBe('SIGKILL');
}

async function bookTitles(): Promise<string[]> {
  const res = await bindery('--json', 'books', 'list');
  return (JSON.stringify(JSON.parse(res.stdout)).match(/"title":"[^"]*"/g) ?? []).sort();
}

beforeEach(async () => {
  lib = makeTempLibrary();
  await writeSimpleEpub(bookdrop('dune.epub'), { title: 'Dune', authors: ['Frank Herbert'] });
  expect((await bindery('library', 'add', 'Books', lib.root)).code).toBe(0);
  await settle();
  expect((await bindery('bookdrop', 'list')).code).toBe(0);
});
afterEach(() => lib.cleanup());

const FINAL = join('Frank Herbert', 'Dune', 'Dune - Frank Herbert.epub');

describe('a bookdrop import killed with SIGKILL', () => {
  it('after the copy got its final name but before the catalog row: recovery undoes it, the next import gets the same name', async () => {
    killedImport('before-commit');
    expect(filesUnder(lib.root)).toEqual([FINAL]);
    expect(existsSync(bookdrop('dune.epub'))).toBe(true);

    // The next bookdrop command recovers: the uncatalogued copy goes, the file is back in the queue.
    const listed = JSON.parse((await bindery('--json', 'bookdrop', 'list')).stdout) as { files: { fileName: string; status?: string }[] };
    expect(listed.files.map((f) => f.fileName)).toEqual(['dune.epub']);
    expect(filesUnder(lib.root)).toEqual([]);

    const imported = await bindery('bookdrop', 'import', '--yes');
    expect(imported.code, imported.stderr).toBe(0);
    expect(filesUnder(lib.root)).toEqual([FINAL]);
    expect((await bindery('scan')).code).toBe(0);
    expect(await bookTitles()).toEqual(['"title":"Dune"']);
  });

  it('while copying: the partial copy in the library is removed and the file imports normally', async () => {
    killedImport('after-copy');
    const leftovers = filesUnder(lib.root);
    expect(leftovers).toHaveLength(1);
    // Named with the importer's mark: its pid on SQLite, its liveness token on PostgreSQL.
    expect(leftovers[0]).toMatch(new RegExp(`\\.bindery-${WORK_MARK}-[0-9a-f-]{36}\\.part$`));

    expect((await bindery('bookdrop', 'list')).code).toBe(0);
    expect(filesUnder(lib.root)).toEqual([]);
    expect((await bindery('bookdrop', 'import', '--yes')).code).toBe(0);
    expect(filesUnder(lib.root)).toEqual([FINAL]);
  });

  it('while an upload streams into the bookdrop: the partial upload is removed by the next bookdrop command', async () => {
    const child = spawn(process.execPath, [RECEIVE_UPLOAD, bookdrop(), join(lib.dataDir, 'bindery.sqlite')], { stdio: ['ignore', 'pipe', 'pipe'] });
    // Killed once the partial file is there and growing.
    const partial = await new Promise<string>((resolve, reject) => {
      const timer = setInterval(() => {
        const name = readdirSync(bookdrop()).find((n) => n.startsWith('.bindery-upload-'));
        if (name && statSync(bookdrop(name)).size > 0) {
          clearInterval(timer);
          resolve(bookdrop(name));
        }
      }, 20);
      child.on('exit', () => {
        clearInterval(timer);
        reject(new Error('the upload ended by itself'));
      });
    });
    const exited = new Promise((r) => child.on('exit', r));
    child.kill('SIGKILL');
    await exited;
    expect(existsSync(partial)).toBe(true);

    expect((await bindery('bookdrop', 'list')).code).toBe(0);
    expect(existsSync(partial)).toBe(false);
    expect(existsSync(bookdrop('dune.epub'))).toBe(true);
  });

  it('recovered by two processes at once: exactly one takes the claim over and puts it right', async () => {
    killedImport('before-commit');
    expect(filesUnder(lib.root)).toEqual([FINAL]);
    // Two recoveries looking at the same abandoned claim at the same moment (two replicas, or a replica and the CLI):
    // each on a store of its own, as separate processes would be.
    const stores = await Promise.all([openStore(join(lib.dataDir, 'bindery.sqlite')), openStore(join(lib.dataDir, 'bindery.sqlite'))]);
    try {
      const env = (store: (typeof stores)[number]) => ({ store, bookdropDir: bookdrop(), dataDir: lib.dataDir });
      const reports = await Promise.all(stores.map((store) => recoverInterruptedImports(env(store))));
      expect(reports.map((r) => r.released + r.completed).sort()).toEqual([0, 1]);
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
    expect(filesUnder(lib.root)).toEqual([]);
    const imported = await bindery('bookdrop', 'import', '--yes');
    expect(imported.code, imported.stderr).toBe(0);
    expect(filesUnder(lib.root)).toEqual([FINAL]);
  });

  it('by a process on another machine, while a bindery serve runs: the daemon recovers it within moments, without a rescan', async () => {
    const { daemon } = await startAdminDaemon(lib.dataDir, { BINDERY_LEASE_CHECK_MS: '200' });
    try {
      killedImport('before-commit');
      // Only recovery removes the uncatalogued copy and puts the file back for review.
      await until('the daemon to recover the import', () => filesUnder(lib.root).length === 0, 15_000);
      const store = await openStore(join(lib.dataDir, 'bindery.sqlite'));
      try {
        expect(await store.db.selectFrom('bookdrop_file').select(['file_name', 'status', 'import_owner']).execute()).toEqual([{ file_name: 'dune.epub', status: 'PENDING_REVIEW', import_owner: null }]);
      } finally {
        await store.close();
      }
      expect(existsSync(bookdrop('dune.epub'))).toBe(true);
    } finally {
      await daemon.stop();
    }
  });

  // Only a database server's connection can be lost under a running import; SQLite has nothing to lose.
  it.runIf(onPostgres)('an import that loses its registration while another process recovers it: it records and removes nothing', async () => {
    const store = await openStore(join(lib.dataDir, 'bindery.sqlite'));
    try {
      const [library] = await listLibraries(store.db);
      const outcome = await finalizeImport(
        { store, dataDir: lib.dataDir, bookdropDir: bookdrop() },
        { selectAll: true, defaultLibraryId: library!.id, defaultPathId: library!.paths[0]!.id },
        {
          concurrency: 1,
          beforeCommit: async () => {
            // What a restart of the database server, or a network cut, does to the connection holding the lock.
            await store.exec.run("select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and application_name like 'bindery-session %'");
            await new Promise((r) => setTimeout(r, 300));
            // Another process now takes the import for dead and recovers it, while this one is about to commit.
            const recovered = await bindery('bookdrop', 'list');
            expect(recovered.code, recovered.stderr).toBe(0);
          },
        },
      );
      expect(outcome).toMatchObject({ successfullyImported: 0, failed: 1 });
      expect(outcome.results[0]?.message).toMatch(/interrupted.*lost its registration/);
    } finally {
      await store.close();
    }
    // Put back by the recovering process, and not undone by the importer: the original waits for review, no book.
    expect(existsSync(bookdrop('dune.epub'))).toBe(true);
    expect(filesUnder(lib.root)).toEqual([]);
    expect(await bookTitles()).toEqual([]);
    expect((await bindery('bookdrop', 'import', '--yes')).code).toBe(0);
    expect(filesUnder(lib.root)).toEqual([FINAL]);
    expect(await bookTitles()).toEqual(['"title":"Dune"']);
  });
});
