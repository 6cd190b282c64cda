// The library watcher: books copied into a watched library reach the catalog without anyone asking, removed ones are
// marked missing as a scan marks them, a file still being written is left alone until it is complete, libraries
// with watch off are not watched, switching it on or off is followed live, running out of inotify watches falls back
// to polling, and `bindery serve` runs it (toggled through the API).
import { appendFileSync, mkdirSync, readFileSync, rmSync, statSync, watch as watchFolder, writeFileSync, type WatchListener } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DaemonProcess } from '../../bench/daemon-process.ts';
import { createLibrary, updateLibrary, type Library } from '../../src/core/libraries/libraries.ts';
import { LibraryScanJobs } from '../../src/core/libraries/library-scan-jobs.ts';
import { openStore, type Store } from '../../src/core/store/store.ts';
import { startLibraryWatcher, type LibraryWatcher, type LibraryWatcherOptions } from '../../src/daemon/library-watcher.ts';
import { makeTempLibrary, writeSimpleEpub, type TempLibrary } from '../helpers/library-fixtures.ts';
import { startAdminDaemon, until } from '../helpers/served-daemon.ts';

let lib: TempLibrary;
let store: Store;
let storeOpen = false;
let jobs: LibraryScanJobs;
let watcher: LibraryWatcher | undefined;
/** Every rescan of changed folders the watcher asked for. */
let rescans: { libraryId: number; folders: string[] }[];
/** Libraries the watcher rescanned as a whole (when it started watching them). */
let catchUps: number[];
let logged: { level: string; message: string }[];

async function fileRow(name: string) {
  return store.db.selectFrom('book_file').select(['id', 'book_id', 'missing_at', 'size_bytes']).where('file_name', '=', name).executeTakeFirst();
}

/** Starts the watcher and waits until it watches, and has caught up with, every library with watch on. */
async function watchLibraries(options: LibraryWatcherOptions = {}, onRescan?: (libraryId: number, folders: string[]) => void): Promise<LibraryWatcher> {
  watcher = await startLibraryWatcher(
    {
      store,
      log: (level, message) => logged.push({ level, message }),
      rescan: (libraryId, folders) => {
        if (folders) {
          onRescan?.(libraryId, folders);
          rescans.push({ libraryId, folders });
        } else catchUps.push(libraryId);
        jobs.request(libraryId, folders);
      },
    },
    { delayMs: 150, stabilityMs: 150, pollIntervalMs: 100, followMs: 100, ...options },
  );
  await watcher.ready;
  await jobs.idle();
  return watcher;
}

function watchedLibrary(name: string, watch = true, paths = [lib.root]): Promise<Library> {
  return createLibrary(store.db, { name, paths, watch });
}

beforeEach(async () => {
  lib = makeTempLibrary();
  store = await openStore(join(lib.dataDir, 'bindery.sqlite'));
  storeOpen = true;
  jobs = new LibraryScanJobs(store, { coversRoot: join(lib.dataDir, 'covers'), workers: 0 });
  rescans = [];
  catchUps = [];
  logged = [];
});

afterEach(async () => {
  await watcher?.close();
  watcher = undefined;
  await jobs.idle();
  if (storeOpen) await store.close();
  lib.cleanup();
});

