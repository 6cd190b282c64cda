// A private temporary folder for one test file's fixtures.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TempDir {
  dir: string;
  /** Absolute path of a name inside the folder. */
  file(name: string): string;
  remove(): void;
}

export function makeTempDir(prefix = 'bindery-'): TempDir {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return {
    dir,
    file: (name) => join(dir, name),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
