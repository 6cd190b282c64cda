// The daemon's move-recovery job while it runs: a move whose process is killed after the daemon started (another
// replica, or `bindery move`, on this machine or, with PostgreSQL, on another) is put right without any request or
// restart; while that process runs, its move is left alone.
import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DaemonProcess } from '../../bench/daemon-process.ts';
import { openRows } from '../../src/core/moves/journal.ts';
import type { Owner } from '../../src/core/process-owner.ts';
import { openStore, type Store } from '../../src/core/store/store.ts';
import { cliFor } from '../helpers/cli.ts';
import { onPostgres } from '../helpers/engine.ts';
import { makeTempLibrary, writeSimpleEpub, type TempLibrary } from '../helpers/library-fixtures.ts';
import { healthUntil, startReplica } from '../helpers/replicas.ts';

const PAUSE_DURING_MOVE = join(import.meta.dirname, '..', 'helpers', 'kill-during-move.ts');

let lib: TempLibrary;
let daemon: DaemonProcess;
let store: Store;
const bindery = cliFor(() => lib.dataDir);

beforeAll(async () => {
  lib = makeTempLibrary();
  await writeSimpleEpub(lib.path('in', 'dune.epub'), { title: 'Dune', authors: ['Frank Herbert'] });
  writeFileSync(lib.path('in', 'dune.opf'), '<package/>');
  expect((await bindery('library', 'add', 'Books', lib.root)).code).toBe(0);
  expect((await bindery('scan')).code).toBe(0);
  daemon = await startReplica(lib.dataDir, 'replica-a');
  await healthUntil(daemon.url, (h) => h.singletons.includes('move-recovery'));
  store = await openStore(join(lib.dataDir, 'bindery.sqlite'));
}, 120_000);

afterAll(async () => {
  await store?.close();
  await daemon?.stop('SIGKILL');
  lib?.cleanup();
});

describe('move recovery in a running daemon', () => {
  it('leaves a running mover alone and recovers its move soon after it is killed', async () => {
    // Killed half-way: the book file is at its new place, its sidecar not yet.
    const mover = spawn(process.execPath, [PAUSE_DURING_MOVE, lib.dataDir, '{authors}/{title}', 'link', 'Dune.opf', 'pause'], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      expect(await new Promise<string>((resolve) => mover.stdout?.once('data', (d: Buffer) => resolve(d.toString().trim())))).toBe('paused');
      const open = await openRows(store.db);
      expect(open.length).toBe(2);
      if (onPostgres) {
        // As a replica or `bindery move` on another machine would have recorded it (a SQLite catalog never spans machines).
        const owner = JSON.parse(open[0]!.owner) as Owner;
        await store.db.updateTable('move_journal').set({ owner: JSON.stringify({ ...owner, host: 'replica-b.example', boot: 'boot-of-replica-b', pid: 4_000_000 }) }).execute();
      }
      const before = (await openRows(store.db)).map((r) => [r.id, r.state, r.owner]);
      // Many looks of the daemon's job (one every 200 ms here).
      await new Promise((r) => setTimeout(r, 1500));
      expect((await openRows(store.db)).map((r) => [r.id, r.state, r.owner])).toEqual(before);
      expect(existsSync(lib.path('Frank Herbert', 'Dune.epub'))).toBe(true);
      expect(existsSync(lib.path('in', 'dune.opf'))).toBe(true);
    } finally {
      const exited = new Promise((resolve) => mover.once('exit', resolve));
      mover.kill('SIGKILL');
      await exited;
    }
    const until = Date.now() + 20_000;
    while ((await openRows(store.db)).length > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
    expect(await openRows(store.db)).toEqual([]);
    // Rolled back: the sidecar never reached the new place.
    expect(existsSync(lib.path('in', 'dune.epub'))).toBe(true);
    expect(existsSync(lib.path('in', 'dune.opf'))).toBe(true);
    expect(existsSync(lib.path('Frank Herbert', 'Dune.epub'))).toBe(false);
  });
});