describe.each([
  ['native events', false],
  ['polling', true],
])('the library watcher with %s', (_name, polling) => {
  it('catalogues a book copied into a watched library, and marks it missing when removed', async () => {
    const library = await watchedLibrary('Watched');
    // There before the watch started: found by the rescan that catches up when a library starts being watched.
    await writeSimpleEpub(lib.path('Herbert', 'Dune.epub'), { title: 'Dune', authors: ['Frank Herbert'] });
    await watchLibraries({ polling });
    expect(watcher!.watched()).toEqual([{ libraryId: library.id, paths: [lib.root], polling }]);
    expect(catchUps).toEqual([library.id]);
    expect(await fileRow('Dune.epub')).toBeDefined();

    await writeSimpleEpub(lib.path('Herbert', 'Children of Dune.epub'), { title: 'Children of Dune', authors: ['Frank Herbert'] });
    const added = await until('the copied book in the catalog', async () => fileRow('Children of Dune.epub'));
    expect(added.missing_at).toBeNull();
    const title = await store.db.selectFrom('book_metadata').select('title').where('book_id', '=', added.book_id).executeTakeFirstOrThrow();
    expect(title.title).toBe('Children of Dune');
    // Only the folder that changed was rescanned.
    expect(rescans.every((r) => r.libraryId === library.id && r.folders.every((f) => f === lib.path('Herbert')))).toBe(true);

    rmSync(lib.path('Herbert', 'Dune.epub'));
    const gone = await until('the removed book marked missing', async () => {
      const row = await fileRow('Dune.epub');
      return row?.missing_at ? row : undefined;
    });
    // The book and its reading data stay, as after a scan: only its file is missing.
    expect(await store.db.selectFrom('book').select('id').where('id', '=', gone.book_id).executeTakeFirst()).toBeDefined();
  });

  it('waits until a file being written has stopped growing before it is read', async () => {
    const library = await watchedLibrary('Slow');
    const whole = readFileSync(await writeSimpleEpub(join(lib.dataDir, 'slow.epub'), { title: 'Slow Copy', cover: '#456', body: 'x'.repeat(20_000) }));
    const target = lib.path('Slow Copy.epub');
    const sizesWhenAsked: number[] = [];
    // Pieces come slower than the quiet time, so the watcher looks mid-copy; the stability wait must hold it back.
    await watchLibraries({ polling, delayMs: 100, stabilityMs: 2000 }, () => sizesWhenAsked.push(statSync(target, { throwIfNoEntry: false })?.size ?? -1));
    writeFileSync(target, whole.subarray(0, 512));
    for (let at = 512; at < whole.length; at += 512) {
      await new Promise((r) => setTimeout(r, 250));
      appendFileSync(target, whole.subarray(at, Math.min(whole.length, at + 512)));
    }
    const row = await until('the finished copy in the catalog', async () => fileRow('Slow Copy.epub'));
    expect(row.size_bytes).toBe(whole.length);
    expect(sizesWhenAsked.length).toBeGreaterThan(0);
    expect(sizesWhenAsked.every((size) => size === whole.length)).toBe(true);
    expect(await store.db.selectFrom('scan_failure').selectAll().execute()).toEqual([]);
    expect(library.watch).toBe(true);
  });
});

