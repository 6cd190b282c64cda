// A real small file system (tmpfs) to fill up or make read-only, for disk-full tests. Needs root (mount); tests that
// use it are skipped where mounting is not allowed.
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface SmallDisk {
  root: string;
  /** Fills every free block with one file; returns its path. */
  fill(): string;
  /** Frees what fill() took. */
  free(): void;
  readOnly(on: boolean): void;
  unmount(): void;
}

function run(args: string[]): boolean {
  return spawnSync(args[0] as string, args.slice(1), { stdio: 'ignore' }).status === 0;
}

/** Whether this process may mount a tmpfs (root in a container that allows it). */
export const canMount: boolean = (() => {
  if (process.getuid?.() !== 0) return false;
  const probe = mkdtempSync(join(tmpdir(), 'bindery-mount-probe-'));
  const ok = run(['mount', '-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', probe]);
  if (ok) run(['umount', probe]);
  rmSync(probe, { recursive: true, force: true });
  return ok;
})();

export function mountSmallDisk(sizeKb: number): SmallDisk {
  const root = mkdtempSync(join(tmpdir(), 'bindery-small-disk-'));
  if (!run(['mount', '-t', 'tmpfs', '-o', `size=${sizeKb}k,mode=0755`, 'tmpfs', root])) throw new Error(`cannot mount a tmpfs at ${root}`);
  const filler = join(root, 'filler');
  return {
    root,
    fill: () => {
      const fd = openSync(filler, 'a');
      const block = Buffer.alloc(4096);
      try {
        for (;;) writeSync(fd, block);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
      } finally {
        closeSync(fd);
      }
      // Whatever fits in less than a block too.
      const tail = openSync(filler, 'a');
      try {
        for (;;) writeSync(tail, Buffer.alloc(256));
      } catch {
        // full
      } finally {
        closeSync(tail);
      }
      return filler;
    },
    free: () => rmSync(filler, { force: true }),
    readOnly: (on) => {
      if (!run(['mount', '-o', `remount,${on ? 'ro' : 'rw'}`, root])) throw new Error(`cannot remount ${root}`);
    },
    unmount: () => {
      run(['umount', '-l', root]);
      rmSync(root, { recursive: true, force: true });
    },
  };
}
