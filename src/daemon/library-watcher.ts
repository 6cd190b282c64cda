// The daemon's eye on the folders of libraries whose `watch` setting is on. Only folders are watched (one inotify
// watch each, none per file); a change inside one marks that folder, and once the library has been quiet for a while
// and the changed folders' book files have kept their sizes, those folders are rescanned. The set of watched libraries
// follows the catalog: a library created, deleted or changed anywhere (another replica, the CLI) is picked up within a
// second or two, and a library that starts being watched is rescanned once to catch up. Past the system's inotify
// limit, or on network filesystems, folders are polled instead.
import { readdir, stat } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { listLibraries } from '../core/libraries/libraries.ts';
import { formatOf } from '../core/formats/index.ts';
import { isSkippedName } from '../core/scan/walk.ts';
import { sameGeneration } from '../core/store/snapshot.ts';
import type { Store } from '../core/store/store.ts';
import { remoteFilesystem } from './bookdrop-watcher.ts';
import { watchFolderTrees, type FolderTreeWatch, type WatchFolder } from './folder-tree-watch.ts';

type Level = 'debug' | 'info' | 'warn' | 'error';

export interface LibraryWatcherEnv {
  store: Pick<Store, 'db' | 'generation'>;
  log: (level: Level, message: string, detail?: Record<string, unknown>) => void;
  /** Asks for a rescan of these folders (absolute paths) of the library, or of all of it. */
  rescan: (libraryId: number, folders?: string[]) => void;
}

export interface LibraryWatcherOptions {
  /** true/false forces polling on or off; 'auto' polls on network filesystems and once inotify watches ran out. */
  polling?: boolean | 'auto';
  pollIntervalMs?: number;
  /** Quiet time after the last change before the changed folders are looked at. */
  delayMs?: number;
  /** How long the changed folders' book files must keep their sizes before they are rescanned. */
  stabilityMs?: number;
  /** How often the catalog is looked at for changed libraries (only re-read when it changed at all). */
  followMs?: number;
  /** How one folder is watched natively: fs.watch (tests wrap it). */
  watchFolder?: WatchFolder;
}

export interface WatchedLibrary {
  libraryId: number;
  paths: string[];
  polling: boolean;
}

export interface LibraryWatcher {
  /** Resolves once the libraries were read and each watched one's folders are being watched. */
  ready: Promise<void>;
  watched(): WatchedLibrary[];
  /** Reads the libraries again now, and resolves once every watch it started is ready. */
  refresh(): Promise<void>;
  close(): Promise<void>;
}

const FOLLOW_MS = 1000;

/** Files Bindery writes beside a book (sidecars, exported covers): writing them is no change to rescan. */
function isOwnOrHiddenName(name: string): boolean {
  return isSkippedName(name) || name.endsWith('.metadata.json') || name.endsWith('.cover.jpg');
}

const within = (path: string, folder: string): boolean => path === folder || path.startsWith(folder.endsWith(sep) ? folder : folder + sep);

/** Size and modification time of every book file directly in the folders: what must stand still before a rescan. */
async function bookFileStates(folders: readonly string[]): Promise<string> {
  const states: string[] = [];
  for (const folder of folders) {
    const entries = await readdir(folder, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      if (entry.isDirectory() || !formatOf(entry.name)) continue;
      const info = await stat(join(folder, entry.name)).catch(() => undefined);
      states.push(`${folder}${sep}${entry.name}\0${info?.size ?? -1}\0${info?.mtimeMs ?? -1}`);
    }
  }
  return states.join('\n');
}

/** CHOKIDAR_USEPOLLING=1 polls every watched folder, the bookdrop's as well as the libraries'. */
const pollingForced = (): boolean => ['1', 'true', 'yes', 'on'].includes((process.env.CHOKIDAR_USEPOLLING ?? '').trim().toLowerCase());

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms).unref());

type FolderSettings = Required<Omit<LibraryWatcherOptions, 'polling' | 'followMs' | 'watchFolder'>> & Pick<LibraryWatcherOptions, 'watchFolder'>;

/** One library's watched folders, with the changes seen since its last rescan. */
class LibraryFolders {
  readonly libraryId: number;
  readonly paths: string[];
  readonly polling: boolean;
  readonly ready: Promise<void>;
  private readonly tree: FolderTreeWatch;
  private readonly changed = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private events = 0;
  private flushing = false;
  private closed = false;
  private readonly reported = new Set<string>();
  private readonly env: LibraryWatcherEnv;
  private readonly settings: FolderSettings;
  private readonly outOfWatches: (folders: LibraryFolders) => void;

  constructor(libraryId: number, paths: string[], polling: boolean, env: LibraryWatcherEnv, settings: FolderSettings, outOfWatches: (folders: LibraryFolders) => void) {
    this.env = env;
    this.settings = settings;
    this.outOfWatches = outOfWatches;
    this.libraryId = libraryId;
    this.paths = paths;
    this.polling = polling;
    this.tree = watchFolderTrees(paths, {
      polling,
      pollIntervalMs: settings.pollIntervalMs,
      onChange: (folder, name) => {
        // Bindery's own files (sidecars, exported covers) and hidden ones are no change to rescan.
        if ((name !== undefined && isOwnOrHiddenName(name)) || !paths.some((root) => within(folder, root))) return;
        this.changed.add(folder);
        this.events++;
        this.arm();
      },
      onOutOfWatches: () => this.outOfWatches(this),
      onError: (error) => this.failed(error),
      ...(settings.watchFolder ? { watchFolder: settings.watchFolder } : {}),
    });
    this.ready = this.tree.ready;
  }

