// The web UI's text assets compressed once with the strongest settings and kept under <dataDir>/cache/web, named by
// the file's path, size and modification time: a UI upgraded in place gets new entries (the old ones are removed as
// their replacements are made). A file asked for before its compressed copy exists is sent as it is while the copy is
// made in the background.
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { compressor, STORED_LEVELS, type Encoding } from './compression.ts';

export interface StoredCopy {
  path: string;
  size: number;
}

export class PrecompressedAssets {
  private readonly making = new Map<string, Promise<void>>();
  private readonly dir: string;
  private readonly onError: (error: unknown, file: string) => void;

  constructor(dir: string, onError: (error: unknown, file: string) => void) {
    this.dir = dir;
    this.onError = onError;
  }

  /** The compressed copy of `file` (as it is now), or undefined while it is being made. */
  async copyOf(file: string, info: { size: number; mtimeMs: number }, encoding: Encoding): Promise<StoredCopy | undefined> {
    const prefix = `${createHash('sha256').update(file).digest('hex').slice(0, 24)}-`;
    const name = `${prefix}${info.size.toString(36)}-${Math.trunc(info.mtimeMs).toString(36)}.${encoding}`;
    const path = join(this.dir, name);
    const kept = await stat(path).catch(() => undefined);
    if (kept?.isFile()) return { path, size: kept.size };
    if (!this.making.has(name)) {
      const work = this.make(file, path, prefix, encoding)
        .catch((error: unknown) => this.onError(error, file))
        .finally(() => this.making.delete(name));
      this.making.set(name, work);
    }
    return undefined;
  }

  private async make(file: string, path: string, prefix: string, encoding: Encoding): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const partial = `${path}.${process.pid}.part`;
    try {
      await pipeline(createReadStream(file), compressor(encoding, STORED_LEVELS[encoding]), createWriteStream(partial));
      // Copies of older versions of the same file, in this encoding, go before the new one appears.
      for (const other of await readdir(this.dir)) {
        if (other.startsWith(prefix) && other.endsWith(`.${encoding}`)) await rm(join(this.dir, other), { force: true });
      }
      await rename(partial, path);
    } finally {
      await rm(partial, { force: true });
    }
  }
}
