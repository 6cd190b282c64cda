// Work files in folders every replica shares (the bookdrop, the covers and tmp folders of the data directory): a writer on
// another machine — here a real process in a PID namespace of its own, whose pid means nothing on this machine — is
// left alone by the real CLI's tidying while it runs, and its files are removed once it is killed.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cliFor } from '../helpers/cli.ts';
import { onPostgres } from '../helpers/engine.ts';
import { makeTempLibrary, writeSimpleEpub, type TempLibrary } from '../helpers/library-fixtures.ts';
import { until } from '../helpers/served-daemon.ts';

const FOREIGN_WRITER = join(import.meta.dirname, '..', 'helpers', 'foreign-writer.ts');

let lib: TempLibrary;
const bindery = cliFor(() => lib.dataDir);
const bookdrop = (...parts: string[]): string => join(lib.dataDir, 'bookdrop', ...parts);

beforeEach(async () => {
  lib = makeTempLibrary();
  await writeSimpleEpub(join(lib.root, 'Emma.epub'), { title: 'Emma', authors: ['Jane Austen'] });
  expect((await bindery('library', 'add', 'Books', lib.root)).code).toBe(0);
});
afterEach(() => lib.cleanup());

/** The writer in a PID namespace of its own, as process 4000000 (no such process here); killed with its namespace. */
function foreignWriter(): ChildProcess {
  const script = `echo 3999999 > /proc/sys/kernel/ns_last_pid; '${process.execPath}' '${FOREIGN_WRITER}' '${join(lib.dataDir, 'bindery.sqlite')}' '${lib.dataDir}'`;
  return spawn('unshare', ['--pid', '--fork', '--kill-child', '--mount-proc', 'sh', '-c', script], { stdio: ['ignore', 'pipe', 'inherit'] });
}

function growingUpload(): string | undefined {
  const name = existsSync(bookdrop()) ? readdirSync(bookdrop()).find((n) => n.startsWith('.bindery-upload-')) : undefined;
  return name && statSync(bookdrop(name)).size > 0 ? bookdrop(name) : undefined;
}

/** Whether this machine lets the test start a process as pid 4000000 in a PID namespace of its own (root, util-linux). */
function canPlaceForeignPid(): boolean {
  const probe = spawnSync('unshare', ['--pid', '--fork', '--mount-proc', 'sh', '-c', 'echo 3999999 > /proc/sys/kernel/ns_last_pid && sh -c \'echo $$\''], { encoding: 'utf8' });
  return probe.status === 0 && probe.stdout.trim() === '4000000';
}

// A SQLite catalog never spans machines (its WAL needs shared memory): every process using it runs on one machine.
describe.runIf(onPostgres && canPlaceForeignPid())('work files of a writer on another machine', () => {
  it('are left alone by a rescan of the bookdrop, a library scan and a backup while it runs, and removed once it is killed', async () => {
    const writer = foreignWriter();
    try {
      const line = await new Promise<string>((resolve) => writer.stdout?.once('data', (d: Buffer) => resolve(d.toString().trim())));
      const { pid, staging, backupWork } = JSON.parse(line) as { pid: number; staging: string; backupWork: string };
      expect(pid).toBe(4_000_000);
      const upload = await until('the upload to stream', growingUpload);

      expect((await bindery('bookdrop', 'list')).code).toBe(0);
      expect((await bindery('scan')).code).toBe(0);
      expect((await bindery('backup', '--to', join(lib.dataDir, '..', 'backups/'))).code).toBe(0);
      expect(existsSync(upload)).toBe(true);
      expect(existsSync(staging)).toBe(true);
      expect(existsSync(backupWork)).toBe(true);
    } finally {
      const exited = new Promise((resolve) => writer.once('exit', resolve));
      writer.kill('SIGKILL');
      await exited;
    }
    // The server notices the killed writer's connection within moments.
    await until('the partial upload to be removed', async () => {
      expect((await bindery('bookdrop', 'list')).code).toBe(0);
      return readdirSync(bookdrop()).every((n) => !n.startsWith('.bindery-upload-'));
    }, 15_000);
    await until('the staging folder to be removed', async () => {
      expect((await bindery('scan')).code).toBe(0);
      return readdirSync(join(lib.dataDir, 'covers')).every((n) => !n.startsWith('.staging-'));
    }, 15_000);
    expect((await bindery('backup', '--to', join(lib.dataDir, '..', 'backups/'))).code).toBe(0);
    expect(readdirSync(join(lib.dataDir, 'tmp')).filter((n) => n.endsWith('.partial'))).toEqual([]);
  });
});
