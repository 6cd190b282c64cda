// Byte-range reads of one open file: with blocking calls on a scan worker thread, where nothing else waits on the
// thread and a trip through libuv's pool costs more than the small read it carries, else through the pool.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';

export interface FileRanges {
  size: number;
  /** Up to `length` bytes from `position`: fewer only at the end of the file. */
  read(position: number, length: number): Buffer | Promise<Buffer>;
  close(): void;
}

function blockingRanges(path: string): FileRanges {
  const fd = openSync(path, 'r');
  try {
    const { size } = fstatSync(fd);
    return {
      size,
      read: (position, length) => {
        const buffer = Buffer.allocUnsafe(length);
        let done = 0;
        while (done < length) {
          const n = readSync(fd, buffer, done, length - done, position + done);
          if (n === 0) break;
          done += n;
        }
        return buffer.subarray(0, done);
      },
      close: () => closeSync(fd),
    };
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

async function pooledRanges(path: string): Promise<FileRanges> {
  const handle = await open(path, 'r');
  try {
    const { size } = await handle.stat();
    return {
      size,
      read: (position, length) => readRange(handle, position, length),
      close: () => void handle.close().catch(() => {}),
    };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** Opens `path` for range reads; the caller closes it. Opening a FIFO waits for a writer: check the kind first. */
export async function openFileRanges(path: string, blocking: boolean): Promise<FileRanges> {
  return blocking ? blockingRanges(path) : pooledRanges(path);
}

/** Up to `length` bytes of an open file from `position`, through libuv's pool: fewer only at the end of the file. */
export async function readRange(handle: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.allocUnsafe(Math.max(0, length));
  let done = 0;
  while (done < buffer.length) {
    const { bytesRead } = await handle.read(buffer, done, buffer.length - done, position + done);
    if (bytesRead === 0) break;
    done += bytesRead;
  }
  return buffer.subarray(0, done);
}
