// Finds the book units under a library root: single files, and folders of audio tracks that form one audiobook.
import type { Dirent } from 'node:fs';
import { readdirSync, statSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { AUDIO_EXTENSIONS, bookExtension, formatOf } from '../formats/index.ts';

export interface ScanUnit {
  /** Folder below the root, `/`-separated, '' at the root. */
  subPath: string;
  /** File name, or the folder name for a folder audiobook. */
  fileName: string;
  absolutePath: string;
  sizeBytes: number;
  mtimeMs: number;
  /** For a folder audiobook: its tracks' absolute paths in natural order. */
  tracks?: string[];
}

/**
 * The units of a root in walk order, column by column: a library of 50,000 books is a few MB this way, where one
 * object per unit (with its absolute path) was tens of MB that stayed alive for the whole scan.
 */
export interface WalkResult {
  root: string;
  /** Distinct folders below the root that hold units; `folder[i]` indexes into it. */
  folders: string[];
  folder: number[];
  names: string[];
  sizes: number[];
  mtimes: number[];
  /** Unit index → track paths, for folder audiobooks. */
  tracks: Record<number, string[]>;
  /** Files that looked like books but could not be stat'ed, and folders that could not be listed. */
  unreadable: { path: string; reason: string }[];
}

export function unitCount(walk: WalkResult): number {
  return walk.names.length;
}

export function unitAt(walk: WalkResult, i: number): ScanUnit {
  const subPath = walk.folders[walk.folder[i] as number] as string;
  const fileName = walk.names[i] as string;
  const tracks = walk.tracks[i];
  return {
    subPath,
    fileName,
    absolutePath: join(walk.root, subPath, fileName),
    sizeBytes: walk.sizes[i] as number,
    mtimeMs: walk.mtimes[i] as number,
    ...(tracks ? { tracks } : {}),
  };
}

let naturalCompare: ((a: string, b: string) => number) | undefined;

/**
 * A folder with two or more audio tracks is one audiobook (its tracks are chapters), unless every track is an
 * .m4b: those are complete audiobooks each.
 */
export function isFolderAudiobook(audioFiles: string[]): boolean {
  if (audioFiles.length < 2) return false;
  return !audioFiles.every((name) => bookExtension(name) === 'm4b');
}

/** Names the walk never enters or reads: hidden entries, Synology's `@eaDir` and the like, a NAS recycle bin. */
export function isSkippedName(name: string): boolean {
  return name.startsWith('.') || name.startsWith('@') || name === '#recycle';
}

/**
 * Walks the whole tree with synchronous calls: one stat per file costs a few microseconds this way, against tens
 * through the thread pool, and the walk of a large library was most of an unchanged rescan. The scanner runs it on
 * a worker thread, so a slow disk never stalls the caller's event loop. Given `folders` (`/`-separated, below the
 * root, none inside another), only those subtrees are walked.
 */
export function walkRootSync(root: string, folders?: readonly string[]): WalkResult {
  const walk: WalkResult = { root, folders: [], folder: [], names: [], sizes: [], mtimes: [], tracks: {}, unreadable: [] };
  naturalCompare ??= new Intl.Collator('en', { numeric: true, sensitivity: 'base' }).compare;
  const compare = naturalCompare;
  const folderIndex = new Map<string, number>();
  const add = (subPath: string, name: string, size: number, mtime: number): number => {
    let index = folderIndex.get(subPath);
    if (index === undefined) {
      index = walk.folders.push(subPath) - 1;
      folderIndex.set(subPath, index);
    }
    walk.folder.push(index);
    walk.names.push(name);
    walk.sizes.push(size);
    walk.mtimes.push(mtime);
    return walk.names.length - 1;
  };

  const visit = (dir: string, subPath: string): void => {
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch (error) {
      walk.unreadable.push({ path: dir, reason: (error as Error).message });
      return;
    }
    entries.sort((a, b) => compare(a.name, b.name));
    const files: { name: string; path: string }[] = [];
    const folders: { name: string; path: string }[] = [];
    for (const entry of entries) {
      if (isSkippedName(entry.name)) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) folders.push({ name: entry.name, path });
      else if (entry.isFile() || entry.isSymbolicLink()) files.push({ name: entry.name, path });
    }

    const audio = files.filter((f) => AUDIO_EXTENSIONS.has(bookExtension(f.name)));
    const asFolder = isFolderAudiobook(audio.map((f) => f.name)) && subPath !== '';
    if (asFolder) {
      let size = 0;
      let mtime = 0;
      try {
        for (const track of audio) {
          const info = statSync(track.path);
          size += info.size;
          mtime = Math.max(mtime, info.mtimeMs);
        }
        const slash = subPath.lastIndexOf('/');
        const unit = add(slash === -1 ? '' : subPath.slice(0, slash), slash === -1 ? subPath : subPath.slice(slash + 1), size, Math.trunc(mtime));
        walk.tracks[unit] = audio.map((t) => t.path);
      } catch (error) {
        walk.unreadable.push({ path: dir, reason: (error as Error).message });
      }
    }

    for (const file of files) {
      if (asFolder && AUDIO_EXTENSIONS.has(bookExtension(file.name))) continue;
      if (!formatOf(file.name)) continue;
      try {
        const info = statSync(file.path);
        if (!info.isFile()) continue;
        add(subPath, file.name, info.size, Math.trunc(info.mtimeMs));
      } catch (error) {
        walk.unreadable.push({ path: file.path, reason: (error as Error).message });
      }
    }
    for (const folder of folders) visit(folder.path, subPath === '' ? folder.name : `${subPath}/${folder.name}`);
  };

  if (folders) for (const folder of folders) visit(folder === '' ? root : join(root, folder), folder);
  else visit(root, '');
  return walk;
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
