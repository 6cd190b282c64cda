// Watches trees of folders and says which folder something changed in: one fs.watch (one inotify watch) per folder,
// none per file, or, when polling, one stat per folder per round. Chokidar keeps a record of every file and folder;
// over a library of 20,000 folders that was ~80 MB of heap and ~480 MB resident against ~10 and ~40 MB here.
import { watch, type FSWatcher, type WatchListener } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { basename, dirname, join, sep } from 'node:path';
import { isSkippedName } from '../core/scan/walk.ts';

export type WatchFolder = (folder: string, listener: WatchListener<string>) => FSWatcher;

export interface FolderTreeOptions {
  polling: boolean;
  pollIntervalMs: number;
  /** Something changed in `folder`: `name` is the entry, when the system says which. */
  onChange: (folder: string, name?: string) => void;
  /** The system has no inotify watches (or file descriptors) left: nothing more can be watched natively. */
  onOutOfWatches: (error: NodeJS.ErrnoException) => void;
  onError: (error: Error) => void;
  /** How one folder is watched natively (fs.watch; tests wrap it). */
  watchFolder?: WatchFolder;
}

export interface FolderTreeWatch {
  /** Resolves once every folder present at start is watched. */
  ready: Promise<void>;
  /** Folders watched now. */
  size(): number;
  close(): void;
}

const OUT_OF_WATCHES = new Set(['ENOSPC', 'EMFILE']);

/** Folders of the tree under `root` (itself included) that a library scan would enter. */
async function* foldersUnder(root: string): AsyncGenerator<string> {
  const pending = [root];
  while (pending.length > 0) {
    const folder = pending.pop() as string;
    const entries = await readdir(folder, { withFileTypes: true }).catch(() => undefined);
    if (!entries) continue;
    yield folder;
    for (const entry of entries) if (entry.isDirectory() && !isSkippedName(entry.name)) pending.push(join(folder, entry.name));
  }
}

export function watchFolderTrees(roots: readonly string[], options: FolderTreeOptions): FolderTreeWatch {
  const watchFolder: WatchFolder = options.watchFolder ?? ((folder, listener) => watch(folder, { persistent: false }, listener));
  /** Folder → its native watcher, or (polling) its last modification time. */
  const watched = new Map<string, FSWatcher | number>();
  let closed = false;
  let nativeFailed = false;

  const forget = (folder: string): void => {
    const prefix = folder + sep;
    for (const [path, handle] of watched) {
      if (path !== folder && !path.startsWith(prefix)) continue;
      if (typeof handle !== 'number') handle.close();
      watched.delete(path);
    }
  };

  const watchOne = async (folder: string): Promise<void> => {
    if (options.polling) {
      const info = await stat(folder).catch(() => undefined);
      if (info) watched.set(folder, info.mtimeMs);
      return;
    }
    if (nativeFailed) return;
    try {
      const handle = watchFolder(folder, (event, name) => {
        if (closed) return;
        options.onChange(folder, name ?? undefined);
        if (event === 'rename') void settle(name ? join(folder, name) : folder);
      });
      handle.on('error', () => forget(folder));
      watched.set(folder, handle);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== undefined && OUT_OF_WATCHES.has(code)) {
        nativeFailed = true;
        options.onOutOfWatches(error as NodeJS.ErrnoException);
      } else if (code !== 'ENOENT') options.onError(error as Error);
    }
  };

  /** Watches the folders of a tree not yet watched; those found after the start changed (files came with them). */
  const add = async (root: string, initial: boolean): Promise<void> => {
    for await (const folder of foldersUnder(root)) {
      if (closed || nativeFailed) return;
      if (watched.has(folder)) continue;
      await watchOne(folder);
      if (!initial) options.onChange(folder);
    }
  };

  /** An entry appeared or went: a new folder is watched, a folder gone is let go of (its parent reports the change). */
  const settle = async (path: string): Promise<void> => {
    if (isSkippedName(basename(path))) return;
    const info = await stat(path).catch(() => undefined);
    if (closed) return;
    if (info?.isDirectory()) {
      if (!watched.has(path)) await add(path, false);
    } else if (!info && watched.has(path)) {
      forget(path);
      options.onChange(dirname(path));
    }
  };

  let timer: NodeJS.Timeout | undefined;
  const poll = async (): Promise<void> => {
    // A root missing at start (a share mounted late) is watched once it is there.
    for (const root of roots) if (!watched.has(root)) await add(root, false);
    if (!options.polling) return;
    for (const [folder, seen] of [...watched]) {
      if (closed) return;
      if (!watched.has(folder)) continue;
      const info = await stat(folder).catch(() => undefined);
      if (!info) {
        forget(folder);
        options.onChange(dirname(folder));
        continue;
      }
      if (info.mtimeMs === seen) continue;
      watched.set(folder, info.mtimeMs);
      options.onChange(folder);
      for (const entry of await readdir(folder, { withFileTypes: true }).catch(() => [])) {
        const child = join(folder, entry.name);
        if (entry.isDirectory() && !isSkippedName(entry.name) && !watched.has(child)) await add(child, false);
      }
    }
  };
  const schedule = (): void => {
    if (closed) return;
    timer = setTimeout(() => {
      poll()
        .catch((error: unknown) => options.onError(error as Error))
        .finally(schedule);
    }, options.pollIntervalMs);
    timer.unref();
  };

  const ready = (async () => {
    for (const root of roots) await add(root, true);
    schedule();
  })();

  return {
    ready,
    size: () => watched.size,
    close: () => {
      closed = true;
      clearTimeout(timer);
      for (const handle of watched.values()) if (typeof handle !== 'number') handle.close();
      watched.clear();
    },
  };
}
