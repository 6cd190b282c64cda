// Where bookdrop things live on disk, and which names in the bookdrop folder are books waiting to be imported.
import { rename, rm, writeFile } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { formatOf } from '../formats/index.ts';

/**
 * Names Bindery gives files it is still writing (an upload on its way, a copy being verified). They start with a dot,
 * so neither the bookdrop watcher nor a library scan ever takes them for books.
 */
export const PARTIAL_PREFIX = '.bindery-';

/** Covers extracted from bookdrop files, by bookdrop id (`/api/v1/media/bookdrop/{id}/cover`). */
export function bookdropCoversDir(dataDir: string): string {
  return join(dataDir, 'bookdrop-covers');
}

export function bookdropCoverPath(dataDir: string, id: number): string {
  return join(bookdropCoversDir(dataDir), `${id}.jpg`);
}

export async function saveBookdropCover(dataDir: string, id: number, jpeg: Buffer): Promise<void> {
  const path = bookdropCoverPath(dataDir, id);
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, jpeg);
  await rename(tmp, path);
}

export async function removeBookdropCover(dataDir: string, id: number): Promise<void> {
  await rm(bookdropCoverPath(dataDir, id), { force: true });
}

/** A book file by its name: a known book extension, not hidden (which also leaves out Bindery's own partial files). */
export function isBookdropCandidate(fileName: string): boolean {
  return !fileName.startsWith('.') && formatOf(fileName) !== undefined;
}

export function isInsideDir(dir: string, path: string): boolean {
  const root = dir.endsWith(sep) ? dir : dir + sep;
  return path.startsWith(root);
}
