// The daemon's eye on the bookdrop folder: files that appear (and have stopped growing) are taken into the review
// queue, files that disappear leave it. Network filesystems do not deliver change events reliably, so on those the
// folder is polled instead (as it is everywhere with CHOKIDAR_USEPOLLING=1).
import { statfs } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import type { FSWatcher } from 'chokidar';
import { forgetPath, recoverInterruptedImports, removeVanished } from '../core/bookdrop/bookdrop-cleanup.ts';
import { bookdropCandidates, ensureBookdropDir, intakeFile, type BookdropEnv, type BookdropMetadataFetcher } from '../core/bookdrop/intake.ts';
import type { DaemonContext } from './context.ts';

/** statfs(2) magic numbers of filesystems whose change notifications miss changes made elsewhere. */
const REMOTE_FILESYSTEMS = new Map<number, string>([
  [0x6969, 'nfs'],
  [0x517b, 'smb'],
  [0xff534d42, 'cifs'],
  [0xfe534d42, 'smb2'],
  [0x65735546, 'fuse'],
  [0x01021997, '9p'],
  [0x00c36400, 'ceph'],
  [0x5346414f, 'afs'],
  [0x73757245, 'coda'],
  [0x564c, 'ncp'],
  [0x6a656a63, 'virtiofs'],
]);

/** The kind of remote filesystem `dir` is on, or undefined for a local one (or when it cannot be told). */
export async function remoteFilesystem(dir: string): Promise<string | undefined> {
  try {
    const info = await statfs(dir);
    return REMOTE_FILESYSTEMS.get(Number(info.type) >>> 0);
  } catch {
    return undefined;
  }
}

export interface WatcherOptions {
  /** true/false forces polling on or off; 'auto' polls on remote filesystems. */
  polling?: boolean | 'auto';
  pollIntervalMs?: number;
  /** How long a file's size must stay the same before it is taken in. */
  stabilityMs?: number;
  /** Files taken in at once. */
  concurrency?: number;
}

export interface BookdropWatcher {
  /** Resolves once the folder has been walked and every file present at start has been looked at. */
  ready: Promise<void>;
  polling: boolean;
  /** Resolves when no intake is queued or running. */
  idle(): Promise<void>;
  close(): Promise<void>;
}

export async function startBookdropWatcher(env: BookdropEnv, options: WatcherOptions = {}): Promise<BookdropWatcher> {
  await ensureBookdropDir(env.bookdropDir);
  const dir = resolve(env.bookdropDir);
  const remote = await remoteFilesystem(dir);
  const polling = options.polling === 'auto' || options.polling === undefined ? remote !== undefined : options.polling;
  if (remote && polling) env.log?.('info', `bookdrop: ${dir} is on ${remote}; polling it for changes`);
  const { watch } = await import('chokidar');
  const stabilityMs = options.stabilityMs ?? 2_000;
  const watcher: FSWatcher = watch(dir, {
    // Files already there are reported too, once stable: nothing dropped while the daemon was down is missed.
    ignoreInitial: false,
    backend: polling ? 'polling' : 'auto',
    pollingInterval: options.pollIntervalMs ?? 2_000,
    awaitWriteFinish: { stabilityThreshold: stabilityMs, pollInterval: Math.max(50, Math.min(500, Math.round(stabilityMs / 4))) },
    // Hidden names (Bindery's partial uploads and copies among them) are never books.
    ignored: (path: string) => path !== dir && basename(path).startsWith('.'),
    persistent: true,
  });

  const queue: string[] = [];
  const queued = new Set<string>();
  let running = 0;
  let closed = false;
  const waiters: (() => void)[] = [];
  const limit = options.concurrency ?? 2;

  const settle = (): void => {
    if (running === 0 && queue.length === 0) for (const w of waiters.splice(0)) w();
  };
  const pump = (): void => {
    while (!closed && running < limit && queue.length > 0) {
      const path = queue.shift() as string;
      queued.delete(path);
      running++;
      intakeFile(env, path, { settleMs: 0 })
        .catch((error: unknown) => env.log?.('error', `bookdrop: cannot take in ${path}: ${(error as Error).message}`, { path }))
        .finally(() => {
          running--;
          pump();
          settle();
        });
    }
    settle();
  };
  const enqueue = (path: string): void => {
    if (closed || queued.has(path)) return;
    queued.add(path);
    queue.push(path);
    pump();
  };
  const forget = (path: string, isFolder: boolean): void => {
    forgetPath(env, path, isFolder).catch((error: unknown) => env.log?.('error', `bookdrop: ${(error as Error).message}`, { path }));
  };

  watcher.on('add', enqueue);
  // A file replaced under the same name, or one that was still empty when first seen.
  watcher.on('change', enqueue);
  watcher.on('unlink', (path) => forget(path, false));
  watcher.on('unlinkDir', (path) => forget(path, true));
  watcher.on('error', (error) => env.log?.('error', `bookdrop watcher: ${(error as Error).message}`));

  const ready = new Promise<void>((resolveReady) => {
    watcher.once('ready', () => {
      // Rows of files removed while the daemon was down, and imports a crash cut short.
      void (async () => {
        try {
          await recoverInterruptedImports(env);
          await removeVanished(env, (await bookdropCandidates(dir)).length === 0);
        } catch (error) {
          env.log?.('error', `bookdrop: ${(error as Error).message}`);
        }
        resolveReady();
      })();
    });
  });

  return {
    ready,
    polling,
    idle: () => new Promise<void>((resolveIdle) => {
      waiters.push(resolveIdle);
      settle();
    }),
    close: async () => {
      closed = true;
      queue.length = 0;
      queued.clear();
      await watcher.close();
      if (running > 0) await new Promise<void>((resolveIdle) => waiters.push(resolveIdle));
    },
  };
}

/** The bookdrop as the daemon uses it (routes and watcher alike). */
export function daemonBookdropEnv(ctx: Pick<DaemonContext, 'store' | 'config' | 'log'>, fetcher?: BookdropMetadataFetcher): BookdropEnv {
  return {
    store: ctx.store,
    bookdropDir: ctx.config.bookdropDir,
    dataDir: ctx.config.dataDir,
    ...(fetcher ? { fetcher } : {}),
    log: (level, message, detail) => ctx.log[level](detail ?? {}, message),
  };
}
