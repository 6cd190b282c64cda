import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { applyMoves } from '../../src/core/moves/apply.ts';
import { MoveInterrupted } from '../../src/core/moves/engine.ts';
import { currentOwner } from '../../src/core/moves/journal.ts';
import { inPlaceRequests, planMoves } from '../../src/core/moves/plan.ts';
import { openStore } from '../../src/core/store/store.ts';
import { cliFor } from '../helpers/cli.ts';
import { makeTempLibrary, writeSimpleEpub, type TempLibrary } from '../helpers/library-fixtures.ts';


const KILL_DURING_MOVE = join(import.meta.dirname, '..', 'helpers', 'kill-during-move.ts');

let lib: TempLibrary;

const bindery = cliFor(() => lib.dataDir);

async function setUp(): Promise<void> {
  await writeSimpleEpub(lib.path('in', 'dune.epub'), { title: 'Dune', authors: ['Frank Herbert'] });
  writeFileSync(lib.path('in', 'dune.opf'), '<package/>');
  await writeSimpleEpub(lib.path('Jane Austen', 'Emma.epub'), { title: 'Emma', authors: ['Jane Austen'] });
  expect((await bindery('library', 'add', 'Books', lib.root)).code).toBe(0);
  expect((await bindery('scan')).code).toBe(0);
}

beforeEach(() => {
  lib = makeTempLibrary();
});
afterEach(() => lib.cleanup());

describe('bindery move', () => {
  it('prints the plan as JSON on --dry-run and changes nothing', async () => {
    await setUp();
    const res = await bindery('move', '--dry-run', '--json', '--pattern', '{authors}/{title}');
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout)).toEqual({
      dryRun: true,
      recovered: { resumed: 0, rolledBack: 0, busy: 0, problems: [] },
      books: [
        {
          bookId: expect.any(Number),
          title: 'Dune',
          status: 'move',
          libraryId: 1,
          libraryPathId: 1,
          files: [
            { kind: 'file', bookFileId: expect.any(Number), from: lib.path('in', 'dune.epub'), to: lib.path('Frank Herbert', 'Dune.epub') },
            { kind: 'sidecar', bookFileId: null, from: lib.path('in', 'dune.opf'), to: lib.path('Frank Herbert', 'Dune.opf') },
          ],
          leftBehind: [],
        },
        { bookId: expect.any(Number), title: 'Emma', status: 'unchanged', libraryId: 1, libraryPathId: 1, files: [], leftBehind: [] },
      ].sort((a, b) => (a.title < b.title ? -1 : 1)),
      summary: { move: 1, unchanged: 1, skipped: 0 },
    });
    expect(existsSync(lib.path('in', 'dune.epub'))).toBe(true);

    const text = await bindery('move', '--dry-run', '--pattern', '{authors}/{title}{nope}');
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('in/dune.epub → Frank Herbert/Dune{nope}.epub');
    expect(text.stderr).toContain('unknown placeholder {nope}');
  });

  it('refuses without --yes when not on a terminal, then applies with --yes', async () => {
    await setUp();
    const refused = await bindery('--json', 'move', '--pattern', '{authors}/{title}');
    expect(refused.code).toBe(2);
    expect(JSON.parse(refused.stdout)).toEqual({ error: { code: 'CONFIRMATION_REQUIRED', message: expect.stringMatching(/--yes/) } });
    expect(existsSync(lib.path('in', 'dune.epub'))).toBe(true);

    const applied = await bindery('move', '--pattern', '{authors}/{title}', '--yes', '--json');
    expect(applied.code).toBe(0);
    const out = JSON.parse(applied.stdout) as { dryRun: boolean; summary: Record<string, number>; books: { title: string; status: string }[] };
    expect(out.dryRun).toBe(false);
    expect(out.summary).toEqual({ moved: 1, unchanged: 1, skipped: 0, failed: 0 });
    expect(existsSync(lib.path('Frank Herbert', 'Dune.epub'))).toBe(true);
    expect(existsSync(lib.path('Frank Herbert', 'Dune.opf'))).toBe(true);
    expect(existsSync(lib.path('in'))).toBe(false);

    const scan = JSON.parse((await bindery('--json', 'scan')).stdout) as { unchanged: number; moved: number; missing: number }[];
    expect(scan[0]).toMatchObject({ unchanged: 2, moved: 0, missing: 0 });

    const text = await bindery('move', '--pattern', '{authors}/{title}', '--yes');
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('0 moved, 2 already in place, 0 skipped, 0 failed');
  });

  it('prints per-book results and exits 5 when a book fails', async () => {
    await setUp();
    // a file where the target folder should be: the move of that book fails and is undone
    writeFileSync(lib.path('Frank Herbert'), 'not a folder');
    const res = await bindery('move', '--pattern', '{authors}/{title}', '--yes');
    expect(res.code).toBe(5);
    expect(res.stdout).toMatch(/failed #\d+ Dune: /);
    expect(res.stdout).toContain('0 moved, 1 already in place, 0 skipped, 1 failed');
    expect(existsSync(lib.path('in', 'dune.epub'))).toBe(true);
    expect(existsSync(lib.path('in', 'dune.opf'))).toBe(true);
  });

  it('reports an unknown library with exit 3', async () => {
    await setUp();
    const res = await bindery('move', '--library', 'Nope', '--dry-run');
    expect(res.code).toBe(3);
    expect(res.stderr).toContain('no library "Nope"');
  });

  it('recovers an interrupted move before planning', async () => {
    await setUp();
    const store = await openStore(join(lib.dataDir, 'bindery.sqlite'));
    try {
      const plan = await planMoves(store, await inPlaceRequests(store.db, [1]), { pattern: '{authors}/{title}' });
      let n = 0;
      await expect(
        applyMoves(store, plan, {
          step: (step) => {
            if (step === 'unlink-source' && ++n === 1) throw new MoveInterrupted('killed');
          },
        }),
      ).rejects.toBeInstanceOf(MoveInterrupted);
      // as if the process that ran it had died
      const dead = spawnSync(process.execPath, ['-e', '0']).pid;
      await store.db.updateTable('move_journal').set({ owner: JSON.stringify({ ...currentOwner(), pid: dead }) }).execute();
    } finally {
      await store.close();
    }
    expect(existsSync(lib.path('Frank Herbert', 'Dune.epub'))).toBe(true);
    const res = await bindery('move', '--dry-run', '--json', '--pattern', '{authors}/{title}');
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({ recovered: { resumed: 0, rolledBack: 1, problems: [] }, summary: { move: 1 } });
    expect(existsSync(lib.path('in', 'dune.epub'))).toBe(true);
    expect(existsSync(lib.path('Frank Herbert', 'Dune.epub'))).toBe(false);
  });
});

