// Finds the book units under a library root: single files, and folders of audio tracks that form one audiobook.
import type { Dirent } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { AUDIO_EXTENSIONS, bookExtension, formatOf } from '../formats/index.ts';
import type { BookFileType } from '../formats/types.ts';
import { naturalCompare } from '../formats/values.ts';

export interface ScanUnit {
  /** Folder below the root, `/`-separated, '' at the root. */
  subPath: string;
  /** File name, or the folder name for a folder audiobook. */
  fileName: string;
  absolutePath: string;
  extension: string;
  bookType: BookFileType;
  sizeBytes: number;
  mtimeMs: number;
  /** For a folder audiobook: its tracks' absolute paths in natural order. */
  tracks?: string[];
}

export interface WalkResult {
  units: ScanUnit[];
  /** Files that looked like books but could not be stat'ed, and folders that could not be listed. */
  unreadable: { path: string; reason: string }[];
}


/**
 * A folder with two or more audio tracks is one audiobook (its tracks are chapters), unless every track is an
 * .m4b: those are complete audiobooks each.
 */
export function isFolderAudiobook(audioFiles: string[]): boolean {
  if (audioFiles.length < 2) return false;
  return !audioFiles.every((name) => bookExtension(name) === 'm4b');
}

export async function walkRoot(root: string): Promise<WalkResult> {
  const units: ScanUnit[] = [];
  const unreadable: WalkResult['unreadable'] = [];

  async function visit(dir: string, subPath: string): Promise<void> {
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (error) {
      unreadable.push({ path: dir, reason: (error as Error).message });
      return;
    }
    entries.sort((a, b) => naturalCompare(a.name, b.name));
    const files: { name: string; path: string }[] = [];
    const folders: { name: string; path: string }[] = [];
    for (const entry of entries) {
      if (entry.name.startsWith('.') || entry.name.startsWith('@') || entry.name === '#recycle') continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) folders.push({ name: entry.name, path });
      else if (entry.isFile() || entry.isSymbolicLink()) files.push({ name: entry.name, path });
    }

    const audio = files.filter((f) => AUDIO_EXTENSIONS.has(bookExtension(f.name)));
    const asFolder = isFolderAudiobook(audio.map((f) => f.name));
    if (asFolder && subPath !== '') {
      let size = 0;
      let mtime = 0;
      try {
        for (const track of audio) {
          const info = await stat(track.path);
          size += info.size;
          mtime = Math.max(mtime, info.mtimeMs);
        }
        const slash = subPath.lastIndexOf('/');
        units.push({
          subPath: slash === -1 ? '' : subPath.slice(0, slash),
          fileName: slash === -1 ? subPath : subPath.slice(slash + 1),
          absolutePath: dir,
          extension: 'folder',
          bookType: 'AUDIOBOOK',
          sizeBytes: size,
          mtimeMs: Math.trunc(mtime),
          tracks: audio.map((t) => t.path),
        });
      } catch (error) {
        unreadable.push({ path: dir, reason: (error as Error).message });
      }
    }

    for (const file of files) {
      if (asFolder && subPath !== '' && AUDIO_EXTENSIONS.has(bookExtension(file.name))) continue;
      const format = formatOf(file.name);
      if (!format) continue;
      try {
        const info = await stat(file.path);
        if (!info.isFile()) continue;
        units.push({
          subPath,
          fileName: file.name,
          absolutePath: file.path,
          extension: format.extension,
          bookType: format.bookType,
          sizeBytes: info.size,
          mtimeMs: Math.trunc(info.mtimeMs),
        });
      } catch (error) {
        unreadable.push({ path: file.path, reason: (error as Error).message });
      }
    }
    for (const folder of folders) await visit(folder.path, subPath === '' ? folder.name : `${subPath}/${folder.name}`);
  }

  await visit(root, '');
  return { units, unreadable };
}

/** Whether a root can be scanned: it must be a readable folder. An empty one is judged by the caller. */
export async function probeRoot(root: string): Promise<{ ok: true; empty: boolean } | { ok: false; reason: string }> {
  try {
    const info = await stat(root);
    if (!info.isDirectory()) return { ok: false, reason: 'not a folder' };
    const entries = await readdir(root);
    return { ok: true, empty: entries.filter((e) => !e.startsWith('.')).length === 0 };
  } catch (error) {
    return { ok: false, reason: (error as NodeJS.ErrnoException).code ?? (error as Error).message };
  }
}
