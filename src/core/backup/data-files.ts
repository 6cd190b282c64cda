// Walking the data directory's folders for a backup, and reading one file as an archive member with its digest.
import { createHash } from 'node:crypto';
import { opendir, open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';

export interface DataFile {
  absolute: string;
  /** Path inside the archive: the section folder, then the path below it, '/'-separated. */
  path: string;
}

/** Work files (`.staging-…`, `….tmp`) are not data. */
function isWorkFile(name: string): boolean {
  return name.startsWith('.') || name.endsWith('.tmp');
}

/** Every regular file below `root`, depth first; one open directory handle per level, so memory stays small. */
export async function* filesBelow(root: string, prefix: string): AsyncGenerator<DataFile> {
  let dir;
  try {
    dir = await opendir(root, { bufferSize: 256 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  for await (const entry of dir) {
    if (isWorkFile(entry.name)) continue;
    const absolute = join(root, entry.name);
    const path = `${prefix}/${entry.name}`;
    if (entry.isDirectory()) yield* filesBelow(absolute, path);
    else if (entry.isFile()) yield { absolute, path };
  }
}

/** Files up to this size are read once into memory (hashed, then written); larger ones are read twice. */
const IN_MEMORY_LIMIT = 16 * 1024 * 1024;
const CHUNK = 256 * 1024;

export interface OpenedMember {
  size: number;
  sha256: string;
  mtimeMs: number;
  body: Buffer | AsyncIterable<Buffer>;
  close(): Promise<void>;
}

async function* readRange(handle: FileHandle, size: number): AsyncGenerator<Buffer> {
  let at = 0;
  while (at < size) {
    const buffer = Buffer.allocUnsafe(Math.min(CHUNK, size - at));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, at);
    if (bytesRead === 0) break;
    at += bytesRead;
    yield buffer.subarray(0, bytesRead);
  }
}

/**
 * A file opened for archiving: its size from the open handle (a cover replaced meanwhile by rename stays the version
 * opened), its digest, and its bytes. Undefined when the file vanished since it was listed.
 */
export async function openMember(absolute: string): Promise<OpenedMember | undefined> {
  let handle: FileHandle;
  try {
    handle = await open(absolute, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const stat = await handle.stat();
    const size = stat.size;
    if (size <= IN_MEMORY_LIMIT) {
      const body = Buffer.allocUnsafe(size);
      let at = 0;
      while (at < size) {
        const { bytesRead } = await handle.read(body, at, size - at, at);
        if (bytesRead === 0) break;
        at += bytesRead;
      }
      await handle.close();
      const bytes = body.subarray(0, at);
      return { size: at, sha256: createHash('sha256').update(bytes).digest('hex'), mtimeMs: stat.mtimeMs, body: bytes, close: async () => undefined };
    }
    const hash = createHash('sha256');
    for await (const chunk of readRange(handle, size)) hash.update(chunk);
    return { size, sha256: hash.digest('hex'), mtimeMs: stat.mtimeMs, body: readRange(handle, size), close: () => handle.close() };
  } catch (error) {
    await handle.close().catch(() => undefined);
    throw error;
  }
}
