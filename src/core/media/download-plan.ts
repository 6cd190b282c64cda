// What a download sends: one file as it is, or a ZIP (a folder audiobook, or all of a book's files).
import type { Stats } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { BookFiles, LocatedFile } from '../books/file-locations.ts';
import { folderFiles } from '../books/file-locations.ts';
import type { ZipEntrySource } from './zip-stream.ts';

export type DownloadPlan =
  | { kind: 'file'; path: string; fileName: string; size: number; mtime: Date }
  | { kind: 'zip'; fileName: string; entries: ZipEntrySource[] }
  | { kind: 'missing' };

async function statOf(path: string | undefined): Promise<Stats | undefined> {
  if (!path) return undefined;
  return stat(path).catch(() => undefined);
}

/** One file of a book: the file itself, or its folder zipped flat when it is a folder audiobook. */
export async function planFileDownload(file: LocatedFile | undefined): Promise<DownloadPlan> {
  const info = await statOf(file?.path);
  if (!file?.path || !info) return { kind: 'missing' };
  if (file.folderBased && info.isDirectory()) {
    const tracks = await folderFiles(file.path);
    return { kind: 'zip', fileName: `${file.fileName}.zip`, entries: tracks.map((t) => ({ name: t.name, path: t.path, size: t.size, mtime: t.mtime })) };
  }
  if (!info.isFile()) return { kind: 'missing' };
  return { kind: 'file', path: file.path, fileName: file.fileName, size: info.size, mtime: info.mtime };
}

/** Grimmory's archive name: the title with anything but letters, digits, `-` and `_` turned into `_`. */
export function archiveName(book: Pick<BookFiles, 'bookId' | 'title'>): string {
  return `${(book.title ?? `book-${book.bookId}`).replace(/[^a-zA-Z0-9\-_]/g, '_')}.zip`;
}

/**
 * Every file of a book. A single plain file is sent as it is; otherwise a ZIP with the files by name, folder audiobooks
 * as `<folder>/<track>`, and files missing from disk left out.
 */
export async function planBookDownload(book: BookFiles): Promise<DownloadPlan> {
  const [only] = book.files;
  if (book.files.length === 1 && only) {
    const info = await statOf(only.path);
    if (!info) return { kind: 'missing' };
    if (!(only.folderBased && info.isDirectory())) return planFileDownload(only);
  }
  const entries: ZipEntrySource[] = [];
  const byName = [...book.files].sort((a, b) => (a.fileName < b.fileName ? -1 : a.fileName > b.fileName ? 1 : 0));
  for (const file of byName) {
    const info = await statOf(file.path);
    if (!file.path || !info) continue;
    if (file.folderBased && info.isDirectory()) {
      for (const track of await folderFiles(file.path)) entries.push({ name: `${file.fileName}/${track.name}`, path: track.path, size: track.size, mtime: track.mtime });
    } else if (info.isFile()) {
      entries.push({ name: file.fileName, path: file.path, size: info.size, mtime: info.mtime });
    }
  }
  return { kind: 'zip', fileName: archiveName(book), entries };
}
