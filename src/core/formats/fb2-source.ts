// Random access to an FB2 document's bytes, whether it is a file on disk or an entry inflated from a .fb2.zip,
// so that large books are scanned window by window instead of being parsed whole.
import { open } from 'node:fs/promises';
import { readRange } from './file-ranges.ts';

export interface ByteSource {
  readonly size: number;
  /** Up to `length` bytes from `position` (fewer at the end of the source). */
  read(position: number, length: number): Promise<Buffer>;
}

const SCAN_WINDOW = 1024 * 1024;

export function bufferSource(buffer: Buffer): ByteSource {
  return {
    size: buffer.length,
    read: async (position, length) => buffer.subarray(position, Math.min(buffer.length, position + length)),
  };
}

/** Opens `path` read-only for `work` and always closes it. */
export async function withFileSource<T>(path: string, work: (source: ByteSource) => Promise<T>): Promise<T> {
  const handle = await open(path, 'r');
  try {
    const { size } = await handle.stat();
    const source: ByteSource = {
      size,
      read: (position, length) => readRange(handle, position, Math.min(length, size - position)),
    };
    return await work(source);
  } finally {
    await handle.close();
  }
}

/** Position of the first `pattern` in [`from`, `until`), read a window at a time; -1 when absent. */
export async function findBytes(source: ByteSource, pattern: Buffer, from: number, until: number = source.size): Promise<number> {
  const end = Math.min(until, source.size);
  let position = from;
  while (position < end) {
    const window = await source.read(position, Math.min(SCAN_WINDOW, end - position));
    if (window.length === 0) return -1;
    const hit = window.indexOf(pattern);
    if (hit !== -1) return position + hit;
    if (position + window.length >= end) return -1;
    // Overlap windows so a pattern straddling two reads is still seen.
    position += Math.max(1, window.length - (pattern.length - 1));
  }
  return -1;
}
