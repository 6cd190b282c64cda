// A full or read-only data directory: every command exits 6 (docs/cli.md) with one line naming the directory and the
// cause, in text and in --json. Real tmpfs, really filled, really remounted read-only.
import { mkdirSync, statfsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { makeTempLibrary, writeSimpleEpub, type TempLibrary } from '../helpers/library-fixtures.ts';
import { canMount, mountSmallDisk, type SmallDisk } from '../helpers/small-disk.ts';
import { onPostgres } from '../helpers/engine.ts';

let disk: SmallDisk;
let lib: TempLibrary;
let dataDir: string;
const bindery = (...args: string[]) => runCli(['--data-dir', dataDir, ...args]);

beforeEach(async () => {
  if (!canMount) return;
  // Room for a new catalog's write-ahead log of every migration (~3.5 MB) and its checkpoint, and little more.
  disk = mountSmallDisk(8192);
  dataDir = join(disk.root, 'data');
  lib = makeTempLibrary();
  for (let i = 0; i < 12; i++) await writeSimpleEpub(lib.path(`Book ${i}.epub`), { title: `Book ${i}`, authors: ['A'], cover: '#2a6' });
  mkdirSync(dataDir);
  expect((await bindery('library', 'add', 'Books', lib.root)).code).toBe(0);
});

afterEach(() => {
  if (!canMount) return;
  disk?.unmount();
  lib?.cleanup();
});

describe.skipIf(!canMount)('a data directory that cannot be written', () => {
  // The catalog itself on the full or read-only disk: only the SQLite file lives in the data directory.
  it.skipIf(onPostgres)('a full disk: exit 6 naming the directory and "no space left on device", whether it fills at open or mid-scan', async () => {
    disk.fill();
    const atOpen = await bindery('library', 'add', 'More', lib.root);
    expect(atOpen.code, atOpen.stderr).toBe(6);
    expect(atOpen.stderr).toContain(`bindery: cannot write to ${dataDir}: no space left on device`);

    const json = await bindery('--json', 'scan');
    expect(json.code).toBe(6);
    expect(JSON.parse(json.stdout)).toEqual({ error: { code: 'STORAGE_FULL', message: expect.stringContaining(`cannot write to ${dataDir}: no space left on device`) } });
  });

  it('a scan that fills the disk with covers stops with exit 6, not an internal error', async () => {
    // Room to open the catalog, not for a dozen books' covers (on PostgreSQL the catalog is elsewhere: less room).
    const info = statfsSync(disk.root);
    writeFileSync(join(disk.root, 'filler'), Buffer.alloc(Math.max(0, info.bavail - (onPostgres ? 2 : 40)) * info.bsize));
    const scan = await bindery('scan');
    expect(scan.code, scan.stderr).toBe(6);
    expect(scan.stderr).toMatch(new RegExp(`cannot write to ${dataDir}[^:]*: no space left on device`));
    expect(scan.stderr).not.toContain('INTERNAL');
  });

  it.skipIf(onPostgres)('a read-only file system: exit 6 naming the directory and "read-only file system"', async () => {
    disk.readOnly(true);
    try {
      const res = await bindery('library', 'add', 'More', lib.root);
      expect(res.code, res.stderr).toBe(6);
      expect(res.stderr).toContain(`bindery: cannot write to ${dataDir}: read-only file system`);
    } finally {
      disk.readOnly(false);
    }
  });
});
