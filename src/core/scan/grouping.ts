// Which files of a library are formats of the same book, by the library's organization mode.
import { bookExtension } from '../formats/index.ts';
import type { OrganizationMode } from '../libraries/libraries.ts';

export interface GroupableFile {
  subPath: string;
  fileName: string;
  folderBased: boolean;
}

function stem(fileName: string): string {
  const ext = bookExtension(fileName);
  const lower = fileName.toLowerCase();
  const cut = lower.endsWith('.fb2.zip') ? '.fb2.zip'.length : ext ? ext.length + 1 : 0;
  return lower.slice(0, lower.length - cut).trim();
}

/**
 * The key files of one book share, or undefined when every file is its own book.
 * BOOK_PER_FOLDER: the folder that holds the book (a folder audiobook is its own folder).
 * AUTO_DETECT: the folder plus the file name without extension, so `Dune.epub` and `Dune.pdf` are one book.
 */
export function groupKey(file: GroupableFile, mode: OrganizationMode): string | undefined {
  if (mode === 'BOOK_PER_FILE') return undefined;
  if (mode === 'BOOK_PER_FOLDER') {
    if (file.folderBased) return joinSub(file.subPath, file.fileName);
    // Loose files at the root of a library have no book folder: each is its own book.
    return file.subPath === '' ? undefined : file.subPath;
  }
  return `${file.subPath}\0${file.folderBased ? file.fileName.toLowerCase().trim() : stem(file.fileName)}`;
}

function joinSub(subPath: string, name: string): string {
  return subPath === '' ? name : `${subPath}/${name}`;
}
