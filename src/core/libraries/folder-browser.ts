// Browsing the server's folders to pick library roots: only directories, never the kernel's pseudo file systems.
import { readdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';

const BLOCKED = ['/proc', '/sys', '/dev', '/run', '/var/run'];

export class FolderBrowseError extends Error {
  override name = 'FolderBrowseError';
}

/** Absolute paths of the sub-folders of `path`, sorted. */
export async function foldersAt(path: string): Promise<string[]> {
  if (path.trim() === '' || path.includes('\0')) throw new FolderBrowseError('Invalid path');
  const dir = resolve(path.trim());
  if (BLOCKED.some((b) => dir === b || dir.startsWith(`${b}/`))) throw new FolderBrowseError('Access to this directory is not allowed');
  const info = await stat(dir).catch(() => undefined);
  if (!info?.isDirectory()) throw new FolderBrowseError(`Not a folder: ${dir}`);
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    throw new FolderBrowseError(`Cannot read folder ${dir}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  const folders: string[] = [];
  for (const name of names) {
    const full = join(dir, name);
    // Follows symbolic links, as the folder picker should offer linked folders too.
    if ((await stat(full).catch(() => undefined))?.isDirectory()) folders.push(full);
  }
  return folders.sort();
}