describe('the library watcher', () => {
  it('leaves libraries with watch off alone and follows the setting when it changes', async () => {
    const other = makeTempLibrary();
    try {
      const off = await watchedLibrary('Not watched', false);
      const on = await watchedLibrary('Watched', true, [other.root]);
      await watchLibraries();
      expect(watcher!.watched().map((w) => w.libraryId)).toEqual([on.id]);
      await writeSimpleEpub(lib.path('unwatched.epub'), { title: 'Unwatched' });
      await writeSimpleEpub(other.path('watched.epub'), { title: 'Watched' });
      await until('the book of the watched library', async () => fileRow('watched.epub'));
      await jobs.idle();
      expect(rescans.every((r) => r.libraryId === on.id)).toBe(true);
      expect(await fileRow('unwatched.epub')).toBeUndefined();

      const change = { name: off.name, paths: [lib.root], icon: null, iconType: null, formatPriority: null, allowedFormats: null };
      await updateLibrary(store.db, off.id, { ...change, watch: true }, join(lib.dataDir, 'covers'));
      await until('the library switched on to be watched', () => watcher!.watched().some((w) => w.libraryId === off.id));
      await watcher!.refresh();
      await until('the catch-up rescan', () => catchUps.includes(off.id));
      await jobs.idle();
      expect(await fileRow('unwatched.epub')).toBeDefined();
      await writeSimpleEpub(lib.path('later.epub'), { title: 'Later' });
      await until('the book copied after the switch', async () => fileRow('later.epub'));
      expect(rescans.some((r) => r.libraryId === off.id)).toBe(true);

      await updateLibrary(store.db, off.id, { ...change, watch: false }, join(lib.dataDir, 'covers'));
      await until('the library switched off to be let go', () => !watcher!.watched().some((w) => w.libraryId === off.id));
      expect(watcher!.watched().map((w) => w.libraryId)).toEqual([on.id]);
    } finally {
      other.cleanup();
    }
  });

  it('watches a library folder that was missing at the start (a share mounted late) once it is there', async () => {
    const library = await watchedLibrary('Late share');
    rmSync(lib.root, { recursive: true });
    await watchLibraries();
    expect(watcher!.watched().map((w) => w.libraryId)).toEqual([library.id]);
    await writeSimpleEpub(lib.path('Mounted', 'late.epub'), { title: 'Late' });
    await until('the book on the late folder', async () => fileRow('late.epub'));
  });

  it('falls back to polling, saying once how to raise the limit, when the system runs out of inotify watches', async () => {
    const first = await watchedLibrary('First');
    mkdirSync(lib.path('Sub', 'Deeper'), { recursive: true });
    // The system's limit: the library's root gets a watch, its second folder does not (as fs.watch fails there).
    let watches = 0;
    const limited = (folder: string, listener: WatchListener<string>) => {
      if (++watches > 1) throw Object.assign(new Error(`ENOSPC: System limit for number of file watchers reached, watch '${folder}'`), { code: 'ENOSPC' });
      return watchFolder(folder, { persistent: false }, listener);
    };
    await watchLibraries({ polling: 'auto', watchFolder: limited });
    await until('polling instead', () => watcher!.watched().find((w) => w.libraryId === first.id)?.polling);
    await until('the polling watch to catch up', () => catchUps.includes(first.id));
    await jobs.idle();
    await writeSimpleEpub(lib.path('polled.epub'), { title: 'Polled' });
    await until('the book found by polling', async () => fileRow('polled.epub'));
    expect(rescans.some((r) => r.libraryId === first.id)).toBe(true);

    const other = makeTempLibrary();
    try {
      const second = await watchedLibrary('Second', true, [other.root]);
      await until('the new library polled from the start', () => watcher!.watched().find((w) => w.libraryId === second.id));
      expect(watcher!.watched().find((w) => w.libraryId === second.id)?.polling).toBe(true);
    } finally {
      other.cleanup();
    }
    const warnings = logged.filter((l) => l.level === 'warn');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.message).toContain('fs.inotify.max_user_watches');
  });
});

describe('bindery serve', () => {
  let daemon: DaemonProcess | undefined;
  afterEach(async () => {
    await daemon?.stop('SIGKILL');
    daemon = undefined;
  });

  it('watches a library once watch is switched on through the API', async () => {
    await store.close();
    storeOpen = false;
    const served = await startAdminDaemon(lib.dataDir, { BINDERY_LIBRARY_WATCH_DELAY_MS: '200' });
    daemon = served.daemon;
    const { api } = served;
    const settings = { name: 'Shelf', paths: [{ path: lib.root }], organizationMode: 'BOOK_PER_FILE', watch: false };
    const created = await api('POST', '/api/v1/libraries', settings);
    expect(created.status).toBe(200);
    const { id } = (await created.json()) as { id: number };
    const titles = async (): Promise<string[]> => {
      const res = await api('GET', `/api/v1/libraries/${id}/book`);
      return ((await res.json()) as { metadata: { title: string } }[]).map((b) => b.metadata.title);
    };
    await until('the first scan', async () => daemon!.stdout().includes('library scan finished'));
    expect(daemon.stdout()).not.toContain('watching library folders');

    expect((await api('PUT', `/api/v1/libraries/${id}`, { ...settings, watch: true })).status).toBe(200);
    await until('the daemon to watch the library', () => daemon!.stdout().includes('watching library folders'));
    await until('the catch-up rescan', () => daemon!.stdout().split('library scan finished').length === 3);
    await writeSimpleEpub(lib.path('Le Guin', 'The Dispossessed.epub'), { title: 'The Dispossessed', authors: ['Ursula K. Le Guin'] });
    expect(await until('the copied book through the API', async () => (await titles()).includes('The Dispossessed') && titles())).toEqual(['The Dispossessed']);
    // The scan that found it was the watcher's, limited to the folders that changed (logged once it has finished).
    await until('the log line of the scan of the watcher', () => /"folders":\d+.*"msg":"library scan finished"/.test(daemon!.stdout()));
    const exit = await daemon.stop('SIGTERM');
    expect(exit.code).toBe(0);
  }, 90_000);
});
