// The bookdrop watcher: files there at start and files dropped later are taken in once their size has settled (a
// file still being written is never read half-way), removed files leave the queue, polling works like native
// events, and `bindery serve` runs the watcher and stops it cleanly.
import { appendFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DaemonProcess } from '../../bench/daemon-process.ts';
import type { BookdropEnv } from '../../src/core/bookdrop/intake.ts';
import { openStore, type Store } from '../../src/core/store/store.ts';
import { remoteFilesystem, startBookdropWatcher, type BookdropWatcher } from '../../src/daemon/bookdrop-watcher.ts';
import { makeTempLibrary, writeSimpleEpub, type TempLibrary } from '../helpers/library-fixtures.ts';
import { startAdminDaemon, until } from '../helpers/served-daemon.ts';

let lib: TempLibrary;
let store: Store;
let env: BookdropEnv;
let watcher: BookdropWatcher | undefined;
let storeOpen = false;
const bookdrop = (...parts: string[]): string => join(lib.dataDir, 'bookdrop', ...parts);

async function rows() {
  return store.db.selectFrom('bookdrop_file').selectAll().orderBy('id').execute();
}

beforeEach(async () => {
  lib = makeTempLibrary();
  store = await openStore(join(lib.dataDir, 'bindery.sqlite'));
  storeOpen = true;
  env = { store, bookdropDir: bookdrop(), dataDir: lib.dataDir };
});

afterEach(async () => {
  await watcher?.close();
  watcher = undefined;
  if (storeOpen) await store.close();
  lib.cleanup();
});

describe.each([
  ['native events', false],
  ['polling', true],
])('the bookdrop watcher with %s', (_name, polling) => {
  it('takes in files present at start and dropped later, and forgets removed ones', async () => {
    await writeSimpleEpub(bookdrop('early.epub'), { title: 'Early' });
    watcher = await startBookdropWatcher(env, { polling, stabilityMs: 300, pollIntervalMs: 100 });
    expect(watcher.polling).toBe(polling);
    await watcher.ready;
    await until('early.epub', async () => (await rows()).some((r) => r.file_name === 'early.epub'));

    await writeSimpleEpub(bookdrop('nested', 'late.epub'), { title: 'Late', authors: ['L. Ate'] });
    const late = await until('late.epub', async () => (await rows()).find((r) => r.file_name === 'late.epub'));
    expect(JSON.parse(late.original_metadata!)).toMatchObject({ title: 'Late', authors: ['L. Ate'] });

    rmSync(bookdrop('early.epub'));
    await until('early.epub forgotten', async () => !(await rows()).some((r) => r.file_name === 'early.epub'));
    rmSync(bookdrop('nested'), { recursive: true });
    await until('nested forgotten', async () => (await rows()).length === 0);
  });
});

describe('the bookdrop watcher', () => {
  it('waits until a file has stopped growing before reading it', async () => {
    watcher = await startBookdropWatcher(env, { polling: false, stabilityMs: 600 });
    await watcher.ready;
    const whole = readFileSync(await writeSimpleEpub(lib.path('..', 'slow.epub'), { title: 'Slow Copy', authors: ['Patient Writer'], cover: '#345' }));
    // Written in pieces, well within the settle time of each other: a reader that did not wait would find a
    // truncated zip and file it under its name.
    const path = bookdrop('slow.epub');
    writeFileSync(path, whole.subarray(0, 200));
    for (let at = 200; at < whole.length; at += 200) {
      await new Promise((r) => setTimeout(r, 100));
      appendFileSync(path, whole.subarray(at, Math.min(whole.length, at + 200)));
    }
    const row = await until('slow.epub', async () => (await rows()).find((r) => r.file_name === 'slow.epub'));
    expect(row.file_size).toBe(whole.length);
    expect(JSON.parse(row.original_metadata!)).toMatchObject({ title: 'Slow Copy', authors: ['Patient Writer'] });
    await watcher.idle();
    expect(await rows()).toHaveLength(1);
  });

  it('ignores hidden and partial files, and takes nothing in once closed', async () => {
    watcher = await startBookdropWatcher(env, { polling: false, stabilityMs: 200 });
    await watcher.ready;
    writeFileSync(bookdrop('.bindery-upload-1.part'), 'partial');
    await writeSimpleEpub(bookdrop('.hidden.epub'), { title: 'Hidden' });
    await writeSimpleEpub(bookdrop('seen.epub'), { title: 'Seen' });
    await until('seen.epub', async () => (await rows()).some((r) => r.file_name === 'seen.epub'));
    expect((await rows()).map((r) => r.file_name)).toEqual(['seen.epub']);
    await watcher.close();
    watcher = undefined;
    await writeSimpleEpub(bookdrop('after.epub'), { title: 'After' });
    await new Promise((r) => setTimeout(r, 800));
    expect((await rows()).map((r) => r.file_name)).toEqual(['seen.epub']);
  });

  it('tells a local folder from a network mount', async () => {
    expect(await remoteFilesystem(lib.dataDir)).toBeUndefined();
  });
});

describe('bindery serve', () => {
  let daemon: DaemonProcess | undefined;
  afterEach(async () => {
    await daemon?.stop('SIGKILL');
    daemon = undefined;
  });

  it('watches the bookdrop folder while it runs and stops cleanly on SIGTERM', async () => {
    await store.close();
    storeOpen = false;
    const served = await startAdminDaemon(lib.dataDir);
    daemon = served.daemon;
    await writeSimpleEpub(bookdrop('served.epub'), { title: 'Served' });
    const file = await until('the daemon to take served.epub in', async () => {
      const res = await served.api('GET', '/api/v1/bookdrop/files?status=pending');
      const page = (await res.json()) as { content: { fileName: string; originalMetadata: { title: string } }[] };
      return page.content.find((f) => f.fileName === 'served.epub');
    }, 30_000);
    expect(file.originalMetadata.title).toBe('Served');
    expect(daemon.stdout()).toContain('watching the bookdrop folder');
    const exit = await daemon.stop('SIGTERM');
    expect(exit.code).toBe(0);
  }, 90_000);
});
