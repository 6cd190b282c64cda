// Reading a sidecar file defensively and writing one so a crash never leaves half a file.
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { open, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { SidecarError } from './errors.ts';
import { MAX_SIDECAR_BYTES, parseSidecar, type SidecarMetadata } from './format.ts';

const errnoOf = (error: unknown): string | undefined => (error as NodeJS.ErrnoException).code;

/**
 * The sidecar at `path`, or undefined when there is none. A symbolic link, something that is not a regular file,
 * a file over MAX_SIDECAR_BYTES or bad content is SIDECAR_INVALID; only the file's name appears in messages.
 */
export async function readSidecarFile(path: string): Promise<SidecarMetadata | undefined> {
  const name = basename(path);
  let handle;
  try {
    // O_NOFOLLOW: a link planted in a library folder cannot make the daemon read some other file.
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = errnoOf(error);
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    if (code === 'ELOOP') throw new SidecarError('SIDECAR_INVALID', `${name} is a symbolic link; sidecars are read only from regular files`);
    throw new SidecarError('IO', `cannot read ${name}: ${code ?? String(error)}`);
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new SidecarError('SIDECAR_INVALID', `${name} is not a regular file`);
    if (info.size > MAX_SIDECAR_BYTES) throw new SidecarError('SIDECAR_INVALID', `${name} is ${info.size} bytes; a sidecar may have at most ${MAX_SIDECAR_BYTES}`);
    // Room for one byte more than the stat said, growing (up to the limit) only if the file grew since.
    let buffer = Buffer.allocUnsafe(info.size + 1);
    let length = 0;
    for (;;) {
      if (length === buffer.length) {
        const bigger = Buffer.allocUnsafe(Math.min(buffer.length * 2, MAX_SIDECAR_BYTES + 1));
        buffer.copy(bigger, 0, 0, length);
        buffer = bigger;
      }
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length > MAX_SIDECAR_BYTES) throw new SidecarError('SIDECAR_INVALID', `${name} is larger than ${MAX_SIDECAR_BYTES} bytes`);
    }
    const text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(buffer.subarray(0, length));
    return parseSidecar(text, name);
  } catch (error) {
    if (error instanceof SidecarError) throw error;
    if (error instanceof TypeError) throw new SidecarError('SIDECAR_INVALID', `${name} is not a valid sidecar file: not UTF-8 text`);
    throw new SidecarError('IO', `cannot read ${name}: ${errnoOf(error) ?? String(error)}`);
  } finally {
    await handle.close();
  }
}

/**
 * Replaces `path` with `data` in one step: a temporary file in the same folder, flushed to disk, renamed over the
 * target, then the folder flushed. Readers see the old file or the new one, never a part.
 */
export async function writeFileAtomically(path: string, data: string | Uint8Array): Promise<void> {
  const dir = dirname(path);
  // A leading dot keeps the scanner and the move planner from taking the temporary file for anything of a book.
  const temp = join(dir, `.${basename(path)}.bindery-${randomBytes(6).toString('hex')}.tmp`);
  let written = false;
  try {
    const handle = await open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o644);
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, path);
    written = true;
    await syncFolder(dir);
  } catch (error) {
    if (!written) await unlink(temp).catch(() => undefined);
    throw new SidecarError('IO', `cannot write ${basename(path)}: ${errnoOf(error) ?? String(error)}`);
  }
}

async function syncFolder(dir: string): Promise<void> {
  let handle;
  try {
    handle = await open(dir, constants.O_RDONLY);
    await handle.sync();
  } catch {
    // Some filesystems (network shares) cannot sync a folder; the rename itself has happened.
  } finally {
    await handle?.close();
  }
}
