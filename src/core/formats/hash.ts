// File fingerprints: KOReader's partial MD5 (device sync) and a full content hash (duplicates, move detection).
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';

const SAMPLE_SIZE = 1024;

/** Offsets KOReader samples: 0, then 1024 << 2i for i = 0..10 (1 KiB … 1 GiB). */
export const PARTIAL_MD5_OFFSETS: readonly number[] = [0, ...Array.from({ length: 11 }, (_, i) => 1024 * 4 ** i)];

/** KOReader's "fastDigest": MD5 over up to twelve 1 KiB samples; stops at the first offset past the end. */
export async function partialMd5(path: string): Promise<string> {
  const handle = await open(path, 'r');
  try {
    const md5 = createHash('md5');
    const buffer = Buffer.alloc(SAMPLE_SIZE);
    for (const offset of PARTIAL_MD5_OFFSETS) {
      const { bytesRead } = await handle.read(buffer, 0, SAMPLE_SIZE, offset);
      if (bytesRead === 0) break;
      md5.update(buffer.subarray(0, bytesRead));
      if (bytesRead < SAMPLE_SIZE) break;
    }
    return md5.digest('hex');
  } finally {
    await handle.close();
  }
}

/** Grimmory's document hash for a folder audiobook: MD5 of the first track's partial MD5 followed by the track count. */
export function folderPartialMd5(firstTrackHash: string, trackCount: number): string {
  return createHash('md5').update(firstTrackHash + String(trackCount)).digest('hex');
}

/** SHA-256 of the whole file, streamed. */
export async function contentHash(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path, { highWaterMark: 1024 * 1024 })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Content hash of a folder of tracks: SHA-256 over each track's name, size and own content hash, in order. */
export function combinedContentHash(parts: { name: string; hash: string }[]): string {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(`${part.name}\0${part.hash}\n`);
  return hash.digest('hex');
}