  private arm(): void {
    if (this.closed) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.flush(), this.settings.delayMs);
    this.timer.unref();
  }

  /** Rescans the changed folders once their book files have stopped changing; anything still moving waits. */
  private async flush(): Promise<void> {
    if (this.flushing) return this.arm();
    this.flushing = true;
    const folders = [...this.changed];
    this.changed.clear();
    const seen = this.events;
    try {
      const before = await bookFileStates(folders);
      await sleep(this.settings.stabilityMs);
      if (this.closed) return;
      if (this.events !== seen || (await bookFileStates(folders)) !== before) {
        for (const folder of folders) this.changed.add(folder);
        this.arm();
        return;
      }
      this.env.log('debug', 'library folders changed; rescanning them', { library: this.libraryId, folders: folders.length });
      this.env.rescan(this.libraryId, folders);
    } catch (error) {
      this.env.log('error', `library watch: ${(error as Error).message}`, { library: this.libraryId });
    } finally {
      this.flushing = false;
    }
  }

  private failed(error: NodeJS.ErrnoException): void {
    if (this.closed) return;
    const kind = error.code ?? error.message;
    if (this.reported.has(kind)) return;
    this.reported.add(kind);
    this.env.log('warn', `library watch: ${error.message}`, { library: this.libraryId });
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.tree.close();
  }
}

export async function startLibraryWatcher(env: LibraryWatcherEnv, options: LibraryWatcherOptions = {}): Promise<LibraryWatcher> {
  const delayMs = options.delayMs ?? 3000;
  const settings = {
    delayMs,
    stabilityMs: options.stabilityMs ?? delayMs,
    pollIntervalMs: options.pollIntervalMs ?? 10_000,
    ...(options.watchFolder ? { watchFolder: options.watchFolder } : {}),
  };
  const libraries = new Map<number, LibraryFolders>();
  let outOfWatches = false;
  let closed = false;

  const start = async (libraryId: number, paths: string[], forcePolling = false): Promise<LibraryFolders> => {
    let polling = forcePolling || options.polling === true || (options.polling !== false && (outOfWatches || pollingForced()));
    if (!polling && options.polling !== false) {
      const remote = (await Promise.all(paths.map(remoteFilesystem))).find((kind) => kind !== undefined);
      if (remote) {
        polling = true;
        env.log('info', `library ${libraryId}: a folder is on ${remote}; polling it for changes`, { library: libraryId });
      }
    }
    const folders = new LibraryFolders(libraryId, paths, polling, env, settings, (failed) => void fallBack(failed));
    libraries.set(libraryId, folders);
    // What changed while nobody watched (the server was down, the setting off, watches ran out) is caught up with by
    // one rescan of the whole library once its folders are watched.
    void folders.ready.then(() => {
      if (libraries.get(libraryId) !== folders) return;
      env.log('info', 'watching library folders', { library: libraryId, paths, polling });
      env.rescan(libraryId);
    });
    return folders;
  };

  /** The system ran out of inotify watches: this library, and every one started from now on, is polled instead. */
  const fallBack = async (failed: LibraryFolders): Promise<void> => {
    if (!outOfWatches) {
      outOfWatches = true;
      env.log(
        'warn',
        `library watch: the system's limit on watched folders is reached; library folders are polled every ${settings.pollIntervalMs / 1000} s instead. ` +
          'Raise the limit to watch them efficiently: sysctl fs.inotify.max_user_watches=524288 (and the same line in /etc/sysctl.d/60-bindery.conf)',
      );
    }
    if (closed || libraries.get(failed.libraryId) !== failed) return;
    libraries.delete(failed.libraryId);
    failed.close();
    if (!closed && !libraries.has(failed.libraryId)) await start(failed.libraryId, failed.paths, true);
  };

  let refreshing: Promise<void> = Promise.resolve();
  const reconcile = async (): Promise<void> => {
    const wanted = new Map<number, string[]>();
    for (const library of await listLibraries(env.store.db)) {
      if (library.watch && library.paths.length > 0) wanted.set(library.id, library.paths.map((p) => p.path).sort());
    }
    if (closed) return;
    for (const [libraryId, folders] of libraries) {
      if (wanted.get(libraryId)?.join('\0') === folders.paths.join('\0')) continue;
      libraries.delete(libraryId);
      folders.close();
      env.log('info', 'stopped watching library folders', { library: libraryId });
    }
    const started: Promise<void>[] = [];
    for (const [libraryId, paths] of wanted) {
      if (!libraries.has(libraryId) && !closed) started.push((await start(libraryId, paths)).ready);
    }
    await Promise.all(started);
  };
  const refresh = (): Promise<void> => {
    refreshing = refreshing.then(reconcile).catch((error: unknown) => env.log('warn', `library watch: libraries not re-read: ${(error as Error).message}`));
    return refreshing;
  };

  const ready = refresh();
  let seen = env.store.generation();
  const follow = setInterval(() => {
    const now = env.store.generation();
    if (sameGeneration(now, seen)) return;
    seen = now;
    void refresh();
  }, options.followMs ?? FOLLOW_MS);
  follow.unref();

  return {
    ready,
    watched: () => [...libraries.values()].map(({ libraryId, paths, polling }) => ({ libraryId, paths, polling })),
    refresh,
    close: async () => {
      closed = true;
      clearInterval(follow);
      await refreshing;
      for (const folders of libraries.values()) folders.close();
      libraries.clear();
    },
  };
}