describe('a scan after a killed move', () => {
  it('never adopts a half-moved file: the catalog is put right when the scan opens it', async () => {
    await setUp();
    // Killed with the book file already at its new place and its sidecar not yet moved: a move recovery rolls back.
    const killed = spawnSync(process.execPath, [KILL_DURING_MOVE, lib.dataDir, '{authors}/{title}', 'link', 'Dune.opf'], { encoding: 'utf8' });
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    expect(existsSync(lib.path('Frank Herbert', 'Dune.epub'))).toBe(true);
    expect(existsSync(lib.path('in', 'dune.epub'))).toBe(false);

    const scan = await bindery('scan');
    expect(scan.code, scan.stderr).toBe(0);
    const catalogPath = async (): Promise<string> => {
      const store = await openStore(join(lib.dataDir, 'bindery.sqlite'));
      try {
        const row = await store.db
          .selectFrom('book_file')
          .innerJoin('library_path', 'library_path.id', 'book_file.library_path_id')
          .select(['library_path.path as root', 'file_sub_path', 'file_name'])
          .where('file_name', 'like', '%une.epub')
          .executeTakeFirstOrThrow();
        return join(row.root, row.file_sub_path, row.file_name);
      } finally {
        await store.close();
      }
    };
    expect(await catalogPath()).toBe(lib.path('in', 'dune.epub'));
    expect(existsSync(lib.path('in', 'dune.epub'))).toBe(true);
    expect(scan.stderr).toContain('rolled back');
    // A later recovery (the daemon's start, the next move) finds nothing left to undo.
    const again = await bindery('move', '--dry-run', '--json', '--pattern', '{authors}/{title}');
    expect(JSON.parse(again.stdout)).toMatchObject({ recovered: { resumed: 0, rolledBack: 0, problems: [] } });
    expect(existsSync(await catalogPath())).toBe(true);
  });
});
