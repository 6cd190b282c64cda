// Writing a tar archive (gzip-compressed or not) atomically: under a hidden temporary name beside the target
// (`.<name>.<mark>.partial`, the mark of the writing process: see work-files.ts), synced, then renamed, so a file with
// the final name is always complete; remains of a writer that died (kill -9, power loss) are removed by the next one
// writing to that folder, on whichever machine sharing it either runs.
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, readdir, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { syncDirectory } from '../file-writes.ts';
import type { Liveness } from '../store/liveness.ts';
import { markStatus, WORK_MARK } from '../work-files.ts';
import { TarWriter } from './tar.ts';

const PARTIAL = new RegExp(`^\\..+\\.(${WORK_MARK})\\.partial$`);

/** Who writes work files, in folders other processes may share: its liveness (to judge theirs) and its mark. */
export interface WorkSite {
  liveness: Liveness;
  mark: string;
}

/** A hidden work-file name in `dir` that `removeAbandoned` clears once the process of `mark` is gone. */
export function partialPath(dir: string, name: string, mark: string): string {
  return join(dir, `.${name}.${mark}.partial`);
}

/** Work files of processes that no longer run. */
export async function removeAbandoned(dir: string, liveness: Liveness): Promise<void> {
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    const m = PARTIAL.exec(name);
    if (m && (await markStatus(liveness, m[1] as string)) === 'gone') await rm(join(dir, name), { force: true });
  }
}

/** Adds a member held in memory (a manifest, a Markdown page); returns its size and digest. */
export async function addBuffer(tar: TarWriter, path: string, data: Buffer | string): Promise<{ size: number; sha256: string }> {
  const bytes = Buffer.isBuffer(data) ? data : Buffer.from(data);
  const member = { size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') };
  await tar.add({ path, ...member }, bytes);
  return member;
}

/**
 * Writes the archive `build` fills; returns what it returned and the archive's size. Nothing stays behind on failure.
 * `gzip`: the whole archive compressed (for text); without it, members that are worth compressing are compressed on
 * their own by the caller (covers are JPEGs already: compressing them costs CPU for a few per cent).
 */
export async function writeArchive<T>(finalPath: string, options: { gzip: boolean; site: WorkSite }, build: (tar: TarWriter) => Promise<T>): Promise<{ value: T; bytes: number }> {
  const dir = dirname(finalPath);
  await mkdir(dir, { recursive: true });
  await removeAbandoned(dir, options.site.liveness);
  const partial = partialPath(dir, basename(finalPath), options.site.mark);
  try {
    const file = createWriteStream(partial, { flags: 'wx', flush: true });
    const gzip = options.gzip ? createGzip({ level: 3 }) : undefined;
    const head = gzip ?? file;
    const written = gzip ? pipeline(gzip, file) : new Promise<void>((resolve, reject) => file.once('finish', resolve).once('error', reject));
    // An early failure of the file (disk full) must not go unhandled while members are still being added.
    written.catch(() => undefined);
    const tar = new TarWriter(head);
    const value = await build(tar);
    await tar.finish();
    head.end();
    await written;
    const bytes = (await stat(partial)).size;
    await rename(partial, finalPath);
    await syncDirectory(dir);
    return { value, bytes };
  } catch (error) {
    await rm(partial, { force: true });
    throw error;
  }
}

/**
 * A member too large to hold in memory (a JSON Lines file of every book, the member list), appended to a work file in
 * batches while its digest is taken, then added to the archive in one piece and removed.
 */
export class Spool {
  private readonly path: string;
  private readonly hash = createHash('sha256');
  private readonly handle: Promise<FileHandle>;
  private pending: string[] = [];
  private size = 0;
  private closed: Promise<{ size: number; sha256: string }> | undefined;
  lines = 0;

  constructor(path: string) {
    this.path = path;
    this.handle = open(path, 'w');
  }

  async add(text: string): Promise<void> {
    this.hash.update(text);
    this.size += Buffer.byteLength(text);
    this.pending.push(text);
    this.lines++;
    if (this.pending.length >= 512) await this.flush();
  }

  private async flush(): Promise<void> {
    const text = this.pending.join('');
    this.pending = [];
    if (text) await (await this.handle).write(text);
  }

  /** Flushes and closes the work file (once; later calls give the same answer). */
  close(): Promise<{ size: number; sha256: string }> {
    this.closed ??= (async () => {
      await this.flush();
      await (await this.handle).close();
      return { size: this.size, sha256: this.hash.digest('hex') };
    })();
    return this.closed;
  }

  async addTo(tar: TarWriter, member: string): Promise<void> {
    const { size, sha256 } = await this.close();
    await tar.add({ path: member, size, sha256 }, createReadStream(this.path) as AsyncIterable<Buffer>);
    await rm(this.path, { force: true });
  }

  /** Closes and removes the work file (after a failure). */
  async discard(): Promise<void> {
    await this.close().catch(() => undefined);
    await rm(this.path, { force: true });
  }
}
