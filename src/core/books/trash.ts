// The library trash for single files: what a file deletion removes and what a content replacement overwrites goes to
// `<root>/.bindery-trash/<stamp>/<sub path>/<name>`, as deleted books do (book-delete.ts), never erased.
import { constants, existsSync } from 'node:fs';
import { copyFile, link, mkdir, open, rename } from 'node:fs/promises';
import { dirname, join, parse } from 'node:path';
import { TRASH_FOLDER } from './book-delete.ts';

/** A folder name for one trash operation: the time, safe on every file system. */
export const trashStamp = (date: Date = new Date()): string => date.toISOString().replace(/[:.]/g, '-');

/** `name`, or `name (2)`, `name (3)`… when taken. */
function freePath(path: string): string {
  if (!existsSync(path)) return path;
  const { dir, name, ext } = parse(path);
  for (let n = 2; ; n++) {
    const candidate = join(dir, `${name} (${n})${ext}`);
    if (!existsSync(candidate)) return candidate;
  }
}

function trashTarget(root: string, subPath: string, fileName: string, stamp: string): string {
  return freePath(join(root, TRASH_FOLDER, stamp, subPath, fileName));
}

/** Moves a file or folder of the library into its trash; returns where it went. */
export async function moveToTrash(root: string, subPath: string, fileName: string, stamp: string = trashStamp()): Promise<string> {
  const source = join(root, subPath, fileName);
  const target = trashTarget(root, subPath, fileName, stamp);
  await mkdir(dirname(target), { recursive: true });
  await rename(source, target);
  return target;
}

/**
 * Keeps the current bytes of a file in the trash without moving it: a second name for the same data (a hard link),
 * or a flushed copy where links are not possible. The file itself stays where it is.
 */
export async function keepCopyInTrash(root: string, subPath: string, fileName: string, stamp: string = trashStamp()): Promise<string> {
  const source = join(root, subPath, fileName);
  const target = trashTarget(root, subPath, fileName, stamp);
  await mkdir(dirname(target), { recursive: true });
  try {
    await link(source, target);
  } catch {
    await copyFile(source, target, constants.COPYFILE_EXCL);
    const handle = await open(target, 'r+');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  }
  return target;
}
